"""The replica's Pub/Sub client (`accelstack.components.gcp.replica.pubsub_queue`) against a fake with
google-cloud-pubsub's call shapes (pull / modify_ack_deadline / acknowledge requests, publish futures),
driven by the real queue worker."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from accelstack.components.gcp.replica.pubsub_queue import PubSubQueue, from_env
from tests.components.test_replica_queue_worker import Worker, answer_after, config, run_until

SUBSCRIPTION = "projects/acme-serve/subscriptions/gcp-serving-requests"
TOPIC = "projects/acme-serve/topics/gcp-serving-responses"


@dataclass
class FakePubSub:
    """One subscription (ack ids change on every delivery, deadline 0 redelivers) and a response topic."""

    waiting: list[dict[str, Any]] = field(default_factory=list)
    leased: dict[str, dict[str, Any]] = field(default_factory=dict)  # ack id -> message
    deadlines: dict[str, int] = field(default_factory=dict)
    published: list[tuple[str, bytes, dict[str, str]]] = field(default_factory=list)
    acked: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: Any = field(default_factory=lambda: itertools.count(1))

    def add(self, body: str, **attributes: str) -> None:
        self.waiting.append({"id": str(next(self.ids)), "body": body, "attributes": attributes, "attempts": 0})

    # SubscriberClient
    def pull(self, request: dict[str, Any], timeout: float) -> Any:
        assert request["subscription"] == SUBSCRIPTION and timeout >= 1
        with self.lock:
            taken, self.waiting = self.waiting[: request["max_messages"]], self.waiting[request["max_messages"] :]
            received = []
            for m in taken:
                m["attempts"] += 1
                ack_id = f"{m['id']}/{m['attempts']}"
                self.leased[ack_id] = m
                message = SimpleNamespace(
                    message_id=m["id"], data=m["body"].encode(), attributes=m["attributes"],
                    publish_time=datetime.now(UTC),
                )  # fmt: skip
                received.append(SimpleNamespace(ack_id=ack_id, message=message, delivery_attempt=m["attempts"]))
        return SimpleNamespace(received_messages=received)

    def modify_ack_deadline(self, request: dict[str, Any]) -> None:
        assert request["subscription"] == SUBSCRIPTION
        with self.lock:
            for ack_id in request["ack_ids"]:
                self.deadlines[ack_id] = request["ack_deadline_seconds"]
                if request["ack_deadline_seconds"] == 0 and ack_id in self.leased:
                    self.waiting.append(self.leased.pop(ack_id))

    def acknowledge(self, request: dict[str, Any]) -> None:
        with self.lock:
            for ack_id in request["ack_ids"]:
                self.leased.pop(ack_id, None)
                self.acked.append(ack_id)

    # PublisherClient
    def publish(self, topic: str, data: bytes, **attributes: str) -> Any:
        self.published.append((topic, data, attributes))
        return SimpleNamespace(result=lambda: "message-id")


def queue(fake: FakePubSub) -> PubSubQueue:
    return PubSubQueue(fake, fake, SUBSCRIPTION, TOPIC)


def test_receive_maps_pull_and_leases_for_the_workers_seconds_within_pubsubs_bounds():
    fake = FakePubSub()
    fake.add("hello", **{"request-id": "client-1"})
    (message,) = queue(fake).receive(10, lease_seconds=900, wait_seconds=20)
    assert (message.body, message.lease, message.deliveries) == ("hello", "1/1", 1)
    assert message.attributes == {"request-id": "client-1"} and message.sent_at > 0
    assert fake.deadlines == {"1/1": 600}  # Pub/Sub's ack deadline is at most 600 s


def test_release_is_a_nack_and_the_message_comes_back_with_a_new_ack_id():
    fake = FakePubSub()
    fake.add("again")
    client = queue(fake)
    first = client.receive(1, 30, 0)
    client.release(first)
    assert fake.deadlines["1/1"] == 0
    (second,) = client.receive(1, 30, 0)
    assert (second.lease, second.deliveries) == ("1/2", 2)


def test_the_worker_publishes_the_answer_with_the_request_id_then_acks():
    fake = FakePubSub()
    fake.add("question", **{"request-id": "client-7"})
    worker = Worker(config(), queue(fake), answer_after(0))
    run_until(worker, lambda: bool(fake.acked))
    assert fake.published == [(TOPIC, b"answer to question", {"request-id": "client-7", "status": "200"})]
    assert fake.acked == ["1/1"] and not fake.leased


def test_from_env_names_what_is_missing():
    with pytest.raises(SystemExit, match="REQUEST_SUBSCRIPTION"):
        from_env({"RESPONSE_TOPIC": TOPIC})
