"""Vultr's serving replica booted for real (tests/boot/machine): its user data, as the stack hands it to Vultr, on
a machine modelled from Vultr's Ubuntu 22.04 GPU image (components/vultr/images.py) with Vultr's metadata service
on 169.254.169.254 (`/v1.json`, no header) and the weights key delivered by its presigned URL
(test_vultr_weights_key.py). The shipped replica reaching `serving ok` is test_boots_run's; here, the installs it
needs and a failure it must show."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from accelstack.components.node_images import NodeImage
from accelstack.components.replica.boot_status import STATUS_COMMAND, STATUS_PATH
from accelstack.components.vultr.images import IMAGES
from tests.boot.machine import Boot, boot, can_boot
from tests.boot.machine.clouds import devices, metadata, objects
from tests.boot.test_boots_run import documents
from tests.stack_edits import deployed

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))

ASK = f"{STATUS_COMMAND}; echo status-exit=$?\n"


# The image as the row has it (Docker preinstalled, dstack's record), and the same image without Docker: the row rests
# on a third party's record, so the replica must boot on either (components/vultr/images.py).
SHIPPED = IMAGES["serving-replica"]
WITHOUT_DOCKER = dataclasses.replace(
    SHIPPED, ships=SHIPPED.ships - {"docker"}, services=SHIPPED.services - {"docker.service"}
)


def boot_replica(work: Path, refused: str = "", image: NodeImage = SHIPPED) -> Boot:
    capture = deployed("vultr-serving")[0]
    [replica] = [r for r in capture.by_type("vultr:index/instance:Instance") if r.name.endswith("-replica-0")]
    [document] = documents(replica.inputs)
    stored = objects("vultr", capture, replica) | ({"registry": {"refuses": refused}} if refused else {})
    return boot(
        "vultr", image, document, work, metadata("vultr", capture, replica), devices("vultr", capture, replica),
        image.release, after=ASK, stored=stored,
    )  # fmt: skip


@pytest.mark.parametrize("image", [SHIPPED, WITHOUT_DOCKER], ids=["docker-preinstalled", "without-docker"])
def test_the_replica_installs_its_runtime_and_keeps_the_key_out_of_the_units(tmp_path: Path, image: NodeImage) -> None:
    machine = boot_replica(tmp_path, image=image)
    assert machine.ok, machine.explain()
    status = json.loads(machine.file(STATUS_PATH))
    assert (status["stage"], status["state"], status["reason"]) == ("serving", "ok", ""), status
    assert [r for r in machine.metadata_requests if r["status"] >= 400] == []
    # The key is read in a subshell for the copy only: the units' environment never carries it.
    assert "AWS_SECRET_ACCESS_KEY" not in machine.file("/etc/accelstack/worker.env")
    installed = set(machine.state("installed", []))
    # The AWS CLI the weights copy runs is installed whether or not the image ships Docker; jammy's docker.io only
    # where it does not (an image's own Docker is never replaced).
    assert {"awscli", "nvidia-container-toolkit"} <= installed, installed
    assert ("docker.io" in installed) == ("docker" not in image.ships), installed
    syncs = [c for c in machine.calls if c["command"] == "aws" and c["args"][:2] == ["s3", "sync"]]
    assert syncs and all("--endpoint-url" in c["args"] for c in syncs), syncs


def test_a_replica_whose_server_image_cannot_be_pulled_says_so(tmp_path: Path) -> None:
    machine = boot_replica(tmp_path, refused="denied: requested access is denied")
    assert not machine.ok
    status = json.loads(machine.file(STATUS_PATH))
    assert (status["stage"], status["state"]) == ("prepare", "failed"), status
    assert "accelstack-replica: prepare failed: exit" in machine.console, machine.console
    assert "serving ok" not in machine.console
    _, output = machine.after
    assert "status-exit=1" in output, output
