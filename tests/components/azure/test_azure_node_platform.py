"""The Azure node platform's shell, run against local doubles of IMDS, Scheduled Events and Key Vault, and the
Slurm artifacts the generator renders with it for the Azure example."""

from __future__ import annotations

import base64
import json
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from accelstack.components import slurm
from accelstack.components.azure.node_platform import AzureNodePlatform
from accelstack.components.node_platform import NodeFact
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file

EXAMPLE = Path(__file__).resolve().parents[3] / "stacks" / "Pulumi.azure-training.yaml"
AWS_MARKS = ("aws ", "s3://", "secretsmanager", "fsx-lustre", "amazonaws", "Amazon_Elastic", "latest/meta-data")
ME = "azure-tra-n000003"
TOKEN = "eyJ0eXAi.test.token"
MUNGE_KEY = bytes(range(64))


def spec(*overrides: str):
    return parse_spec(apply_overrides(read_stack_file(EXAMPLE), list(overrides)), "azure-training")


@contextmanager
def fake_azure(events: list[dict[str, object]]) -> Iterator[tuple[str, list[tuple[str, dict[str, str]]]]]:
    """IMDS (compute/name, scheduledevents, identity token) and a Key Vault secret on 127.0.0.1; records requests."""
    seen: list[tuple[str, dict[str, str]]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append((self.path, dict(self.headers)))
            path, _, query = self.path.partition("?")
            answers = {
                "/metadata/instance/compute/name": ME,
                "/metadata/instance/network/interface/0/ipv4/ipAddress/0/privateIpAddress": "10.40.0.7",
                "/metadata/scheduledevents": json.dumps({"DocumentIncarnation": 3, "Events": events}),
                "/metadata/identity/oauth2/token": json.dumps({"access_token": TOKEN, "token_type": "Bearer"}),
                "/secrets/slurm-munge-key": json.dumps({"value": base64.b64encode(MUNGE_KEY).decode()}),
            }
            metadata = path.startswith("/metadata/")
            authorized = (
                self.headers.get("Metadata") == "true"
                if metadata
                else self.headers.get("Authorization") == f"Bearer {TOKEN}"
            )
            answer = answers.get(path) if authorized and "api-version=" in query else None
            self.send_response(200 if answer is not None else 404)
            self.end_headers()
            if answer is not None:
                self.wfile.write(answer.encode())

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def bash(script: str, endpoint: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["bash", "-c", script],
        env={"PATH": "/usr/bin:/bin", "IMDS_ENDPOINT": endpoint},
        capture_output=True,
        timeout=30,
    )


def event(kind: str, vm: str, not_before: str = "Thu, 03 Dec 2026 10:30:00 GMT") -> dict[str, object]:
    return {
        "EventId": f"{kind}-{vm}",
        "EventType": kind,
        "Resources": [vm],
        "EventStatus": "Scheduled",
        "NotBefore": not_before,
    }


def notice(events: list[dict[str, object]]) -> str:
    platform = AzureNodePlatform()
    with fake_azure(events) as (url, _):
        result = bash(f"{platform.metadata_functions}\n{platform.preemption_functions}\npreemption_notice", url)
    assert result.returncode == 0, result.stderr
    return result.stdout.decode()


def test_a_preempt_for_this_vm_is_a_notice_with_its_time():
    assert notice([event("Preempt", ME)]) == "Preempt\nThu, 03 Dec 2026 10:30:00 GMT\n"


def test_events_for_other_vms_of_the_placement_group_are_not_a_notice():
    assert notice([event("Preempt", "azure-tra-n000001"), event("Freeze", ME)]) == ""


def test_no_events_is_no_notice():
    assert notice([]) == ""


def test_the_notice_time_is_one_date_reads():
    result = subprocess.run(["date", "-d", "Thu, 03 Dec 2026 10:30:00 GMT", "+%s"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip().isdigit()


def test_the_private_address_comes_from_imds():
    platform = AzureNodePlatform()
    with fake_azure([]) as (url, _):
        result = bash(f"{platform.metadata_functions}\n{platform.metadata_command(NodeFact.PRIVATE_ADDRESS)}", url)
    assert result.stdout.decode() == "10.40.0.7"


def test_the_munge_key_is_read_from_key_vault_with_the_nodes_identity_token():
    platform = AzureNodePlatform(identity_client_id="44444444-4444-4444-8444-444444444444")
    with fake_azure([]) as (url, seen):
        command = platform.secret_command(f"{url}/secrets/slurm-munge-key")
        result = bash(f"{platform.tool_functions}\n{command}", url)
    assert result.returncode == 0, result.stderr
    assert result.stdout == MUNGE_KEY
    token_requests = [path for path, _ in seen if path.startswith("/metadata/identity/oauth2/token")]
    assert token_requests and "resource=https://vault.azure.net" in token_requests[0]
    assert "client_id=44444444-4444-4444-8444-444444444444" in token_requests[0]


def test_object_sync_uses_the_managed_identity_and_never_deletes():
    command = AzureNodePlatform(identity_client_id="c1").object_sync_command(
        "/lustre/checkpoints/", "https://acmetrainckpts.blob.core.windows.net/checkpoints/"
    )
    assert command.startswith("env AZCOPY_AUTO_LOGIN_TYPE=MSI AZCOPY_MSI_CLIENT_ID=c1 azcopy sync ")
    assert "--delete" not in command  # azcopy sync deletes nothing unless told to


def test_the_state_disk_is_found_by_its_lun():
    assert AzureNodePlatform().block_device_path("0") == "/dev/disk/azure/scsi1/lun0"


@pytest.mark.parametrize("capacity", ["on-demand", "spot"])
def test_the_slurm_artifacts_carry_nothing_of_aws(capacity):
    artifacts = slurm.render_all(spec(f"training.nodes.capacity={capacity}"), slurm.nodes_for(spec()))
    for name, text in artifacts.items():
        assert not [mark for mark in AWS_MARKS if mark in text], name


def test_lustre_checkpoints_are_exported_by_the_head_not_by_every_node():
    s = spec()
    nodes = slurm.nodes_for(s)
    artifacts = slurm.render_all(s, nodes)
    assert set(slurm.checkpoint_export_units(s, nodes)) <= set(artifacts)
    assert "accelstack-checkpoint-export.timer" in slurm.head_cloud_init(s, nodes, slurm.DeployValues())
    assert "accelstack-checkpoint-sync" not in slurm.compute_cloud_init(s, nodes, slurm.DeployValues())


def test_without_lustre_the_nodes_sync_their_own_checkpoints_to_the_container():
    s = spec(
        "training.storage.lustre=null", "training.nodes.count=1", "training.storage.checkpoints.path=/mnt/checkpoints"
    )
    nodes = slurm.nodes_for(s)
    assert slurm.checkpoint_export_units(s, nodes) == {}
    units = slurm.checkpoint_sync_units(s, nodes, slurm.DeployValues())
    assert slurm.CHECKPOINT_EXPORT_PATH in units["accelstack-checkpoint-sync.service"]
    script = slurm.checkpoint_copier(s, nodes)
    assert script is not None and "source_dir=/mnt/checkpoints" in script
    assert "destination=https://acmetrainckpts.blob.core.windows.net/checkpoints/" in script
    assert "azcopy copy" in script and "--overwrite=false" in script
