"""`training.scheduler.containers` means the same on every cloud that builds Slurm: pyxis with enroot on the
nodes (the head builds pyxis for srun and sbatch), plugstack.conf beside slurm.conf, the fabric bound into every
container; `none` leaves all of it out. And no cloud leaves a fabric of its catalog out of its containers."""

from __future__ import annotations

import pytest
import yaml
from cloud_stacks import cloud_stacks, stack_id

from accelstack.clouds import registry
from accelstack.components import slurm
from accelstack.components.node_platform import node_platform_for
from accelstack.components.slurm.containers import FABRIC_MOUNTS, PYXIS_PLUGIN
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file

SLURM_STACKS = [
    (stack_id(path), path)
    for _, path in cloud_stacks()
    if (read_stack_file(path).get("training") or {}).get("scheduler", {}).get("kind") == "slurm"
]


def _chooses_none(path) -> bool:
    return read_stack_file(path)["training"]["scheduler"].get("containers") == "none"


PYXIS_STACKS = [(stack, path) for stack, path in SLURM_STACKS if not _chooses_none(path)]


# Fabrics accelstack does not set up on the host either (A3 High's TCPX needs a kernel no public image has; the
# spec warns): nothing to bind.
NOT_SET_UP = {"gpudirect-tcpx"}


def _rendered(path, choice: str) -> tuple[str, str, str]:
    spec = parse_spec(apply_overrides(read_stack_file(path), [f"training.scheduler.containers={choice}"]), "s")
    nodes = slurm.nodes_for(spec)
    values = slurm.DeployValues.placeholders()
    return (
        slurm.head_cloud_init(spec, nodes, values),
        slurm.compute_cloud_init(spec, nodes, values),
        slurm.config_files(spec, nodes)["plugstack.conf"],
    )


def test_every_cloud_that_builds_slurm_is_here() -> None:
    clouds = {stack.split("-", 1)[0] for stack, _ in PYXIS_STACKS}
    assert {"aws", "azure", "gcp"} <= clouds


@pytest.mark.parametrize("path", [p for _, p in SLURM_STACKS if _chooses_none(p)])
def test_a_stack_that_chose_none_could_have_pyxis(path) -> None:
    """An example that sets none chose it: with pyxis its boot data still fits (AWS sends user data over EC2's
    16 KB gzip-compressed, components/aws/boot_data.py), and the rendered setup installs enroot and pyxis."""
    _, compute, plugstack = _rendered(path, "pyxis")
    assert f"required {PYXIS_PLUGIN}" in plugstack and "install_pyxis" in compute


@pytest.mark.parametrize(("stack", "path"), PYXIS_STACKS, ids=[s for s, _ in PYXIS_STACKS])
def test_pyxis_is_set_up_the_same_way(stack: str, path) -> None:
    head, compute, plugstack = _rendered(path, "pyxis")
    assert f"required {PYXIS_PLUGIN}" in plugstack
    setup = next(f["content"] for f in yaml.safe_load(compute)["write_files"] if f["path"].endswith("compute-setup"))
    steps = [line.strip() for line in setup.splitlines()]
    assert "install_enroot" in steps and "install_pyxis" in steps
    assert any(f["path"] == FABRIC_MOUNTS for f in yaml.safe_load(compute)["write_files"])
    head_setup = next(f["content"] for f in yaml.safe_load(head)["write_files"] if f["path"].endswith("head-setup"))
    assert "install_pyxis" in [line.strip() for line in head_setup.splitlines()]


@pytest.mark.parametrize(("stack", "path"), SLURM_STACKS, ids=[s for s, _ in SLURM_STACKS])
def test_none_leaves_containers_out(stack: str, path) -> None:
    head, compute, plugstack = _rendered(path, "none")
    assert PYXIS_PLUGIN not in plugstack
    assert "enroot" not in compute and "pyxis" not in compute and "pyxis" not in head


@pytest.mark.parametrize(("stack", "path"), SLURM_STACKS, ids=[s for s, _ in SLURM_STACKS])
def test_every_fabric_in_the_catalog_reaches_containers(stack: str, path) -> None:
    spec = parse_spec(read_stack_file(path), "s")
    platform = node_platform_for(spec)
    for name, instance in registry.get(spec.cloud).catalog.instances.items():
        if instance.fabric is None or instance.fabric in NOT_SET_UP or instance.accelerators < 1:
            continue
        fabric = platform.container_fabric(instance)
        assert fabric.devices or fabric.device_directories or fabric.read_only or fabric.environment, (
            f"{spec.cloud} {name}: {instance.fabric}"
        )
