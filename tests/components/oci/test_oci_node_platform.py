"""OCI's node platform, run: its metadata function against a fake IMDS v2 that answers only with
`Authorization: Bearer Oracle`, and its object sync against a fake `oci` CLI that records its arguments."""

from __future__ import annotations

import http.server
import os
import subprocess
import threading
from pathlib import Path

import pytest

from accelstack.components.node_platform import NodeFact
from accelstack.components.oci.node_platform import OciNodePlatform

INSTANCE = {
    "/opc/v2/instance/id": "ocid1.instance.oc1.iad.example",
    "/opc/v2/instance/shape": "BM.GPU.H100.8",
    "/opc/v2/instance/canonicalRegionName": "us-ashburn-1",
    "/opc/v2/instance/availabilityDomain": "Uocm:US-ASHBURN-AD-1",
    "/opc/v2/vnics/": '[{"privateIp": "10.60.0.21", "vnicId": "ocid1.vnic"}]',
    "/opc/v2/instance/metadata/accelstack_slurm_config": "c2x1cm0uY29uZgo=",
}


class FakeImds(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.headers.get("Authorization") != "Bearer Oracle" or self.path not in INSTANCE:
            self.send_response(401 if self.path in INSTANCE else 404)
            self.end_headers()
            return
        body = INSTANCE[self.path].encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def imds():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeImds)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def bash(script: str, env: dict[str, str]) -> str:
    done = subprocess.run(["bash", "-c", script], env={**os.environ, **env}, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    ("fact", "expected"),
    [
        (NodeFact.INSTANCE_ID, "ocid1.instance.oc1.iad.example"),
        (NodeFact.INSTANCE_TYPE, "BM.GPU.H100.8"),
        (NodeFact.REGION, "us-ashburn-1"),
        (NodeFact.ZONE, "Uocm:US-ASHBURN-AD-1"),
        (NodeFact.PRIVATE_ADDRESS, "10.60.0.21"),
    ],
)
def test_every_fact_comes_from_imds_v2_with_the_oracle_header(imds, fact, expected):
    platform = OciNodePlatform()
    out = bash(platform.metadata_functions + platform.metadata_command(fact), {"METADATA_ENDPOINT": imds})
    assert out == expected


def test_the_slurm_config_is_read_from_the_instances_own_metadata(imds):
    platform = OciNodePlatform()
    command = platform.metadata_functions + platform.config_object_command("accelstack_slurm_config")
    assert bash(command, {"METADATA_ENDPOINT": imds}) == "slurm.conf\n"


@pytest.fixture
def fake_cli(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "calls"
    cli = tmp_path / "oci"
    cli.write_text(f'#!/bin/bash\nprintf "%s\\n" "$*" >> {log}\necho c2VjcmV0\n')
    cli.chmod(0o755)
    return cli, log


def test_sync_and_secret_sign_as_the_instance_and_never_delete(fake_cli):
    cli, log = fake_cli
    platform = OciNodePlatform()
    script = "\n".join(
        [
            platform.tool_functions,
            platform.object_sync_command("oci://acme-train-datasets/corpus/", "/lustre/datasets/"),
            platform.object_sync_command("/lustre/checkpoints/", "oci://acme-train-checkpoints/run-1/"),
            platform.secret_command("ocid1.vaultsecret.oc1.iad.example"),
        ]
    )
    out = bash(script, {"OCI_CLI": str(cli)})
    assert out.endswith("secret")
    calls = log.read_text().splitlines()
    assert calls[0] == (
        "--auth instance_principal os object sync --bucket-name acme-train-datasets --prefix corpus/ "
        "--dest-dir /lustre/datasets/"
    )
    assert calls[1] == (
        "--auth instance_principal os object sync --bucket-name acme-train-checkpoints --prefix run-1/ "
        "--src-dir /lustre/checkpoints/"
    )
    assert calls[2].startswith("--auth instance_principal secrets secret-bundle get --secret-id ocid1.vaultsecret")
    assert not [c for c in calls if "--delete" in c]


def test_checkpoint_copies_never_overwrite(fake_cli):
    cli, log = fake_cli
    platform = OciNodePlatform()
    script = (
        platform.tool_functions
        + platform.checkpoint_copy_functions
        + (
            "copy_new_files /ckpt/ oci://acme-train-checkpoints/run-1/ latest\n"
            "copy_new_file /ckpt/latest oci://acme-train-checkpoints/run-1/latest\n"
        )
    )
    bash(script, {"OCI_CLI": str(cli)})
    bulk, put = log.read_text().splitlines()
    assert "bulk-upload --no-overwrite --bucket-name acme-train-checkpoints --object-prefix run-1/" in bulk
    assert bulk.endswith("--src-dir /ckpt/ --exclude latest")
    assert "put --no-overwrite --bucket-name acme-train-checkpoints --name run-1/latest --file /ckpt/latest" in put
