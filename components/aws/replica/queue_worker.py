"""Admission-queue worker of one serving replica: drains the SQS request queue into the local
inference server, keeping up to N requests in flight so the server's continuous batching has work.

Runs on the replica as a systemd unit (python3 >= 3.8 + boto3, stdlib otherwise), configured by the
environment the boot script writes (see `Config.from_env`); `components.aws.serving` ships this file
verbatim in the launch template's user data.

Per message: a request older than its TTL is deleted without calling the server (nobody waits for
it any more); otherwise it is POSTed to the server, the answer goes to the response queue tagged
with the request id, and only then is the request deleted. While a generation runs, its message's
visibility is extended, so a long generation is neither cut off nor served twice. A failed call
leaves the message alone: it becomes visible again and, after maxReceiveCount receives, moves to the
dead-letter queue. On SIGTERM the worker stops receiving, lets in-flight requests finish for a
bounded time, and releases the rest (visibility 0) to other replicas.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

log = logging.getLogger("accelstack.queue_worker")

SQS_MAX_BATCH = 10  # ReceiveMessage / ChangeMessageVisibilityBatch limit
DEFAULT_PATH = "/v1/chat/completions"
# Producers choose the OpenAI-compatible endpoint with the `path` attribute; nothing else is reachable.
ALLOWED_PATH_PREFIX = "/v1/"
REQUEST_ID_ATTRIBUTE = "request-id"
# Client errors that fail the same way on every attempt (bad JSON, prompt longer than the context):
# answered with their status and deleted instead of burning receives on the way to the DLQ.
# 408 and 429 are transient: those messages are left for redelivery like server errors.
TRANSIENT_CLIENT_ERRORS = frozenset({408, 429})


@dataclass(frozen=True)
class Config:
    request_queue_url: str
    response_queue_url: str
    server_url: str  # the local inference server, e.g. http://127.0.0.1:8000
    ttl_seconds: float  # requests older than this (since SentTimestamp) are dropped
    concurrency: int  # requests in flight against the server
    visibility_timeout_seconds: int  # each extension hides a message this long again
    generation_timeout_seconds: float  # longest a single call to the server may take
    drain_seconds: float  # after SIGTERM, in-flight requests get this long to finish
    region: Optional[str] = None
    endpoint_url: Optional[str] = None
    wait_seconds: int = 20  # SQS long polling (maximum 20)

    @property
    def heartbeat_seconds(self) -> float:
        # Extend well before the current visibility runs out: a third of it leaves two misses of slack.
        return max(0.2, self.visibility_timeout_seconds / 3)

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> "Config":
        def number(name: str, default: Optional[str] = None) -> float:
            raw = env.get(name, default)
            if raw is None:
                raise SystemExit(f"queue worker: environment variable {name} is not set")
            try:
                return float(raw)
            except ValueError:
                raise SystemExit(f"queue worker: {name}={raw!r} is not a number") from None

        missing = [n for n in ("REQUEST_QUEUE_URL", "RESPONSE_QUEUE_URL", "SERVER_PORT") if not env.get(n)]
        if missing:
            raise SystemExit(f"queue worker: environment variable(s) {', '.join(missing)} not set")
        visibility = int(number("VISIBILITY_TIMEOUT"))
        concurrency = int(number("WORKER_CONCURRENCY", "1"))
        if concurrency < 1 or visibility < 1:
            raise SystemExit("queue worker: WORKER_CONCURRENCY and VISIBILITY_TIMEOUT must be >= 1")
        return cls(
            request_queue_url=env["REQUEST_QUEUE_URL"],
            response_queue_url=env["RESPONSE_QUEUE_URL"],
            server_url=f"http://127.0.0.1:{int(number('SERVER_PORT'))}",
            ttl_seconds=number("TTL_SECONDS"),
            concurrency=concurrency,
            visibility_timeout_seconds=visibility,
            generation_timeout_seconds=number("GENERATION_TIMEOUT_SECONDS", str(visibility)),
            drain_seconds=number("DRAIN_SECONDS", "30"),
            region=env.get("AWS_REGION") or None,
            endpoint_url=env.get("AWS_ENDPOINT_URL_SQS") or env.get("AWS_ENDPOINT_URL") or None,
            wait_seconds=int(min(20, max(0, number("WAIT_SECONDS", "20")))),
        )


@dataclass
class Counters:
    received: int = 0
    answered: int = 0  # answer sent and request deleted
    expired: int = 0  # past the TTL: deleted without a server call
    failed: int = 0  # left for redelivery
    released: int = 0  # handed back on shutdown
    extensions: int = 0  # visibility extensions sent
    max_in_flight: int = 0


@dataclass
class _InFlight:
    receipt_handle: str
    extend_until: float  # no extension past this: the call has timed out by then


@dataclass
class QueueWorker:
    config: Config
    sqs: Any  # a boto3 SQS client (or anything with the same methods)
    clock: Callable[[], float] = time.time
    counters: Counters = field(default_factory=Counters)

    def __post_init__(self) -> None:
        self._slots = threading.Condition()
        self._in_flight: Dict[str, _InFlight] = {}  # message id -> receipt
        self._stopping = threading.Event()
        self._counting = threading.Lock()
        # Never through a proxy: the server is on this host.
        self._http = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    # --- control -----------------------------------------------------------------------------

    def stop(self, *_: object) -> None:
        """Stop receiving (signal-handler compatible); `run` then drains and returns."""
        self._stopping.set()
        with self._slots:
            self._slots.notify_all()

    @property
    def in_flight(self) -> int:
        with self._slots:
            return len(self._in_flight)

    def run(self) -> Counters:
        heartbeat = threading.Thread(target=self._heartbeat, name="visibility-heartbeat", daemon=True)
        heartbeat.start()
        try:
            while not self._stopping.is_set():
                free = self._wait_for_free_slots()
                if free == 0:
                    continue
                try:
                    messages = self._receive(min(SQS_MAX_BATCH, free))
                except Exception:  # noqa: BLE001 - throttling or a network blip must not kill the worker
                    log.exception("receive failed; retrying")
                    self._stopping.wait(1.0)
                    continue
                for message in messages:
                    try:
                        self._dispatch(message)
                    except Exception:  # noqa: BLE001 - e.g. a failed delete: the message simply returns
                        log.exception("dispatch of %s failed", message.get("MessageId"))
        finally:
            self._drain()
        return self.counters

    def _count(self, **increments: int) -> None:
        with self._counting:
            for name, value in increments.items():
                setattr(self.counters, name, getattr(self.counters, name) + value)

    # --- receive and dispatch -------------------------------------------------------------------

    def _wait_for_free_slots(self) -> int:
        with self._slots:
            while len(self._in_flight) >= self.config.concurrency and not self._stopping.is_set():
                self._slots.wait(timeout=1.0)
            return 0 if self._stopping.is_set() else self.config.concurrency - len(self._in_flight)

    def _receive(self, count: int) -> List[Dict[str, Any]]:
        response = self.sqs.receive_message(
            QueueUrl=self.config.request_queue_url,
            MaxNumberOfMessages=count,
            WaitTimeSeconds=self.config.wait_seconds,
            VisibilityTimeout=self.config.visibility_timeout_seconds,
            AttributeNames=["SentTimestamp", "ApproximateReceiveCount"],
            MessageAttributeNames=["All"],
        )
        messages = response.get("Messages", [])
        self._count(received=len(messages))
        return messages

    def _dispatch(self, message: Dict[str, Any]) -> None:
        if self._stopping.is_set():  # arrived during the last long poll after SIGTERM
            self._release([(message["MessageId"], message["ReceiptHandle"])])
            return
        sent = int(message.get("Attributes", {}).get("SentTimestamp", "0")) / 1000
        now = self.clock()
        if sent and now - sent > self.config.ttl_seconds:
            # Past its TTL nobody waits for the answer any more: drop it without spending the GPU.
            self._delete(message)
            self._count(expired=1)
            log.info("dropped %s: %.0f s old, TTL %.0f s", request_id(message), now - sent, self.config.ttl_seconds)
            return
        with self._slots:
            self._in_flight[message["MessageId"]] = _InFlight(
                message["ReceiptHandle"], now + self.config.generation_timeout_seconds
            )
            self.counters.max_in_flight = max(self.counters.max_in_flight, len(self._in_flight))
        threading.Thread(target=self._serve, args=(message,), name=f"serve-{message['MessageId']}", daemon=True).start()

    def _serve(self, message: Dict[str, Any]) -> None:
        rid = request_id(message)
        try:
            status, body = self._call_server(message)
            if status >= 500 or status in TRANSIENT_CLIENT_ERRORS:
                raise RuntimeError(f"server answered {status}")
            self.sqs.send_message(
                QueueUrl=self.config.response_queue_url,
                MessageBody=body or "{}",
                MessageAttributes={
                    REQUEST_ID_ATTRIBUTE: {"DataType": "String", "StringValue": rid},
                    "status": {"DataType": "Number", "StringValue": str(status)},
                },
            )
            # Only now: a crash before this line returns the request instead of losing it.
            self._delete(message)
            self._count(answered=1)
        except Exception as error:  # noqa: BLE001 - any failure leaves the message for redelivery
            self._count(failed=1)
            log.warning("request %s failed (left for redelivery): %s", rid, error)
        finally:
            with self._slots:
                self._in_flight.pop(message["MessageId"], None)
                self._slots.notify_all()

    def _call_server(self, message: Dict[str, Any]) -> Tuple[int, str]:
        path = message_attribute(message, "path") or DEFAULT_PATH
        if not path.startswith(ALLOWED_PATH_PREFIX) or ".." in path:
            return 400, '{"error": "path must be under /v1/"}'
        request = urllib.request.Request(
            self.config.server_url + path,
            data=message["Body"].encode(),
            headers={"Content-Type": "application/json", "X-Request-Id": request_id(message)},
            method="POST",
        )
        try:
            with self._http.open(request, timeout=self.config.generation_timeout_seconds) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:  # an answer, just not a 2xx one
            return error.code, error.read().decode(errors="replace")

    def _delete(self, message: Dict[str, Any]) -> None:
        self.sqs.delete_message(QueueUrl=self.config.request_queue_url, ReceiptHandle=message["ReceiptHandle"])

    # --- visibility -----------------------------------------------------------------------------

    def _heartbeat(self) -> None:
        """Keep in-flight messages hidden while their generations run (ChangeMessageVisibility)."""
        while True:
            time.sleep(self.config.heartbeat_seconds)
            try:
                now = self.clock()
                with self._slots:
                    due = [(mid, f.receipt_handle) for mid, f in self._in_flight.items() if f.extend_until > now]
                if due:
                    self._change_visibility(due, self.config.visibility_timeout_seconds)
                    self._count(extensions=len(due))
            except Exception:  # noqa: BLE001 - a dead heartbeat would let long generations be served twice
                log.exception("visibility heartbeat failed; retrying")

    def _change_visibility(self, messages: List[Tuple[str, str]], seconds: int) -> None:
        for start in range(0, len(messages), SQS_MAX_BATCH):
            chunk = messages[start : start + SQS_MAX_BATCH]
            entries = [
                {"Id": str(index), "ReceiptHandle": handle, "VisibilityTimeout": seconds}
                for index, (_, handle) in enumerate(chunk)
            ]
            try:
                result = self.sqs.change_message_visibility_batch(QueueUrl=self.config.request_queue_url, Entries=entries)
            except Exception:  # noqa: BLE001 - the next heartbeat retries
                log.exception("ChangeMessageVisibilityBatch failed")
                continue
            for failure in result.get("Failed", []):
                # Usually a message answered and deleted between the snapshot and this call.
                log.debug("visibility change %s failed: %s", failure.get("Id"), failure.get("Message"))

    # --- shutdown -------------------------------------------------------------------------------

    def _drain(self) -> None:
        deadline = time.monotonic() + self.config.drain_seconds
        with self._slots:
            while self._in_flight and time.monotonic() < deadline:
                self._slots.wait(timeout=min(1.0, max(0.0, deadline - time.monotonic())))
            left = [(mid, f.receipt_handle) for mid, f in self._in_flight.items()]
            self._in_flight.clear()  # their threads die with the process; their answers are not sent
        if left:
            self._release(left)

    def _release(self, messages: List[Tuple[str, str]]) -> None:
        """Visible again now: another replica serves them instead of waiting out the timeout."""
        self._change_visibility(messages, 0)
        self._count(released=len(messages))
        log.info("released %d unfinished request(s) to other replicas", len(messages))


def message_attribute(message: Dict[str, Any], name: str) -> Optional[str]:
    return message.get("MessageAttributes", {}).get(name, {}).get("StringValue")


def request_id(message: Dict[str, Any]) -> str:
    """The producer's `request-id` attribute, else the SQS message id (what SendMessage returned)."""
    return message_attribute(message, REQUEST_ID_ATTRIBUTE) or message["MessageId"]


def sqs_client(config: Config) -> Any:
    import boto3  # on the replica only; the boot script installs it if the image lacks it

    return boto3.client("sqs", region_name=config.region, endpoint_url=config.endpoint_url)


def main(env: Mapping[str, str] = os.environ) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    config = Config.from_env(env)
    worker = QueueWorker(config, sqs_client(config))
    signal.signal(signal.SIGTERM, worker.stop)
    signal.signal(signal.SIGINT, worker.stop)
    log.info(
        "draining %s into %s, %d in flight, TTL %.0f s",
        config.request_queue_url, config.server_url, config.concurrency, config.ttl_seconds,
    )  # fmt: skip
    counters = worker.run()
    log.info("stopped: %s", counters)
    return 0


if __name__ == "__main__":
    sys.exit(main())
