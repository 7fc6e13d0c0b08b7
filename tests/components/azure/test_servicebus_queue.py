"""The replica's Service Bus client (`accelstack.components.azure.replica.servicebus_queue`) against a fake with
azure-servicebus's sync receiver/sender call shapes (receive_messages, renew_message_lock, complete_message,
abandon_message, send_messages), driven by the real queue worker."""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from accelstack.components.azure.replica.servicebus_queue import ServiceBusQueue, from_env
from tests.components.test_replica_queue_worker import Worker, answer_after, config, run_until

LOCK_SECONDS = 30


@dataclass
class FakeReceived:
    """What ServiceBusReceivedMessage exposes: a body of byte sections, a lock token, application properties
    with bytes keys and values (AMQP strings arrive as bytes), the delivery count."""

    message_id: str
    body: Any
    lock_token: str
    application_properties: dict[bytes, bytes]
    delivery_count: int
    enqueued_time_utc: datetime = field(default_factory=lambda: datetime.now(UTC))


@dataclass
class FakeServiceBus:
    """One peek-lock queue (a new lock token per delivery) and a response queue. Calls from two threads at
    once fail, as the SDK's sync receiver would misbehave."""

    waiting: list[dict[str, Any]] = field(default_factory=list)
    locked: dict[str, dict[str, Any]] = field(default_factory=dict)
    renewed: list[str] = field(default_factory=list)
    completed: list[str] = field(default_factory=list)
    abandoned: list[str] = field(default_factory=list)
    sent: list[Any] = field(default_factory=list)
    waits: list[float] = field(default_factory=list)
    busy: threading.Lock = field(default_factory=threading.Lock)
    ids: Any = field(default_factory=lambda: itertools.count(1))

    def add(self, body: str, **properties: str) -> None:
        props = {k.encode(): v.encode() for k, v in properties.items()}
        self.waiting.append({"id": str(next(self.ids)), "body": body, "properties": props, "deliveries": 0})

    def _exclusive(self) -> None:
        if not self.busy.acquire(blocking=False):
            raise AssertionError("two threads used the receiver at once")

    def receive_messages(self, max_message_count: int, max_wait_time: float) -> list[FakeReceived]:
        self._exclusive()
        try:
            self.waits.append(max_wait_time)
            taken, self.waiting = self.waiting[:max_message_count], self.waiting[max_message_count:]
            out = []
            for m in taken:
                m["deliveries"] += 1
                token = f"{m['id']}-lock-{m['deliveries']}"
                self.locked[token] = m
                out.append(FakeReceived(m["id"], [m["body"].encode()], token, m["properties"], m["deliveries"]))
            time.sleep(0.001)
            return out
        finally:
            self.busy.release()

    def renew_message_lock(self, message: FakeReceived) -> datetime:
        self._exclusive()
        try:
            if message.lock_token not in self.locked:
                raise RuntimeError("MessageLockLostError")
            self.renewed.append(message.lock_token)
            return datetime.now(UTC)
        finally:
            self.busy.release()

    def complete_message(self, message: FakeReceived) -> None:
        self._exclusive()
        try:
            self.locked.pop(message.lock_token)
            self.completed.append(message.lock_token)
        finally:
            self.busy.release()

    def abandon_message(self, message: FakeReceived) -> None:
        self._exclusive()
        try:
            self.waiting.append(self.locked.pop(message.lock_token))
            self.abandoned.append(message.lock_token)
        finally:
            self.busy.release()

    def send_messages(self, message: Any) -> None:
        self.sent.append(message)


@dataclass
class FakeMessage:
    body: str
    application_properties: dict[str, str]
    correlation_id: str


def queue(fake: FakeServiceBus, lock_seconds: int = LOCK_SECONDS) -> ServiceBusQueue:
    return ServiceBusQueue(fake, fake, FakeMessage, lock_seconds)


def test_receive_maps_the_message_and_waits_at_most_a_quarter_of_the_lock():
    fake = FakeServiceBus()
    fake.add("hello", **{"request-id": "client-1"})
    (message,) = queue(fake).receive(10, lease_seconds=LOCK_SECONDS, wait_seconds=20)
    assert (message.id, message.body, message.lease, message.deliveries) == ("1", "hello", "1-lock-1", 1)
    assert message.attributes == {"request-id": "client-1"} and message.sent_at > 0
    assert fake.waits == [LOCK_SECONDS // 4]  # a heartbeat is never held behind a 20 s receive


def test_a_lease_longer_than_the_queues_lock_is_refused():
    with pytest.raises(ValueError, match="lock duration"):
        queue(FakeServiceBus()).receive(1, lease_seconds=LOCK_SECONDS + 1, wait_seconds=1)


def test_release_abandons_and_the_message_comes_back_with_a_new_lock_and_delivery_count():
    fake = FakeServiceBus()
    fake.add("again")
    client = queue(fake)
    first = client.receive(1, LOCK_SECONDS, 1)
    client.release(first)
    assert fake.abandoned == ["1-lock-1"]
    (second,) = client.receive(1, LOCK_SECONDS, 1)
    assert (second.lease, second.deliveries) == ("1-lock-2", 2)


def test_extend_skips_settled_messages_and_reports_a_lost_lock_after_renewing_the_others():
    fake = FakeServiceBus()
    for body in ("a", "b", "c"):
        fake.add(body)
    client = queue(fake)
    a, b, c = client.receive(3, LOCK_SECONDS, 1)
    client.complete(a)
    fake.locked.pop(b.lease)  # b's lock expired on the service
    with pytest.raises(RuntimeError, match="1 lock"):
        client.extend([a, b, c], LOCK_SECONDS)
    assert fake.renewed == [c.lease]


def test_the_worker_replies_with_the_request_id_then_completes_under_concurrent_heartbeats():
    fake = FakeServiceBus()
    for n in range(6):
        fake.add(f"question {n}", **{"request-id": f"client-{n}"})
    # lease 1 s: the heartbeat renews every ~0.33 s while generations take 0.5 s, from another thread.
    worker = Worker(config(lease_seconds=1, concurrency=3), queue(fake, lock_seconds=1), answer_after(0.5))
    run_until(worker, lambda: len(fake.completed) == 6, timeout=10)
    assert sorted(m.correlation_id for m in fake.sent) == [f"client-{n}" for n in range(6)]
    assert all(m.application_properties["status"] == "200" for m in fake.sent)
    assert fake.renewed and not fake.locked and not fake.abandoned


def test_from_env_names_what_is_missing():
    with pytest.raises(SystemExit, match="SERVICE_BUS_NAMESPACE"):
        from_env({"REQUEST_QUEUE": "requests", "RESPONSE_QUEUE": "responses", "LEASE_SECONDS": "30"})
