"""The replica's admission-queue worker (`accelstack.components.replica.queue_worker`) on its SQS client
(`accelstack.components.aws.replica.sqs_queue`) against an in-memory SQS and a scripted inference call:
concurrency, TTL drops, answer-then-delete, redelivery of failures, visibility extension and the
SIGTERM drain. The same modules against moto's SQS server and a real HTTP server are in
tests/integration/test_queue_worker.py; the worker against a non-SQS queue in test_replica_queue_worker.py."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from accelstack.components.aws.replica import sqs_queue
from accelstack.components.aws.replica.sqs_queue import SqsQueue
from accelstack.components.aws.serving import worker_environment
from accelstack.components.replica.queue_worker import Config, Message, QueueWorker
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec.loader import parse_spec, read_stack_file
from tests.planner.aws_inputs import AWS_CATALOG

EXAMPLE = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.aws-serving.yaml"
REQUESTS, RESPONSES = "https://sqs.local/requests", "https://sqs.local/responses"


class MemorySqs:
    """Just enough of SQS: visibility timeouts, receive counts, SentTimestamp; records every call."""

    def __init__(self, clock: Callable[[], float] = time.time):
        self.clock = clock
        self.lock = threading.Lock()
        self.queues: dict[str, list[dict[str, Any]]] = {REQUESTS: [], RESPONSES: []}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.ids = itertools.count()

    def put(self, body: str, *, age: float = 0.0, request_id: str | None = None) -> str:
        message_id = f"m{next(self.ids)}"
        attributes = {"request-id": {"DataType": "String", "StringValue": request_id}} if request_id else {}
        with self.lock:
            self.queues[REQUESTS].append(
                {
                    "id": message_id,
                    "body": body,
                    "sent": self.clock() - age,
                    "visible_at": 0.0,
                    "receives": 0,
                    "attrs": attributes,
                }
            )
        return message_id

    def _find(self, handle: str) -> dict[str, Any] | None:
        return next((m for m in self.queues[REQUESTS] if f"{m['id']}#{m['receives']}" == handle), None)

    def receive_message(self, **kw: Any) -> dict[str, Any]:
        self.calls.append(("receive", kw))
        now = self.clock()
        with self.lock:
            ready = [m for m in self.queues[kw["QueueUrl"]] if m["visible_at"] <= now][: kw["MaxNumberOfMessages"]]
            for m in ready:
                m["visible_at"] = now + kw["VisibilityTimeout"]
                m["receives"] += 1
        if not ready:
            time.sleep(0.01)  # stands in for the long poll
        return {
            "Messages": [
                {
                    "MessageId": m["id"],
                    "ReceiptHandle": f"{m['id']}#{m['receives']}",
                    "Body": m["body"],
                    "Attributes": {
                        "SentTimestamp": str(int(m["sent"] * 1000)),
                        "ApproximateReceiveCount": str(m["receives"]),
                    },
                    "MessageAttributes": m["attrs"],
                }
                for m in ready
            ]
        }

    def delete_message(self, QueueUrl: str, ReceiptHandle: str) -> None:
        self.calls.append(("delete", {"ReceiptHandle": ReceiptHandle}))
        with self.lock:
            message = self._find(ReceiptHandle)
            if message is None:
                raise RuntimeError("ReceiptHandleIsInvalid")
            self.queues[QueueUrl].remove(message)

    def send_message(self, QueueUrl: str, MessageBody: str, MessageAttributes: dict[str, Any]) -> None:
        self.calls.append(("send", {"MessageBody": MessageBody, "MessageAttributes": MessageAttributes}))
        with self.lock:
            self.queues[QueueUrl].append({"body": MessageBody, "attrs": MessageAttributes})

    def change_message_visibility_batch(self, QueueUrl: str, Entries: list[dict[str, Any]]) -> dict[str, Any]:
        self.calls.append(("visibility", {"Entries": Entries}))
        failed = []
        with self.lock:
            for entry in Entries:
                message = self._find(entry["ReceiptHandle"])
                if message is None:
                    failed.append({"Id": entry["Id"], "Message": "ReceiptHandleIsInvalid"})
                else:
                    message["visible_at"] = self.clock() + entry["VisibilityTimeout"]
        return {"Failed": failed}

    def responses(self) -> dict[str, str]:
        return {m["attrs"]["request-id"]["StringValue"]: m["body"] for m in self.queues[RESPONSES]}

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.calls]


class ScriptedWorker(QueueWorker):
    """The real worker with the HTTP call replaced by `answer(body) -> (status, text)`."""

    def __init__(self, config: Config, sqs: MemorySqs, answer: Callable[[str], tuple[int, str]]):
        super().__init__(config, on_sqs(sqs))
        self.answer = answer
        self.bodies: list[str] = []
        self.active = self.peak = 0
        self.count_lock = threading.Lock()

    def _call_server(self, message: Message) -> tuple[int, str]:
        with self.count_lock:
            self.bodies.append(message.body)
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            return self.answer(message.body)
        finally:
            with self.count_lock:
                self.active -= 1


def on_sqs(sqs: MemorySqs) -> SqsQueue:
    return SqsQueue(sqs, REQUESTS, RESPONSES)


def config(**overrides: Any) -> Config:
    values: dict[str, Any] = dict(
        server_url="http://127.0.0.1:9", ttl_seconds=300, concurrency=4, lease_seconds=30,
        generation_timeout_seconds=60, drain_seconds=5, wait_seconds=0, queue_client="sqs_queue",
    )  # fmt: skip
    return Config(**{**values, **overrides})


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


def slow(seconds: float, status: int = 200) -> Callable[[str], tuple[int, str]]:
    def answer(body: str) -> tuple[int, str]:
        time.sleep(seconds)
        return status, f"answer to {body}"

    return answer


def test_keeps_n_requests_in_flight_and_never_receives_more_than_free_slots():
    sqs = MemorySqs()
    for i in range(12):
        sqs.put(f"q{i}")
    worker = ScriptedWorker(config(concurrency=4), sqs, slow(0.15))
    run_until(worker, lambda: len(sqs.responses()) == 12)
    assert worker.peak == 4 == worker.counters.max_in_flight
    asked = [kw["MaxNumberOfMessages"] for kind, kw in sqs.calls if kind == "receive"]
    assert max(asked) == 4 and all(1 <= n <= 4 for n in asked)
    assert not sqs.queues[REQUESTS]


def test_receives_at_most_ten_per_call_even_with_more_slots():
    sqs = MemorySqs()
    for i in range(25):
        sqs.put(f"q{i}")
    worker = ScriptedWorker(config(concurrency=64), sqs, slow(0.1))
    run_until(worker, lambda: len(sqs.responses()) == 25)
    assert max(kw["MaxNumberOfMessages"] for kind, kw in sqs.calls if kind == "receive") == 10
    assert worker.peak > 10  # successive receives fill the slots beyond one batch


def test_expired_requests_are_deleted_without_calling_the_server():
    sqs = MemorySqs()
    stale = sqs.put("stale", age=301)
    fresh = sqs.put("fresh", age=10)
    worker = ScriptedWorker(config(ttl_seconds=300), sqs, slow(0))
    run_until(worker, lambda: not sqs.queues[REQUESTS])
    assert worker.bodies == ["fresh"]
    assert set(sqs.responses()) == {fresh}
    assert worker.counters.expired == 1 and stale not in sqs.responses()


def test_answer_carries_the_request_id_and_is_sent_before_the_delete():
    sqs = MemorySqs()
    sqs.put('{"messages": []}', request_id="client-42")
    bare = sqs.put("no id attribute")
    worker = ScriptedWorker(config(), sqs, slow(0))
    run_until(worker, lambda: len(sqs.responses()) == 2)
    assert sqs.responses() == {"client-42": 'answer to {"messages": []}', bare: "answer to no id attribute"}
    order = [k for k in sqs.kinds() if k in ("send", "delete")]
    assert order == ["send", "delete", "send", "delete"]
    sent = next(kw for kind, kw in sqs.calls if kind == "send")
    assert sent["MessageAttributes"]["status"] == {"DataType": "Number", "StringValue": "200"}


@pytest.mark.parametrize("answer", [slow(0, status=503), slow(0, status=429)])
def test_server_errors_leave_the_message_for_redelivery(answer):
    sqs = MemorySqs()
    sqs.put("q")
    worker = ScriptedWorker(config(), sqs, answer)
    run_until(worker, lambda: worker.counters.failed == 1)
    assert "delete" not in sqs.kinds() and "send" not in sqs.kinds()
    assert len(sqs.queues[REQUESTS]) == 1  # visible again after its timeout; the DLQ after maxReceiveCount


def test_a_crashing_call_also_leaves_the_message():
    def crash(body: str) -> tuple[int, str]:
        raise ConnectionRefusedError("server not up")

    sqs = MemorySqs()
    sqs.put("q")
    worker = ScriptedWorker(config(), sqs, crash)
    run_until(worker, lambda: worker.counters.failed == 1)
    assert sqs.queues[REQUESTS] and "delete" not in sqs.kinds()


def test_a_request_the_server_rejects_is_answered_with_its_status_not_retried():
    sqs = MemorySqs()
    sqs.put("prompt longer than the context")
    worker = ScriptedWorker(config(), sqs, slow(0, status=400))
    run_until(worker, lambda: not sqs.queues[REQUESTS])
    sent = next(kw for kind, kw in sqs.calls if kind == "send")
    assert sent["MessageAttributes"]["status"]["StringValue"] == "400"


def test_only_v1_paths_reach_the_server():
    sqs = MemorySqs()
    message_id = sqs.put("q")
    sqs.queues[REQUESTS][0]["attrs"] = {"path": {"DataType": "String", "StringValue": "/../admin"}}
    worker = QueueWorker(config(), on_sqs(sqs))  # the real call: must not even try the (closed) port
    run_until(worker, lambda: not sqs.queues[REQUESTS])
    assert '"path must be under /v1/"' in sqs.responses()[message_id]


def test_long_generations_get_their_visibility_extended_not_cut_off():
    sqs = MemorySqs()
    sqs.put("long")
    worker = ScriptedWorker(config(lease_seconds=1), sqs, slow(1.2))  # heartbeat every 1/3 s
    run_until(worker, lambda: len(sqs.responses()) == 1)
    extensions = [e for kind, kw in sqs.calls if kind == "visibility" for e in kw["Entries"]]
    assert len(extensions) >= 2 and {e["VisibilityTimeout"] for e in extensions} == {1}
    assert worker.bodies == ["long"]  # never redelivered to itself while it ran


def test_sigterm_stops_receiving_finishes_short_work_and_releases_the_rest():
    sqs = MemorySqs()
    release = threading.Event()

    def answer(body: str) -> tuple[int, str]:
        if body == "long":
            release.wait(10)
        else:
            time.sleep(0.2)
        return 200, body

    sqs.put("short")
    sqs.put("long")
    worker = ScriptedWorker(config(drain_seconds=0.6), sqs, answer)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    while worker.in_flight < 2:
        time.sleep(0.01)
    receives = sqs.kinds().count("receive")
    started = time.monotonic()
    worker.stop()
    thread.join(5)
    release.set()
    assert not thread.is_alive() and 0.5 < time.monotonic() - started < 2
    assert sqs.kinds().count("receive") <= receives + 1  # at most the poll already under way
    assert set(sqs.responses()) == {"m0"}  # the short one finished within the drain
    released = [
        e for kind, kw in sqs.calls if kind == "visibility" for e in kw["Entries"] if e["VisibilityTimeout"] == 0
    ]
    assert [e["ReceiptHandle"] for e in released] == ["m1#1"]
    assert worker.counters.released == 1


def test_worker_reads_the_environment_the_serving_component_writes():
    serving = parse_spec(read_stack_file(EXAMPLE), "aws-serving").serving
    plan = plan_serving(serving, AWS_CATALOG)
    env = worker_environment(
        serving, plan, region="us-east-1", request_queue_url=REQUESTS, response_queue_url=RESPONSES
    )
    parsed = Config.from_env(env)
    assert parsed.concurrency == plan.concurrency
    assert parsed.ttl_seconds == serving.admission.ttl_seconds
    assert parsed.lease_seconds == plan.visibility_timeout_seconds
    assert parsed.generation_timeout_seconds == plan.generation_timeout_seconds
    assert parsed.drain_seconds == plan.worker_drain_seconds
    assert parsed.server_url == f"http://127.0.0.1:{serving.load_balancer.port}"
    # The worker loads the SQS client it names, which reads the queues and the Region from the same environment.
    assert parsed.queue_client == "sqs_queue" == sqs_queue.__name__.rsplit(".", 1)[1]
    client = sqs_queue.from_env(env)
    assert (client.request_queue_url, client.response_queue_url) == (REQUESTS, RESPONSES)
    assert client.sqs.meta.region_name == "us-east-1"
    with pytest.raises(SystemExit, match="REQUEST_QUEUE_URL"):
        sqs_queue.from_env({k: v for k, v in env.items() if k != "REQUEST_QUEUE_URL"})
    with pytest.raises(SystemExit, match="QUEUE_CLIENT"):
        Config.from_env({k: v for k, v in env.items() if k != "QUEUE_CLIENT"})
    with pytest.raises(SystemExit, match="WORKER_CONCURRENCY"):
        Config.from_env({**env, "WORKER_CONCURRENCY": "0"})
