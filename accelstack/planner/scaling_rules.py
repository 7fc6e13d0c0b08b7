"""The serving fleet's scaling rule as each cloud's autoscaler states it: one typed value per cloud, made once from
the plan (`plan_serving(..., scaling=...)`), that the cloud's components turn into resources and the simulator
replays (`accelstack.simulate.autoscalers.replay`). Pure data: which rule a cloud deploys is the cloud's own
function (`accelstack/clouds/<cloud>/serving_scaling.py`), handed in as a `ScalingRules`.

Every metric says what it counts of the simulated service (`Counts`), so the simulator reads the same quantity
the cloud's metric does: queued requests only, or those a replica holds as well.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelstack.planner.serving_plan import ServingPlan
    from accelstack.spec.models import ServingSpec


class Counts(StrEnum):
    """What a metric counts, in the simulator's terms."""

    WAITING = "waiting"  # requests queued, not yet received by a replica
    IN_FLIGHT = "in-flight"  # received and not yet completed (hidden, locked or unacked)
    QUEUED_OR_IN_FLIGHT = "queued-or-in-flight"  # both: everything not yet completed
    REQUESTS_PER_REPLICA_MINUTE = "requests-per-replica-minute"  # sent in the minute, per healthy replica
    IN_SERVICE = "in-service"  # replicas in service (the divisor of per-instance metric math)


@dataclass(frozen=True)
class Metric:
    """One metric as the cloud names it, the statistic its period is reduced with, and what it counts."""

    name: str
    namespace: str
    statistic: str
    counts: Counts


@dataclass(frozen=True)
class TargetTracking:
    """EC2 Auto Scaling target tracking ("Target tracking scaling policies for Amazon EC2 Auto Scaling", EC2 Auto
    Scaling User Guide): `metrics` summed (metric math) and divided by `per_instance` where given, one datapoint per
    `period_seconds`; the policy's alarms scale out after `scale_out_datapoints` datapoints above `target` and in
    after `scale_in_datapoints` below `scale_in_fraction` x target, to ceil(capacity x metric / target)."""

    autoscaler: str  # the simulator's name for it
    metrics: tuple[Metric, ...]
    per_instance: Metric | None  # None: the metric is already per target (ALBRequestCountPerTarget)
    target: float
    minimum: int
    maximum: int
    instance_warmup_seconds: int  # the group's default_instance_warmup: no scale-in while one warms up
    warm_pool: int  # stopped instances the group keeps prepared (warm_pool.min_size)
    scale_from_zero: bool  # a step policy starts the first replica while requests wait and none serves
    period_seconds: int = 60
    scale_out_datapoints: int = 3
    scale_in_datapoints: int = 15
    # "sufficiently below the target value (typically more than 10% lower)", and never where removing one instance
    # would put the metric above the target (Application Auto Scaling User Guide, "How target tracking scaling works"): a
    # steady load is held on anything from the count at the target to that count / scale_in_fraction.
    scale_in_fraction: float = 0.9


@dataclass(frozen=True)
class MetricTrigger:
    """Microsoft.Insights/autoscalesettings MetricTrigger: the metric per `time_grain_seconds` (reduced with
    `statistic`), those grains over `time_window_seconds` reduced with `time_aggregation`, compared to
    `threshold`; `divide_per_instance` divides by the scale set's instance count first."""

    metric: Metric
    divide_per_instance: bool
    operator: str  # GreaterThan, LessThan
    threshold: float
    time_window_seconds: int
    time_grain_seconds: int = 60
    time_aggregation: str = "Average"


@dataclass(frozen=True)
class ScaleAction:
    direction: str  # Increase, Decrease
    change: str  # ChangeCount, PercentChangeCount
    value: int
    cooldown_seconds: int


@dataclass(frozen=True)
class AutoscaleRule:
    trigger: MetricTrigger
    action: ScaleAction


@dataclass(frozen=True)
class AzureAutoscale:
    """An Azure Monitor autoscale setting's profile (learn.microsoft.com/azure/azure-monitor/autoscale/
    autoscale-understanding-settings): out when any Increase rule holds, in only when every Decrease rule does,
    nothing within the last action's cooldown."""

    autoscaler: str
    minimum: int
    maximum: int
    default: int
    rules: tuple[AutoscaleRule, ...]
    standby_pool: int  # deallocated VMs the standby pool keeps ready (max_ready_capacity)


@dataclass(frozen=True)
class GcpAutoscaler:
    """A Compute Engine autoscaler (cloud.google.com/compute/docs/autoscaler): with `metric`, a per-group Cloud
    Monitoring metric over `single_instance_assignment` per VM; without one, load-balancing utilization at
    `utilization_target` of each backend's `max_rate_per_instance`. Scale-out follows the recommendation; scale-in
    takes the highest recommendation of the last `stabilization_seconds` (10 minutes, "Understanding autoscaler
    decisions"). The metric is sampled every `sample_seconds` and visible `delay_seconds` later."""

    autoscaler: str
    minimum: int
    maximum: int
    initialization_seconds: int  # autoscalingPolicy.cooldownPeriod: a new VM's signals are ignored this long
    standby_pool: int  # stopped VMs the group keeps (target_stopped_size)
    metric: Metric | None = None
    single_instance_assignment: float | None = None
    utilization_target: float | None = None
    max_rate_per_instance: float | None = None
    stabilization_seconds: int = 600
    sample_seconds: int = 60
    delay_seconds: int = 120


@dataclass(frozen=True)
class FixedFleet:
    """No scaling part: the group keeps `replicas` in service and replaces failed ones."""

    replicas: int
    autoscaler: str = "fixed"


ScalingRule = TargetTracking | AzureAutoscale | GcpAutoscaler | FixedFleet
# A cloud's rule for one of its autoscalers, from the spec and the plan's numbers.
ScalingRuleBuilder = Callable[["ServingSpec", "ServingPlan"], ScalingRule]


@dataclass(frozen=True)
class ScalingRules:
    """The scaling rules a cloud's serving components can deploy, by the simulator's autoscaler name, and which
    one each topology deploys (a queue's, the load balancer's; a fixed fleet has none on every cloud)."""

    builders: Mapping[str, ScalingRuleBuilder] = field(default_factory=dict)
    queue: str | None = None
    load_balancer: str | None = None

    def deployed(self, serving: ServingSpec) -> str | None:
        """The autoscaler the stack deploys, by its topology; None: the cloud declares none."""
        if serving.replicas.scaling == "fixed":
            return FixedFleet.autoscaler
        return self.queue if serving.admission.kind == "queue" else self.load_balancer

    def rule(self, kind: str, serving: ServingSpec, plan: ServingPlan) -> ScalingRule:
        """The rule of autoscaler `kind` for this spec and plan; KeyError when the cloud deploys no such kind."""
        if kind == FixedFleet.autoscaler:
            return FixedFleet(serving.replicas.max)
        return self.builders[kind](serving, plan)

    def for_stack(self, serving: ServingSpec, plan: ServingPlan) -> ScalingRule | None:
        kind = self.deployed(serving)
        if kind is None or (kind != FixedFleet.autoscaler and kind not in self.builders):
            return None
        return self.rule(kind, serving, plan)
