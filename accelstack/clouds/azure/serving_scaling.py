"""The autoscale setting Azure's serving components deploy (`accelstack.components.azure.serving.scaling`), as a
value the simulator replays. With a queue: the Service Bus queue's ActiveMessages divided per instance. Messages a
replica holds under peek-lock stay in the queue, active, until completed ("Message transfers, locks, and
settlement"; Service Bus keeps no separate count of locked messages), so the metric counts the requests waiting
and those in flight: the backlog each replica owns, as on AWS. Without a queue: the Application Gateway's
AvgRequestCountPerHealthyHost (requests per healthy backend per minute; application-gateway-metrics).

Out above the planner's target adds half the current count (at least one) and waits one cold start; in below half
of it removes one at a time after a quiet ten minutes, so a brief lull does not drain the group the next burst
needs. Each grain is the metric's one-minute Average (the autoscale engine reads grains of PT1M; Service Bus
ActiveMessages publishes at PT1M, "Supported metrics for Microsoft.ServiceBus/Namespaces"); the window averages
the grains (timeAggregation Average)."""

from __future__ import annotations

import math

from accelstack.planner.scaling_rules import (
    AutoscaleRule,
    AzureAutoscale,
    Counts,
    Metric,
    MetricTrigger,
    ScaleAction,
    ScalingRules,
)
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import ServingSpec

ACTIVE_MESSAGES = Metric("ActiveMessages", "Microsoft.ServiceBus/namespaces", "Average", Counts.QUEUED_OR_IN_FLIGHT)
REQUESTS_PER_HOST = Metric(
    "AvgRequestCountPerHealthyHost",
    "Microsoft.Network/applicationGateways",
    "Average",
    Counts.REQUESTS_PER_REPLICA_MINUTE,
)
SCALE_OUT_PERCENT = 50
SCALE_OUT_WINDOW_SECONDS = 5 * 60
SCALE_IN_WINDOW_SECONDS = 10 * 60
SCALE_IN_FRACTION = 0.5  # in below half the target: Azure's "autoscale flapping" guidance wants a gap


def whole_minutes(seconds: int) -> int:
    """Autoscale windows and cooldowns are ISO 8601 durations in whole minutes (PT1M..P1W)."""
    return 60 * max(1, math.ceil(seconds / 60))


def profile(serving: ServingSpec, plan: ServingPlan, metric: Metric, per_instance: bool, target: float, kind: str):
    replicas = serving.replicas
    return AzureAutoscale(
        autoscaler=kind,
        minimum=replicas.min,
        maximum=replicas.max,
        default=replicas.min,
        rules=(
            AutoscaleRule(
                MetricTrigger(metric, per_instance, "GreaterThan", target, SCALE_OUT_WINDOW_SECONDS),
                ScaleAction(
                    "Increase", "PercentChangeCount", SCALE_OUT_PERCENT, whole_minutes(plan.cold_start_seconds)
                ),
            ),
            AutoscaleRule(
                MetricTrigger(metric, per_instance, "LessThan", target * SCALE_IN_FRACTION, SCALE_IN_WINDOW_SECONDS),
                ScaleAction("Decrease", "ChangeCount", 1, SCALE_IN_WINDOW_SECONDS),
            ),
        ),
        standby_pool=plan.warm_pool_size,
    )


def backlog_rule(serving: ServingSpec, plan: ServingPlan) -> AzureAutoscale:
    return profile(serving, plan, ACTIVE_MESSAGES, True, plan.backlog_per_instance_target, "azure-autoscale")


def requests_rule(serving: ServingSpec, plan: ServingPlan) -> AzureAutoscale:
    """Already per healthy host, so not divided again."""
    return profile(
        serving, plan, REQUESTS_PER_HOST, False, plan.requests_per_replica_minute_target, "azure-gateway-requests"
    )


SCALING_RULES = ScalingRules(
    {"azure-autoscale": backlog_rule, "azure-gateway-requests": requests_rule},
    queue="azure-autoscale",
    load_balancer="azure-gateway-requests",
)
