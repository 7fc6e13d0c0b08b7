"""The replica's queue worker as it runs on a replica (`python3 queue_worker.py` with its SQS client
`sqs_queue.py` beside it, configured by the environment the serving component writes), against moto's
SQS server and a small threaded inference server, both on 127.0.0.1: N requests in flight, TTL drops without a server call, answers with the
request id, failures redelivered and dead-lettered after maxReceiveCount, SIGTERM drain.

Nothing leaves the host: boto3 talks to the moto endpoint with dummy credentials, no proxies.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("moto.server", reason="needs moto[server] (pip install 'moto[server]==5.2.1')")
import boto3  # moto brings it
from moto.server import ThreadedMotoServer

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
# What the replica's boot script writes into /opt/accelstack: the neutral worker and AWS's client.
SHIPPED = (
    REPO / "components" / "replica" / "queue_worker.py",
    REPO / "components" / "aws" / "replica" / "sqs_queue.py",
)
REGION = "us-east-1"
DUMMY_AWS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing"}


class InferenceServer(ThreadingHTTPServer):
    """POST {"id", "sleep", "status"} -> sleeps, answers {"answer": id} with that status.
    Records every call and the most requests it ever had in flight."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.active = self.peak = 0
        self.calls: list[str] = []

    @property
    def port(self) -> int:
        return self.server_address[1]

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The SIGTERM test stops the worker mid-request on purpose: a long request's connection is gone when its
        # answer is written, often after the test ended (outside pytest's capture). That is no error of the test.
        if isinstance(sys.exc_info()[1], BrokenPipeError | ConnectionResetError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    server: InferenceServer

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.calls.append(request["id"])
            self.server.active += 1
            self.server.peak = max(self.server.peak, self.server.active)
        try:
            time.sleep(request.get("sleep", 0))
            body = json.dumps({"answer": request["id"], "path": self.path}).encode()
            self.send_response(request.get("status", 200))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        finally:
            with self.server.lock:
                self.server.active -= 1

    def log_message(self, *args: Any) -> None:  # quiet
        pass


@pytest.fixture(scope="module")
def sqs_endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NO_PROXY", "127.0.0.1")  # this process's boto3 too: straight to the local server
        for name, value in DUMMY_AWS.items():
            patch.setenv(name, value)
        yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def server() -> Iterator[InferenceServer]:
    httpd = InferenceServer()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


class Queues:
    def __init__(self, endpoint: str, *, visibility: int, max_receive_count: int = 2):
        self.sqs = boto3.client("sqs", region_name=REGION, endpoint_url=endpoint, **_credentials())
        tag = uuid.uuid4().hex[:8]
        self.dead = self.sqs.create_queue(QueueName=f"dead-{tag}")["QueueUrl"]
        dead_arn = self.sqs.get_queue_attributes(QueueUrl=self.dead, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        redrive = json.dumps({"deadLetterTargetArn": dead_arn, "maxReceiveCount": max_receive_count})
        self.requests = self.sqs.create_queue(
            QueueName=f"requests-{tag}", Attributes={"VisibilityTimeout": str(visibility), "RedrivePolicy": redrive}
        )["QueueUrl"]
        self.responses = self.sqs.create_queue(QueueName=f"responses-{tag}")["QueueUrl"]

    def send(self, request_id: str, **request: Any) -> None:
        self.sqs.send_message(
            QueueUrl=self.requests,
            MessageBody=json.dumps({"id": request_id, **request}),
            MessageAttributes={"request-id": {"DataType": "String", "StringValue": request_id}},
        )

    def drain(self, url: str) -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = []
        while True:
            batch = self.sqs.receive_message(
                QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0, MessageAttributeNames=["All"]
            ).get("Messages", [])
            if not batch:
                return got
            got += batch
            for message in batch:
                self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])

    def depth(self, url: str) -> int:
        attrs = self.sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        )["Attributes"]
        return int(attrs["ApproximateNumberOfMessages"]) + int(attrs["ApproximateNumberOfMessagesNotVisible"])


def _credentials() -> dict[str, str]:
    return {
        "aws_access_key_id": DUMMY_AWS["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": DUMMY_AWS["AWS_SECRET_ACCESS_KEY"],
        "aws_session_token": DUMMY_AWS["AWS_SESSION_TOKEN"],
    }


def start_worker(
    endpoint: str, queues: Queues, server: InferenceServer, tmp_path: Path, **settings: Any
) -> subprocess.Popen[bytes]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        **DUMMY_AWS,
        "AWS_REGION": REGION,
        "AWS_ENDPOINT_URL_SQS": endpoint,
        "AWS_EC2_METADATA_DISABLED": "true",
        "NO_PROXY": "*",
        "QUEUE_CLIENT": "sqs_queue",
        "REQUEST_QUEUE_URL": queues.requests,
        "RESPONSE_QUEUE_URL": queues.responses,
        "SERVER_PORT": str(server.port),
        "TTL_SECONDS": "300",
        "WORKER_CONCURRENCY": "4",
        "LEASE_SECONDS": "1",
        "GENERATION_TIMEOUT_SECONDS": "30",
        "DRAIN_SECONDS": "5",
        "WAIT_SECONDS": "1",  # short long-polls keep the SIGTERM path quick
        **{key: str(value) for key, value in settings.items()},
    }
    log = (tmp_path / "worker.log").open("wb")
    # The files themselves, side by side as the boot script writes them, run as systemd runs the worker
    # on the replica (not the package import).
    directory = tmp_path / "opt-accelstack"
    directory.mkdir(exist_ok=True)
    for source in SHIPPED:
        shutil.copyfile(source, directory / source.name)
    worker = directory / "queue_worker.py"
    return subprocess.Popen([sys.executable, str(worker)], env=env, stdout=log, stderr=subprocess.STDOUT)


def stop_worker(process: subprocess.Popen[bytes], timeout: float = 15) -> float:
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        assert process.wait(timeout) == 0
    finally:
        if process.poll() is None:
            process.kill()
    return time.monotonic() - started


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_n_requests_in_flight_answers_carry_the_request_id_and_long_ones_are_not_redelivered(
    sqs_endpoint, server, tmp_path
):
    queues = Queues(sqs_endpoint, visibility=1)
    ids = [f"req-{i}" for i in range(8)]
    for request_id in ids:
        queues.send(request_id, sleep=1.5)  # longer than the 1 s visibility timeout
    worker = start_worker(sqs_endpoint, queues, server, tmp_path, WORKER_CONCURRENCY=4)
    try:
        answers: list[dict[str, Any]] = []
        wait_for(lambda: answers.extend(queues.drain(queues.responses)) or len(answers) >= 8, 20, "8 answers")
    finally:
        stop_worker(worker)
    assert server.peak == 4  # the batch the server saw: N at once, never more
    by_id = {a["MessageAttributes"]["request-id"]["StringValue"]: json.loads(a["Body"]) for a in answers}
    assert by_id == {i: {"answer": i, "path": "/v1/chat/completions"} for i in ids}
    # Visibility was extended while each generation ran: no request was served twice.
    assert Counter(server.calls) == Counter(ids)
    assert queues.depth(queues.requests) == 0 and queues.depth(queues.dead) == 0


def test_expired_requests_are_dropped_and_failures_go_back_then_to_the_dead_letter_queue(
    sqs_endpoint, server, tmp_path
):
    ttl = 3
    queues = Queues(sqs_endpoint, visibility=1, max_receive_count=2)
    for i in range(3):
        queues.send(f"stale-{i}")
    time.sleep(ttl + 0.2)  # the stale ones are now past the TTL (SentTimestamp has 1 ms resolution)
    worker = start_worker(sqs_endpoint, queues, server, tmp_path, TTL_SECONDS=ttl)
    try:
        # The worker receives once it has deleted the stale requests: only then are the others sent,
        # so they get the whole TTL however long the worker took to start (~3 s on a loaded host).
        wait_for(lambda: queues.depth(queues.requests) == 0, 30, "the stale requests dropped")
        queues.send("fresh")
        queues.send("broken", status=500)
        answers: list[dict[str, Any]] = []
        wait_for(lambda: answers.extend(queues.drain(queues.responses)) or len(answers) >= 1, 10, "the fresh answer")
        # Received, failed, visible again after 1 s, received and failed again, then dead-lettered.
        wait_for(lambda: server.calls.count("broken") >= 2, 10, "the failed request's redelivery")
        dead: list[dict[str, Any]] = []
        wait_for(lambda: dead.extend(queues.drain(queues.dead)) or len(dead) >= 1, 10, "the dead letter")
    finally:
        stop_worker(worker)
    assert [a["MessageAttributes"]["request-id"]["StringValue"] for a in answers] == ["fresh"]
    assert [json.loads(d["Body"])["id"] for d in dead] == ["broken"]
    assert server.calls.count("broken") == 2  # maxReceiveCount receives, then no more
    assert not [c for c in server.calls if c.startswith("stale")]  # dropped without a server call
    assert queues.depth(queues.requests) == 0  # ...and deleted, not left to expire


def test_sigterm_finishes_short_work_and_releases_long_work_to_other_replicas(sqs_endpoint, server, tmp_path):
    queues = Queues(sqs_endpoint, visibility=30, max_receive_count=5)
    queues.send("short", sleep=0.5)
    queues.send("long", sleep=20)
    worker = start_worker(sqs_endpoint, queues, server, tmp_path, LEASE_SECONDS=30, DRAIN_SECONDS=2)
    wait_for(lambda: server.active == 2, 10, "both requests in flight")
    took = stop_worker(worker)
    assert took < 2 + 1 + 3  # drain bound + one long poll + process exit
    answers = queues.drain(queues.responses)
    assert [a["MessageAttributes"]["request-id"]["StringValue"] for a in answers] == ["short"]
    # Released (visibility 0), not hidden for the remaining ~28 s: another replica gets it at once.
    released = queues.sqs.receive_message(QueueUrl=queues.requests, WaitTimeSeconds=1).get("Messages", [])
    assert [json.loads(m["Body"])["id"] for m in released] == ["long"]
