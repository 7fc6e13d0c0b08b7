"""The queue worker's client for a Pub/Sub pull subscription (runs on the replica).

    receive  -> pull (the subscription's ack deadline, extended at once to `lease_seconds`)
    extend   -> modify_ack_deadline(lease_seconds)
    complete -> acknowledge
    release  -> modify_ack_deadline(0) (a nack: redelivered at once)
    reply    -> publish on the response topic, attributes request-id and status

Pub/Sub's ack deadline is 10..600 s (https://cloud.google.com/pubsub/docs/lease-management).
`google-cloud-pubsub` is imported only in `from_env`, on the replica.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

try:  # on the replica, beside queue_worker.py
    from queue_worker import REQUEST_ID_ATTRIBUTE, Message  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # in the repository
    from accelstack.components.replica.queue_worker import REQUEST_ID_ATTRIBUTE, Message

MAX_ACK_DEADLINE_SECONDS = 600
MIN_ACK_DEADLINE_SECONDS = 10


def deadline(seconds: int) -> int:
    return max(MIN_ACK_DEADLINE_SECONDS, min(seconds, MAX_ACK_DEADLINE_SECONDS))


class PubSubQueue:
    max_batch = 1000  # pull returns at most 1000 messages

    def __init__(self, subscriber: Any, publisher: Any, subscription: str, response_topic: str):
        self.subscriber, self.publisher = subscriber, publisher
        self.subscription, self.response_topic = subscription, response_topic

    def receive(self, max_messages: int, lease_seconds: int, wait_seconds: int) -> list[Message]:
        response = self.subscriber.pull(
            request={"subscription": self.subscription, "max_messages": min(max_messages, self.max_batch)},
            timeout=max(wait_seconds, 1),
        )
        messages = []
        for received in response.received_messages:
            pubsub_message = received.message
            published = pubsub_message.publish_time
            messages.append(
                Message(
                    id=pubsub_message.message_id,
                    body=bytes(pubsub_message.data).decode(),
                    lease=received.ack_id,
                    sent_at=published.timestamp() if published else 0.0,
                    attributes=dict(pubsub_message.attributes),
                    # delivery_attempt is set only on subscriptions with a dead-letter policy (0 otherwise).
                    deliveries=max(int(received.delivery_attempt or 1), 1),
                )
            )
        if messages:
            self.extend(messages, lease_seconds)
        return messages

    def extend(self, messages: Sequence[Message], lease_seconds: int) -> None:
        self._modify(messages, deadline(lease_seconds))

    def complete(self, message: Message) -> None:
        self.subscriber.acknowledge(request={"subscription": self.subscription, "ack_ids": [message.lease]})

    def release(self, messages: Sequence[Message]) -> None:
        self._modify(messages, 0)

    def reply(self, request_id: str, status: int, body: str) -> None:
        attributes = {REQUEST_ID_ATTRIBUTE: request_id, "status": str(status)}
        self.publisher.publish(self.response_topic, body.encode(), **attributes).result()

    def _modify(self, messages: Sequence[Message], seconds: int) -> None:
        if not messages:
            return
        self.subscriber.modify_ack_deadline(
            request={
                "subscription": self.subscription,
                "ack_ids": [m.lease for m in messages],
                "ack_deadline_seconds": seconds,
            }
        )


def from_env(env: Mapping[str, str] = os.environ) -> PubSubQueue:
    missing = [n for n in ("REQUEST_SUBSCRIPTION", "RESPONSE_TOPIC") if not env.get(n)]
    if missing:
        raise SystemExit(f"queue worker: environment variable(s) {', '.join(missing)} not set")
    from google.cloud import pubsub_v1  # type: ignore[import-not-found,import-untyped,unused-ignore]

    return PubSubQueue(
        pubsub_v1.SubscriberClient(), pubsub_v1.PublisherClient(), env["REQUEST_SUBSCRIPTION"], env["RESPONSE_TOPIC"]
    )
