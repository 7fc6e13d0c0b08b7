"""Queue-depth scaling: an autoscale setting on the replicas' scale set that reads the request queue's
ActiveMessages divided per instance (the per-replica backlog, like AWS's backlog-per-instance metric math:
learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-common-metrics#commonly-used-service-bus-metrics),
never on CPU. Without a queue (admission.kind replica) the same rules read the Application Gateway's
AvgRequestCountPerHealthyHost (requests per healthy backend per minute;
learn.microsoft.com/azure/application-gateway/application-gateway-metrics).

The rules are the plan's (`accelstack.clouds.azure.serving_scaling`): this module writes them as the autoscale
setting's profile, the simulator replays the same value.
"""

from __future__ import annotations

import math
from typing import Any

import pulumi
import pulumi_azure_native as azure_native

from accelstack.components.azure.serving.placement import Placement
from accelstack.components.azure.serving.queue import REQUESTS
from accelstack.planner.scaling_rules import AzureAutoscale, MetricTrigger, ScaleAction
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import Replicas


def iso_minutes(seconds: int) -> str:
    """An ISO 8601 duration in whole minutes, at least one (autoscale cooldowns and windows: PT1M..P1W)."""
    return f"PT{max(1, math.ceil(seconds / 60))}M"


def metric_trigger(
    trigger: MetricTrigger,
    resource: azure_native.servicebus.Namespace | azure_native.network.ApplicationGateway,
    dimensions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """An autoscale rule's trigger on the rule's metric of `resource`: one-minute grains averaged over its window."""
    return {
        "metric_name": trigger.metric.name,
        "metric_namespace": trigger.metric.namespace,
        "metric_resource_uri": resource.id,
        **({"dimensions": dimensions} if dimensions else {}),
        "divide_per_instance": trigger.divide_per_instance,
        "time_grain": iso_minutes(trigger.time_grain_seconds),
        "time_window": iso_minutes(trigger.time_window_seconds),
        "statistic": trigger.metric.statistic,
        "time_aggregation": trigger.time_aggregation,
        "operator": trigger.operator,
        "threshold": trigger.threshold,
    }


def scale_action(action: ScaleAction) -> dict[str, Any]:
    # Strings in the API (ScaleAction.value).
    return {
        "direction": action.direction,
        "type": action.change,
        "value": str(action.value),
        "cooldown": iso_minutes(action.cooldown_seconds),
    }


def autoscale_profile(
    rule: AzureAutoscale,
    resource: azure_native.servicebus.Namespace | azure_native.network.ApplicationGateway,
    name: str,
    dimensions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "name": name,
        # Strings in the API (ScaleCapacity).
        "capacity": {"minimum": str(rule.minimum), "maximum": str(rule.maximum), "default": str(rule.default)},
        "rules": [
            {"metric_trigger": metric_trigger(r.trigger, resource, dimensions), "scale_action": scale_action(r.action)}
            for r in rule.rules
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
    rule = plan.scaling
    assert isinstance(rule, AzureAutoscale), f"Azure serving scales by an autoscale setting, the plan holds {rule!r}"
    if namespace is not None:
        # The request queue only: the namespace's metric carries one series per entity.
        requests = [{"dimension_name": "EntityName", "operator": "Equals", "values": [REQUESTS]}]
        profile = autoscale_profile(rule, namespace, "queue-depth", requests)
    else:
        assert gateway is not None, "without a queue the group scales on the gateway's requests per replica"
        # The gateway's one backend pool: already per healthy host, so not divided again.
        profile = autoscale_profile(rule, gateway, "requests-per-replica")
    return azure_native.monitor.AutoscaleSetting(
        f"{name}-autoscale",
        resource_group_name=placement.resource_group.name,
        target_resource_uri=group.id,
        enabled=True,
        profiles=[profile],
        tags=placement.tags,
        opts=pulumi.ResourceOptions.merge(placement.opts, pulumi.ResourceOptions(depends_on=[group])),
    )
