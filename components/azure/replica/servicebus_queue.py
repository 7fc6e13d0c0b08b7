"""The queue worker's client for a Service Bus queue in peek-lock mode (runs on the replica).

    receive  -> receive_messages (peek-lock: each message locked for the queue's lock duration)
    extend   -> renew_message_lock (Service Bus renews by the queue's lock duration, whatever is asked)
    complete -> complete_message
    release  -> abandon_message (redelivered at once; counts a delivery)
    reply    -> send_messages on the response queue, application properties request-id and status

The SDK settles and renews through the receiver that received a message, so the client keeps each locked
message by its lock token, and serialises calls to the receiver (the worker's heartbeat thread renews while
the main thread receives; the SDK's sync receiver is not thread-safe). A receive waits at most a quarter of
the lock, so a heartbeat is never held past its slack.
`azure-servicebus` and `azure-identity` are imported only in `from_env`, on the replica.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

try:  # on the replica, beside queue_worker.py
    from queue_worker import REQUEST_ID_ATTRIBUTE, Message  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # in the repository
    from accelstack.components.replica.queue_worker import REQUEST_ID_ATTRIBUTE, Message

MAX_BATCH = 250  # receive_messages: prefetch-free batches stay small enough to lock-renew in one heartbeat


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def body_text(message: Any) -> str:
    """A received message's body as text (the SDK yields the data sections as bytes)."""
    body = message.body
    if isinstance(body, (bytes, str)):
        return _text(body)
    return b"".join(part if isinstance(part, bytes) else str(part).encode() for part in body).decode()


class ServiceBusQueue:
    max_batch = MAX_BATCH

    def __init__(self, receiver: Any, sender: Any, message_factory: Any, lock_seconds: int):
        self.receiver, self.sender, self.message_factory = receiver, sender, message_factory
        self.lock_seconds = lock_seconds
        self._locked: dict[str, Any] = {}
        self._lock = threading.Lock()

    def receive(self, max_messages: int, lease_seconds: int, wait_seconds: int) -> list[Message]:
        if lease_seconds > self.lock_seconds:
            # The lease is the queue's lock duration; a longer one would expire between heartbeats.
            raise ValueError(f"lease {lease_seconds}s exceeds the queue's lock duration {self.lock_seconds}s")
        wait = max(1, min(wait_seconds, self.lock_seconds // 4))
        with self._lock:
            received = self.receiver.receive_messages(
                max_message_count=min(max_messages, self.max_batch), max_wait_time=wait
            )
        messages = []
        for sb_message in received:
            token = str(sb_message.lock_token)
            enqueued = sb_message.enqueued_time_utc
            properties = sb_message.application_properties or {}
            messages.append(
                Message(
                    id=str(sb_message.message_id),
                    body=body_text(sb_message),
                    lease=token,
                    sent_at=enqueued.timestamp() if enqueued else 0.0,
                    attributes={_text(k): _text(v) for k, v in properties.items()},
                    deliveries=max(int(sb_message.delivery_count or 1), 1),
                )
            )
            self._locked[token] = sb_message
        return messages

    def extend(self, messages: Sequence[Message], lease_seconds: int) -> None:
        failures: list[BaseException] = []
        for message in messages:
            sb_message = self._locked.get(message.lease)
            if sb_message is None:
                continue  # completed or released meanwhile
            try:
                with self._lock:
                    self.receiver.renew_message_lock(sb_message)
            except Exception as exc:  # noqa: BLE001 - renew the others, then report
                failures.append(exc)
        if failures:
            raise RuntimeError(f"renewing {len(failures)} lock(s) failed: {failures[0]}") from failures[0]

    def complete(self, message: Message) -> None:
        sb_message = self._locked.pop(message.lease, None)
        if sb_message is not None:
            with self._lock:
                self.receiver.complete_message(sb_message)

    def release(self, messages: Sequence[Message]) -> None:
        for message in messages:
            sb_message = self._locked.pop(message.lease, None)
            if sb_message is not None:
                with self._lock:
                    self.receiver.abandon_message(sb_message)

    def reply(self, request_id: str, status: int, body: str) -> None:
        reply = self.message_factory(
            body,
            application_properties={REQUEST_ID_ATTRIBUTE: request_id, "status": str(status)},
            correlation_id=request_id,
        )
        self.sender.send_messages(reply)


def from_env(env: Mapping[str, str] = os.environ) -> ServiceBusQueue:
    missing = [
        n for n in ("SERVICE_BUS_NAMESPACE", "REQUEST_QUEUE", "RESPONSE_QUEUE", "LEASE_SECONDS") if not env.get(n)
    ]
    if missing:
        raise SystemExit(f"queue worker: environment variable(s) {', '.join(missing)} not set")
    from azure.identity import ManagedIdentityCredential  # type: ignore[import-not-found,unused-ignore]
    from azure.servicebus import (  # type: ignore[import-not-found,unused-ignore]
        ServiceBusClient,
        ServiceBusMessage,
        ServiceBusReceiveMode,
    )

    credential = ManagedIdentityCredential(client_id=env.get("AZURE_CLIENT_ID") or None)
    client = ServiceBusClient(env["SERVICE_BUS_NAMESPACE"], credential)
    receiver = client.get_queue_receiver(
        env["REQUEST_QUEUE"], receive_mode=ServiceBusReceiveMode.PEEK_LOCK, prefetch_count=0
    )
    sender = client.get_queue_sender(env["RESPONSE_QUEUE"])
    return ServiceBusQueue(receiver, sender, ServiceBusMessage, int(env["LEASE_SECONDS"]))
