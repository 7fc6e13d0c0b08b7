"""Checkpoints on Slurm nodes: the jobs' environment (planner interval, directory, bucket, stack), and
for stacks without Lustre the restore at boot, the periodic sync and the watcher's final sync."""

from __future__ import annotations

import base64
import gzip
import subprocess
from pathlib import Path

import pytest
import yaml

from accelstack.clouds import registry
from accelstack.clouds.azure import catalog as azure_catalog
from accelstack.clouds.base import Feature
from accelstack.clouds.gcp import catalog as gcp_catalog
from accelstack.components import node_environment as node_environment_module
from accelstack.components import slurm
from accelstack.components.aws import training as aws_training
from accelstack.components.aws.boot_data import ec2_user_data
from accelstack.engine.capture import capture, config_for_pulumi
from accelstack.examples import example_files
from accelstack.planner.training_plan import plan_training
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file
from tests.planner.aws_inputs import AWS_CATALOG, aws_book

ROOT = Path(__file__).resolve().parents[2]
STACKS = ROOT / "stacks"
PROGRAM = ROOT / "__main__.py"
SLURM_STACKS = sorted(
    path.name.removeprefix("Pulumi.").removesuffix(".yaml")
    for path in example_files(STACKS)
    if (read_stack_file(path).get("training") or {}).get("scheduler", {}).get("kind") == "slurm"
)
EC2_USER_DATA_LIMIT = 16384  # bytes, raw (AWS: "16 KB, in raw form, before it is base64-encoded")
USER_DATA_LIMITS = {
    "aws": EC2_USER_DATA_LIMIT,
    "azure": azure_catalog.CUSTOM_DATA_MAX_BYTES,
    "gcp": gcp_catalog.METADATA_VALUE_MAX_BYTES,
    # OCI counts instance metadata base64-encoded (32,000 bytes: accelstack.clouds.oci's boot_data_limit), so the raw
    # text may be 3/4 of it.
    "oci": registry.get("oci").limits["instance_metadata_max_bytes"] * 3 // 4,
}
# (stack, capacity): spot only where the stack's cloud sells it for training (OCI's cluster networks do not; validate
# refuses the key there, tests/components/oci).
CAPACITY_CASES = [
    (stack, capacity)
    for stack in SLURM_STACKS
    for capacity in ("on-demand", "spot")
    if capacity == "on-demand"
    or Feature.SPOT in registry.get(read_stack_file(STACKS / f"Pulumi.{stack}.yaml")["cloud"]).features
]


def raw(stack: str, *overrides: str) -> dict:
    return apply_overrides(read_stack_file(STACKS / f"Pulumi.{stack}.yaml"), list(overrides))


def spec_of(stack: str, *overrides: str):
    return parse_spec(raw(stack, *overrides), stack)


def files_of(cloud_init: str) -> dict[str, dict]:
    return {f["path"]: f for f in yaml.safe_load(cloud_init)["write_files"]}


def env_lines(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines())


def test_the_examples_cover_lustre_and_node_local_checkpoints():
    assert {"aws-training", "aws-finetune"} <= set(SLURM_STACKS)
    assert spec_of("aws-training").training.storage.lustre is not None
    assert spec_of("aws-finetune").training.storage.lustre is None


# --- the jobs' environment ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stack", "directory", "uri"),
    [
        ("aws-training", "/fsx/checkpoints", "s3://acme-train-checkpoints"),
        ("aws-finetune", "/scratch/checkpoints", "s3://acme-finetune-checkpoints"),
    ],
)
def test_head_and_compute_nodes_get_the_planners_interval_and_checkpoint_locations(stack, directory, uri):
    spec = spec_of(stack)
    interval = plan_training(spec.training, catalog=AWS_CATALOG, prices=aws_book()).interval_seconds
    expected = {
        "ACCELSTACK_CHECKPOINT_INTERVAL_SECONDS": str(interval),
        "ACCELSTACK_CHECKPOINT_DIR": directory,
        "ACCELSTACK_CHECKPOINT_URI": uri,
        "ACCELSTACK_CHECKPOINT_MARKER": "COMPLETE",
        "ACCELSTACK_STACK": stack,
    }
    artifacts = slurm.render_all(spec, slurm.nodes_for(spec))  # what `accelstack render` writes
    assert env_lines(artifacts["training.env"]) == expected
    for role in ("head.cloud-init.yaml", "compute.cloud-init.yaml"):
        files = files_of(artifacts[role])
        # The head's login shells get all but the interval (it would rebuild slurmctld on edits
        # Slurm never sees); jobs get the interval from the nodes' file through the TaskProlog.
        omitted = set(slurm.HEAD_OMITS) if role.startswith("head") else set()
        assert omitted <= expected.keys()
        assert env_lines(files[slurm.NODE_ENVIRONMENT_FILE]["content"]) == {
            k: v for k, v in expected.items() if k not in omitted
        }
        assert files[slurm.NODE_ENVIRONMENT_FILE]["permissions"] == "0644"  # jobs run as their users
        assert f". {slurm.NODE_ENVIRONMENT_FILE}" in files[slurm.NODE_ENVIRONMENT_PROFILE]["content"]
    compute = files_of(artifacts["compute.cloud-init.yaml"])
    assert compute[slurm.TASK_PROLOG_PATH]["content"] == artifacts["task-prolog.sh"]
    assert f"TaskProlog={slurm.TASK_PROLOG_PATH}" in artifacts["slurm.conf"].splitlines()


def test_an_interval_handed_over_by_the_component_is_the_one_written():
    spec = spec_of("aws-finetune")
    values = slurm.DeployValues(checkpoint_interval_seconds=1234)
    files = files_of(slurm.compute_cloud_init(spec, slurm.nodes_for(spec), values))
    assert "ACCELSTACK_CHECKPOINT_INTERVAL_SECONDS=1234\n" in files[slurm.NODE_ENVIRONMENT_FILE]["content"]
    timer = files[f"/etc/systemd/system/{slurm.CHECKPOINT_SYNC_UNIT}.timer"]["content"]
    assert "OnUnitActiveSec=300" in timer  # min(1234 / 2, 300)


def test_same_files_and_names_as_nodes_without_a_scheduler():
    """Jobs see the same environment with or without Slurm (every cloud's nodes without a scheduler boot
    `node_environment.environment_cloud_config`)."""
    environment = slurm.node_environment(spec_of("aws-finetune"), 4321)
    document = yaml.safe_load(node_environment_module.environment_cloud_config(environment))
    files = {f["path"]: f["content"] for f in document["write_files"]}
    assert files[slurm.NODE_ENVIRONMENT_FILE] == slurm.environment_file(environment)
    assert files[slurm.NODE_ENVIRONMENT_PROFILE] == slurm.environment_profile()


def run_task_prolog(tmp_path: Path, environment: dict[str, str], job_env: dict[str, str]) -> str:
    env_file = tmp_path / "training.env"
    env_file.write_text(slurm.environment_file(environment))
    prolog = tmp_path / "prolog.sh"
    prolog.write_text(slurm.task_prolog_script(str(env_file)))
    result = subprocess.run(
        ["bash", str(prolog)], env={"PATH": "/usr/bin:/bin", **job_env}, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_task_prolog_exports_the_file_but_keeps_what_the_job_set(tmp_path):
    environment = slurm.node_environment(spec_of("aws-finetune"), 3000)
    out = run_task_prolog(tmp_path, environment, {"ACCELSTACK_CHECKPOINT_DIR": "/mine"})
    assert out.splitlines() == [
        "export ACCELSTACK_CHECKPOINT_INTERVAL_SECONDS=3000",
        "export ACCELSTACK_CHECKPOINT_URI=s3://acme-finetune-checkpoints",
        "export ACCELSTACK_CHECKPOINT_MARKER=COMPLETE",
        "export ACCELSTACK_STACK=aws-finetune",
    ]


# --- node-local checkpoints (no Lustre) ----------------------------------------------------------


def all_text(spec, values=None) -> str:
    return "\n".join(slurm.render_all(spec, slurm.nodes_for(spec), values).values())


def test_without_lustre_nodes_restore_before_slurmd_sync_on_a_timer_and_at_the_notice():
    spec = spec_of("aws-finetune")
    artifacts = slurm.render_all(spec, slurm.nodes_for(spec))
    compute = files_of(artifacts["compute.cloud-init.yaml"])
    setup = compute[slurm.COMPUTE_SETUP_PATH]["content"]
    restore = "aws s3 sync s3://acme-finetune-checkpoints/ /scratch/checkpoints/ --region us-east-1"
    assert restore in setup
    # Called (not only defined) before slurmd starts; the timer starts after the restore.
    body = setup.split("\nensure_aws_cli\n", 1)[1]
    assert body.index("\nrestore_checkpoints\n") < body.index("systemctl enable --now slurmd")
    assert body.index("\nrestore_checkpoints\n") < body.index(
        f"systemctl enable --now {slurm.CHECKPOINT_SYNC_UNIT}.timer"
    )
    # The upload is the export script (completed checkpoints only), written beside its unit.
    upload = slurm.CHECKPOINT_EXPORT_PATH
    script = compute[upload]["content"]
    assert "source_dir=/scratch/checkpoints\n" in script and "destination=s3://acme-finetune-checkpoints/\n" in script
    assert compute[upload]["permissions"] == "0755"
    service = compute[f"/etc/systemd/system/{slurm.CHECKPOINT_SYNC_UNIT}.service"]["content"]
    assert f"ExecStart=/usr/bin/env {upload}" in service
    assert "Type=oneshot" in service
    watcher = compute[slurm.WATCHER_PATH]["content"]
    assert f'timeout -k 2 "$budget" {upload}' in watcher
    # The final sync comes after the requeue, in the notice handler.
    handler = watcher.split("handle_notice() {", 1)[1]
    assert handler.index('scontrol requeue "$job"') < handler.index('final_sync "$deadline"')
    assert 'GRACE="${GRACE_SECONDS:-60}"' in watcher  # leaves the final sync room in the 2 minutes


def test_with_lustre_nothing_syncs_from_the_nodes():
    spec = spec_of("aws-training", "training.nodes.capacity=spot")
    text = all_text(spec)
    assert "aws s3 sync" not in text
    assert slurm.CHECKPOINT_SYNC_UNIT not in text
    assert "final_sync" not in slurm.spot_watcher_script(spec, slurm.nodes_for(spec))
    assert 'GRACE="${GRACE_SECONDS:-90}"' in slurm.spot_watcher_script(spec, slurm.nodes_for(spec))


@pytest.mark.parametrize(("stack", "capacity"), CAPACITY_CASES)
def test_never_delete_towards_the_bucket(stack, capacity):
    assert "--delete" not in all_text(spec_of(stack, f"training.nodes.capacity={capacity}"))


def test_on_demand_nodes_without_lustre_still_restore_and_sync_but_run_no_watcher():
    spec = spec_of("aws-finetune", "training.nodes.capacity=on-demand")
    compute = files_of(slurm.compute_cloud_init(spec, slurm.nodes_for(spec), slurm.DeployValues()))
    assert f"/etc/systemd/system/{slurm.CHECKPOINT_SYNC_UNIT}.timer" in compute
    assert slurm.WATCHER_PATH not in compute
    assert "restore_checkpoints\n" in compute[slurm.COMPUTE_SETUP_PATH]["content"]


@pytest.mark.parametrize(
    ("interval", "period"),
    [(30, 60), (119, 60), (200, 100), (600, 300), (3128, 300), (81379, 300)],
)
def test_sync_period_is_half_the_interval_between_one_and_five_minutes(interval, period):
    assert slurm.sync_period_seconds(interval) == period


def test_node_role_may_read_and_write_but_not_delete_checkpoints():
    """What the sync needs from accelstack.components.aws.training's node policy: list the bucket, get and put
    (multipart included) objects, use the key; never delete."""
    policy = aws_training.instance_policy_document(
        "arn:aws:s3:::d", "arn:aws:s3:::acme-finetune-checkpoints", "arn:aws:kms:us-east-1:1:key/k"
    )
    allowed: dict[str, set[str]] = {}
    for statement in policy["Statement"]:
        assert statement["Effect"] == "Allow"
        for resource in statement["Resource"]:
            allowed.setdefault(resource, set()).update(statement["Action"])
    assert "s3:ListBucket" in allowed["arn:aws:s3:::acme-finetune-checkpoints"]
    assert {"s3:GetObject", "s3:PutObject"} <= allowed["arn:aws:s3:::acme-finetune-checkpoints/*"]
    assert {"kms:Decrypt", "kms:GenerateDataKey"} <= allowed["arn:aws:kms:us-east-1:1:key/k"]
    assert not any("Delete" in action for actions in allowed.values() for action in actions)


# --- EC2's user data limit ---------------------------------------------------------------------

# Deploy-time values as long as real ones get (full ARNs, FSx and volume ids).
DEPLOYED = slurm.DeployValues(
    head_address="10.255.255.249",
    lustre_dns_name="fs-0123456789abcdef0.fsx.ap-southeast-2.amazonaws.com",
    lustre_mount_name="abcdefgh",
    munge_key_secret=(
        "arn:aws:secretsmanager:ap-southeast-2:111111111111:secret:a-long-stack-name-for-training-munge-key-AbCdEf"
    ),
    state_volume="vol-0123456789abcdef0",
)


@pytest.mark.parametrize(("stack", "capacity"), CAPACITY_CASES)
def test_user_data_fits_the_clouds_limit(stack, capacity):
    """EC2 user data 16 KiB as sent (raw, or gzip-compressed when over: components/aws/boot_data.py), Azure custom
    data 64 KiB, a GCP metadata value 256 KiB."""
    spec = spec_of(stack, f"training.nodes.capacity={capacity}")
    limit = USER_DATA_LIMITS[spec.cloud]
    for text in (
        slurm.compute_cloud_init(spec, slurm.nodes_for(spec), DEPLOYED),
        slurm.head_cloud_init(spec, slurm.nodes_for(spec), DEPLOYED),
    ):
        sent = ec2_user_data(text) if spec.cloud == "aws" else text.encode()
        assert len(sent) < limit


# --- what the deployed stack carries (Pulumi mocks) --------------------------------------------


@pytest.fixture(scope="module")
def finetune_capture():
    return capture(PROGRAM, config_for_pulumi(raw("aws-finetune")), stack="aws-finetune")


def test_deployed_nodes_carry_the_exported_interval_and_the_sync(finetune_capture):
    cap = finetune_capture
    interval = int(cap.stack_outputs["checkpointIntervalSeconds"])  # JSON number from the engine
    assert (
        interval
        == plan_training(spec_of("aws-finetune").training, catalog=AWS_CATALOG, prices=aws_book()).interval_seconds
    )
    [template] = [r for r in cap.by_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name == "aws-finetune-nodes"]
    user_data = base64.b64decode(template.inputs["userData"])
    assert len(user_data) < EC2_USER_DATA_LIMIT  # what EC2 receives: raw, or gzip-compressed when over
    compute = files_of(_ec2_text(user_data))
    env = env_lines(compute[slurm.NODE_ENVIRONMENT_FILE]["content"])
    assert env["ACCELSTACK_CHECKPOINT_INTERVAL_SECONDS"] == str(interval)
    assert f"/etc/systemd/system/{slurm.CHECKPOINT_SYNC_UNIT}.timer" in compute
    head = files_of(cap.one("aws:ec2/instance:Instance").inputs["userData"])
    assert env_lines(head[slurm.NODE_ENVIRONMENT_FILE]["content"]) == {
        k: v for k, v in env.items() if k not in slurm.HEAD_OMITS
    }
    # The deployed documents are what `accelstack render` shows, up to the deploy-time values.
    finetune = spec_of("aws-finetune")
    assert (
        slurm.render_all(finetune, slurm.nodes_for(finetune))["training.env"]
        == compute[slurm.NODE_ENVIRONMENT_FILE]["content"]
    )


def _ec2_text(sent: bytes) -> str:
    """The user data cloud-init reads from what EC2 received (it decompresses gzip, components/aws/boot_data.py)."""
    return (gzip.decompress(sent) if sent[:2] == b"\x1f\x8b" else sent).decode()


def test_accelstack_render_writes_what_the_deployed_nodes_get(finetune_capture, tmp_path):
    from typer.testing import CliRunner

    from accelstack.cli import app

    result = CliRunner().invoke(app, ["render", "aws-finetune", "--out", str(tmp_path), "--project-dir", str(ROOT)])
    assert result.exit_code == 0, result.output
    [template] = [
        r for r in finetune_capture.by_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name == "aws-finetune-nodes"
    ]
    deployed = files_of(_ec2_text(base64.b64decode(template.inputs["userData"])))
    assert (tmp_path / "training.env").read_text() == deployed[slurm.NODE_ENVIRONMENT_FILE]["content"]
    unit = f"{slurm.CHECKPOINT_SYNC_UNIT}.timer"
    assert (tmp_path / unit).read_text() == deployed[f"/etc/systemd/system/{unit}"]["content"]


@pytest.mark.parametrize(("stack", "capacity"), CAPACITY_CASES)
def test_every_generated_shell_script_parses(stack, capacity, tmp_path):
    spec = spec_of(stack, f"training.nodes.capacity={capacity}")
    scripts = {
        path: entry["content"]
        for document in (
            slurm.compute_cloud_init(spec, slurm.nodes_for(spec), DEPLOYED),
            slurm.head_cloud_init(spec, slurm.nodes_for(spec), DEPLOYED),
        )
        for path, entry in files_of(document).items()
        if entry["content"].startswith("#!/bin/bash")
    }
    assert slurm.COMPUTE_SETUP_PATH in scripts and slurm.TASK_PROLOG_PATH in scripts
    assert (slurm.WATCHER_PATH in scripts) == (capacity == "spot")
    for path, text in scripts.items():
        result = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
        assert result.returncode == 0, f"{path}: {result.stderr}"
