"""The admission queue on Pub/Sub: a request topic and the pull subscription replicas drain, a
dead-letter topic (and a subscription that keeps what lands there), and a response topic with its
subscription.

TTL: Pub/Sub keeps unacked messages at least 10 minutes (message_retention_duration 600s..7d,
https://cloud.google.com/pubsub/docs/subscription-properties#retention), so retention is
max(ttlSeconds, 600 s) and the worker drops a request older than TTL_SECONDS (publishTime) itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

from accelstack.components.gcp.serving.identity import QueueKey
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import AdmissionPolicy

PUBSUB_MIN_RETENTION_SECONDS = 600
PUBSUB_MAX_ACK_DEADLINE_SECONDS = 600  # ack_deadline_seconds 10..600
# Exponential redelivery backoff between attempts (retry_policy bounds 0..600 s).
RETRY_MIN_BACKOFF = "10s"
RETRY_MAX_BACKOFF = "60s"


def pubsub_service_agent(project_number: str) -> str:
    """The Pub/Sub service agent's address: it forwards to the dead-letter topic, so it needs publisher there and
    subscriber on the source subscription (https://cloud.google.com/pubsub/docs/handling-failures#grant_forwarding_permissions).
    The grants take the created agent (storage.created_agent), which has this address."""
    return f"serviceAccount:service-{project_number}@gcp-sa-pubsub.iam.gserviceaccount.com"


def retention(ttl_seconds: int) -> str:
    return f"{max(ttl_seconds, PUBSUB_MIN_RETENTION_SECONDS)}s"


def ack_deadline(visibility_timeout_seconds: int) -> int:
    return max(10, min(visibility_timeout_seconds, PUBSUB_MAX_ACK_DEADLINE_SECONDS))


@dataclass(frozen=True)
class AdmissionQueues:
    requests: gcp.pubsub.Topic
    request_subscription: gcp.pubsub.Subscription
    dead_letters: gcp.pubsub.Topic
    dead_letter_subscription: gcp.pubsub.Subscription
    responses: gcp.pubsub.Topic
    response_subscription: gcp.pubsub.Subscription
    agent_grants: list[pulumi.Resource]

    def by_role(self) -> dict[str, Any]:
        """The queues as `ServingService.queues` has always exposed them."""
        return {
            "requests": self.requests,
            "request-subscription": self.request_subscription,
            "dead-letters": self.dead_letters,
            "dead-letter-subscription": self.dead_letter_subscription,
            "responses": self.responses,
            "response-subscription": self.response_subscription,
            "agent-grants": self.agent_grants,
        }


def queues(
    name: str,
    admission: AdmissionPolicy,
    plan: ServingPlan,
    key: QueueKey,
    pubsub_agent: pulumi.Output[str],
    opts: pulumi.ResourceOptions,
) -> AdmissionQueues:
    keep = retention(admission.ttl_seconds)
    never_expire = gcp.pubsub.SubscriptionExpirationPolicyArgs(ttl="")  # default: deleted after 31 idle days
    encrypted = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=key.usable))
    cmek = key.key.id
    requests = gcp.pubsub.Topic(f"{name}-requests", message_retention_duration=keep, kms_key_name=cmek, opts=encrypted)
    dead_letters = gcp.pubsub.Topic(f"{name}-dead-letters", kms_key_name=cmek, opts=encrypted)
    responses = gcp.pubsub.Topic(
        f"{name}-responses", message_retention_duration=keep, kms_key_name=cmek, opts=encrypted
    )
    subscription = gcp.pubsub.Subscription(
        f"{name}-requests",
        topic=requests.id,
        ack_deadline_seconds=ack_deadline(plan.visibility_timeout_seconds),
        message_retention_duration=keep,
        expiration_policy=never_expire,
        dead_letter_policy=gcp.pubsub.SubscriptionDeadLetterPolicyArgs(
            dead_letter_topic=dead_letters.id,
            max_delivery_attempts=admission.max_receive_count,  # 5..100, checked by the spec rules
        ),
        retry_policy=gcp.pubsub.SubscriptionRetryPolicyArgs(
            minimum_backoff=RETRY_MIN_BACKOFF, maximum_backoff=RETRY_MAX_BACKOFF
        ),
        opts=opts,
    )
    dead_letter_subscription = gcp.pubsub.Subscription(
        f"{name}-dead-letters",
        topic=dead_letters.id,
        message_retention_duration="604800s",  # 7 days to inspect what failed
        expiration_policy=never_expire,
        opts=opts,
    )
    response_subscription = gcp.pubsub.Subscription(
        f"{name}-responses",
        topic=responses.id,
        ack_deadline_seconds=60,
        message_retention_duration=keep,
        expiration_policy=never_expire,
        # A reader that keeps failing on a response does not block the others.
        dead_letter_policy=gcp.pubsub.SubscriptionDeadLetterPolicyArgs(
            dead_letter_topic=dead_letters.id, max_delivery_attempts=admission.max_receive_count
        ),
        opts=opts,
    )
    agent = pubsub_agent  # created before it is named (storage.created_agent)
    agent_grants = [
        gcp.pubsub.TopicIAMMember(
            f"{name}-dlq-agent-publisher", topic=dead_letters.name, role="roles/pubsub.publisher", member=agent,
            opts=opts,
        ),
        gcp.pubsub.SubscriptionIAMMember(
            f"{name}-dlq-agent-subscriber", subscription=subscription.name, role="roles/pubsub.subscriber",
            member=agent, opts=opts,
        ),
        gcp.pubsub.SubscriptionIAMMember(
            f"{name}-responses-agent-subscriber", subscription=response_subscription.name,
            role="roles/pubsub.subscriber", member=agent, opts=opts,
        ),
    ]  # fmt: skip
    return AdmissionQueues(
        requests, subscription, dead_letters, dead_letter_subscription, responses, response_subscription, agent_grants
    )
