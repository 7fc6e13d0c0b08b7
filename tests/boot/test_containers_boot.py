"""Jobs in containers, as the boots set them up: pyxis built against the node's own Slurm on the head and the
nodes, enroot installed from NVIDIA's release on the nodes (no image here ships it), the fabric's enroot files in
place, and a failed container step failing the boot visibly.

The image rows say what each image has (the DLAMI and Ubuntu-HPC carry NVIDIA's container toolkit, Canonical's
GCE accelerator image does not; none carries enroot or pyxis); the harness's make compiles pyxis only where the
Slurm headers are installed, and its apt resolves enroot's .deb dependencies from the image's repositories.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from accelstack.components.slurm.containers import ENROOT_VERSION, FABRIC_MOUNTS, PYXIS_PLUGIN
from tests.boot.machine import can_boot
from tests.boot.test_boots_run import IMAGES, boot_launched, documents, role_of
from tests.stack_edits import deployed, updated

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))

STACKS = ("aws-training", "azure-training", "gcp-training")
# Each cloud's fabric as its node sees it in the container's mounts.
FABRIC_PATHS = {
    "aws-training": "/dev/infiniband",
    "azure-training": "/etc/nccl.conf",
    "gcp-training": "/var/lib/tcpxo/lib64",
}


def _machine(stack: str, role: str, tmp_path: Path, overrides: tuple[str, ...] = (), image=None):
    cloud = stack.split("-", 1)[0]
    capture = updated(stack, overrides) if overrides else deployed(stack)[0]
    resource = next(r for r in capture.resources if documents(r.inputs) and role_of(r) == role)
    return boot_launched(cloud, capture, resource, image or IMAGES[cloud][role], tmp_path)


@pytest.mark.parametrize("stack", STACKS)
def test_nodes_get_enroot_and_pyxis_with_the_fabric_bound(stack: str, tmp_path: Path) -> None:
    machine = _machine(stack, "training-node", tmp_path)
    assert machine.ok, machine.explain()
    assert machine.has_file(PYXIS_PLUGIN), machine.explain()
    assert machine.state("versions", {}).get("enroot") == ENROOT_VERSION
    mounts = machine.file(FABRIC_MOUNTS)
    assert FABRIC_PATHS[stack] in mounts, mounts
    assert "slurmd.service" in machine.active_units


@pytest.mark.parametrize("stack", STACKS)
def test_the_head_builds_pyxis_for_srun(stack: str, tmp_path: Path) -> None:
    machine = _machine(stack, "slurm-head", tmp_path)
    assert machine.ok, machine.explain()
    assert machine.has_file(PYXIS_PLUGIN)
    assert not machine.has_file("/etc/enroot/enroot.conf")  # jobs run on the nodes, not here


def test_gcp_nodes_install_the_container_toolkit_their_image_lacks(tmp_path: Path) -> None:
    machine = _machine("gcp-training", "training-node", tmp_path)
    assert machine.ok, machine.explain()
    assert "nvidia-container-toolkit" in machine.state("installed", [])


def test_amd_nodes_bind_rocm_devices_and_skip_nvidias_toolkit(tmp_path: Path) -> None:
    overrides = ("training.nodes.instanceType=Standard_ND96isr_MI300X_v5", "account.location=westus3")
    cloud, role = "azure", "training-node"
    capture = updated("azure-training", overrides)
    resource = next(r for r in capture.resources if documents(r.inputs) and role_of(r) == role)
    machine = boot_launched(cloud, capture, resource, IMAGES[cloud]["training-node-rocm"], tmp_path)
    assert machine.ok, machine.explain()
    mounts = machine.file(FABRIC_MOUNTS)
    assert "/dev/kfd /dev/kfd" in mounts and "/dev/dri /dev/dri" in mounts
    assert "nvidia-container-toolkit" not in machine.state("installed", [])


@pytest.mark.parametrize("stack", STACKS)
def test_without_slurm_headers_pyxis_fails_the_boot_visibly(stack: str, tmp_path: Path) -> None:
    """A repository that lacks the Slurm headers (a mirror outage, a renamed package) stops the node's boot at the
    pyxis step, and the console and status file say so; slurmd never starts without the plugin its config loads."""
    cloud = stack.split("-", 1)[0]
    image = IMAGES[cloud]["training-node"]
    broken = dataclasses.replace(
        image,
        installable=image.installable - {"libslurm-dev"},
        repositories={k: v - {"slurm-smd-dev"} for k, v in image.repositories.items()},
    )
    machine = _machine(stack, "training-node", tmp_path, image=broken)
    assert not machine.ok
    assert "E: Unable to locate package" in machine.console and "slurm" in machine.console, machine.console
    assert "accelstack-setup: FAILED" in machine.console, machine.console
    assert machine.file("/var/lib/accelstack/first-boot.status").startswith("failed")
    assert "slurmd.service" not in machine.active_units


def test_containers_none_installs_neither(tmp_path: Path) -> None:
    machine = _machine("aws-training", "training-node", tmp_path, ("training.scheduler.containers=none",))
    assert machine.ok, machine.explain()
    assert not machine.has_file(PYXIS_PLUGIN)
    assert "enroot" not in machine.state("versions", {})
