"""The scaling rules AWS's serving components deploy (`accelstack.components.aws.serving.scaling`), as values the
simulator replays: target tracking on backlog per instance with a queue, on the ALB's requests per target without."""

from __future__ import annotations

from accelstack.planner.scaling_rules import Counts, Metric, ScalingRules, TargetTracking
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import ServingSpec

SQS = "AWS/SQS"
# SQS publishes its queue metrics once a minute ("Available CloudWatch metrics for Amazon SQS", SQS Developer
# Guide), so a 60-s period's Sum is that one datapoint: the count at the minute, not an average over it.
SQS_COUNTS = {
    "ApproximateNumberOfMessagesVisible": Counts.WAITING,
    "ApproximateNumberOfMessagesNotVisible": Counts.IN_FLIGHT,  # received, not yet deleted
}
# Group metrics (enabled by the group's metrics collection) are one datapoint a minute too; Average over the period.
IN_SERVICE = Metric("GroupInServiceInstances", "AWS/AutoScaling", "Average", Counts.IN_SERVICE)
# ALBRequestCountPerTarget: the target group's RequestCount, Sum over the minute, over its healthy targets
# (Elastic Load Balancing, "CloudWatch metrics for your Application Load Balancer").
REQUESTS_PER_TARGET = Metric("RequestCountPerTarget", "AWS/ApplicationELB", "Sum", Counts.REQUESTS_PER_REPLICA_MINUTE)


def backlog_rule(serving: ServingSpec, plan: ServingPlan) -> TargetTracking:
    """(waiting + in flight) / InService at the plan's owned backlog per replica; a step policy starts the first
    replica of a group that may be empty (target tracking has no value at zero instances)."""
    replicas = serving.replicas
    return TargetTracking(
        autoscaler="aws-target-tracking",
        metrics=tuple(Metric(name, SQS, "Sum", SQS_COUNTS[name]) for name in plan.backlog_metrics),
        per_instance=IN_SERVICE,
        target=plan.backlog_per_instance_target,
        minimum=replicas.min,
        maximum=replicas.max,
        instance_warmup_seconds=plan.warm_start_seconds,
        warm_pool=plan.warm_pool_size,
        scale_from_zero=replicas.min == 0,
    )


def requests_rule(serving: ServingSpec, plan: ServingPlan) -> TargetTracking:
    """Without a queue: the requests a replica serves in a minute at the owned backlog (Little's law)."""
    replicas = serving.replicas
    return TargetTracking(
        autoscaler="aws-alb-requests",
        metrics=(REQUESTS_PER_TARGET,),
        per_instance=None,
        target=plan.requests_per_replica_minute_target,
        minimum=replicas.min,
        maximum=replicas.max,
        instance_warmup_seconds=plan.warm_start_seconds,
        warm_pool=plan.warm_pool_size,
        scale_from_zero=False,
    )


SCALING_RULES = ScalingRules(
    {"aws-target-tracking": backlog_rule, "aws-alb-requests": requests_rule},
    queue="aws-target-tracking",
    load_balancer="aws-alb-requests",
)
