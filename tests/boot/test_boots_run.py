"""Every boot document every shipped stack sends runs, on a machine modelled from its image, to its last step.

Issue: mocks boot nothing, so a head whose setup script called a function it did not define, or nodes whose
image pinned Slurm away, deployed green and never made a cluster. Here each user-data document, as the
stack hands it to the cloud (taken from the captured `pulumi up`), goes through cloud-init on a throwaway
machine (tests/boot/machine): the image's commands only, its package repositories and pins, the cloud's
metadata service on 169.254.169.254 with its own access rules, the disks the cloud attaches. The boot must
finish, start what its role serves, ask the metadata service only what it answers, and fetch nothing from
the network the model does not know. A failing step fails the boot and says so on the serial console.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from accelstack.components.aws.images import IMAGES as AWS_IMAGES
from accelstack.components.azure.images import IMAGES as AZURE_IMAGES
from accelstack.components.gcp.images import IMAGES as GCP_IMAGES
from accelstack.engine.capture import Registration
from tests.boot.machine import boot, can_boot
from tests.boot.machine.clouds import devices, metadata, pci_devices
from tests.stack_edits import deployed

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))

REPO = Path(__file__).resolve().parents[2]
IMAGES = {"aws": AWS_IMAGES, "azure": AZURE_IMAGES, "gcp": GCP_IMAGES}
BOOT_KEYS = ("userData", "customData", "user-data", "startup-script", "metadataStartupScript")
# What each role must be running when its boot ends.
SERVES = {"slurm-head": {"munge.service", "slurmctld.service"}, "training-node": {"munge.service", "slurmd.service"}}


def stacks() -> list[str]:
    return sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in (REPO / "stacks").glob("Pulumi.*.yaml"))


def documents(node, found=None) -> list[str]:
    found = [] if found is None else found
    if isinstance(node, dict):
        for key, value in node.items():
            if key in BOOT_KEYS and isinstance(value, str):
                found.append(value)
            else:
                documents(value, found)
    elif isinstance(node, list):
        for value in node:
            documents(value, found)
    return found


def decoded(document: str) -> str:
    if document.startswith(("#", "Content-Type", "MIME-Version")):
        return document
    return base64.b64decode(document).decode()


def role_of(resource: Registration) -> str:
    name = resource.name
    if name.endswith("-head"):
        return "slurm-head"
    if "replica" in name:
        return "serving-replica"
    return "training-node"


def boots() -> list[tuple[str, str, str]]:
    cases = []
    for stack in stacks():
        capture, _ = deployed(stack)
        for resource in capture.resources:
            for _ in documents(resource.inputs):
                cases.append((stack, resource.urn, role_of(resource)))
    return cases


CASES = boots() if can_boot() is None else []


@pytest.mark.parametrize(("stack", "urn", "role"), CASES, ids=[f"{s}:{u.rsplit('::', 1)[-1]}" for s, u, _ in CASES])
def test_boot_reaches_its_last_step(stack: str, urn: str, role: str, tmp_path: Path) -> None:
    cloud = stack.split("-", 1)[0]
    capture, _ = deployed(stack)
    resource = next(r for r in capture.resources if r.urn == urn)
    [document] = documents(resource.inputs)
    image = IMAGES[cloud][role]
    machine = boot(
        cloud, image, decoded(document), tmp_path, metadata(cloud, capture, resource),
        devices(cloud, capture, resource), image.release, pci_devices(cloud, resource),
    )  # fmt: skip
    assert machine.ok, machine.explain()
    assert SERVES.get(role, set()) <= set(machine.active_units), machine.explain()
    unknown_urls = [c["unmodelled_url"] for c in machine.calls if "unmodelled_url" in c]
    assert unknown_urls == []
    refused = [r for r in machine.metadata_requests if r["status"] in (400, 401, 403, 405)]
    assert refused == [], f"the metadata service refused: {refused}"
