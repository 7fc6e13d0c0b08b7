"""Queue-depth scaling: the regional autoscaler holds num_undelivered_messages of the request
subscription at the planner's backlog per replica (single_instance_assignment), never on CPU."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import Replicas

BACKLOG_METRIC = "pubsub.googleapis.com/subscription/num_undelivered_messages"


def backlog_filter(subscription_name: str) -> str:
    return f'resource.type = pubsub_subscription AND resource.labels.subscription_id = "{subscription_name}"'


def scaling(
    name: str,
    replicas: Replicas,
    plan: ServingPlan,
    *,
    region: str,
    group: gcp.compute.RegionInstanceGroupManager,
    request_subscription: gcp.pubsub.Subscription,
    opts: pulumi.ResourceOptions,
) -> gcp.compute.RegionAutoscaler:
    return gcp.compute.RegionAutoscaler(
        f"{name}-autoscaler",
        region=region,
        target=group.id,
        autoscaling_policy=gcp.compute.RegionAutoscalerAutoscalingPolicyArgs(
            min_replicas=replicas.min,
            max_replicas=replicas.max,
            # The autoscaler ignores a new VM's signals for this long: one cold start.
            cooldown_period=plan.cold_start_seconds,
            mode="ON",
            metrics=[
                gcp.compute.RegionAutoscalerAutoscalingPolicyMetricArgs(
                    name=BACKLOG_METRIC,
                    filter=request_subscription.name.apply(backlog_filter),
                    single_instance_assignment=plan.backlog_per_instance_target,
                )
            ],
        ),
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[group])),
    )
