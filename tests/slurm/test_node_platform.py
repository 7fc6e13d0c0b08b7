"""The Slurm generator speaks to the cloud only through its `NodePlatform`.

A second, test-only platform shaped like GCP's node facilities (metadata.google.internal with
`Metadata-Flavor: Google`, `instance/preempted` 30 s ahead, Secret Manager, `gcloud storage rsync`,
disks under /dev/disk/by-id/google-NAME) renders every artifact: none carries anything of AWS, and
its rendered watcher runs the neutral drain / checkpoint / requeue / final-sync sequence on its
notice (Slurm's commands faked, no cluster needed).
"""

from __future__ import annotations

import ast
import os
import shlex
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from accelstack.clouds import registry
from accelstack.components import slurm
from accelstack.components.aws.node_platform import AwsNodePlatform
from accelstack.components.node_platform import UBUNTU_ARCHIVE_SLURM, ContainerFabric, NodeFact, SlurmPackages
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file

ROOT = Path(__file__).resolve().parents[2]
STACKS = ROOT / "stacks"

GCE_METADATA = """\
gce_metadata() {
    curl -sf -m 2 -H "Metadata-Flavor: Google" "${METADATA_ENDPOINT:-http://metadata.google.internal}/computeMetadata/v1/$1"
}
"""
GCE_PREEMPTION = """\
preemption_notice() {
    [ "$(gce_metadata instance/preempted)" = TRUE ] || return 0
    echo preempt
    echo
}
"""
_GCE_PATHS = {
    NodeFact.INSTANCE_ID: "instance/id",
    NodeFact.INSTANCE_TYPE: "instance/machine-type",
    NodeFact.REGION: "instance/zone",
    NodeFact.ZONE: "instance/zone",
    NodeFact.PRIVATE_ADDRESS: "instance/network-interfaces/0/ip",
}


@dataclass(frozen=True)
class ExampleCloudPlatform:
    """Not a supported cloud: proof that the interface carries a second cloud's node facilities."""

    name: str = "example"
    tool_functions: str = ""
    tool_setup: str | None = None
    metadata_functions: str = GCE_METADATA
    preemption_notice_seconds: int = 30
    preemption_source: str = "instance/preempted on the metadata server"
    preemption_functions: str | None = GCE_PREEMPTION
    object_uri_form: str = "gs://bucket[/prefix]"
    lustre_product: str = "Managed Lustre"
    lustre_client_source: str = "the cloud's documented repository"
    lustre_client_install: str = 'apt-get install -y "lustre-client-modules-$(uname -r)"\n'
    slurm_packages: SlurmPackages = UBUNTU_ARCHIVE_SLURM

    def metadata_command(self, fact: NodeFact) -> str:
        return f"gce_metadata {_GCE_PATHS[fact]}"

    def units_before_slurmd(self, instance: object) -> tuple[str, ...]:
        return ()

    def fabric_hooks(self, instance: object) -> None:
        return None  # an image with its fabric's software

    def container_fabric(self, instance: object) -> ContainerFabric:
        return ContainerFabric(name="example fabric", devices=("/dev/infiniband",))

    def local_nvme(self, instance: object) -> None:
        return None  # no local disks

    def secret_command(self, reference: str) -> str:
        return f"gcloud secrets versions access latest --secret={shlex.quote(reference)} | base64 -d"

    def config_object_command(self, reference: str) -> str:
        return f"gce_metadata attributes/{shlex.quote(reference)} | base64 -d"

    def is_object_uri(self, uri: str) -> bool:
        return uri.startswith("gs://")

    def object_sync_command(self, source: str, destination: str) -> str:
        return f"gcloud storage rsync --recursive {shlex.quote(source)} {shlex.quote(destination)}"

    checkpoint_copy_functions: str = (
        'copy_new_files() { gcloud storage rsync --recursive --no-clobber --exclude="^$3\\$" "$1" "$2"; }\n'
        'copy_new_file() { gcloud storage cp --no-clobber "$1" "$2"; }\n'
    )

    def block_device_path(self, volume: str) -> str:
        return f"/dev/disk/by-id/google-{volume}"


EXAMPLE = ExampleCloudPlatform()
VALUES = slurm.DeployValues(
    head_address="10.0.0.2",
    lustre_dns_name="10.0.0.9",
    lustre_mount_name="lustrefs",
    munge_key_secret="training-munge-key",
    state_volume="slurmctld-state",
    checkpoint_interval_seconds=1800,
)
AWS_MARKS = ("169.254.169.254", "aws ", "s3://", "secretsmanager", "imds", "fsx-lustre", "amazonaws", "Amazon_Elastic")


def aws_spec(stack: str, capacity: str = "on-demand"):
    raw = apply_overrides(read_stack_file(STACKS / f"Pulumi.{stack}.yaml"), [f"training.nodes.capacity={capacity}"])
    return parse_spec(raw, stack)


def spec_on_example_cloud(stack: str, capacity: str):
    """The example stack with its checkpoints in the example cloud's object store (the AWS spec rules
    would refuse gs://, so the parsed spec is edited)."""
    spec = aws_spec(stack, capacity)
    training = spec.training
    checkpoints = training.storage.checkpoints.model_copy(update={"uri": "gs://example-checkpoints/run"})
    storage = training.storage.model_copy(update={"checkpoints": checkpoints})
    return spec.model_copy(update={"training": training.model_copy(update={"storage": storage})})


def example_nodes(spec, platform=EXAMPLE) -> slurm.Nodes:
    return slurm.Nodes(platform, registry.get("aws").catalog.instances[spec.training.nodes.instance_type])


@pytest.mark.parametrize("capacity", ["on-demand", "spot"])
@pytest.mark.parametrize("stack", ["aws-training", "aws-finetune"])  # Lustre checkpoints; node-local ones
def test_every_artifact_renders_on_another_platform_without_a_trace_of_aws(stack, capacity):
    spec = spec_on_example_cloud(stack, capacity)
    artifacts = slurm.render_all(spec, example_nodes(spec), VALUES)
    text = "\n".join(artifacts.values())
    assert [mark for mark in AWS_MARKS if mark in text] == []
    compute = {f["path"]: f["content"] for f in yaml.safe_load(artifacts["compute.cloud-init.yaml"])["write_files"]}
    head = {f["path"]: f["content"] for f in yaml.safe_load(artifacts["head.cloud-init.yaml"])["write_files"]}
    setup, head_setup = compute[slurm.COMPUTE_SETUP_PATH], head[slurm.HEAD_SETUP_PATH]
    # Each cloud-specific step is the platform's: metadata, secret, device, object sync.
    assert "NODE_ADDR=$(gce_metadata instance/network-interfaces/0/ip)" in setup
    assert "gcloud secrets versions access latest --secret=training-munge-key | base64 -d" in setup
    assert 'device="/dev/disk/by-id/google-slurmctld-state"' in head_setup
    # Slurm's own configuration does not depend on the platform: the same bytes as on AWS.
    on_aws = aws_spec(stack, capacity)
    assert artifacts["slurm.conf"] == slurm.slurm_conf(on_aws, slurm.nodes_for(on_aws))
    assert artifacts["gres.conf"] == slurm.gres_conf(on_aws, slurm.nodes_for(on_aws))
    if stack == "aws-finetune":
        assert "gcloud storage rsync --recursive gs://example-checkpoints/run/ /scratch/checkpoints/" in setup
    if capacity == "spot":
        watcher = artifacts["spot-watcher.sh"]
        assert "at least 30 s before" in watcher and 'GRACE="${GRACE_SECONDS:-0}"' in watcher


def test_node_local_checkpoints_need_the_platforms_object_uri():
    spec = aws_spec("aws-finetune")  # s3:// checkpoints
    with pytest.raises(ValueError, match=r"training\.storage\.checkpoints\.uri: .*expected gs://bucket\[/prefix\]"):
        slurm.render_all(spec, example_nodes(spec))


def test_a_cloud_without_a_notice_on_the_node_runs_no_watcher():
    """OCI's preemptible instances post no notice the node can read: Slurm's requeue of the lost node remains."""
    spec = spec_on_example_cloud("aws-finetune", "spot")
    silent = slurm.Nodes(ExampleCloudPlatform(preemption_functions=None), example_nodes(spec).instance)
    artifacts = slurm.render_all(spec, silent, VALUES)
    assert "spot-watcher.sh" not in artifacts
    compute = {f["path"]: f["content"] for f in yaml.safe_load(artifacts["compute.cloud-init.yaml"])["write_files"]}
    assert slurm.WATCHER_PATH not in compute
    assert "accelstack-spot-watcher" not in compute[slurm.COMPUTE_SETUP_PATH]
    assert "JobRequeue=1" in artifacts["slurm.conf"]
    with pytest.raises(ValueError, match="posts no preemption notice"):
        slurm.spot_watcher_script(spec, silent)


@pytest.mark.parametrize(
    ("notice", "local", "grace"),
    [(120, False, 90), (120, True, 60), (30, False, 0), (30, True, 0)],
)
def test_checkpoint_grace_fits_the_clouds_notice(notice, local, grace):
    """EC2's 120 s: 90 s (requeue then waits KillWait 30 s), 60 s when the final sync must fit too; a
    30 s notice (GCP, Azure) leaves none: the jobs are signalled and requeued at once."""
    assert slurm.preemption_grace_seconds(notice, local) == grace


def test_the_registry_finds_the_aws_platform_and_catalog_row():
    spec = aws_spec("aws-training")
    nodes = slurm.nodes_for(spec)
    assert nodes.platform == AwsNodePlatform(region=spec.account.region)
    assert nodes.instance == registry.get("aws").catalog.instances[spec.training.nodes.instance_type]


NEUTRAL_MODULES = [
    ROOT / "components" / "node_platform.py",
    ROOT / "components" / "node_environment.py",
    *sorted((ROOT / "components" / "slurm").glob("*.py")),
    *sorted((ROOT / "components" / "replica").glob("*.py")),
]


@pytest.mark.parametrize("path", NEUTRAL_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_neutral_modules_import_no_clouds_code(path):
    imported = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            imported += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.append(node.module)
    clouds = registry.names()
    assert [
        name
        for name in imported
        if name.split(".")[0] in {"boto3", "botocore", "pulumi_aws"}
        or any(name.startswith((f"accelstack.clouds.{c}", f"accelstack.components.{c}")) for c in clouds)
    ] == []


# --- the rendered watcher, run: the notice contract end to end ----------------------------------------


class FakeMetadata:
    """The example cloud's metadata server on 127.0.0.1: instance/preempted is TRUE, for requests with the header."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                ok = self.headers.get("Metadata-Flavor") == "Google"
                found = ok and self.path == "/computeMetadata/v1/instance/preempted"
                self.send_response(200 if found else 403 if not ok else 404)
                self.end_headers()
                if found:
                    self.wfile.write(b"TRUE")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeMetadata:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


# Slurm's commands and gcloud, recording their arguments; job 42 runs until it is requeued.
FAKES = {
    "squeue": '[ -e "$STATE/requeued" ] || echo 42\n',
    "scontrol": 'echo "scontrol $*" >> "$STATE/calls"; [ "$1" = requeue ] && touch "$STATE/requeued"; true\n',
    "scancel": 'echo "scancel $*" >> "$STATE/calls"\n',
    "gcloud": 'echo "gcloud $*" >> "$STATE/calls"\n',
}


@pytest.fixture
def fake_tools(tmp_path: Path) -> Iterator[Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in FAKES.items():
        (bin_dir / name).write_text(f"#!/bin/bash\n{body}")
        (bin_dir / name).chmod(0o755)
    yield bin_dir


def test_the_watcher_drains_signals_requeues_and_syncs_on_the_platforms_notice(tmp_path, fake_tools):
    spec = spec_on_example_cloud("aws-finetune", "spot")
    watcher = tmp_path / "watcher.sh"
    # The final sync runs the node's export script (tests/slurm/test_checkpoint_export.py runs it); here a stand-in
    # records that it ran.
    export = fake_tools / "accelstack-checkpoint-export"
    export.write_text('#!/bin/bash\necho "checkpoint export" >> "$STATE/calls"\n')
    export.chmod(0o755)
    watcher.write_text(
        slurm.spot_watcher_script(spec, example_nodes(spec)).replace(slurm.CHECKPOINT_EXPORT_PATH, str(export))
    )
    watcher.chmod(0o755)
    with FakeMetadata() as metadata:
        env = {
            **os.environ,
            "PATH": f"{fake_tools}:{os.environ['PATH']}",
            "STATE": str(tmp_path),
            "METADATA_ENDPOINT": metadata.url,
            "NODE_NAME": "node-1",
            "POLL_SECONDS": "1",
        }
        started = time.monotonic()
        result = subprocess.run([str(watcher)], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls == [
        "scontrol update nodename=node-1 state=DRAIN reason=spot interruption notice: preempt at unknown",
        "scancel --signal=USR1 --full 42",
        "scontrol requeue 42",
        "checkpoint export",
    ]
    assert "final checkpoint sync done" in result.stdout
    assert time.monotonic() - started < 30  # inside the 30 s notice
    # A metadata server that does not answer is no notice, not a crash of the watcher's loop.
    probe = subprocess.run(
        ["bash", "-c", f"{GCE_METADATA}{GCE_PREEMPTION}preemption_notice"],
        env={"PATH": os.environ["PATH"], "METADATA_ENDPOINT": "http://127.0.0.1:9"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert probe.returncode == 0 and probe.stdout == ""
