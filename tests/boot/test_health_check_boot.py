"""The GPU health check lands where slurm.conf's HealthCheckProgram names it, on a compute node its own boot document
built (every cloud's training example), executable and valid bash; the head, which runs no slurmd, has none.
Its behaviour is tests/slurm/test_health_check.py's (modelled GPUs, sysfs and scontrol) and
tests/integration/test_slurm_real.py's (a real slurmctld)."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelstack.components.slurm.health_check import HEALTH_CHECK_PATH
from tests.boot.machine import can_boot
from tests.boot.test_boots_run import boot_launched, captured, documents, image_for, role_of

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))


@pytest.mark.parametrize("stack", ["aws-training", "azure-training", "gcp-training", "oci-training"])
def test_the_check_is_installed_on_compute_nodes_only(stack: str, tmp_path: Path) -> None:
    cloud = stack.split("-", 1)[0]
    capture = captured(stack, ())
    after = f"test -x {HEALTH_CHECK_PATH} && bash -n {HEALTH_CHECK_PATH} && echo installed || echo absent\n"
    roles = {}
    for resource in (r for r in capture.resources if documents(r.inputs)):
        role = role_of(resource)
        machine = boot_launched(
            cloud, capture, resource, image_for(cloud, role, resource), tmp_path / resource.name, after
        )
        assert machine.ok, machine.explain()
        roles[role] = machine.after[1].strip().splitlines()[-1]
    assert roles == {"training-node": "installed", "slurm-head": "absent"}, roles
