"""The Slurm head's Managed Lustre client (azure review R6): Microsoft's amlfs-<codename> repository builds each
client version per kernel, and the newest Lustre version is not always built for the image's kernel yet. The head
installs the newest client built for its running kernel, and a repository with none fails the boot naming the
kernel, on the boot harness (tests/boot/machine)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from tests.boot.machine import can_boot
from tests.boot.test_boots_run import IMAGES, boot_launched, documents, role_of
from tests.stack_edits import deployed

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))

REPOSITORY = "packages.microsoft.com/repos/amlfs-noble"
BUILT = "amlfs-lustre-client-2.15.7-33-g79ddf99"  # built for the image's kernel (tests/boot/machine/packages.py)
NEWER_NOT_BUILT = "amlfs-lustre-client-2.16.1-9-g0a1b2c3"  # a newer version built for another kernel only
KERNEL = os.uname().release  # the harness's machines run this machine's kernel (tests/boot/machine/stub.py)


def boot_head(clients: set[str], work: Path):
    capture = deployed("azure-training")[0]
    head = next(r for r in capture.resources if documents(r.inputs) and role_of(r) == "slurm-head")
    image = IMAGES["azure"]["slurm-head"]
    assert image.repositories[REPOSITORY] == frozenset({BUILT}), "the head's image model lists one client"
    repositories = {**image.repositories, REPOSITORY: frozenset(clients)}
    return boot_launched("azure", capture, head, dataclasses.replace(image, repositories=repositories), work)


def test_a_newer_client_not_built_for_the_kernel_falls_back_to_the_newest_that_is(tmp_path: Path) -> None:
    machine = boot_head({BUILT, NEWER_NOT_BUILT}, tmp_path)
    assert machine.ok, machine.explain()
    assert f"Version '{KERNEL}' for '{NEWER_NOT_BUILT}' was not found" in machine.console
    assert "slurmctld.service" in machine.active_units


def test_no_client_built_for_the_kernel_fails_the_boot_naming_it(tmp_path: Path) -> None:
    machine = boot_head({NEWER_NOT_BUILT}, tmp_path)
    assert not machine.ok
    assert f"no amlfs-lustre-client-* of amlfs-noble is built for kernel {KERNEL}" in machine.console
    # The file system is the head's last step: the controller answers while the operator fixes the client.
    assert "slurmctld.service" in machine.active_units
