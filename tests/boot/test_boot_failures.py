"""A step that fails fails the boot, and says so where the operator looks without logging in.

Each cloud's Slurm head and nodes booted on an image whose repositories lack munge (a mirror outage, a
release that dropped it): the boot must stop, `cloud-init status` must say error, the serial console the
cloud keeps (EC2 get-console-output, GCE serial port, Azure boot diagnostics) must name the failure, and
the first-boot status file must record it. No test here defines anything the scripts call.
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest

from tests.boot.machine import can_boot
from tests.boot.test_boots_run import IMAGES, boot_launched, documents, role_of
from tests.stack_edits import deployed

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))

CASES = [
    (stack, role)
    for stack in ("aws-training", "azure-training", "gcp-training", "oci-training")
    for role in ("slurm-head", "training-node")
]


@pytest.mark.parametrize(("stack", "role"), CASES, ids=[f"{s}:{r}" for s, r in CASES])
def test_a_failed_step_fails_the_boot_visibly(stack: str, role: str, tmp_path: Path) -> None:
    cloud = stack.split("-", 1)[0]
    capture, _ = deployed(stack)
    resource = next(r for r in capture.resources if documents(r.inputs) and role_of(r) == role)
    image = IMAGES[cloud][role]
    broken = dataclasses.replace(image, installable=image.installable - {"munge"})
    machine = boot_launched(cloud, capture, resource, broken, tmp_path)
    assert not machine.ok
    assert "E: Unable to locate package munge" in machine.console
    assert "accelstack-setup: FAILED" in machine.console, machine.console
    assert machine.file("/var/lib/accelstack/first-boot.status").startswith("failed")
    expected_daemon = "slurmctld.service" if role == "slurm-head" else "slurmd.service"
    assert expected_daemon not in machine.active_units


@pytest.mark.parametrize("role", ["slurm-head", "training-node"])
def test_an_azure_machine_outside_the_vaults_firewall_cannot_read_its_secrets(role: str, tmp_path: Path) -> None:
    """The vault's firewall (default Deny) refuses a machine whose subnet it does not list: its munge key read
    gets 403 ForbiddenByFirewall and the boot fails visibly. (The shipped stack lists it: test_boots_run.)"""
    capture = copy.deepcopy(deployed("azure-training")[0])
    [vault] = capture.by_type("azure-native:keyvault:Vault")
    vault.inputs["properties"]["networkAcls"]["virtualNetworkRules"] = []
    resource = next(r for r in capture.resources if documents(r.inputs) and role_of(r) == role)
    machine = boot_launched("azure", capture, resource, IMAGES["azure"][role], tmp_path)
    assert not machine.ok
    assert "returned error: 403" in machine.console and "could not fetch the munge key" in machine.console
    assert "accelstack-setup: FAILED" in machine.console, machine.console
    assert machine.file("/var/lib/accelstack/first-boot.status").startswith("failed")


@pytest.mark.parametrize("role", ["slurm-head", "training-node"])
def test_an_oci_machine_its_policies_do_not_let_read_the_munge_key_fails_visibly(role: str, tmp_path: Path) -> None:
    """The instance principal reads the munge key only as the stack's policy allows (`read secret-bundles ... where
    target.secret.id = ...`): without that statement Vault answers NotAuthorizedOrNotFound, the boot stops and says
    so. (The shipped stack grants it: test_boots_run.)"""
    capture = copy.deepcopy(deployed("oci-training")[0])
    for policy in capture.by_type("oci:Identity/policy:Policy"):
        policy.inputs["statements"] = [s for s in policy.inputs["statements"] if "secret-bundles" not in s]
    resource = next(r for r in capture.resources if documents(r.inputs) and role_of(r) == role)
    machine = boot_launched("oci", capture, resource, IMAGES["oci"][role], tmp_path)
    assert not machine.ok
    assert "NotAuthorizedOrNotFound" in machine.console and "could not fetch the munge key" in machine.console
    assert "accelstack-setup: FAILED" in machine.console, machine.console
    assert machine.file("/var/lib/accelstack/first-boot.status").startswith("failed")
