"""The neutral queue worker (`accelstack.components.replica.queue_worker`) on a queue that is not SQS.

`MemoryPubSub` is a `QueueClient` with Pub/Sub's pull semantics (a new ack id on every delivery, ack
deadlines changed with modifyAckDeadline, nack as deadline 0, delivery attempts counted): the worker
keeps its guarantees there too. Its SQS client is tested in test_aws_serving_worker.py.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from accelstack.components.replica.queue_client import QueueClient
from accelstack.components.replica.queue_worker import Config, Message, QueueWorker


@dataclass
class _Published:
    id: str
    data: str
    publish_time: float
    attributes: dict[str, str]
    deadline: float = 0.0  # hidden until then
    attempts: int = 0
    ack_id: str = ""


@dataclass
class MemoryPubSub:
    """One subscription and a response topic; records every call by its Pub/Sub name."""

    max_batch: int = 1000  # Pub/Sub's pull maximum
    messages: list[_Published] = field(default_factory=list)
    published: list[tuple[str, int, str]] = field(default_factory=list)  # (request id, status, body)
    calls: list[tuple[str, object]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: itertools.count = field(default_factory=itertools.count)

    def publish_request(self, data: str, *, age: float = 0.0, **attributes: str) -> str:
        message_id = f"p{next(self.ids)}"
        with self.lock:
            self.messages.append(_Published(message_id, data, time.time() - age, attributes))
        return message_id

    def _by_ack(self, ack_id: str) -> _Published | None:
        return next((m for m in self.messages if m.ack_id == ack_id), None)

    def receive(self, max_messages: int, lease_seconds: int, wait_seconds: int) -> list[Message]:
        self.calls.append(("pull", max_messages))
        now = time.time()
        with self.lock:
            ready = [m for m in self.messages if m.deadline <= now][:max_messages]
            for m in ready:
                m.attempts += 1
                m.ack_id = f"{m.id}/{m.attempts}"  # stale after redelivery, like Pub/Sub's
                m.deadline = now + lease_seconds
        if not ready:
            time.sleep(0.01)
        return [Message(m.id, m.data, m.ack_id, m.publish_time, dict(m.attributes), m.attempts) for m in ready]

    def extend(self, messages: Sequence[Message], lease_seconds: int) -> None:
        self.calls.append(("modifyAckDeadline", lease_seconds))
        with self.lock:
            for message in messages:
                found = self._by_ack(message.lease)
                if found is not None:
                    found.deadline = time.time() + lease_seconds

    def complete(self, message: Message) -> None:
        self.calls.append(("acknowledge", message.lease))
        with self.lock:
            found = self._by_ack(message.lease)
            if found is not None:
                self.messages.remove(found)

    def release(self, messages: Sequence[Message]) -> None:
        self.calls.append(("nack", [m.lease for m in messages]))
        self.extend(messages, 0)

    def reply(self, request_id: str, status: int, body: str) -> None:
        self.calls.append(("publish", request_id))
        with self.lock:
            self.published.append((request_id, status, body))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.calls]


class Worker(QueueWorker):
    """The real worker with the HTTP call replaced by `answer(body) -> (status, text)`."""

    def __init__(self, config: Config, queue: QueueClient, answer: Callable[[str], tuple[int, str]]):
        super().__init__(config, queue)
        self.answer = answer
        self.bodies: list[str] = []

    def _call_server(self, message: Message) -> tuple[int, str]:
        self.bodies.append(message.body)
        return self.answer(message.body)


def config(**overrides: object) -> Config:
    values: dict[str, object] = {
        "server_url": "http://127.0.0.1:9",
        "ttl_seconds": 300,
        "concurrency": 4,
        "lease_seconds": 30,
        "generation_timeout_seconds": 60,
        "drain_seconds": 5,
        "wait_seconds": 0,
        "queue_client": "memory",
    }
    return Config(**{**values, **overrides})  # type: ignore[arg-type]


def run_until(worker: QueueWorker, done: Callable[[], bool], timeout: float = 5.0) -> None:
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        time.sleep(0.01)
    worker.stop()
    thread.join(timeout)
    assert not thread.is_alive(), "worker did not stop"
    assert done(), "condition not reached in time"


def answer_after(seconds: float, status: int = 200) -> Callable[[str], tuple[int, str]]:
    def answer(body: str) -> tuple[int, str]:
        time.sleep(seconds)
        return status, f"answer to {body}"

    return answer


def test_answers_are_published_with_the_request_id_before_the_ack_and_stale_requests_are_acked_unserved():
    queue = MemoryPubSub()
    stale = queue.publish_request("stale", age=301)
    queue.publish_request("fresh", **{"request-id": "client-7"})
    plain = queue.publish_request("plain")
    worker = Worker(config(ttl_seconds=300), queue, answer_after(0))
    run_until(worker, lambda: not queue.messages)
    assert sorted(worker.bodies) == ["fresh", "plain"]  # the stale one never reached the server
    assert sorted(queue.published) == [("client-7", 200, "answer to fresh"), (plain, 200, "answer to plain")]
    assert queue.calls[queue.kinds().index("acknowledge")] == ("acknowledge", f"{stale}/1")  # acked unserved
    served = [kind for kind, lease in queue.calls if kind == "publish" or lease not in (f"{stale}/1", 0)]
    assert [kind for kind in served if kind in ("publish", "acknowledge")] == ["publish", "acknowledge"] * 2
    assert worker.counters.expired == 1


def test_a_long_generation_keeps_its_ack_deadline_and_is_served_once():
    queue = MemoryPubSub()
    queue.publish_request("long")
    worker = Worker(config(lease_seconds=1), queue, answer_after(1.3))  # deadline renewed every 1/3 s
    run_until(worker, lambda: len(queue.published) == 1)
    assert queue.kinds().count("modifyAckDeadline") >= 2
    assert worker.bodies == ["long"]


def test_a_failed_request_is_left_to_its_deadline_and_delivered_again():
    queue = MemoryPubSub()
    queue.publish_request("flaky")
    statuses = iter([503, 200])
    worker = Worker(config(lease_seconds=1), queue, lambda body: (next(statuses), "ok"))
    run_until(worker, lambda: len(queue.published) == 1, timeout=10)
    assert worker.bodies == ["flaky", "flaky"]  # the second delivery, after the first deadline ran out
    assert worker.counters.failed == 1 and not queue.messages


def test_on_stop_unfinished_requests_are_nacked_for_another_replica():
    queue = MemoryPubSub()
    release = threading.Event()
    queue.publish_request("long")
    worker = Worker(config(drain_seconds=0.3), queue, lambda body: (release.wait(10), (200, body))[1])
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    while worker.in_flight < 1:
        time.sleep(0.01)
    worker.stop()
    thread.join(5)
    release.set()
    assert not thread.is_alive()
    assert ("nack", ["p0/1"]) in queue.calls and worker.counters.released == 1
    # Visible again at once (deadline 0), not after the 30 s lease.
    assert [m.body for m in queue.receive(10, 30, 0)] == ["long"]
