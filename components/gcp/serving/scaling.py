"""Queue-depth scaling: the regional autoscaler holds num_undelivered_messages of the request
subscription at the planner's backlog per replica (single_instance_assignment), never on CPU."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

BACKLOG_METRIC = "pubsub.googleapis.com/subscription/num_undelivered_messages"


def backlog_filter(subscription_name: str) -> str:
    return f'resource.type = pubsub_subscription AND resource.labels.subscription_id = "{subscription_name}"'


def scaling(svc: Any, name: str) -> gcp.compute.RegionAutoscaler:
    replicas = svc.serving.replicas
    return gcp.compute.RegionAutoscaler(
        f"{name}-autoscaler",
        region=svc.region,
        target=svc.group.id,
        autoscaling_policy=gcp.compute.RegionAutoscalerAutoscalingPolicyArgs(
            min_replicas=replicas.min,
            max_replicas=replicas.max,
            # The autoscaler ignores a new VM's signals for this long: one cold start.
            cooldown_period=svc.plan.cold_start_seconds,
            mode="ON",
            metrics=[
                gcp.compute.RegionAutoscalerAutoscalingPolicyMetricArgs(
                    name=BACKLOG_METRIC,
                    filter=svc.queues["request-subscription"].name.apply(backlog_filter),
                    single_instance_assignment=svc.plan.backlog_per_instance_target,
                )
            ],
        ),
        opts=pulumi.ResourceOptions.merge(svc.child, pulumi.ResourceOptions(depends_on=[svc.group])),
    )
