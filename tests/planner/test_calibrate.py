"""`accelstack calibrate` against a fake OpenAI-compatible server on 127.0.0.1 that models a GPU's timing: a decode
step of 20 ms + 7.5 ms per sequence in flight + 5 us per sequence per context token, prefill at 100 us per
prompt token (five times a GPU's). The profile it writes must give those figures back through `--profile`'s reader
(within what thread timing on a shared machine allows), and `size --profile` must read it."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.planner.profile import service_time_from

# Five times a real GPU's figures: a sleep on a loaded two-core machine overshoots by a millisecond or two, which
# would be a quarter of a 5 ms step.
SLOWER = 5
STEP_FIXED, STEP_PER_SEQUENCE, STEP_PER_CONTEXT = 0.004 * SLOWER, 0.0015 * SLOWER, 1e-6 * SLOWER
PREFILL_PER_TOKEN = 20e-6 * SLOWER


def modelled_step(batch: int, context: float) -> float:
    return STEP_FIXED + STEP_PER_SEQUENCE * batch + STEP_PER_CONTEXT * context * batch


class FakeServer(BaseHTTPRequestHandler):
    """POST /v1/completions, streamed as vLLM streams it: a prefill, then one chunk per decode step, whose length
    depends on how many requests are decoding at that moment."""

    active = 0
    lock = threading.Lock()
    requests: ClassVar[list[dict]] = []

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeServer.requests.append(body)
        prompt, tokens = len(body["prompt"]), body["max_tokens"]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        time.sleep(prompt * PREFILL_PER_TOKEN)
        with FakeServer.lock:
            FakeServer.active += 1
        try:
            for index in range(tokens):
                if index:
                    time.sleep(modelled_step(FakeServer.active, prompt + index))
                self.wfile.write(b'data: {"choices": [{"text": "x"}]}\n\n')
                self.wfile.flush()
        finally:
            with FakeServer.lock:
                FakeServer.active -= 1
        self.wfile.write(f'data: {{"choices": [], "usage": {{"completion_tokens": {tokens}}}}}\n\n'.encode())
        self.wfile.write(b"data: [DONE]\n\n")


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeServer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    FakeServer.requests = []
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_calibrate_measures_the_servers_timing_and_size_reads_it(server, tmp_path) -> None:
    path = tmp_path / "profile.json"
    result = CliRunner().invoke(app, [
        "calibrate", "--endpoint", server, "--model", "llama-3.1-8b", "--instance-type", "g6e.xlarge", "--out",
        str(path), "--batches", "1,8", "--contexts", "256,2048", "--prefill-lengths", "256,2048",
        "--output-tokens", "24", "--repeats", "2",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(path.read_text())
    assert document["kind"] == "accelstack-serving-profile" and document["instanceType"] == "g6e.xlarge"
    # Exact lengths went to the server: token-id prompts, ignore_eos with max_tokens.
    assert {len(r["prompt"]) for r in FakeServer.requests} == {256, 2048}
    assert all(r["ignore_eos"] and r["stream"] for r in FakeServer.requests)
    model = service_time_from(document, "calibrated")
    for batch, context in ((1, 268), (8, 268), (8, 2060)):
        assert float(model.step_seconds(batch, context)) == pytest.approx(modelled_step(batch, context), rel=0.25)
    # The step grows with the batch as the server's does: 8 sequences cost 5 x (10.5 + 1.9) ms more than one.
    grown = float(model.step_seconds(8, 268) - model.step_seconds(1, 268))
    assert grown == pytest.approx(modelled_step(8, 268) - modelled_step(1, 268), rel=0.35)
    assert float(model.prefill_seconds(2048)) == pytest.approx(2048 * PREFILL_PER_TOKEN, rel=0.25, abs=0.003)
    sized = CliRunner().invoke(app, ["size", "serving", "--model", "llama-3.1-8b", "--instance-type", "g6e.xlarge",
                                     "--rps", "5", "--profile", str(path), "--json"])  # fmt: skip
    assert sized.exit_code == 0 and json.loads(sized.stdout)["serviceModel"] == f"--profile {path}"


@pytest.mark.parametrize("endpoint", ["http://10.0.0.5:8000", "https://127.0.0.1:8000", "http://example.com",
                                      "http://127.0.0.1:8000/v1"])  # fmt: skip
def test_calibrate_measures_only_this_machine(endpoint: str, tmp_path) -> None:
    result = CliRunner().invoke(app, ["calibrate", "--endpoint", endpoint, "--model", "m", "--instance-type", "x",
                                      "--out", str(tmp_path / "p.json")])  # fmt: skip
    assert result.exit_code == 2 and "calibrate measures the machine it runs on" in result.output
    assert not (tmp_path / "p.json").exists()


def test_calibrate_says_which_server_failed(tmp_path) -> None:
    """Nothing listens on the port: exit 2 naming it, no profile written."""
    result = CliRunner().invoke(app, ["calibrate", "--endpoint", "http://127.0.0.1:9", "--model", "m",
                                      "--instance-type", "x", "--out", str(tmp_path / "p.json")])  # fmt: skip
    assert result.exit_code == 2 and "127.0.0.1:9" in result.output and not (tmp_path / "p.json").exists()
