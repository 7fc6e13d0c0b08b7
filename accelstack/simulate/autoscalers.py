"""Autoscalers as the clouds implement them, each a design choice of the simulated service.

Every autoscaler is asked for a new desired capacity every `interval` seconds of simulated time and
sees what its cloud would see at that moment (`Observation`). Sources, per class below.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Protocol

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


# What each SQS queue metric the scaling policy may name reads in the simulation.
SQS_METRICS = {
    "ApproximateNumberOfMessagesVisible": lambda obs: obs.backlog,
    "ApproximateNumberOfMessagesNotVisible": lambda obs: obs.not_visible,
}


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
    `metric` "cpu": ASGAverageCPUUtilization instead, target a percentage (see `cpu_percent`); "requests":
    ALBRequestCountPerTarget, the requests each target received in the minute (no queue: serving.admission.kind
    replica)."""

    target: float
    minimum: int
    maximum: int
    warmup_seconds: float
    vcpus: int = 1
    gpus: int = 1
    metric: str = "backlog"
    # The SQS metrics the deployed policy sums over GroupInServiceInstances (ServingPlan.backlog_metrics).
    queue_metrics: tuple[str, ...] = ("ApproximateNumberOfMessagesVisible",)
    interval: float = 60.0
    out_datapoints: int = 3
    in_datapoints: int = 15
    # Scale in only below this fraction of the target: "sufficiently below the target value (typically
    # more than 10% lower)" (Application Auto Scaling User Guide, "How target tracking scaling works").
    in_fraction: float = 0.9
    history: deque = field(default_factory=lambda: deque(maxlen=15))

    def decide(self, obs: Observation) -> int | None:
        if obs.in_service == 0:
            self.history.append(None)  # m1 / m2 has no value: target tracking cannot act
            if self.minimum == 0 and obs.backlog > 0 and obs.capacity == 0:
                return 1
            return None
        if self.metric == "cpu":
            value = cpu_percent(obs.busy_fraction, self.vcpus, self.gpus)
        elif self.metric == "requests":
            value = requests_per_replica_minute(obs)
        else:
            value = sum(SQS_METRICS[name](obs) for name in self.queue_metrics) / obs.in_service
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


@dataclass
class AzureAutoscale:
    """Azure Monitor autoscale on a VM scale set: a scale-out and a scale-in rule on the Service Bus
    queue's ActiveMessages with divide-per-instance (Microsoft.Insights/autoscalesettings, MetricTrigger:
    timeGrain PT1M, timeWindow >= PT5M averaged, ScaleAction ChangeCount with a cooldown). The scale-in
    threshold sits below the scale-out one, as Azure's "autoscale flapping" guidance asks."""

    threshold_out: float
    threshold_in: float
    minimum: int
    maximum: int
    interval: float = 60.0  # time grain
    window_seconds: float = 300.0
    cooldown_seconds: float = 300.0
    step: int = 1
    # "backlog": ActiveMessages divided per instance; "requests": the gateway's AvgRequestCountPerHealthyHost.
    metric: str = "backlog"
    samples: deque = field(default_factory=deque)
    last_action: float = -math.inf

    def decide(self, obs: Observation) -> int | None:
        if self.metric == "requests":
            self.samples.append(requests_per_replica_minute(obs))
        else:
            self.samples.append(obs.backlog / max(1, obs.capacity))
        grains = max(1, round(self.window_seconds / self.interval))
        while len(self.samples) > grains:
            self.samples.popleft()
        if len(self.samples) < grains or obs.now - self.last_action < self.cooldown_seconds:
            return None
        average = sum(self.samples) / len(self.samples)
        if average > self.threshold_out and obs.capacity < self.maximum:
            self.last_action = obs.now
            return min(self.maximum, obs.capacity + self.step)
        if average < self.threshold_in and obs.capacity > self.minimum:
            self.last_action = obs.now
            return max(self.minimum, obs.capacity - self.step)
        return None


@dataclass
class GcpAutoscaler:
    """Compute Engine autoscaler on a Pub/Sub backlog with per-instance assignment
    (autoscalingPolicy.customMetricUtilizations singleInstanceAssignment): recommended size =
    ceil(num_undelivered_messages / assignment). Scale-out follows the recommendation at once; scale-in
    takes the highest recommendation of the stabilization period (stabilizationPeriodSec, default 600 s).
    The Pub/Sub metric is sampled every 60 s and visible up to 120 s later (Cloud Monitoring metric list),
    so the autoscaler acts on a delayed backlog."""

    assignment: float
    minimum: int
    maximum: int
    interval: float = 60.0
    stabilization_seconds: float = 600.0
    metric_delay_seconds: float = 120.0
    # "backlog": num_undelivered_messages / assignment; "requests": load-balancing utilization, the requests
    # per second over the last minute / `assignment` (the RATE capacity x the utilization target, per second).
    metric: str = "backlog"
    observed: deque = field(default_factory=deque)
    recommendations: deque = field(default_factory=deque)

    def decide(self, obs: Observation) -> int | None:
        signal = obs.arrivals_last_minute / 60.0 if self.metric == "requests" else obs.backlog
        self.observed.append((obs.now, signal))
        visible = [depth for time, depth in self.observed if time <= obs.now - self.metric_delay_seconds]
        while len(self.observed) > 1 and self.observed[1][0] <= obs.now - self.metric_delay_seconds:
            self.observed.popleft()
        if not visible:
            return None
        recommended = min(self.maximum, max(self.minimum, math.ceil(visible[-1] / self.assignment)))
        self.recommendations.append((obs.now, recommended))
        while self.recommendations[0][0] < obs.now - self.stabilization_seconds:
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
