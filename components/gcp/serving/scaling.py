"""Queue-depth scaling: the regional autoscaler holds num_undelivered_messages of the request
subscription at the planner's backlog per replica (single_instance_assignment), never on CPU. Without a
queue: the autoscaler's load-balancing utilization, the backend's requests per replica over its RATE
capacity (edge.balancing), held at the planner's backlog target."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from accelstack.planner.scaling_rules import GcpAutoscaler
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import Replicas


def backlog_filter(resource_type: str, subscription_name: str) -> str:
    return f'resource.type = {resource_type} AND resource.labels.subscription_id = "{subscription_name}"'


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
    """On the subscription's backlog per replica, or without one on the load balancer's rate per replica: the
    plan's rule (accelstack.clouds.gcp.serving_scaling), which the simulator replays."""
    rule = plan.scaling
    assert isinstance(rule, GcpAutoscaler), f"GCP serving scales by its autoscaler, the plan holds {rule!r}"
    signal: dict[str, object]
    if request_subscription is None:
        signal = {
            "load_balancing_utilization": gcp.compute.RegionAutoscalerAutoscalingPolicyLoadBalancingUtilizationArgs(
                target=rule.utilization_target
            )
        }
    else:
        assert rule.metric is not None, "queue-depth scaling names the subscription's metric"
        metric = rule.metric
        signal = {
            "metrics": [
                gcp.compute.RegionAutoscalerAutoscalingPolicyMetricArgs(
                    name=metric.name,
                    filter=request_subscription.name.apply(lambda name: backlog_filter(metric.namespace, name)),
                    single_instance_assignment=rule.single_instance_assignment,
                )
            ]
        }
    return gcp.compute.RegionAutoscaler(
        f"{name}-autoscaler",
        region=region,
        target=group.id,
        autoscaling_policy=gcp.compute.RegionAutoscalerAutoscalingPolicyArgs(
            min_replicas=rule.minimum,
            max_replicas=rule.maximum,
            # The autoscaler ignores a new VM's signals for this long: one cold start.
            cooldown_period=rule.initialization_seconds,
            mode="ON",
            **signal,  # type: ignore[arg-type]
        ),
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[group])),
    )
