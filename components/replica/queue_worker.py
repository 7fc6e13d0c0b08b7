"""Admission-queue worker of a serving replica: keeps N requests in flight against the local
inference server. Drives the `QueueClient` (see accelstack.components.replica.queue_client) that the
cloud ships beside this file as the module QUEUE_CLIENT names. python3 >= 3.8, stdlib.

Past its TTL a request is completed unserved; else it is served, answered, then completed, its lease
extended meanwhile. A failure leaves it to redelivery (then the dead-letter queue). On SIGTERM: stop
receiving, let in-flight requests finish for a bounded time, release the rest.
"""

from __future__ import annotations

import importlib
import logging
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Tuple

if TYPE_CHECKING:  # not shipped: the replica needs no type
    from accelstack.components.replica.queue_client import QueueClient

log = logging.getLogger("accelstack.queue_worker")

DEFAULT_PATH = "/v1/chat/completions"
# Producers choose the OpenAI-compatible endpoint with the `path` attribute; nothing else is reachable.
ALLOWED_PATH_PREFIX = "/v1/"
REQUEST_ID_ATTRIBUTE = "request-id"
# Client errors that fail the same way on every attempt (bad JSON, prompt longer than the context):
# answered with their status and completed instead of burning deliveries on the way to the DLQ.
# 408 and 429 are transient: those messages are left for redelivery like server errors.
TRANSIENT_CLIENT_ERRORS = frozenset({408, 429})


@dataclass(frozen=True)
class Message:
    id: str  # the same on every delivery
    body: str
    lease: str  # receipt handle, lock token, ack id
    sent_at: float = 0.0  # epoch seconds (0: unknown)
    attributes: Mapping[str, str] = field(default_factory=dict)  # the producer's
    deliveries: int = 1


@dataclass(frozen=True)
class Config:
    server_url: str  # the local inference server, e.g. http://127.0.0.1:8000
    ttl_seconds: float  # requests older than this (since they were sent) are dropped
    concurrency: int  # requests in flight against the server
    lease_seconds: int  # each extension leases a message this long again
    generation_timeout_seconds: float  # longest a single call to the server may take
    drain_seconds: float  # after SIGTERM, in-flight requests get this long to finish
    wait_seconds: int = 20  # long polling (SQS's maximum is 20)
    queue_client: str = ""  # module beside this file providing `from_env(env) -> QueueClient`

    @property
    def heartbeat_seconds(self) -> float:
        # Extend well before the current lease runs out: a third of it leaves two misses of slack.
        return max(0.2, self.lease_seconds / 3)

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

        missing = [n for n in ("QUEUE_CLIENT", "SERVER_PORT") if not env.get(n)]
        if missing:
            raise SystemExit(f"queue worker: environment variable(s) {', '.join(missing)} not set")
        lease = int(number("LEASE_SECONDS"))
        concurrency = int(number("WORKER_CONCURRENCY", "1"))
        if concurrency < 1 or lease < 1:
            raise SystemExit("queue worker: WORKER_CONCURRENCY and LEASE_SECONDS must be >= 1")
        return cls(
            server_url=f"http://127.0.0.1:{int(number('SERVER_PORT'))}",
            ttl_seconds=number("TTL_SECONDS"),
            concurrency=concurrency,
            lease_seconds=lease,
            generation_timeout_seconds=number("GENERATION_TIMEOUT_SECONDS", str(lease)),
            drain_seconds=number("DRAIN_SECONDS", "30"),
            wait_seconds=int(min(20, max(0, number("WAIT_SECONDS", "20")))),
            queue_client=env["QUEUE_CLIENT"],
        )


@dataclass
class Counters:
    received: int = 0
    answered: int = 0  # answer sent and request completed
    expired: int = 0  # past the TTL: completed without a server call
    failed: int = 0  # left for redelivery
    released: int = 0  # handed back on shutdown
    extensions: int = 0  # lease extensions sent
    max_in_flight: int = 0


@dataclass
class _InFlight:
    message: Message
    extend_until: float  # no extension past this: the call has timed out by then


@dataclass
class QueueWorker:
    config: Config
    queue: QueueClient
    clock: Callable[[], float] = time.time
    counters: Counters = field(default_factory=Counters)

    def __post_init__(self) -> None:
        self._slots = threading.Condition()
        self._in_flight: Dict[str, _InFlight] = {}  # message id -> its current delivery
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
        heartbeat = threading.Thread(target=self._heartbeat, name="lease-heartbeat", daemon=True)
        heartbeat.start()
        try:
            while not self._stopping.is_set():
                free = self._wait_for_free_slots()
                if free == 0:
                    continue
                try:
                    messages = self._receive(min(self.queue.max_batch, free))
                except Exception:  # noqa: BLE001 - throttling or a network blip must not kill the worker
                    log.exception("receive failed; retrying")
                    self._stopping.wait(1.0)
                    continue
                for message in messages:
                    try:
                        self._dispatch(message)
                    except Exception:  # noqa: BLE001 - e.g. a failed complete: the message simply returns
                        log.exception("dispatch of %s failed", message.id)
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

    def _receive(self, count: int) -> List[Message]:
        messages = self.queue.receive(count, self.config.lease_seconds, self.config.wait_seconds)
        self._count(received=len(messages))
        return messages

    def _dispatch(self, message: Message) -> None:
        if self._stopping.is_set():  # arrived during the last long poll after SIGTERM
            self._release([message])
            return
        now = self.clock()
        if message.sent_at and now - message.sent_at > self.config.ttl_seconds:
            # Past its TTL nobody waits for the answer any more: drop it without spending the GPU.
            self.queue.complete(message)
            self._count(expired=1)
            log.info(
                "dropped %s: %.0f s old, TTL %.0f s", request_id(message), now - message.sent_at, self.config.ttl_seconds
            )
            return
        with self._slots:
            self._in_flight[message.id] = _InFlight(message, now + self.config.generation_timeout_seconds)
            self.counters.max_in_flight = max(self.counters.max_in_flight, len(self._in_flight))
        threading.Thread(target=self._serve, args=(message,), name=f"serve-{message.id}", daemon=True).start()

    def _serve(self, message: Message) -> None:
        rid = request_id(message)
        try:
            status, body = self._call_server(message)
            if status >= 500 or status in TRANSIENT_CLIENT_ERRORS:
                raise RuntimeError(f"server answered {status}")
            self.queue.reply(rid, status, body or "{}")
            # Only now: a crash before this line returns the request instead of losing it.
            self.queue.complete(message)
            self._count(answered=1)
        except Exception as error:  # noqa: BLE001 - any failure leaves the message for redelivery
            self._count(failed=1)
            log.warning("request %s failed on delivery %d (left for redelivery): %s", rid, message.deliveries, error)
        finally:
            with self._slots:
                self._in_flight.pop(message.id, None)
                self._slots.notify_all()

    def _call_server(self, message: Message) -> Tuple[int, str]:
        path = message.attributes.get("path") or DEFAULT_PATH
        if not path.startswith(ALLOWED_PATH_PREFIX) or ".." in path:
            return 400, '{"error": "path must be under /v1/"}'
        request = urllib.request.Request(
            self.config.server_url + path,
            data=message.body.encode(),
            headers={"Content-Type": "application/json", "X-Request-Id": request_id(message)},
            method="POST",
        )
        try:
            with self._http.open(request, timeout=self.config.generation_timeout_seconds) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:  # an answer, just not a 2xx one
            return error.code, error.read().decode(errors="replace")

    # --- leases ---------------------------------------------------------------------------------

    def _heartbeat(self) -> None:
        """Keep in-flight messages leased while their generations run."""
        while True:
            time.sleep(self.config.heartbeat_seconds)
            try:
                now = self.clock()
                with self._slots:
                    due = [f.message for f in self._in_flight.values() if f.extend_until > now]
                if due:
                    self.queue.extend(due, self.config.lease_seconds)
                    self._count(extensions=len(due))
            except Exception:  # noqa: BLE001 - a dead heartbeat would let long generations be served twice
                log.exception("lease heartbeat failed; retrying")

    # --- shutdown -------------------------------------------------------------------------------

    def _drain(self) -> None:
        deadline = time.monotonic() + self.config.drain_seconds
        with self._slots:
            while self._in_flight and time.monotonic() < deadline:
                self._slots.wait(timeout=min(1.0, max(0.0, deadline - time.monotonic())))
            left = [f.message for f in self._in_flight.values()]
            self._in_flight.clear()  # their threads die with the process; their answers are not sent
        if left:
            self._release(left)

    def _release(self, messages: List[Message]) -> None:
        """Available again now: another replica serves them instead of waiting out the lease."""
        try:
            self.queue.release(messages)
        except Exception:  # noqa: BLE001 - they return anyway when their lease ends
            log.exception("release of %d request(s) failed; they return when their lease ends", len(messages))
            return
        self._count(released=len(messages))
        log.info("released %d unfinished request(s) to other replicas", len(messages))


def request_id(message: Message) -> str:
    """The producer's `request-id` attribute, else the queue's message id."""
    return message.attributes.get(REQUEST_ID_ATTRIBUTE) or message.id


def load_queue_client(config: Config, env: Mapping[str, str]) -> QueueClient:
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    # The client imports `queue_worker` (for Message): this module, not the file loaded twice.
    sys.modules.setdefault("queue_worker", sys.modules[__name__])
    try:
        module = importlib.import_module(config.queue_client)
    except ImportError as error:
        raise SystemExit(f"queue worker: QUEUE_CLIENT={config.queue_client!r} cannot be imported: {error}") from None
    return module.from_env(env)  # type: ignore[no-any-return]


def main(env: Mapping[str, str] = os.environ) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    config = Config.from_env(env)
    worker = QueueWorker(config, load_queue_client(config, env))
    signal.signal(signal.SIGTERM, worker.stop)
    signal.signal(signal.SIGINT, worker.stop)
    log.info(
        "draining %s into %s, %d in flight, TTL %.0f s",
        worker.queue, config.server_url, config.concurrency, config.ttl_seconds,
    )  # fmt: skip
    counters = worker.run()
    log.info("stopped: %s", counters)
    return 0


if __name__ == "__main__":
    sys.exit(main())
