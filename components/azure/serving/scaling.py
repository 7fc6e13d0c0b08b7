"""Queue-depth scaling: an autoscale setting on the replicas' scale set that reads the request queue's
ActiveMessages divided per instance (the per-replica backlog, like AWS's backlog-per-instance metric math:
learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-common-metrics#commonly-used-service-bus-metrics),
out above the planner's target and in below half of it, never on CPU.

Out adds the replicas one cold start's backlog needs at once (a percentage of the current count, at least one),
then waits one cold start; in removes one at a time after a quiet window, so a brief lull does not drain the
group the next burst needs.
"""

from __future__ import annotations

import math
from typing import Any

import pulumi
import pulumi_azure_native as azure_native

from accelstack.components.azure.serving.placement import Placement
from accelstack.components.azure.serving.queue import ACTIVE_MESSAGES, QUEUE_METRIC_NAMESPACE, REQUESTS
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import Replicas

SCALE_OUT_PERCENT = 50
SCALE_IN_WINDOW = "PT10M"


def iso_minutes(seconds: int) -> str:
    """An ISO 8601 duration in whole minutes, at least one (autoscale cooldowns and windows: PT1M..P1W)."""
    return f"PT{max(1, math.ceil(seconds / 60))}M"


def backlog_trigger(
    namespace: azure_native.servicebus.Namespace, operator: str, threshold: float, window: str
) -> dict[str, Any]:
    return {
        "metric_name": ACTIVE_MESSAGES,
        "metric_namespace": QUEUE_METRIC_NAMESPACE,
        "metric_resource_uri": namespace.id,
        "dimensions": [{"dimension_name": "EntityName", "operator": "Equals", "values": [REQUESTS]}],
        "divide_per_instance": True,
        "time_grain": "PT1M",
        "time_window": window,
        "statistic": "Average",
        "time_aggregation": "Average",
        "operator": operator,
        "threshold": threshold,
    }


def autoscale_profile(
    replicas: Replicas, plan: ServingPlan, namespace: azure_native.servicebus.Namespace
) -> dict[str, Any]:
    target = plan.backlog_per_instance_target
    return {
        "name": "queue-depth",
        # Strings in the API (ScaleCapacity).
        "capacity": {"minimum": str(replicas.min), "maximum": str(replicas.max), "default": str(replicas.min)},
        "rules": [
            {
                "metric_trigger": backlog_trigger(namespace, "GreaterThan", target, "PT5M"),
                "scale_action": {
                    "direction": "Increase",
                    "type": "PercentChangeCount",
                    "value": str(SCALE_OUT_PERCENT),
                    "cooldown": iso_minutes(plan.cold_start_seconds),
                },
            },
            {
                "metric_trigger": backlog_trigger(namespace, "LessThan", target / 2, SCALE_IN_WINDOW),
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
    namespace: azure_native.servicebus.Namespace,
    placement: Placement,
) -> azure_native.monitor.AutoscaleSetting:
    """Scales `group` on the request queue's backlog in `namespace`."""
    return azure_native.monitor.AutoscaleSetting(
        f"{name}-autoscale",
        resource_group_name=placement.resource_group.name,
        target_resource_uri=group.id,
        enabled=True,
        profiles=[autoscale_profile(replicas, plan, namespace)],
        tags=placement.tags,
        opts=pulumi.ResourceOptions.merge(placement.opts, pulumi.ResourceOptions(depends_on=[group])),
    )
