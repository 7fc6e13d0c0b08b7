"""The GCP node platform's shell, run against local doubles of the metadata server and Secret Manager, and the
Slurm artifacts the generator renders with it for the GCP example."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from accelstack.components import slurm
from accelstack.components.gcp.node_platform import GcpNodePlatform
from accelstack.components.node_platform import NodeFact
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file

EXAMPLE = Path(__file__).resolve().parents[3] / "stacks" / "Pulumi.gcp-training.yaml"
OTHER_CLOUDS = ("aws ", "s3://", "secretsmanager", "amazonaws", "169.254.169.254", "azcopy", "blob.core.windows")
TOKEN = "ya29.node-token"
MUNGE_KEY = os.urandom(128)  # binary, as the generator's key is
VERSION = "projects/123456789012/secrets/gcp-training-munge-key/versions/1"
PLATFORM = GcpNodePlatform()


def spec(*overrides: str):
    return parse_spec(apply_overrides(read_stack_file(EXAMPLE), list(overrides)), "gcp-training")


@contextmanager
def fake_google(instance: dict[str, str]) -> Iterator[tuple[str, list[str]]]:
    """The metadata server (Metadata-Flavor: Google required) and Secret Manager (the node's bearer token
    required) on 127.0.0.1; records the paths asked."""
    seen: list[str] = []
    answers = {
        **{f"/computeMetadata/v1/instance/{key}": value for key, value in instance.items()},
        "/computeMetadata/v1/instance/service-accounts/default/token": json.dumps(
            {"access_token": TOKEN, "expires_in": 3599, "token_type": "Bearer"}
        ),
        f"/v1/{VERSION}:access": json.dumps(
            {"name": VERSION, "payload": {"data": base64.b64encode(MUNGE_KEY).decode()}}
        ),
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.path)
            metadata = self.path.startswith("/computeMetadata/")
            authorized = (
                self.headers.get("Metadata-Flavor") == "Google"
                if metadata
                else self.headers.get("Authorization") == f"Bearer {TOKEN}"
            )
            answer = answers.get(self.path) if authorized else None
            self.send_response(200 if answer is not None else (404 if authorized else 403))
            self.end_headers()
            if answer is not None:
                self.wfile.write(answer.encode())

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def bash(script: str, endpoint: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["bash", "-c", script],
        env={"PATH": "/usr/bin:/bin", "METADATA_ENDPOINT": endpoint, "SECRET_MANAGER_ENDPOINT": endpoint},
        capture_output=True,
        timeout=30,
    )


def notice(instance: dict[str, str]) -> str:
    with fake_google(instance) as (url, _):
        result = bash(f"{PLATFORM.metadata_functions}\n{PLATFORM.preemption_functions}\npreemption_notice", url)
    assert result.returncode == 0, result.stderr
    return result.stdout.decode()


def test_a_preempted_spot_vm_is_a_notice():
    assert notice({"preempted": "TRUE", "maintenance-event": "NONE"}) == "preempted\n\n"


def test_host_maintenance_that_stops_a_gpu_vm_is_a_notice_too():
    assert notice({"preempted": "FALSE", "maintenance-event": "TERMINATE_ON_HOST_MAINTENANCE"}) == (
        "host-maintenance\n\n"
    )


@pytest.mark.parametrize("instance", [{"preempted": "FALSE", "maintenance-event": "NONE"}, {}])
def test_no_preemption_and_no_maintenance_or_no_answer_is_no_notice(instance):
    assert notice(instance) == ""


@pytest.mark.parametrize(
    ("fact", "answer", "printed"),
    [
        (NodeFact.INSTANCE_ID, "gcp-training-node-x7k2", "gcp-training-node-x7k2"),
        (NodeFact.INSTANCE_TYPE, "projects/123456789012/machineTypes/a3-megagpu-8g", "a3-megagpu-8g"),
        (NodeFact.ZONE, "projects/123456789012/zones/us-central1-a", "us-central1-a"),
        (NodeFact.REGION, "projects/123456789012/zones/us-central1-a", "us-central1"),
        (NodeFact.PRIVATE_ADDRESS, "10.50.0.7", "10.50.0.7"),
    ],
)
def test_node_facts_come_from_the_metadata_server_as_plain_names(fact, answer, printed):
    key = {
        NodeFact.INSTANCE_ID: "name",
        NodeFact.INSTANCE_TYPE: "machine-type",
        NodeFact.ZONE: "zone",
        NodeFact.REGION: "zone",
        NodeFact.PRIVATE_ADDRESS: "network-interfaces/0/ip",
    }[fact]
    with fake_google({key: answer}) as (url, _):
        result = bash(f"{PLATFORM.metadata_functions}\n{PLATFORM.metadata_command(fact)}", url)
    assert result.stdout.decode() == printed


def test_the_metadata_server_is_asked_with_its_header_or_not_at_all():
    """A request without Metadata-Flavor is refused by the real server (403): the double refuses it too."""
    with fake_google({"name": "n1"}) as (url, _):
        bare = subprocess.run(["curl", "-sf", f"{url}/computeMetadata/v1/instance/name"], capture_output=True)
    assert bare.returncode != 0
    assert "-H Metadata-Flavor:Google" in PLATFORM.metadata_functions


def test_the_munge_key_bytes_come_from_secret_manager_with_the_nodes_token():
    # The tools alone, as the head's setup script has them: nothing defined on their behalf.
    with fake_google({}) as (url, seen):
        result = bash(f"{PLATFORM.tool_functions}\n{PLATFORM.secret_command(VERSION)}", url)
    assert result.returncode == 0, result.stderr
    assert result.stdout == MUNGE_KEY
    assert "/computeMetadata/v1/instance/service-accounts/default/token" in seen
    assert f"/v1/{VERSION}:access" in seen


def test_object_sync_copies_with_gcloud_and_never_deletes():
    command = PLATFORM.object_sync_command("/lustre/checkpoints/", "gs://acme-train-checkpoints/")
    assert command == "gcloud storage rsync --recursive --quiet /lustre/checkpoints/ gs://acme-train-checkpoints/"
    assert "delete" not in command


@pytest.mark.parametrize(
    ("uri", "ok"), [("gs://acme-train-checkpoints", True), ("gs://b/p/", True), ("s3://b", False), ("gs://", False)]
)
def test_only_cloud_storage_uris_are_object_uris(uri, ok):
    assert PLATFORM.is_object_uri(uri) is ok


def test_the_state_disk_is_found_by_its_device_name():
    assert PLATFORM.block_device_path("slurmctld-state") == "/dev/disk/by-id/google-slurmctld-state"


@pytest.mark.parametrize("capacity", ["on-demand", "spot"])
def test_the_slurm_artifacts_carry_nothing_of_another_cloud(capacity):
    s = spec(f"training.nodes.capacity={capacity}")
    for name, text in slurm.render_all(s, slurm.nodes_for(s)).items():
        assert not [mark for mark in OTHER_CLOUDS if mark in text], name


def test_lustre_checkpoints_are_exported_by_the_head_with_gcloud():
    s = spec()
    nodes = slurm.nodes_for(s)
    assert nodes.platform == PLATFORM
    head = slurm.head_cloud_init(s, nodes, slurm.DeployValues())
    assert "accelstack-checkpoint-export.timer" in head
    assert "source_dir=/lustre/checkpoints" in head and "destination=gs://acme-train-checkpoints/" in head
    assert "gcloud storage rsync --recursive --no-clobber" in head and "gcloud storage cp --no-clobber" in head
    assert "accelstack-checkpoint-sync" not in slurm.compute_cloud_init(s, nodes, slurm.DeployValues())
