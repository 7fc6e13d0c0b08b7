"""Autoscalers as the clouds implement them, each a design choice of the simulated service.

Every autoscaler is asked for a new desired capacity every `interval` seconds of simulated time and
sees what its cloud would see at that moment (`Observation`). The clouds' own autoscalers replay the
plan's scaling rule (`replay`, `accelstack.planner.scaling_rules`), the value the stack's components
deploy: every number and metric comes from it. Sources, per class below.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from accelstack.planner import scaling_rules as rules
from accelstack.planner.scaling_rules import Counts

AUTOSCALERS = (
    "aws-target-tracking",
    "azure-autoscale",
    "gcp-autoscaler",
    # Without a queue (serving.admission.kind replica): the load balancer's requests per replica.
    "aws-alb-requests",
    "azure-gateway-requests",
    "gcp-lb-utilization",
    "request-rate",
    "cpu-utilization",
    "fixed",
)


def requests_per_replica_minute(obs: Observation) -> float:
    """What a load balancer counts per healthy replica over the last minute (ALB RequestCountPerTarget, Sum;
    Application Gateway AvgRequestCountPerHealthyHost)."""
    return obs.arrivals_last_minute / max(1, obs.in_service)


# CPU of a GPU inference replica, as a proxy for the CPU-utilization alternative (an assumption, not a
# measurement): the server's engine loop keeps about one core per GPU busy while it has sequences in
# flight, the rest of the host idles; requests waiting in the queue cost the replica no CPU at all.
# So a g6e.xlarge (4 vCPUs, 1 GPU) peaks near 30% while its backlog grows without bound.
IDLE_CORES = 0.2
BUSY_CORES_PER_GPU = 1.0
DEFAULT_CPU_TARGET_PERCENT = 50.0


def cpu_percent(busy_fraction: float, vcpus: int, gpus: int) -> float:
    return 100.0 * min(vcpus, IDLE_CORES + busy_fraction * BUSY_CORES_PER_GPU * gpus) / max(1, vcpus)


@dataclass(frozen=True)
class Observation:
    now: float
    backlog: int  # visible messages in the admission queue
    in_service: int  # InService instances (the metric math denominator)
    capacity: int  # desired capacity: in service + launching
    busy_fraction: float  # requests in flight / (in service x concurrency)
    arrivals_last_minute: int
    warming: bool  # an instance is within its instance warm-up
    # Received and not yet deleted: in flight on replicas, and those a failed replica holds until
    # their visibility timeout ends (SQS ApproximateNumberOfMessagesNotVisible).
    not_visible: int = 0


def reading(counts: Counts, obs: Observation) -> float:
    """What a metric that counts `counts` reads at `obs` (each rule's metric says what it counts)."""
    if counts is Counts.WAITING:
        return obs.backlog
    if counts is Counts.IN_FLIGHT:
        return obs.not_visible
    if counts is Counts.QUEUED_OR_IN_FLIGHT:
        return obs.backlog + obs.not_visible
    if counts is Counts.REQUESTS_PER_REPLICA_MINUTE:
        return requests_per_replica_minute(obs)
    if counts is Counts.IN_SERVICE:
        return obs.in_service
    raise ValueError(f"no reading for {counts!r}")


class Policy(Protocol):
    interval: float

    def decide(self, obs: Observation) -> int | None: ...


@dataclass
class AwsTargetTracking:
    """EC2 Auto Scaling target tracking ("Target tracking scaling policies for Amazon EC2 Auto Scaling",
    EC2 Auto Scaling User Guide). The policy owns two CloudWatch alarms on the 1-minute metric: scale out
    when 3 consecutive datapoints are above the target, scale in when 15 consecutive are 10% below it;
    capacity becomes ceil(current x metric / target), which for backlog per instance (queue depth /
    InService, "Scaling policy based on Amazon SQS") is ceil(depth / target). Instances still launching
    count towards the current capacity, and no scale-in happens while one is within its instance warm-up
    (the group's default_instance_warmup). With min 0 the stack adds a step policy that starts one
    replica when requests wait and none is in service (accelstack.components.aws.serving.scaling, scale-from-zero alarm).
    `metric` "cpu": ASGAverageCPUUtilization instead, target a percentage (see `cpu_percent`); otherwise the sum
    of what `reads` counts, divided per InService instance unless `per_instance` is False (ALBRequestCountPerTarget
    is per target already). `of(rule)` takes every number from the plan's `TargetTracking` rule."""

    target: float
    minimum: int
    maximum: int
    warmup_seconds: float
    vcpus: int = 1
    gpus: int = 1
    metric: str = "backlog"
    # What the metrics the deployed policy sums count (the rule's metrics).
    reads: tuple[Counts, ...] = (Counts.WAITING,)
    per_instance: bool = True
    # The step policy that starts the first replica while requests wait (None: wherever the minimum is 0).
    scale_from_zero: bool | None = None
    interval: float = 60.0
    out_datapoints: int = 3
    in_datapoints: int = 15
    # Scale in only below this fraction of the target, and never to a count that would put the metric above the
    # target (ceil below): AWS removes capacity only once the metric is "sufficiently below the target value
    # (typically more than 10% lower)", and not where removing the smallest unit of capacity would likely push the
    # metric above the target (docs.aws.amazon.com/autoscaling/application/userguide/
    # target-tracking-scaling-policy-overview.html, "How it works"). So at a steady load the fleet it holds lies
    # anywhere from the count at the target up to that count / 0.9 (11% more), and higher with a noisy metric: the
    # planner's count at the target is the floor of what target tracking holds, not its mean.
    in_fraction: float = 0.9
    history: deque = field(default_factory=lambda: deque(maxlen=15))
    rule: rules.TargetTracking | None = None

    @classmethod
    def of(cls, rule: rules.TargetTracking) -> AwsTargetTracking:
        return cls(
            rule.target, rule.minimum, rule.maximum, rule.instance_warmup_seconds,
            metric="rule", scale_from_zero=rule.scale_from_zero,
            reads=tuple(m.counts for m in rule.metrics), per_instance=rule.per_instance is not None,
            interval=float(rule.period_seconds), out_datapoints=rule.scale_out_datapoints,
            in_datapoints=rule.scale_in_datapoints, in_fraction=rule.scale_in_fraction,
            history=deque(maxlen=max(rule.scale_out_datapoints, rule.scale_in_datapoints)), rule=rule,
        )  # fmt: skip

    def decide(self, obs: Observation) -> int | None:
        if obs.in_service == 0:
            self.history.append(None)  # m1 / m2 has no value: target tracking cannot act
            from_zero = self.minimum == 0 if self.scale_from_zero is None else self.scale_from_zero
            if from_zero and obs.backlog > 0 and obs.capacity == 0:
                return 1
            return None
        if self.metric == "cpu":
            value = cpu_percent(obs.busy_fraction, self.vcpus, self.gpus)
        elif self.metric == "requests":
            value = requests_per_replica_minute(obs)
        else:
            value = sum(reading(counts, obs) for counts in self.reads) / (obs.in_service if self.per_instance else 1)
        self.history.append(value)
        proposed = math.ceil(round(obs.in_service * value / self.target, 9))
        recent = list(self.history)
        high = len(recent) >= self.out_datapoints and all(
            v is not None and v > self.target for v in recent[-self.out_datapoints :]
        )
        floor = self.target * self.in_fraction
        low = len(recent) >= self.in_datapoints and all(
            v is not None and v < floor for v in recent[-self.in_datapoints :]
        )
        if high and proposed > obs.capacity:
            return min(self.maximum, proposed)
        if low and proposed < obs.capacity and not obs.warming:
            return max(self.minimum, proposed)
        return None


def _holds(operator: str, value: float, threshold: float) -> bool:
    return {
        "GreaterThan": value > threshold,
        "GreaterThanOrEqual": value >= threshold,
        "LessThan": value < threshold,
        "LessThanOrEqual": value <= threshold,
    }[operator]


def _changed(capacity: int, action: rules.ScaleAction) -> int:
    """The instance count after `action`: ChangeCount by its value, PercentChangeCount by that share of the
    current count (at least one instance: an assumption where the count is small, the docs give no rounding)."""
    step = action.value if action.change == "ChangeCount" else max(1, math.ceil(capacity * action.value / 100))
    return capacity + step if action.direction == "Increase" else capacity - step


# Azure Monitor: Service Bus and Application Gateway publish one value per metric a minute (PT1M, their finest
# grain: "Azure Service Bus metrics", "Application Gateway metrics"). A trigger reduces the minutes of each grain
# with its `statistic` (MetricStatisticType) and the grains of its window with its `timeAggregation`
# (TimeAggregationType): Microsoft.Insights/autoscalesettings MetricTrigger.
AZURE_METRIC_SECONDS = 60
AZURE_STATISTICS: dict[str, Callable[[list[float]], float]] = {
    "Average": lambda v: sum(v) / len(v), "Min": min, "Max": max, "Sum": sum, "Count": len,
}  # fmt: skip
AZURE_TIME_AGGREGATIONS: dict[str, Callable[[list[float]], float]] = {
    "Average": lambda v: sum(v) / len(v), "Minimum": min, "Maximum": max, "Total": sum, "Count": len,
    "Last": lambda v: v[-1],
}  # fmt: skip


@dataclass
class AzureTriggerWindow:
    """One trigger's metric as Azure Monitor reduces it: minutes -> grain (statistic) -> window (time
    aggregation)."""

    trigger: rules.MetricTrigger
    minutes: list[float] = field(default_factory=list)
    grains: deque = field(default_factory=deque)

    def __post_init__(self) -> None:
        t = self.trigger
        if t.metric.statistic not in AZURE_STATISTICS or t.time_aggregation not in AZURE_TIME_AGGREGATIONS:
            raise ValueError(
                f"Azure trigger on {t.metric.name}: statistic {t.metric.statistic!r} / timeAggregation "
                f"{t.time_aggregation!r} not modelled (statistics: {', '.join(AZURE_STATISTICS)}; aggregations: "
                f"{', '.join(AZURE_TIME_AGGREGATIONS)})"
            )
        if t.time_grain_seconds % AZURE_METRIC_SECONDS or t.time_window_seconds < t.time_grain_seconds:
            raise ValueError(
                f"Azure trigger on {t.metric.name}: grain {t.time_grain_seconds} s not modelled (whole minutes, "
                f"within the {t.time_window_seconds} s window)"
            )
        self.grains = deque(maxlen=t.time_window_seconds // t.time_grain_seconds)

    def add(self, minute_value: float) -> float | None:
        """One minute's value in; the window's aggregate out (None before the first whole grain)."""
        self.minutes.append(minute_value)
        if len(self.minutes) * AZURE_METRIC_SECONDS == self.trigger.time_grain_seconds:
            self.grains.append(AZURE_STATISTICS[self.trigger.metric.statistic](self.minutes))
            self.minutes = []
        return AZURE_TIME_AGGREGATIONS[self.trigger.time_aggregation](list(self.grains)) if self.grains else None


@dataclass
class AzureAutoscale:
    """Azure Monitor autoscale on a VM scale set, replaying the plan's profile (`rules.AzureAutoscale`): each rule's
    metric read once a minute (divided by the instance count where the rule says), reduced per grain with its
    statistic and over its window with its time aggregation (`AzureTriggerWindow`), and compared to its threshold.
    Scale out when any Increase rule holds; scale in only when every Decrease rule holds ("Understand autoscale
    settings": "on scale-out, autoscale runs if any rule is met; on scale-in, autoscale requires all rules to be
    met"); no action within the last action's cooldown. A window not yet full reduces the grains there are (the
    metrics existed before the simulation). ValueError on a statistic, aggregation or grain it does not model."""

    rule: rules.AzureAutoscale
    interval: float = float(AZURE_METRIC_SECONDS)
    windows: list[AzureTriggerWindow] = field(default_factory=list)
    quiet_until: float = -math.inf

    def __post_init__(self) -> None:
        self.windows = [AzureTriggerWindow(r.trigger) for r in self.rule.rules]

    def decide(self, obs: Observation) -> int | None:
        capacity = obs.capacity
        holding = []
        for window, r in zip(self.windows, self.rule.rules, strict=True):
            value = reading(r.trigger.metric.counts, obs)
            aggregate = window.add(value / max(1, capacity) if r.trigger.divide_per_instance else value)
            holding.append(aggregate is not None and _holds(r.trigger.operator, aggregate, r.trigger.threshold))
        if obs.now < self.quiet_until:
            return None
        out = [
            r.action
            for r, held in zip(self.rule.rules, holding, strict=True)
            if held and r.action.direction == "Increase"
        ]
        ins = [
            (r.action, held)
            for r, held in zip(self.rule.rules, holding, strict=True)
            if r.action.direction == "Decrease"
        ]
        if out and capacity < self.rule.maximum:
            action = max(out, key=lambda a: _changed(capacity, a))
            desired = min(self.rule.maximum, _changed(capacity, action))
        elif ins and all(held for _, held in ins) and capacity > self.rule.minimum:
            action = min((a for a, _ in ins), key=lambda a: _changed(capacity, a))
            desired = max(self.rule.minimum, _changed(capacity, action))
        else:
            return None
        self.quiet_until = obs.now + action.cooldown_seconds
        return desired


# A per-group metric with utilizationTargetType GAUGE: "the autoscaler will collect the average utilization ... from
# the last couple of minutes, and compare the value to the utilization target" (Compute API,
# AutoscalingPolicyCustomMetricUtilization.UtilizationTargetType): the samples visible in the last two minutes,
# averaged. DELTA_PER_SECOND / DELTA_PER_MINUTE (rates of a cumulative metric) are not modelled.
GCP_GAUGE_AVERAGE_SECONDS = 120
GCP_TARGET_TYPES = ("GAUGE",)


@dataclass
class GcpAutoscaler:
    """Compute Engine autoscaler, replaying the plan's `rules.GcpAutoscaler`. On a per-group metric with
    singleInstanceAssignment: recommended size = ceil(metric / assignment), the metric being what the rule's metric
    counts (num_undelivered_messages: every unacknowledged message, waiting or held by a replica), a GAUGE averaged
    over the samples of the last couple of minutes. On load-balancing utilization: ceil(requests/s /
    (maxRatePerInstance x target)). Scale-out follows the recommendation at once; scale-in takes the highest
    recommendation of the stabilization period (10 minutes). The metric is sampled every `sample_seconds` and
    visible `delay_seconds` later, so the autoscaler acts on a delayed value. The initialization period only hides
    a new VM's own (per-instance) metrics, which neither signal reads. ValueError on a target type it does not
    model."""

    rule: rules.GcpAutoscaler
    interval: float = 60.0
    observed: deque = field(default_factory=deque)
    recommendations: deque = field(default_factory=deque)

    def __post_init__(self) -> None:
        self.interval = float(self.rule.sample_seconds)
        metric = self.rule.metric
        if metric is not None and metric.statistic not in GCP_TARGET_TYPES:
            raise ValueError(
                f"GCP autoscaler on {metric.name}: utilizationTargetType {metric.statistic!r} not modelled "
                f"(modelled: {', '.join(GCP_TARGET_TYPES)})"
            )

    def assignment(self) -> float:
        rule = self.rule
        if rule.metric is not None:
            assert rule.single_instance_assignment, "a per-group metric needs its single-instance assignment"
            return rule.single_instance_assignment
        assert rule.utilization_target and rule.max_rate_per_instance, "load-balancing utilization needs its rate"
        return rule.utilization_target * rule.max_rate_per_instance

    def signal(self, now: float) -> float | None:
        """What the autoscaler reads at `now`: the gauge's visible samples of the last couple of minutes averaged,
        or the load balancer's latest visible rate; None while nothing is visible yet."""
        rule = self.rule
        visible = [(time, value) for time, value in self.observed if time <= now - rule.delay_seconds]
        if not visible:
            return None
        latest = visible[-1][0]
        if rule.metric is None:
            recent = [visible[-1][1]]
        else:
            recent = [value for time, value in visible if time > latest - GCP_GAUGE_AVERAGE_SECONDS]
        while self.observed[0][0] < latest - GCP_GAUGE_AVERAGE_SECONDS:  # no later read needs these
            self.observed.popleft()
        return sum(recent) / len(recent)

    def decide(self, obs: Observation) -> int | None:
        rule = self.rule
        sample = reading(rule.metric.counts, obs) if rule.metric is not None else obs.arrivals_last_minute / 60.0
        self.observed.append((obs.now, sample))
        value = self.signal(obs.now)
        if value is None:
            return None
        recommended = min(rule.maximum, max(rule.minimum, math.ceil(round(value / self.assignment(), 9))))
        self.recommendations.append((obs.now, recommended))
        while self.recommendations[0][0] < obs.now - rule.stabilization_seconds:
            self.recommendations.popleft()
        stabilized = max(r for _, r in self.recommendations)
        return stabilized if stabilized != obs.capacity else None


@dataclass
class RequestRate:
    """Request-rate scaling as SkyServe does it (sky/serve/autoscalers.py, constants.py): every 20 s,
    target replicas = ceil(requests/s over the last 60 s / target QPS per replica); the change is applied
    only after it has been wanted for the upscale delay (300 s) or the downscale delay (1200 s)."""

    target_qps_per_replica: float
    minimum: int
    maximum: int
    interval: float = 20.0
    upscale_delay_seconds: float = 300.0
    downscale_delay_seconds: float = 1200.0
    window_seconds: float = 60.0
    up: int = 0
    down: int = 0

    def decide(self, obs: Observation) -> int | None:
        qps = obs.arrivals_last_minute / self.window_seconds
        target = min(self.maximum, max(self.minimum, math.ceil(round(qps / self.target_qps_per_replica, 9))))
        if target > obs.capacity:
            self.up, self.down = self.up + 1, 0
            if self.up >= self.upscale_delay_seconds / self.interval:
                self.up = 0
                return target
        elif target < obs.capacity:
            self.up, self.down = 0, self.down + 1
            if self.down >= self.downscale_delay_seconds / self.interval:
                self.down = 0
                return target
        else:
            self.up = self.down = 0
        return None


@dataclass
class Fixed:
    """A fixed fleet: no scaling; failed replicas are still replaced."""

    replicas: int
    interval: float = 3600.0

    def decide(self, obs: Observation) -> int | None:
        return None


def replay(rule: rules.ScalingRule) -> Policy:
    """A fresh autoscaler (it keeps state) that does what `rule`, the plan's deployed rule, says."""
    if isinstance(rule, rules.TargetTracking):
        return AwsTargetTracking.of(rule)
    if isinstance(rule, rules.AzureAutoscale):
        return AzureAutoscale(rule)
    if isinstance(rule, rules.GcpAutoscaler):
        return GcpAutoscaler(rule)
    return Fixed(rule.replicas)
