"""Admission on the replica, for the direct serving topology: the load balancer sends requests straight to the
replicas, and each replica admits them itself in front of its local inference server. python3 >= 3.8, stdlib.

- At most `concurrency` requests in flight to the server (the plan's per-replica concurrency); up to
  `max_waiting` more wait their turn, each for at most `ttl_seconds`. A full queue, or a wait past its TTL, is
  refused with 503 and Retry-After: the caller retries elsewhere instead of queueing into a miss.
- Per client, at most `per_client_rate` requests per `rate_window_seconds` (a token bucket refilled evenly, the
  load balancer's WAF rule enforced again where the cloud has none): past it, 429 with Retry-After. The client is
  the address the load balancer saw, read from X-Forwarded-For at `client_hop` from the right (entries further
  left are the client's own claim, so a spoofed header cannot spread one client over many buckets).
- Only the server's OpenAI-compatible API (/v1/...) and its health path are reachable; bodies are bounded.
- SIGTERM stops admitting (503) and lets in-flight requests finish for `drain_seconds`.
Responses stream back as the server writes them (server-sent events pass through unbuffered).
"""

from __future__ import annotations

import http.client
import logging
import math
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, Mapping, Optional, Tuple

log = logging.getLogger("accelstack.admission_proxy")

API_PREFIX = "/v1/"
# Hop-by-hop headers (RFC 9110 section 7.6.1) are the proxy's own on each side, never forwarded.
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host"}
)
CHUNK_BYTES = 64 * 1024


@dataclass(frozen=True)
class Config:
    listen_port: int  # where the load balancer sends requests and health checks
    server_port: int  # the local inference server (127.0.0.1 only)
    health_path: str  # the load balancer's health check, answered by the server's
    concurrency: int  # requests in flight to the server
    max_waiting: int  # requests waiting for a slot; more are refused
    ttl_seconds: float  # longest a request waits for a slot
    per_client_rate: int  # requests per client per window (0: no per-client limit)
    rate_window_seconds: float
    client_hop: int  # X-Forwarded-For entry, from the right, that the load balancer wrote (1: the last)
    max_body_bytes: int = 16 * 1024 * 1024
    generation_timeout_seconds: float = 600.0
    drain_seconds: float = 30.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Config:
        """ACCELSTACK_ADMISSION_* variables (the replica's environment file); a missing one is a KeyError."""

        def value(name: str) -> str:
            return env[f"ACCELSTACK_ADMISSION_{name}"]

        return cls(
            listen_port=int(value("LISTEN_PORT")),
            server_port=int(value("SERVER_PORT")),
            health_path=value("HEALTH_PATH"),
            concurrency=int(value("CONCURRENCY")),
            max_waiting=int(value("MAX_WAITING")),
            ttl_seconds=float(value("TTL_SECONDS")),
            per_client_rate=int(value("PER_CLIENT_RATE")),
            rate_window_seconds=float(value("RATE_WINDOW_SECONDS")),
            client_hop=int(value("CLIENT_HOP")),
            generation_timeout_seconds=float(value("GENERATION_TIMEOUT_SECONDS")),
            drain_seconds=float(value("DRAIN_SECONDS")),
        )

    def problems(self) -> list:
        found = []
        if not 0 < self.listen_port < 65536 or not 0 < self.server_port < 65536 or self.listen_port == self.server_port:
            found.append("listen and server ports must be distinct TCP ports")
        if self.concurrency < 1 or self.max_waiting < 0 or self.ttl_seconds <= 0 or self.client_hop < 1:
            found.append("concurrency >= 1, max_waiting >= 0, ttl_seconds > 0, client_hop >= 1")
        if self.per_client_rate < 0 or self.rate_window_seconds <= 0:
            found.append("per_client_rate >= 0 and rate_window_seconds > 0")
        if not self.health_path.startswith("/"):
            found.append("health_path must start with /")
        return found


class ClientBuckets:
    """A token bucket per client: `rate` tokens per `window` seconds, refilled evenly, `rate` at most."""

    def __init__(self, rate: int, window: float, clock=time.monotonic):
        self.rate, self.window, self.clock = rate, window, clock
        self._buckets: Dict[str, Tuple[float, float]] = {}  # client -> (tokens, last refill)
        self._lock = threading.Lock()

    def take(self, client: str) -> float:
        """0 when the client may send now (a token is taken); else the seconds until it may."""
        if self.rate <= 0:
            return 0.0
        per_second = self.rate / self.window
        now = self.clock()
        with self._lock:
            tokens, last = self._buckets.get(client, (float(self.rate), now))
            tokens = min(float(self.rate), tokens + (now - last) * per_second)
            if tokens >= 1.0:
                self._buckets[client] = (tokens - 1.0, now)
                return 0.0
            self._buckets[client] = (tokens, now)
            if len(self._buckets) > 100_000:  # forget full buckets: a full one is the same as none
                full = [c for c, (t, _) in self._buckets.items() if t >= self.rate]
                for key in full:
                    del self._buckets[key]
            return (1.0 - tokens) / per_second


class Admission:
    """The slots to the server and the bounded wait for them."""

    def __init__(self, concurrency: int, max_waiting: int):
        self._slots = threading.BoundedSemaphore(concurrency)
        self._lock = threading.Lock()
        self.max_waiting = max_waiting
        self.waiting = 0
        self.draining = False

    def enter(self, ttl_seconds: float) -> Optional[str]:
        """None once a slot is held (call `leave`); else why the request is refused."""
        if self.draining:
            return "draining"
        if self._slots.acquire(blocking=False):
            return None
        with self._lock:
            if self.waiting >= self.max_waiting:
                return "queue full"
            self.waiting += 1
        try:
            acquired = self._slots.acquire(timeout=ttl_seconds)
        finally:
            with self._lock:
                self.waiting -= 1
        if not acquired:
            return "waited past its TTL"
        if self.draining:
            self._slots.release()
            return "draining"
        return None

    def leave(self) -> None:
        self._slots.release()


def client_address(forwarded_for: Optional[str], peer: str, hop: int) -> str:
    """The address the load balancer saw: X-Forwarded-For's `hop`-th entry from the right (without a port, as
    some load balancers write ip:port), or the peer when the header has fewer entries."""
    entries = [e.strip() for e in (forwarded_for or "").split(",") if e.strip()]
    if len(entries) < hop:
        return peer
    entry = entries[-hop]
    if entry.startswith("["):  # [v6]:port
        return entry[1 : entry.find("]")] if "]" in entry else entry
    if entry.count(":") == 1:  # v4:port
        return entry.split(":", 1)[0]
    return entry


class Proxy(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, config: Config, clock=time.monotonic):
        self.config = config
        self.buckets = ClientBuckets(config.per_client_rate, config.rate_window_seconds, clock)
        self.admission = Admission(config.concurrency, config.max_waiting)
        super().__init__(("0.0.0.0", config.listen_port), Handler)


class Handler(BaseHTTPRequestHandler):
    server: Proxy
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        log.debug("%s " + format, self.address_string(), *args)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._handle()

    def do_POST(self) -> None:  # noqa: N802
        self._handle()

    def _refuse(self, status: int, reason: str, retry_after: Optional[float] = None) -> None:
        body = ('{"error": "%s"}' % reason).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if retry_after is not None:
            self.send_header("Retry-After", str(max(1, math.ceil(retry_after))))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> Optional[bytes]:
        length = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding"):
            self._refuse(411, "a Content-Length is required")
            return None
        if length is None:
            return b""
        if not length.isdigit() or int(length) > self.server.config.max_body_bytes:
            self._refuse(413, "request body too large")
            return None
        return self.rfile.read(int(length))

    def _handle(self) -> None:
        config = self.server.config
        path = self.path.split("?", 1)[0]
        if path == config.health_path:
            if self.server.admission.draining:
                self._refuse(503, "draining")
                return
            self._forward(b"" if self.command == "GET" else self._body(), hold_slot=False)
            return
        if not path.startswith(API_PREFIX) or ".." in path:
            self._refuse(404, "not found")
            return
        client = client_address(self.headers.get("X-Forwarded-For"), self.client_address[0], config.client_hop)
        wait = self.server.buckets.take(client)
        if wait > 0:
            self._refuse(429, "per-client rate exceeded", wait)
            return
        body = self._body()
        if body is None:
            return
        refused = self.server.admission.enter(config.ttl_seconds)
        if refused is not None:
            self._refuse(503, refused, config.ttl_seconds)
            return
        try:
            self._forward(body, hold_slot=True)
        finally:
            self.server.admission.leave()

    def _forward(self, body: Optional[bytes], hold_slot: bool) -> None:
        if body is None:
            return
        config = self.server.config
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        headers["Content-Length"] = str(len(body))
        timeout = config.generation_timeout_seconds if hold_slot else 10.0
        upstream = http.client.HTTPConnection("127.0.0.1", config.server_port, timeout=timeout)
        try:
            upstream.request(self.command, self.path, body=body, headers=headers)
            response = upstream.getresponse()
        except OSError:
            self._refuse(503, "inference server unavailable", 5)
            upstream.close()
            return
        try:
            self.send_response(response.status, response.reason)
            for key, value in response.getheaders():
                if key.lower() not in HOP_BY_HOP and key.lower() != "content-length":
                    self.send_header(key, value)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while True:
                chunk = response.read1(CHUNK_BYTES) if hasattr(response, "read1") else response.read(CHUNK_BYTES)
                if not chunk:
                    break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True  # the client went away, or the server did mid-stream
        finally:
            upstream.close()


def serve(config: Config) -> None:
    proxy = Proxy(config)

    def drain(signum: int, frame: object) -> None:
        proxy.admission.draining = True
        log.info("draining for up to %.0f s", config.drain_seconds)
        threading.Timer(config.drain_seconds, proxy.shutdown).start()

    signal.signal(signal.SIGTERM, drain)
    log.info("admitting on :%d for 127.0.0.1:%d", config.listen_port, config.server_port)
    proxy.serve_forever()


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        config = Config.from_env(os.environ)
    except (KeyError, ValueError) as error:
        print(f"accelstack admission proxy: bad environment: {error}", file=sys.stderr)
        return 2
    problems = config.problems()
    if problems:
        print(f"accelstack admission proxy: {'; '.join(problems)}", file=sys.stderr)
        return 2
    serve(config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
