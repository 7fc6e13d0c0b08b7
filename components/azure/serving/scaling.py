"""Queue-depth scaling: an autoscale setting on the replicas' scale set that reads the request queue's
ActiveMessages divided per instance (the per-replica backlog, like AWS's backlog-per-instance metric math:
learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-common-metrics#commonly-used-service-bus-metrics),
out above the planner's target and in below half of it, never on CPU. Without a queue (admission.kind
replica) the same rules read the Application Gateway's AvgRequestCountPerHealthyHost (requests per healthy
backend per minute; learn.microsoft.com/azure/application-gateway/application-gateway-metrics) against the
requests a replica serves in a minute at that backlog.

Out adds the replicas one cold start's backlog needs at once (a percentage of the current count, at least one),
then waits one cold start; in removes one at a time after a quiet window, so a brief lull does not drain the
group the next burst needs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_azure_native as azure_native

from accelstack.components.azure.serving.placement import Placement
from accelstack.components.azure.serving.queue import ACTIVE_MESSAGES, QUEUE_METRIC_NAMESPACE, REQUESTS
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import Replicas

SCALE_OUT_PERCENT = 50
SCALE_IN_WINDOW = "PT10M"


Trigger = Callable[[str, float, str], dict[str, Any]]  # (operator, threshold, window) -> a metric trigger


def iso_minutes(seconds: int) -> str:
    """An ISO 8601 duration in whole minutes, at least one (autoscale cooldowns and windows: PT1M..P1W)."""
    return f"PT{max(1, math.ceil(seconds / 60))}M"


def metric_trigger(
    metric: str,
    namespace: str,
    resource: azure_native.servicebus.Namespace | azure_native.network.ApplicationGateway,
    *,
    per_instance: bool,
    dimensions: list[dict[str, Any]] | None = None,
) -> Trigger:
    """An autoscale rule's trigger on `metric` of `resource`, averaged over one-minute grains in its window;
    `per_instance` divides it by the scale set's instance count."""

    def trigger(operator: str, threshold: float, window: str) -> dict[str, Any]:
        return {
            "metric_name": metric,
            "metric_namespace": namespace,
            "metric_resource_uri": resource.id,
            **({"dimensions": dimensions} if dimensions else {}),
            "divide_per_instance": per_instance,
            "time_grain": "PT1M",
            "time_window": window,
            "statistic": "Average",
            "time_aggregation": "Average",
            "operator": operator,
            "threshold": threshold,
        }

    return trigger


def backlog_trigger(namespace: azure_native.servicebus.Namespace) -> Trigger:
    """The request queue's active messages, divided per instance: the backlog each replica owns."""
    requests = [{"dimension_name": "EntityName", "operator": "Equals", "values": [REQUESTS]}]
    return metric_trigger(ACTIVE_MESSAGES, QUEUE_METRIC_NAMESPACE, namespace, per_instance=True, dimensions=requests)


# Application Gateway v2: "Average request count per minute per healthy backend host in a pool".
REQUESTS_PER_HOST = "AvgRequestCountPerHealthyHost"
GATEWAY_METRIC_NAMESPACE = "Microsoft.Network/applicationGateways"


def requests_per_host_trigger(gateway: azure_native.network.ApplicationGateway) -> Trigger:
    """The gateway's one backend pool: already per healthy host, so not divided again."""
    return metric_trigger(REQUESTS_PER_HOST, GATEWAY_METRIC_NAMESPACE, gateway, per_instance=False)


def autoscale_profile(
    replicas: Replicas, plan: ServingPlan, trigger: Trigger, target: float, name: str
) -> dict[str, Any]:
    """Out above `target` on the metric `trigger` reads, in below half of it."""
    return {
        "name": name,
        # Strings in the API (ScaleCapacity).
        "capacity": {"minimum": str(replicas.min), "maximum": str(replicas.max), "default": str(replicas.min)},
        "rules": [
            {
                "metric_trigger": trigger("GreaterThan", target, "PT5M"),
                "scale_action": {
                    "direction": "Increase",
                    "type": "PercentChangeCount",
                    "value": str(SCALE_OUT_PERCENT),
                    "cooldown": iso_minutes(plan.cold_start_seconds),
                },
            },
            {
                "metric_trigger": trigger("LessThan", target / 2, SCALE_IN_WINDOW),
                "scale_action": {
                    "direction": "Decrease",
                    "type": "ChangeCount",
                    "value": "1",
                    "cooldown": SCALE_IN_WINDOW,
                },
            },
        ],
    }


def scaling(
    name: str,
    replicas: Replicas,
    plan: ServingPlan,
    *,
    group: azure_native.compute.VirtualMachineScaleSet,
    namespace: azure_native.servicebus.Namespace | None = None,
    gateway: azure_native.network.ApplicationGateway | None = None,
    placement: Placement,
) -> azure_native.monitor.AutoscaleSetting:
    """Scales `group` on the request queue's backlog in `namespace`, or without a queue on `gateway`'s requests
    per healthy replica."""
    if namespace is not None:
        profile = autoscale_profile(
            replicas, plan, backlog_trigger(namespace), plan.backlog_per_instance_target, "queue-depth"
        )
    else:
        assert gateway is not None, "without a queue the group scales on the gateway's requests per replica"
        profile = autoscale_profile(
            replicas,
            plan,
            requests_per_host_trigger(gateway),
            plan.requests_per_replica_minute_target,
            "requests-per-replica",
        )
    return azure_native.monitor.AutoscaleSetting(
        f"{name}-autoscale",
        resource_group_name=placement.resource_group.name,
        target_resource_uri=group.id,
        enabled=True,
        profiles=[profile],
        tags=placement.tags,
        opts=pulumi.ResourceOptions.merge(placement.opts, pulumi.ResourceOptions(depends_on=[group])),
    )
