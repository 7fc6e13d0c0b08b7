"""AWS's node platform: IMDSv2 (one helper for training and serving) and the EC2 spot notice.

The shell functions run against an IMDSv2 double on 127.0.0.1 that answers only requests carrying a
token from its PUT, the way EC2 does when the launch templates require tokens.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from accelstack.clouds.aws import CATALOG as AWS_CATALOG
from accelstack.components import slurm
from accelstack.components.aws.node_platform import IMDS_FUNCTION, SPOT_NOTICE_FUNCTION, AwsNodePlatform
from accelstack.components.aws.serving import READY_HOOK, replica_user_data
from accelstack.components.node_platform import NodeFact
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file

STACKS = Path(__file__).resolve().parents[2] / "stacks"
TOKEN = "imds-token"


class Imds:
    def __init__(self, paths: dict[str, str]) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_PUT(self) -> None:
                ok = self.path == "/latest/api/token" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
                self.send_response(200 if ok else 400)
                self.end_headers()
                if ok:
                    self.wfile.write(TOKEN.encode())

            def do_GET(self) -> None:
                if self.headers.get("X-aws-ec2-metadata-token") != TOKEN:
                    self.send_response(401)
                    self.end_headers()
                    return
                body = paths.get(self.path.removeprefix("/latest/meta-data/"))
                self.send_response(404 if body is None else 200)
                self.end_headers()
                if body is not None:
                    self.wfile.write(body.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def run(self, script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-uc", f"{IMDS_FUNCTION}{SPOT_NOTICE_FUNCTION}{script}"],
            env={"PATH": "/usr/bin:/bin", "IMDS_ENDPOINT": self.url},
            capture_output=True,
            text=True,
            timeout=30,
        )


@pytest.fixture
def imds() -> Iterator[type[Imds]]:
    servers: list[Imds] = []

    def start(paths: dict[str, str]) -> Imds:
        servers.append(Imds(paths))
        return servers[-1]

    yield start  # type: ignore[misc]
    for server in servers:
        server.server.shutdown()
        server.server.server_close()


def test_spot_notice_prints_action_then_time_and_nothing_before_it(imds):
    platform = AwsNodePlatform("us-east-1")
    quiet = imds({"local-ipv4": "10.0.0.7"})
    assert quiet.run("preemption_notice").stdout == ""  # 404 until EC2 posts the notice
    assert quiet.run(platform.metadata_command(NodeFact.PRIVATE_ADDRESS)).stdout == "10.0.0.7"
    noticed = imds({"spot/instance-action": '{"action": "stop", "time": "2026-12-02T10:30:00Z"}'})
    assert noticed.run("preemption_notice").stdout == "stop\n2026-12-02T10:30:00Z\n"
    bare = imds({"spot/instance-action": "{}"})  # a notice without its fields is still a notice
    assert bare.run("preemption_notice").stdout == "terminate\n"


def test_without_the_token_imds_answers_nothing(imds):
    server = imds({"instance-id": "i-0abc"})
    assert server.run("imds instance-id").stdout == "i-0abc"
    tokenless = subprocess.run(
        ["bash", "-c", f"curl -sf {server.url}/latest/meta-data/instance-id"], capture_output=True, text=True
    )
    assert tokenless.returncode != 0 and tokenless.stdout == ""  # IMDSv1 refused: the helper must PUT first


def scripts(artifact: str) -> list[str]:
    """A cloud-init document's files, or the artifact itself."""
    if artifact.startswith("#cloud-config"):
        return [f["content"] for f in yaml.safe_load(artifact)["write_files"]]
    return [artifact]


def test_training_and_serving_nodes_share_the_one_imdsv2_helper():
    """Every script AWS nodes boot with that talks to IMDS does it through the helper, verbatim."""
    texts = []
    for stack in ("aws-training", "aws-finetune"):
        raw = apply_overrides(read_stack_file(STACKS / f"Pulumi.{stack}.yaml"), ["training.nodes.capacity=spot"])
        spec = parse_spec(raw, stack)
        texts += [
            text for artifact in slurm.render_all(spec, slurm.nodes_for(spec)).values() for text in scripts(artifact)
        ]
    serving = parse_spec(read_stack_file(STACKS / "Pulumi.aws-serving.yaml"), "aws-serving").serving
    plan = plan_serving(serving, AWS_CATALOG)
    queues = {"request_queue_url": "https://q/1", "response_queue_url": "https://q/2"}
    texts.append(replica_user_data(serving, plan, region="us-east-1", group_name="g", hook_name=READY_HOOK, **queues))
    using = [text for text in texts if "169.254.169.254" in text]
    assert len(using) >= 5  # compute setup and spot watcher of both stacks, the replica's boot script
    for text in using:
        assert text.count("169.254.169.254") == text.count(IMDS_FUNCTION) == 1
