"""The queue the replica's worker drains, as a protocol each cloud implements (the contract; not shipped).

`queue_worker.py` runs on the replica and drives a `QueueClient`; the cloud ships its client beside it
(AWS: `accelstack.components.aws.replica.sqs_queue`) as a module with `from_env(env) -> QueueClient`,
named by the QUEUE_CLIENT variable. Only the worker and the client travel in user data (16 KB on EC2),
so this contract and its documentation stay here.

The shape follows the three lease-based queues accelstack targets:

    QueueClient   SQS                              Service Bus (peek-lock)     Pub/Sub (pull)
    receive       ReceiveMessage, VisibilityTimeout receive, lock duration     pull, ackDeadlineSeconds
    extend        ChangeMessageVisibility           renew lock                  modifyAckDeadline
    complete      DeleteMessage                     complete                    acknowledge
    release       ChangeMessageVisibility 0         abandon                     modifyAckDeadline 0 (nack)
    reply         SendMessage (responses queue)     send (responses queue)      publish (responses topic)

`Message` carries what the worker reads from any of them: the id that stays the same across
deliveries, the body, the lease token (receipt handle, lock token, ack id), when it was sent (SQS
SentTimestamp, Service Bus enqueuedTimeUtc, Pub/Sub publishTime) for the TTL, the producer's string
attributes (application properties, attributes) and the delivery count (ApproximateReceiveCount,
deliveryCount, deliveryAttempt). Dead-lettering after the queue's maximum deliveries is the queue's
own (SQS redrive policy, Service Bus maxDeliveryCount, Pub/Sub dead-letter policy): the worker only
leaves a failed message alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from accelstack.components.replica.queue_worker import Message


class QueueClient(Protocol):
    """A lease-based queue: a received message stays hidden until completed, released, or its lease ends."""

    max_batch: int  # most messages one receive may return (SQS 10)

    def receive(self, max_messages: int, lease_seconds: int, wait_seconds: int) -> list[Message]:
        """Up to `max_messages`, waiting at most `wait_seconds` for the first (long poll), each leased for
        `lease_seconds`. Where the lease is a queue setting (Service Bus lock duration), the queue is
        created with the same number and the argument is only checked against it."""
        ...

    def extend(self, messages: Sequence[Message], lease_seconds: int) -> None:
        """Lease these `lease_seconds` more from now. A message completed meanwhile is skipped, not an
        error; a failed call raises after trying every message (the worker's heartbeat retries)."""
        ...

    def complete(self, message: Message) -> None:
        """Done: the queue never delivers it again."""
        ...

    def release(self, messages: Sequence[Message]) -> None:
        """Give these back now, for another replica to receive at once (not after the lease ends)."""
        ...

    def reply(self, request_id: str, status: int, body: str) -> None:
        """Send the answer to the responses queue or topic, tagged with the request id and the server's status."""
        ...
