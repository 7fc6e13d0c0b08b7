"""Queue-depth scaling: the regional autoscaler holds num_undelivered_messages of the request
subscription at the planner's backlog per replica (single_instance_assignment), never on CPU. Without a
queue: the autoscaler's load-balancing utilization, the backend's requests per replica over its RATE
capacity (edge.balancing), held at the planner's backlog target."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import Replicas

BACKLOG_METRIC = "pubsub.googleapis.com/subscription/num_undelivered_messages"


def backlog_filter(subscription_name: str) -> str:
    return f'resource.type = pubsub_subscription AND resource.labels.subscription_id = "{subscription_name}"'


def load_utilization_target(plan: ServingPlan) -> float:
    """The share of a replica's full rate the autoscaler holds: the requests per minute of the backlog target."""
    share = plan.requests_per_replica_minute_target / 60 / plan.replica_full_rate_per_second
    return round(min(1.0, share), 3)  # the autoscaler takes (0, 1]


def scaling(
    name: str,
    replicas: Replicas,
    plan: ServingPlan,
    *,
    region: str,
    group: gcp.compute.RegionInstanceGroupManager,
    request_subscription: gcp.pubsub.Subscription | None,
    opts: pulumi.ResourceOptions,
) -> gcp.compute.RegionAutoscaler:
    """On the subscription's backlog per replica, or without one on the load balancer's rate per replica."""
    signal: dict[str, object]
    if request_subscription is None:
        signal = {
            "load_balancing_utilization": gcp.compute.RegionAutoscalerAutoscalingPolicyLoadBalancingUtilizationArgs(
                target=load_utilization_target(plan)
            )
        }
    else:
        signal = {
            "metrics": [
                gcp.compute.RegionAutoscalerAutoscalingPolicyMetricArgs(
                    name=BACKLOG_METRIC,
                    filter=request_subscription.name.apply(backlog_filter),
                    single_instance_assignment=plan.backlog_per_instance_target,
                )
            ]
        }
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
            **signal,  # type: ignore[arg-type]
        ),
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[group])),
    )
