"""The Slurm recipe's neutral duties, on every cloud that builds Slurm: the head node gets the data grants exactly
when the generator gives it an import or export unit (a file system that cannot link to the object store), and
it boots only after them. Today only some tiers need it (GCP's Filestore); the rule is the recipe's, so every
cloud's parts must answer it, and this test makes each one do so."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from accelstack.clouds import registry
from accelstack.components import slurm
from accelstack.engine.capture import capture, config_for_pulumi
from accelstack.examples import example_files
from accelstack.spec.loader import read_stack_file

REPO = Path(__file__).resolve().parents[2]
SLURM_STACKS = sorted(
    path
    for path in (p for p in example_files(REPO / "stacks") if p.name.endswith("-training.yaml"))
    if read_stack_file(path)["training"]["scheduler"]["kind"] == "slurm"
)

# Clouds whose head and nodes wear one identity, so no grant is the head's alone: OCI's instance principal is the
# stack compartment's dynamic group (components/oci/training.py node_identity), whose grants serve both.
SHARED_HEAD_IDENTITY = frozenset({"oci"})
HEAD_GRANT_STACKS = [p for p in SLURM_STACKS if read_stack_file(p)["cloud"] not in SHARED_HEAD_IDENTITY]


def registrations(stack_file: Path) -> list:
    stack = stack_file.name[len("Pulumi.") : -len(".yaml")]
    return capture(REPO / "__main__.py", config_for_pulumi(read_stack_file(stack_file)), stack=stack).resources


def labels_of(inputs: dict) -> set[str]:
    """The values of a resource's tags or labels (maps; AWS auto scaling groups' tags are a list, not a VM's)."""
    found: set[str] = set()
    for key in ("tags", "labels"):
        value = inputs.get(key)
        if isinstance(value, dict):
            found |= {str(v) for v in value.values()}
    return found


def test_every_cloud_with_slurm_ships_a_slurm_training_stack() -> None:
    with_slurm = {c for c in registry.deployable() if "slurm" in {f.value for f in registry.get(c).features}}
    assert with_slurm <= {read_stack_file(path)["cloud"] for path in SLURM_STACKS}


@pytest.mark.parametrize("stack_file", HEAD_GRANT_STACKS, ids=lambda p: p.stem)
@pytest.mark.parametrize("duty", ["import", "export", "neither"])
def test_the_head_gets_data_grants_exactly_for_its_duties(
    stack_file: Path, duty: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = read_stack_file(stack_file)
    stack = spec["training"]
    if duty == "export" and not stack["storage"].get("checkpoints"):
        pytest.skip("no checkpoint store to export to")
    unit = {"accelstack-duty.service": "[Unit]\n"}
    monkeypatch.setattr(slurm, "dataset_import_units", lambda *_: unit if duty == "import" else {})
    monkeypatch.setattr(slurm, "checkpoint_export_units", lambda *_: unit if duty == "export" else {})
    resources = registrations(stack_file)
    name = stack_file.name[len("Pulumi.") : -len(".yaml")]
    # The head is the VM labelled as Slurm's head on every cloud (a tag, a label).
    (head,) = [r for r in resources if r.custom and "slurm-head" in labels_of(r.inputs)]
    grants = {r.urn: r.name for r in resources if r.custom and r.name.startswith(f"{name}-head-")}
    data_grants = {
        urn for urn, grant in grants.items() if grant.startswith((f"{name}-head-datasets", f"{name}-head-checkpoints"))
    }
    expected = {"import": "datasets", "export": "checkpoints"}.get(duty)
    if expected is None:
        assert not data_grants
        return
    assert data_grants, f"{name}: no head grant for the {duty}"
    assert all(f"-head-{expected}" in grants[urn] for urn in data_grants)
    assert data_grants <= set(head.dependencies), "the head must boot after its data grants"


def test_the_aws_heads_data_policy_reads_datasets_and_writes_checkpoints_but_never_deletes() -> None:
    from accelstack.components.aws.scheduler import head_data_policy_document

    key = "arn:aws:kms:us-east-1:111111111111:key/k"
    reads = head_data_policy_document("arn:aws:s3:::data", None, key)["Statement"]
    writes = head_data_policy_document(None, "arn:aws:s3:::ckpt", key)["Statement"]
    actions = {sid["Sid"]: set(sid["Action"]) for sid in reads + writes}
    assert actions["ReadDatasets"] == {"s3:GetObject"} and "WriteCheckpoints" not in {s["Sid"] for s in reads}
    assert actions["WriteCheckpoints"] == {"s3:PutObject", "s3:AbortMultipartUpload"}
    assert not any(a.startswith("s3:Delete") for statement in reads + writes for a in statement["Action"])
    resources = {r for statement in reads + writes for r in statement["Resource"]}
    assert resources == {"arn:aws:s3:::data", "arn:aws:s3:::data/*", "arn:aws:s3:::ckpt", "arn:aws:s3:::ckpt/*", key}


@pytest.mark.integration
@pytest.mark.parametrize("stack_file", SLURM_STACKS, ids=lambda p: p.stem)
def test_the_plain_nodes_boot_passes_cloud_inits_schema_on_every_cloud(stack_file: Path, tmp_path: Path) -> None:
    """The recipe's boot for nodes without a scheduler, with each cloud's Lustre client install, as cloud-init
    itself validates it (the text the conformance variant `no-scheduler` finds on the node group)."""
    import shutil
    import subprocess

    from accelstack.components.node_environment import node_environment
    from accelstack.components.node_platform import node_platform_for
    from accelstack.components.recipes.training import lustre_client_cloud_config
    from accelstack.components.slurm import lustre_source
    from accelstack.spec.loader import load_stack

    if shutil.which("cloud-init") is None:
        pytest.skip("cloud-init is not installed")
    spec = load_stack(stack_file)
    lustre = spec.training.storage.lustre
    if lustre is None:
        pytest.skip("no file system")
    text = lustre_client_cloud_config(
        lustre_source("10.0.0.5", "lustrefs"),
        lustre.mount_path,
        node_platform_for(spec).lustre_client_install,
        node_environment(spec, 3600),
    )
    path = tmp_path / "user-data"
    path.write_text(text)
    result = subprocess.run(["cloud-init", "schema", "-c", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    install = subprocess.run(["bash", "-n", "-c", yaml.safe_load(text)["runcmd"][0][2]], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr  # the install block parses as bash
