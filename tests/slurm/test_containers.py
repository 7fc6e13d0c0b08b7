"""Jobs in containers (components/slurm/containers.py): what enroot binds comes from each cloud's typed
`ContainerFabric`, the key chooses pyxis or nothing, and bad values are refused at the key with its choices."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelstack.components import slurm
from accelstack.components.slurm.config_delivery import bundle_files, config_bundle
from accelstack.components.slurm.containers import FABRIC_ENVIRONMENT, FABRIC_MOUNTS, PYXIS_PLUGIN
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file
from accelstack.spec.problems import SpecError

STACKS = Path(__file__).resolve().parents[2] / "stacks"


def _spec(stack: str, *overrides: str):
    # Without the file's provider settings, so an override may move the stack to another region (the MI300X rows:
    # East US has no ND MI300X v5, westus3 has).
    return parse_spec(apply_overrides(read_stack_file(STACKS / f"Pulumi.{stack}.yaml"), list(overrides)), stack)


def _compute_files(spec) -> dict[str, str]:
    import yaml

    document = slurm.compute_cloud_init(spec, slurm.nodes_for(spec), slurm.DeployValues.placeholders())
    return {f["path"]: f["content"] for f in yaml.safe_load(document)["write_files"]}


# (stack, instance type override, paths the fstab must bind, settings the environ.d file must carry): what each
# fabric's own documentation has a container use (see each platform's container_fabric).
FABRICS = [
    ("aws-training", (), ["/dev/infiniband", "/opt/amazon/efa", "/opt/amazon/ofi-nccl"], ["FI_PROVIDER=efa"]),
    ("azure-training", (), ["/etc/nccl.conf", "/opt/microsoft"], ["MELLANOX_VISIBLE_DEVICES=all"]),
    ("gcp-training", (), ["/var/lib/tcpxo/lib64", "/dev/aperture_devices"], []),
    (
        "gcp-training",
        ("training.nodes.instanceType=a3-ultragpu-8g",),
        ["/usr/local/gib"],
        ["MELLANOX_VISIBLE_DEVICES=all"],
    ),
    (
        "azure-training",
        ("training.nodes.instanceType=Standard_ND96isr_MI300X_v5", "account.location=westus3"),
        ["/dev/kfd", "/dev/dri", "/etc/nccl.conf"],
        ["MELLANOX_VISIBLE_DEVICES=all"],
    ),
]


@pytest.mark.parametrize(
    ("stack", "overrides", "paths", "settings"), FABRICS, ids=[f"{s}{o}" for s, o, _, _ in FABRICS]
)
def test_containers_bind_the_fabric(stack: str, overrides: tuple[str, ...], paths: list[str], settings: list[str]):
    spec = _spec(stack, *overrides)
    files = _compute_files(spec)
    bound = [line.split()[0] for line in files[FABRIC_MOUNTS].splitlines() if not line.startswith("#")]
    for path in paths:
        assert path in bound, files[FABRIC_MOUNTS]
    environment = files[FABRIC_ENVIRONMENT].splitlines()
    for setting in settings:
        assert setting in environment
    # every fabric path the platform declares is bound, and the shared file system too (read-write)
    nodes = slurm.nodes_for(spec)
    declared = nodes.platform.container_fabric(nodes.instance)
    assert {*declared.devices, *declared.device_directories, *declared.read_only} <= set(bound)
    layout = slurm.layout(spec, nodes)
    shared = layout.lustre_mount_path or layout.local_checkpoints_path
    assert shared in bound


def test_plugstack_follows_the_key() -> None:
    pyxis = bundle_files(
        config_bundle(slurm.config_files(_spec("aws-training"), slurm.nodes_for(_spec("aws-training"))))
    )
    assert f"required {PYXIS_PLUGIN}" in pyxis["plugstack.conf"]
    spec = _spec("aws-training", "training.scheduler.containers=none")
    assert PYXIS_PLUGIN not in slurm.config_files(spec, slurm.nodes_for(spec))["plugstack.conf"]
    assert FABRIC_MOUNTS not in _compute_files(spec)
    head = slurm.head_cloud_init(spec, slurm.nodes_for(spec), slurm.DeployValues.placeholders())
    assert "install_pyxis" not in head


def test_an_unknown_value_names_the_key_and_the_choices() -> None:
    with pytest.raises(SpecError) as error:
        _spec("aws-training", "training.scheduler.containers=docker")
    assert "training.scheduler.containers" in str(error.value) and "'pyxis' or 'none'" in str(error.value)


def test_pyxis_needs_slurm() -> None:
    with pytest.raises(SpecError) as error:
        _spec("aws-training", "training.scheduler.kind=managed", "training.scheduler.containers=pyxis")
    assert "training.scheduler.containers: pyxis needs kind slurm" in str(error.value)
    # the default does not get in a managed scheduler's way
    assert _spec("aws-training", "training.scheduler.kind=managed").training.scheduler.kind == "managed"


def test_amd_gpus_are_scheduled_by_their_render_nodes() -> None:
    spec = _spec("azure-training", "training.nodes.instanceType=Standard_ND96isr_MI300X_v5", "account.location=westus3")
    nodes = slurm.nodes_for(spec)
    assert "Name=gpu Type=mi300x File=/dev/dri/renderD[128-135]" in slurm.gres_conf(spec, nodes).splitlines()
    assert "Gres=gpu:mi300x:8" in slurm.dynamic_node_conf(spec, nodes)
