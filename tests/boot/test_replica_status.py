"""A serving replica's boot says how far it got, on every cloud, in one machine-readable file and on the serial
console (components/replica/boot_status.py): booted on its image, a replica records each stage up to `serving ok`
and the status command answers 0; when the server image cannot be pulled, the record names the stage (`prepare`),
the failing command, and the command answers 1. The recorder is the boot document's own; nothing here writes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelstack.components.replica.boot_status import STATUS_COMMAND, STATUS_PATH
from tests.boot.machine import Boot, boot, can_boot
from tests.boot.machine.clouds import devices, metadata, objects, sysfs
from tests.boot.test_boots_run import IMAGES, captured, decoded, documents, role_of

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))

STACKS = ["aws-serving", "azure-serving", "gcp-serving"]
ASK = f"{STATUS_COMMAND}; echo status-exit=$?\n"


def boot_replica(stack: str, work: Path, refused: str = "") -> Boot:
    cloud = stack.split("-", 1)[0]
    capture = captured(stack, ())
    replica = next(r for r in capture.resources if documents(r.inputs) and role_of(r) == "serving-replica")
    [document] = documents(replica.inputs)
    stored = objects(cloud, capture, replica) | ({"registry": {"refuses": refused}} if refused else {})
    image = IMAGES[cloud]["serving-replica"]
    return boot(
        cloud, image, decoded(document), work, metadata(cloud, capture, replica), devices(cloud, capture, replica),
        image.release, sysfs(cloud, replica), after=ASK, stored=stored,
    )  # fmt: skip


@pytest.mark.parametrize("stack", STACKS)
def test_a_replica_records_each_stage_up_to_serving(stack: str, tmp_path: Path) -> None:
    machine = boot_replica(stack, tmp_path)
    assert machine.ok, machine.explain()
    status = json.loads(machine.file(STATUS_PATH))
    assert (status["stage"], status["state"], status["reason"]) == ("serving", "ok", ""), status
    for stage in ("prepare running", "prepare ok", "health running", "serving ok"):
        assert f"accelstack-replica: {stage}" in machine.console, machine.console
    _, output = machine.after
    assert "status-exit=0" in output and json.loads(output.splitlines()[0]) == status, output


@pytest.mark.parametrize("stack", STACKS)
def test_a_replica_whose_image_cannot_be_pulled_says_so(stack: str, tmp_path: Path) -> None:
    machine = boot_replica(stack, tmp_path, refused="denied: requested access to the resource is denied")
    status = json.loads(machine.file(STATUS_PATH))
    assert (status["stage"], status["state"]) == ("prepare", "failed"), status
    assert status["reason"].startswith("exit ") and "docker pull" in status["reason"], status
    assert "accelstack-replica: prepare failed: exit" in machine.console, machine.console
    assert "serving ok" not in machine.console
    _, output = machine.after
    assert "status-exit=1" in output, output
