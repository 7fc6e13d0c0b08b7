"""Admission on the replicas (serving.admission.kind replica), on every cloud with a serving stack: the boot each
cloud renders ships the admission proxy verbatim with the environment the plan gives it, puts the inference server
on loopback behind it, and the proxy it ships, run with that environment in front of a stand-in server, admits,
answers health checks and refuses what its limits say. Nothing here defines what the boot must define: the file and
the environment come out of the rendered artifact."""

from __future__ import annotations

import base64
import bz2
import http.client
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from accelstack.clouds import registry
from accelstack.components import cloud_stack
from accelstack.components.aws.serving.user_data import STATUS_FILE_NAME
from accelstack.components.base import ServingServiceArgs
from accelstack.components.replica import ADMISSION_PROXY, admission_proxy_source
from accelstack.components.replica.admission_proxy import Config
from accelstack.spec import load_stack

REPO = Path(__file__).resolve().parents[2]
DIRECT = ["serving.admission.kind=replica"]
# Where each cloud's load balancer writes the client's address in X-Forwarded-For, from the right.
CLIENT_HOPS = {"aws": 1, "azure": 1, "gcp": 2, "vultr": 1}
SERVING_CLOUDS = sorted(
    cloud for cloud in registry.deployable() if (REPO / "stacks" / f"Pulumi.{cloud}-serving.yaml").exists()
)


def rendered(cloud: str, *overrides: str) -> tuple[ServingServiceArgs, str]:
    spec = load_stack(REPO / "stacks" / f"Pulumi.{cloud}-serving.yaml", [*DIRECT, *overrides])
    args = ServingServiceArgs.of(spec)
    [(_, text)] = cloud_stack(spec).replica_artifacts(args).items()
    return args, text


def shipped(text: str) -> tuple[dict[str, bytes], dict[str, str], str]:
    """(files the boot writes by name, the proxy's environment, the command that starts the server), read from a
    cloud-config (write_files) or from a boot script (a base85 bzip2 bundle and a systemd unit)."""
    if text.startswith("#cloud-config"):
        document = yaml.safe_load(text)
        written = {Path(f["path"]).name: f for f in document["write_files"]}
        files = {name: base64.b64decode(f["content"]) for name, f in written.items() if f.get("encoding") == "b64"}
        environment = dict(line.split("=", 1) for line in written["worker.env"]["content"].splitlines() if line)
        server = written["accelstack-server.service"]["content"]
        return files, environment, server
    bundle = text.split("<<'B85'\n", 1)[1].split("\nB85\n", 1)[0]
    data = bz2.decompress(base64.b85decode("".join(bundle.split())))
    files = {}
    while data:
        head, data = data.split(b"\n", 1)
        name, size = head.decode().split()
        files[name], data = data[: int(size)], data[int(size) :]
    unit = text.split("accelstack-admission.service <<'UNIT'\n", 1)[1].split("\nUNIT\n", 1)[0]
    environment = dict(
        line[len("Environment=") :].split("=", 1) for line in unit.splitlines() if line.startswith("Environment=")
    )
    server = text.split("accelstack-inference.service <<'UNIT'\n", 1)[1].split("\nUNIT\n", 1)[0]
    return files, environment, server


@pytest.mark.parametrize("cloud", SERVING_CLOUDS)
def test_the_boot_ships_the_proxy_verbatim_with_the_plans_environment(cloud: str) -> None:
    args, text = rendered(cloud)
    files, environment, server = shipped(text)
    # AWS ships the boot status recorder in the same bundle (the others write it as a file of the cloud-config).
    files.pop(STATUS_FILE_NAME, None)
    assert files == {ADMISSION_PROXY: admission_proxy_source()}, "the proxy alone: no queue worker, no queue client"
    config = Config.from_env(environment)
    plan, serving = args.plan, args.spec.serving
    assert config.problems() == []
    assert (config.listen_port, config.server_port) == (serving.load_balancer.port, plan.server_port)
    assert config.server_port != config.listen_port
    assert (config.concurrency, config.max_waiting) == (plan.concurrency, plan.replica_waiting)
    assert config.ttl_seconds == plan.replica_wait_seconds <= plan.idle_timeout_seconds
    assert config.client_hop == CLIENT_HOPS[cloud]
    assert config.health_path == serving.load_balancer.health_path
    # The server listens on loopback at the port behind the proxy, so the load balancer cannot go around it.
    words = shlex.split(server.split("ExecStart=", 1)[1].splitlines()[0])
    assert words[words.index("--host") + 1] == "127.0.0.1"
    assert words[words.index("--port") + 1] == str(plan.server_port)


@pytest.mark.parametrize("cloud", SERVING_CLOUDS)
def test_the_boot_is_valid_for_its_interpreter(cloud: str, tmp_path: Path) -> None:
    _, text = rendered(cloud)
    path = tmp_path / "user-data"
    path.write_text(text)
    if text.startswith("#!"):
        result = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=30)
    elif shutil.which("cloud-init") is None:
        pytest.skip("cloud-init is not installed")
    else:
        result = subprocess.run(["cloud-init", "schema", "-c", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_load_balancer_port_equal_to_the_servers_default_moves_the_server() -> None:
    args, text = rendered("aws", "serving.loadBalancer.port=18000")
    _, environment, _ = shipped(text)
    assert environment["ACCELSTACK_ADMISSION_LISTEN_PORT"] == "18000"
    assert environment["ACCELSTACK_ADMISSION_SERVER_PORT"] == str(args.plan.server_port) != "18000"


# --- the shipped proxy, run ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StandIn(BaseHTTPRequestHandler):
    """An inference server: health, and a completion that takes a moment."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._answer(200, b'{"ok": true}')

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        time.sleep(0.3)
        self._answer(200, json.dumps({"choices": [{"text": "hi"}]}).encode())

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.mark.parametrize("cloud", SERVING_CLOUDS)
def test_the_shipped_proxy_admits_checks_health_and_refuses_past_its_limits(cloud: str, tmp_path: Path) -> None:
    _, text = rendered(cloud, "serving.admission.perClientRate=10")
    files, environment, _ = shipped(text)
    proxy_file = tmp_path / ADMISSION_PROXY
    proxy_file.write_bytes(files[ADMISSION_PROXY])
    listen, server_port = free_port(), free_port()
    # The rendered environment, on ports free here, with one slot and one waiting place to reach the limits, and a
    # short drain.
    env = {
        **environment,
        "ACCELSTACK_ADMISSION_LISTEN_PORT": str(listen),
        "ACCELSTACK_ADMISSION_SERVER_PORT": str(server_port),
        "ACCELSTACK_ADMISSION_CONCURRENCY": "1",
        "ACCELSTACK_ADMISSION_MAX_WAITING": "1",
        "ACCELSTACK_ADMISSION_DRAIN_SECONDS": "1",
    }
    hop = int(environment["ACCELSTACK_ADMISSION_CLIENT_HOP"])
    server = ThreadingHTTPServer(("127.0.0.1", server_port), StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    process = subprocess.Popen(
        [sys.executable, str(proxy_file)], env={**os.environ, **env}, stderr=subprocess.PIPE, text=True
    )
    try:
        health = environment["ACCELSTACK_ADMISSION_HEALTH_PATH"]
        deadline = time.monotonic() + 20
        while True:
            try:
                assert request(listen, "GET", health, hop=hop)[0] == 200
                break
            except OSError:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < deadline, "the proxy never listened"
                time.sleep(0.1)
        assert request(listen, "POST", "/v1/completions", hop=hop, client="198.51.100.7")[0] == 200
        assert request(listen, "POST", "/admin", hop=hop, client="198.51.100.7")[0] == 404  # only the API is reachable
        # Three at once from other clients: one in flight, one waiting, the third refused with 503.
        results: list[int] = []
        threads = [
            threading.Thread(
                target=lambda i=i: results.append(request(listen, "POST", "/v1/x", hop=hop, client=f"203.0.113.{i}")[0])
            )
            for i in range(3)
        ]
        for thread in threads:
            thread.start()
            time.sleep(0.05)
        for thread in threads:
            thread.join(10)
        assert sorted(results) == [200, 200, 503]
        # One client past its rate (10 per window, refilled evenly): 429, whoever else it claims to be.
        codes = [
            request(listen, "POST", "/v1/x", hop=hop, client="192.0.2.9", claimed="10.9.9.9")[0] for _ in range(12)
        ]
        assert codes.count(429) >= 1
    finally:
        process.terminate()
        process.wait(10)
        server.shutdown()


def request(
    port: int, method: str, path: str, *, hop: int, client: str = "192.0.2.1", claimed: str = ""
) -> tuple[int, bytes]:
    """A request as the cloud's load balancer forwards it: the client's address appended to X-Forwarded-For (and
    with `hop` 2 the load balancer's own after it, as GCP's does), behind whatever the client claimed itself."""
    entries = [*([claimed] if claimed else []), client, *(["35.191.0.1"] if hop == 2 else [])]
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        headers = {"X-Forwarded-For": ", ".join(entries), "Content-Length": "2"}
        connection.request(method, path, body=b"{}" if method == "POST" else None, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()
