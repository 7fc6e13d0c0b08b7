"""Local NVMe across a reboot and a stop/start, as the compute nodes' boots set it up: one RAID 0 array over the
machine type's own disks, mounted by a unit slurmd requires, at every boot.

Booted on each cloud's node image with two local disks by the names its udev gives them. After the first boot, what
runs on the machine plays a reboot (slurmd and the unit stopped, the array stopped and unmounted, the disks kept)
and then a stop/start (the same, with the disks handed back blank), each time starting slurmd as systemd would at
boot: the array must be mounted before slurmd starts, assembled without a new file system after the reboot, and
created and formatted anew after the stop/start.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from accelstack.components.slurm.containers import ENROOT_SCRATCH
from accelstack.components.slurm.local_nvme import ARRAY_NAME, LOCAL_NVME_UNIT
from tests.boot.machine import can_boot
from tests.boot.test_boots_run import IMAGES, boot_launched, documents, role_of
from tests.stack_edits import deployed

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))

ARRAY = f"/dev/md/{ARRAY_NAME}"
UNIT = f"{LOCAL_NVME_UNIT}.service"
# (stack, the machine type's local disks as its cloud names them, where they are mounted)
CLOUDS = [
    (
        "aws-training",
        tuple(f"/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_AWS{n}" for n in (1, 2)),
        "/opt/dlami/nvme",
    ),
    ("azure-training", ("/dev/nvme0n1", "/dev/nvme1n1"), "/mnt/nvme"),
    (
        "gcp-training",
        ("/dev/disk/by-id/google-local-nvme-ssd-0", "/dev/disk/by-id/google-local-nvme-ssd-1"),
        "/mnt/localssd",
    ),
    ("oci-training", ("/dev/nvme0n1", "/dev/nvme1n1"), "/mnt/localdisk"),
]


def _after(disks: tuple[str, ...], mount: str) -> str:
    down = f"systemctl stop slurmd {UNIT}\numount {mount}\nmdadm --stop {ARRAY}\n"
    return (
        "set -e\n"
        f"mountpoint -q {mount}\n"
        "logger accelstack-test reboot\n" + down + "systemctl start slurmd\n"
        f"mountpoint -q {mount}\n"
        "logger accelstack-test stop-start\n" + down + "".join(f": > {d}\n" for d in disks) + "systemctl start slurmd\n"
        f"mountpoint -q {mount}\n"
    )


def _phases(calls: list[dict]) -> dict[str, list[dict]]:
    """The machine's calls split at the after-script's markers: first boot, reboot, stop/start."""
    phases: dict[str, list[dict]] = {"first boot": []}
    current = "first boot"
    for call in calls:
        if call["command"] == "logger" and call["args"][:1] == ["accelstack-test"]:
            current = call["args"][1]
            phases[current] = []
            continue
        phases[current].append(call)
    return phases


def _mdadm(calls: list[dict], verb: str) -> list[dict]:
    return [c for c in calls if c["command"] == "mdadm" and verb in c["args"]]


def _mkfs(calls: list[dict]) -> list[dict]:
    return [c for c in calls if c["command"].startswith("mkfs") and c["args"][-1] == ARRAY]


def _started(calls: list[dict], unit: str) -> int:
    return next(i for i, c in enumerate(calls) if c.get("unit") == unit and c.get("started"))


@pytest.mark.parametrize(("stack", "disks", "mount"), CLOUDS, ids=[c[0] for c in CLOUDS])
def test_local_nvme_is_mounted_before_slurmd_at_every_boot(
    stack: str, disks: tuple[str, ...], mount: str, tmp_path: Path
) -> None:
    cloud = stack.split("-", 1)[0]
    capture = deployed(stack)[0]
    resource = next(r for r in capture.resources if documents(r.inputs) and role_of(r) == "training-node")
    image = IMAGES[cloud]["training-node"]
    machine = boot_launched(cloud, capture, resource, image, tmp_path, after=_after(disks, mount), local_disks=disks)
    assert machine.ok, machine.explain()
    status, output = machine.after
    assert status == 0, output + machine.explain()
    phases = _phases(machine.calls)
    assert set(phases) == {"first boot", "reboot", "stop-start"}, output

    first = phases["first boot"]
    assert len(_mdadm(first, "--create")) == 1 and len(_mkfs(first)) == 1
    assert _started(first, UNIT) < _started(first, "slurmd.service")
    # enroot's cache went on the array, chosen at first boot once it was mounted
    assert os.readlink(machine.work / "fs" / ENROOT_SCRATCH.lstrip("/")) == f"{mount}/enroot"

    reboot = phases["reboot"]  # the disks kept their array and file system: assembled, not made anew
    assert _mdadm(reboot, "--assemble") and not any("failed" in c for c in _mdadm(reboot, "--assemble"))
    assert not _mdadm(reboot, "--create") and not _mkfs(reboot)
    assert _started(reboot, UNIT) < _started(reboot, "slurmd.service")

    stop_start = phases["stop-start"]  # blank disks: a new array and file system, mounted before slurmd
    assert len(_mdadm(stop_start, "--create")) == 1 and len(_mkfs(stop_start)) == 1
    assert _started(stop_start, UNIT) < _started(stop_start, "slurmd.service")
    assert f"After={UNIT}" in machine.file("/etc/systemd/system/slurmd.service.d/accelstack.conf")


def test_a_node_without_local_disks_boots_with_enroot_on_its_boot_disk(tmp_path: Path) -> None:
    capture = deployed("gcp-training")[0]
    resource = next(r for r in capture.resources if documents(r.inputs) and role_of(r) == "training-node")
    machine = boot_launched("gcp", capture, resource, IMAGES["gcp"]["training-node"], tmp_path)
    assert machine.ok, machine.explain()
    assert not _mdadm(machine.calls, "--create") and "slurmd.service" in machine.active_units
    assert os.readlink(machine.work / "fs" / ENROOT_SCRATCH.lstrip("/")) == "/var/lib/enroot-scratch"
