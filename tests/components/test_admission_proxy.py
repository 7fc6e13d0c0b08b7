"""The replica's admission proxy (direct topology), run for real on loopback in front of a fake inference server:
bounded in-flight and waiting requests, TTL, per-client token buckets keyed by the load balancer's hop, the API
and health paths only, streaming, draining."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from accelstack.components.replica.admission_proxy import ClientBuckets, Config, Proxy, client_address


class FakeServer(BaseHTTPRequestHandler):
    """The inference server: /health answers `healthy`; /v1/ waits `delay` seconds, then streams two chunks."""

    protocol_version = "HTTP/1.1"
    delay = 0.0
    healthy = True
    seen: ClassVar[list[dict[str, str]]] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        status = 200 if type(self).healthy else 503
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        type(self).seen.append(dict(self.headers.items()))
        time.sleep(type(self).delay)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for part in (b"data: " + body + b"\n\n", b"data: [DONE]\n\n"):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
        self.wfile.write(b"0\r\n\r\n")


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def upstream() -> Iterator[ThreadingHTTPServer]:
    FakeServer.delay, FakeServer.healthy, FakeServer.seen = 0.0, True, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def start(upstream: ThreadingHTTPServer, **overrides: object) -> tuple[Proxy, int]:
    values: dict[str, object] = {
        "listen_port": free_port(),
        "server_port": upstream.server_address[1],
        "health_path": "/health",
        "concurrency": 4,
        "max_waiting": 4,
        "ttl_seconds": 5.0,
        "per_client_rate": 0,
        "rate_window_seconds": 60.0,
        "client_hop": 1,
    }
    values.update(overrides)
    config = Config(**values)  # type: ignore[arg-type]
    assert not config.problems()
    proxy = Proxy(config)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    return proxy, config.listen_port


def call(port: int, path: str = "/v1/chat/completions", body: bytes = b'{"x": 1}', **headers: str) -> tuple:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    method = "GET" if path == "/health" else "POST"
    connection.request(method, path, body=None if method == "GET" else body, headers=headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, dict(response.getheaders()), data


def test_a_request_streams_through_with_its_headers(upstream) -> None:
    proxy, port = start(upstream)
    status, headers, data = call(port, body=b"hello", Authorization="Bearer t")
    assert status == 200 and data == b"data: hello\n\ndata: [DONE]\n\n"
    assert headers["Content-Type"] == "text/event-stream"
    assert FakeServer.seen[-1]["Authorization"] == "Bearer t"
    proxy.shutdown()


def test_in_flight_and_waiting_are_bounded_and_the_rest_is_refused_with_503(upstream) -> None:
    FakeServer.delay = 0.6
    proxy, port = start(upstream, concurrency=1, max_waiting=1, ttl_seconds=5.0)
    with ThreadPoolExecutor(3) as pool:
        first = pool.submit(call, port)
        time.sleep(0.15)
        second = pool.submit(call, port)
        time.sleep(0.15)
        third = pool.submit(call, port)
        statuses = sorted(f.result()[0] for f in (first, second, third))
        refused = [f.result() for f in (first, second, third) if f.result()[0] == 503]
    assert statuses == [200, 200, 503]
    assert json.loads(refused[0][2])["error"] == "queue full" and int(refused[0][1]["Retry-After"]) >= 1
    proxy.shutdown()


def test_a_request_waiting_past_its_ttl_is_refused(upstream) -> None:
    FakeServer.delay = 1.5
    proxy, port = start(upstream, concurrency=1, max_waiting=4, ttl_seconds=0.4)
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(call, port)
        time.sleep(0.15)
        started = time.monotonic()
        second = pool.submit(call, port).result()
        waited = time.monotonic() - started
        assert first.result()[0] == 200
    assert second[0] == 503 and json.loads(second[2])["error"] == "waited past its TTL"
    assert 0.3 < waited < 1.4
    proxy.shutdown()


def test_a_client_past_its_rate_gets_429_and_another_client_does_not(upstream) -> None:
    proxy, port = start(upstream, per_client_rate=2, rate_window_seconds=60.0, client_hop=1)
    one = {"X-Forwarded-For": "203.0.113.7"}
    assert [call(port, **one)[0] for _ in range(2)] == [200, 200]
    status, headers, _ = call(port, **one)
    assert status == 429 and 1 <= int(headers["Retry-After"]) <= 30
    assert call(port, **{"X-Forwarded-For": "198.51.100.9"})[0] == 200
    proxy.shutdown()


def test_a_spoofed_forwarded_for_cannot_spread_one_client_over_many_buckets(upstream) -> None:
    proxy, port = start(upstream, per_client_rate=1, rate_window_seconds=60.0, client_hop=1)
    assert call(port, **{"X-Forwarded-For": "10.0.0.1, 203.0.113.7"})[0] == 200
    assert call(port, **{"X-Forwarded-For": "10.0.0.2, 203.0.113.7"})[0] == 429
    proxy.shutdown()


@pytest.mark.parametrize(
    ("header", "hop", "client"),
    [
        ("203.0.113.7", 1, "203.0.113.7"),
        ("1.2.3.4, 203.0.113.7", 1, "203.0.113.7"),
        ("1.2.3.4, 203.0.113.7, 35.191.0.1", 2, "203.0.113.7"),  # a load balancer that appends its own address
        ("203.0.113.7:51234", 1, "203.0.113.7"),  # ip:port
        ("[2001:db8::1]:443", 1, "2001:db8::1"),
        ("2001:db8::1", 1, "2001:db8::1"),
        (None, 1, "peer"),
        ("203.0.113.7", 2, "peer"),  # fewer entries than hops: not what the load balancer wrote
    ],
)
def test_the_client_is_the_load_balancers_hop(header, hop, client) -> None:
    assert client_address(header, "peer", hop) == client


def test_buckets_refill_evenly_up_to_the_rate() -> None:
    now = [0.0]
    buckets = ClientBuckets(rate=6, window=60.0, clock=lambda: now[0])
    assert all(buckets.take("a") == 0 for _ in range(6))
    assert buckets.take("a") == pytest.approx(10.0)
    now[0] = 10.0
    assert buckets.take("a") == 0
    now[0] = 1000.0
    assert sum(buckets.take("a") == 0 for _ in range(10)) == 6


def test_only_the_api_and_the_health_path_are_reachable(upstream) -> None:
    proxy, port = start(upstream)
    assert call(port, "/admin")[0] == 404
    assert call(port, "/v1/../metrics")[0] == 404
    assert call(port, "/health")[0] == 200
    FakeServer.healthy = False
    assert call(port, "/health")[0] == 503
    proxy.shutdown()


def test_a_body_over_the_bound_is_refused_before_it_is_read(upstream) -> None:
    proxy, port = start(upstream, max_body_bytes=1024)
    assert call(port, body=b"x" * 2048)[0] == 413
    assert not FakeServer.seen
    proxy.shutdown()


def test_a_draining_replica_refuses_new_work_and_fails_its_health_check(upstream) -> None:
    proxy, port = start(upstream)
    proxy.admission.draining = True
    assert call(port)[0] == 503
    assert call(port, "/health")[0] == 503
    proxy.shutdown()


def test_a_dead_server_is_503_not_a_hang(upstream) -> None:
    proxy, port = start(upstream)
    upstream.shutdown()
    upstream.server_close()
    status, headers, _ = call(port)
    assert status == 503 and "Retry-After" in headers
    proxy.shutdown()


def test_the_environment_is_read_and_bad_values_are_named() -> None:
    env = {
        "ACCELSTACK_ADMISSION_LISTEN_PORT": "8000",
        "ACCELSTACK_ADMISSION_SERVER_PORT": "8000",
        "ACCELSTACK_ADMISSION_HEALTH_PATH": "health",
        "ACCELSTACK_ADMISSION_CONCURRENCY": "0",
        "ACCELSTACK_ADMISSION_MAX_WAITING": "8",
        "ACCELSTACK_ADMISSION_TTL_SECONDS": "300",
        "ACCELSTACK_ADMISSION_PER_CLIENT_RATE": "2000",
        "ACCELSTACK_ADMISSION_RATE_WINDOW_SECONDS": "300",
        "ACCELSTACK_ADMISSION_CLIENT_HOP": "1",
        "ACCELSTACK_ADMISSION_GENERATION_TIMEOUT_SECONDS": "600",
        "ACCELSTACK_ADMISSION_DRAIN_SECONDS": "30",
    }
    problems = Config.from_env(env).problems()
    assert len(problems) == 3
    with pytest.raises(KeyError):
        Config.from_env({})
