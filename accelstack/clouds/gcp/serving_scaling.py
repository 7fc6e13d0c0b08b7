"""The autoscaler GCP's serving components deploy (`accelstack.components.gcp.serving.scaling`), as a value the
simulator replays. With a queue: the request subscription's num_undelivered_messages, a per-group metric held at
the planner's backlog per replica (singleInstanceAssignment). The metric counts unacknowledged messages, those a
replica holds under its ack deadline as well as those waiting, is sampled every 60 s and visible up to 120 s later
(Cloud Monitoring, "Google Cloud metrics: pubsub"). Without a queue: load-balancing utilization, the backend's
requests per replica over its RATE capacity (maxRatePerInstance)."""

from __future__ import annotations

from accelstack.planner.scaling_rules import Counts, GcpAutoscaler, Metric, ScalingRules
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import ServingSpec

# GAUGE: the autoscalingPolicy.customMetricUtilizations utilizationTargetType the API takes when none is given.
UNDELIVERED = Metric(
    "pubsub.googleapis.com/subscription/num_undelivered_messages", "pubsub_subscription", "GAUGE",
    Counts.QUEUED_OR_IN_FLIGHT,
)  # fmt: skip
# The load balancer's rate reaches the autoscaler within a minute (no Pub/Sub publication delay).
LOAD_BALANCER_DELAY_SECONDS = 60


def load_utilization_target(plan: ServingPlan) -> float:
    """The share of a replica's full rate the autoscaler holds: the requests per minute of the backlog target."""
    share = plan.requests_per_replica_minute_target / 60 / plan.replica_full_rate_per_second
    return round(min(1.0, share), 3)  # the autoscaler takes (0, 1]


def backlog_rule(serving: ServingSpec, plan: ServingPlan) -> GcpAutoscaler:
    replicas = serving.replicas
    return GcpAutoscaler(
        autoscaler="gcp-autoscaler",
        minimum=replicas.min,
        maximum=replicas.max,
        # The autoscaler ignores a new VM's signals for this long: one cold start.
        initialization_seconds=plan.cold_start_seconds,
        standby_pool=plan.warm_pool_size,
        metric=UNDELIVERED,
        single_instance_assignment=plan.backlog_per_instance_target,
    )


def requests_rule(serving: ServingSpec, plan: ServingPlan) -> GcpAutoscaler:
    replicas = serving.replicas
    return GcpAutoscaler(
        autoscaler="gcp-lb-utilization",
        minimum=replicas.min,
        maximum=replicas.max,
        initialization_seconds=plan.cold_start_seconds,
        standby_pool=plan.warm_pool_size,
        utilization_target=load_utilization_target(plan),
        max_rate_per_instance=plan.replica_full_rate_per_second,
        delay_seconds=LOAD_BALANCER_DELAY_SECONDS,
    )


SCALING_RULES = ScalingRules(
    {"gcp-autoscaler": backlog_rule, "gcp-lb-utilization": requests_rule},
    queue="gcp-autoscaler",
    load_balancer="gcp-lb-utilization",
)
