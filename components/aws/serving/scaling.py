"""Scaling on backlog per instance (target tracking on SQS metric math) and, for groups that may be
empty, a step policy that starts the first replica; without a queue, target tracking on the ALB's
requests per target."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws

from accelstack.planner.scaling_rules import TargetTracking

if TYPE_CHECKING:
    from accelstack.components.aws.serving.service import AwsServingParts


# CloudWatch metric math: IF(condition, true, false) with comparison and AND operators, FILL(m, 0).
SCALE_FROM_ZERO_EXPRESSION = "IF(depth > 0 AND FILL(inservice, 0) == 0, 1, 0)"


def target_tracking(svc: AwsServingParts) -> TargetTracking:
    """The plan's rule (accelstack.clouds.aws.serving_scaling): what this module emits and the simulator replays."""
    rule = svc.plan.scaling
    assert isinstance(rule, TargetTracking), f"AWS serving scales by target tracking, the plan holds {rule!r}"
    return rule


def scaling(svc: AwsServingParts, name: str) -> aws.autoscaling.Policy:
    """The target-tracking policy on backlog per instance (and, for a group that may be empty, the
    scale-from-zero step policy and its alarm)."""
    assert svc.queues is not None, "queue-depth scaling needs the admission queue"
    group, queue = svc.group, svc.queues["requests"]
    rule = target_tracking(svc)
    assert rule.per_instance is not None, "backlog per instance divides by the group's InService instances"
    metric_args = aws.autoscaling.PolicyTargetTrackingConfigurationCustomizedMetricSpecificationMetricArgs
    stat_args = aws.autoscaling.PolicyTargetTrackingConfigurationCustomizedMetricSpecificationMetricMetricStatArgs
    stat_metric_args = (
        aws.autoscaling.PolicyTargetTrackingConfigurationCustomizedMetricSpecificationMetricMetricStatMetricArgs
    )
    dimension_args = aws.autoscaling.PolicyTargetTrackingConfigurationCustomizedMetricSpecificationMetricMetricStatMetricDimensionArgs
    # Backlog per instance in the shape of "Scaling policy based on Amazon SQS" / "Create a target
    # tracking scaling policy using metric math" (EC2 Auto Scaling User Guide), but counting the
    # messages replicas hold (NotVisible) as well as those waiting: Visible alone reads 0 while
    # replicas keep up, and the group scaled in to min and out again all day. The target is a
    # replica's concurrency at the target utilization (planner.serving.owned_backlog_target).
    queue_ids = [f"m{index}" for index in range(1, len(rule.metrics) + 1)]
    queue_metrics = [
        metric_args(
            id=metric_id,
            label=f"Get {metric.name} of the request queue",
            metric_stat=stat_args(
                metric=stat_metric_args(
                    metric_name=metric.name,
                    namespace=metric.namespace,
                    dimensions=[dimension_args(name="QueueName", value=queue.name)],
                ),
                stat=metric.statistic,
            ),
            return_data=False,
        )
        for metric_id, metric in zip(queue_ids, rule.metrics, strict=True)
    ]
    in_service = f"m{len(queue_ids) + 1}"
    backlog_policy = aws.autoscaling.Policy(
        f"{name}-backlog-per-instance",
        autoscaling_group_name=group.name,
        policy_type="TargetTrackingScaling",
        target_tracking_configuration=aws.autoscaling.PolicyTargetTrackingConfigurationArgs(
            target_value=rule.target,
            customized_metric_specification=aws.autoscaling.PolicyTargetTrackingConfigurationCustomizedMetricSpecificationArgs(
                metrics=[
                    *queue_metrics,
                    metric_args(
                        id=in_service,
                        label="Get the group size (the number of InService instances)",
                        metric_stat=stat_args(
                            metric=stat_metric_args(
                                metric_name=rule.per_instance.name,
                                namespace=rule.per_instance.namespace,
                                dimensions=[dimension_args(name="AutoScalingGroupName", value=group.name)],
                            ),
                            stat=rule.per_instance.statistic,
                        ),
                        return_data=False,
                    ),
                    metric_args(
                        id="e1",
                        label="Calculate the backlog per instance",
                        expression=f"({' + '.join(queue_ids)}) / {in_service}",
                        return_data=True,
                    ),
                ]
            ),
        ),
        opts=svc.child,
    )
    if not rule.scale_from_zero:
        return backlog_policy
    # At zero instances the ratio has no value and target tracking cannot act: a step policy on the
    # raw queue depth starts the first replica. The alarm fires only while none is in service, so
    # it never fights target tracking.
    from_zero = aws.autoscaling.Policy(
        f"{name}-scale-from-zero",
        autoscaling_group_name=group.name,
        policy_type="StepScaling",
        adjustment_type="ChangeInCapacity",
        step_adjustments=[
            aws.autoscaling.PolicyStepAdjustmentArgs(scaling_adjustment=1, metric_interval_lower_bound="0")
        ],
        opts=svc.child,
    )
    aws.cloudwatch.MetricAlarm(
        f"{name}-queue-waiting-at-zero",
        alarm_description="requests are queued and no replica is in service: start one",
        comparison_operator="GreaterThanOrEqualToThreshold",
        threshold=1,
        evaluation_periods=1,
        treat_missing_data="notBreaching",
        metric_queries=[
            aws.cloudwatch.MetricAlarmMetricQueryArgs(
                id="depth",
                metric=aws.cloudwatch.MetricAlarmMetricQueryMetricArgs(
                    metric_name="ApproximateNumberOfMessagesVisible",
                    namespace="AWS/SQS",
                    dimensions={"QueueName": queue.name},
                    period=60,
                    stat="Maximum",
                ),
            ),
            aws.cloudwatch.MetricAlarmMetricQueryArgs(
                id="inservice",
                metric=aws.cloudwatch.MetricAlarmMetricQueryMetricArgs(
                    metric_name="GroupInServiceInstances",
                    namespace="AWS/AutoScaling",
                    dimensions={"AutoScalingGroupName": group.name},
                    period=60,
                    stat="Maximum",
                ),
            ),
            aws.cloudwatch.MetricAlarmMetricQueryArgs(
                id="waiting",
                # FILL: a minute without a group datapoint counts as none in service; bare, the
                # expression may have no value then, which notBreaching reads as "no scale-out".
                expression=SCALE_FROM_ZERO_EXPRESSION,
                label="Queue depth > 0 with no replica in service",
                return_data=True,
            ),
        ],
        alarm_actions=[from_zero.arn],
        opts=svc.child,
    )
    return backlog_policy


def load_scaling(svc: AwsServingParts, name: str) -> aws.autoscaling.Policy:
    """Without a queue: target tracking on ALBRequestCountPerTarget (requests each healthy target received in a
    minute, Sum), at the requests a replica serves in a minute when it owns the plan's backlog target (Little's
    law: in flight = rate x service time). A load measure at the load balancer, never CPU."""
    predefined = aws.autoscaling.PolicyTargetTrackingConfigurationPredefinedMetricSpecificationArgs
    rule = target_tracking(svc)
    [metric] = rule.metrics
    return aws.autoscaling.Policy(
        f"{name}-requests-per-target",
        autoscaling_group_name=svc.group.name,
        policy_type="TargetTrackingScaling",
        target_tracking_configuration=aws.autoscaling.PolicyTargetTrackingConfigurationArgs(
            target_value=rule.target,
            predefined_metric_specification=predefined(
                predefined_metric_type=f"ALB{metric.name}",  # the predefined ALBRequestCountPerTarget
                # app/<alb>/<id>/targetgroup/<tg>/<id>: the target group must be behind a listener of this ALB.
                resource_label=pulumi.Output.concat(svc.load_balancer.arn_suffix, "/", svc.target_group.arn_suffix),
            ),
        ),
        opts=pulumi.ResourceOptions.merge(svc.child, pulumi.ResourceOptions(depends_on=[svc.https_listener])),
    )
