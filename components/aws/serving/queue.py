"""The admission queue: requests (TTL, long polling, redrive), responses, the dead-letter queue, and the
alarms on waiting time, depth and dead letters."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws

from accelstack.planner.serving_plan import AGE_ALARM_TTL_FRACTION

if TYPE_CHECKING:
    from accelstack.components.aws.serving.service import AwsServingParts


def queues(svc: AwsServingParts, name: str) -> dict[str, aws.sqs.Queue]:
    admission, plan = svc.serving.admission, svc.plan
    encryption = {"kms_master_key_id": svc.key.arn, "kms_data_key_reuse_period_seconds": 300}
    dead_letters = aws.sqs.Queue(
        f"{name}-dead-letters",
        message_retention_seconds=1_209_600,  # 14 days, the maximum: time to inspect failures
        **encryption,
        opts=svc.child,
    )
    redrive = dead_letters.arn.apply(
        lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": admission.max_receive_count})
    )
    requests = aws.sqs.Queue(
        f"{name}-requests",
        message_retention_seconds=admission.ttl_seconds,  # the request TTL: SQS drops expired requests
        visibility_timeout_seconds=plan.visibility_timeout_seconds,
        receive_wait_time_seconds=20,  # long polling
        redrive_policy=redrive,
        tags={
            # Producers enforce admission before SendMessage; the policy travels with the queue.
            "accelstack:max-depth": str(admission.max_depth),
            "accelstack:ttl-seconds": str(admission.ttl_seconds),
        },
        **encryption,
        opts=svc.child,
    )
    responses = aws.sqs.Queue(
        f"{name}-responses",
        message_retention_seconds=max(60, admission.ttl_seconds),
        receive_wait_time_seconds=20,
        # A response a client keeps failing to process is kept for inspection, not redelivered forever.
        redrive_policy=redrive,
        **encryption,
        opts=svc.child,
    )
    aws.sqs.RedriveAllowPolicy(
        f"{name}-dead-letters",
        queue_url=dead_letters.url,
        redrive_allow_policy=pulumi.Output.all(requests.arn, responses.arn).apply(
            lambda arns: json.dumps({"redrivePermission": "byQueue", "sourceQueueArns": list(arns)})
        ),
        opts=svc.child,
    )
    return {"requests": requests, "responses": responses, "dead-letters": dead_letters}


def alarms(svc: AwsServingParts, name: str) -> None:
    admission, plan = svc.serving.admission, svc.plan
    assert svc.queues is not None, "the alarms watch the admission queues"
    requests, dead_letters = svc.queues["requests"], svc.queues["dead-letters"]

    def queue_alarm(suffix: str, queue: aws.sqs.Queue, metric: str, threshold: float, stat: str, text: str) -> None:
        aws.cloudwatch.MetricAlarm(
            f"{name}-{suffix}",
            alarm_description=text,
            namespace="AWS/SQS",
            metric_name=metric,
            dimensions={"QueueName": queue.name},
            statistic=stat,
            period=60,
            evaluation_periods=1,
            comparison_operator="GreaterThanOrEqualToThreshold",
            threshold=threshold,
            treat_missing_data="notBreaching",
            opts=svc.child,
        )

    queue_alarm(
        "queue-age",
        requests,
        "ApproximateAgeOfOldestMessage",
        plan.age_alarm_seconds,
        "Maximum",
        f"oldest request has waited {AGE_ALARM_TTL_FRACTION:.0%} of its {admission.ttl_seconds} s TTL",
    )
    queue_alarm(
        "queue-depth",
        requests,
        "ApproximateNumberOfMessagesVisible",
        admission.max_depth,
        "Maximum",
        f"admission queue at its maximum depth ({admission.max_depth}): new requests are being refused",
    )
    queue_alarm(
        "dead-letters",
        dead_letters,
        "ApproximateNumberOfMessagesVisible",
        1,
        "Maximum",
        "requests failed maxReceiveCount times",
    )
