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
import gzip
from pathlib import Path

import pytest

from accelstack.clouds.oci.catalog import ACCELERATED_INSTANCES as OCI_CATALOG
from accelstack.components.aws.images import IMAGES as AWS_IMAGES
from accelstack.components.azure.images import IMAGES as AZURE_IMAGES
from accelstack.components.gcp.images import IMAGES as GCP_IMAGES
from accelstack.components.node_images import NodeImage
from accelstack.components.oci.images import IMAGES as OCI_IMAGES
from accelstack.components.vultr.images import IMAGES as VULTR_IMAGES
from accelstack.engine.capture import Capture, Registration
from accelstack.examples import WORKLOAD_EXAMPLES
from tests.boot.machine import Boot, boot, can_boot
from tests.boot.machine.clouds import devices, metadata, objects, sysfs
from tests.conformance.cloud_stacks import DIRECT
from tests.stack_edits import deployed, updated

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))

REPO = Path(__file__).resolve().parents[2]
IMAGES = {"aws": AWS_IMAGES, "azure": AZURE_IMAGES, "gcp": GCP_IMAGES, "oci": OCI_IMAGES, "vultr": VULTR_IMAGES}
# OCI's boot document is the instance metadata's user_data (a free-form map: its key keeps its snake_case).
BOOT_KEYS = ("userData", "customData", "user-data", "startup-script", "metadataStartupScript", "user_data")
# What each role must be running when its boot ends.
SERVES = {"slurm-head": {"munge.service", "slurmctld.service"}, "training-node": {"munge.service", "slurmd.service"}}
# With Slurm accounting the head runs slurmdbd too (the fake answers sacctmgr only while it does).
ACCOUNTING = "training.scheduler.accounting=database"
ACCOUNTING_SERVES = {"slurm-head": {"slurmdbd.service"}}


def stacks() -> list[str]:
    return sorted(WORKLOAD_EXAMPLES)


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
    raw = base64.b64decode(document)
    # cloud-init reads gzip-compressed user data as it reads plain (EC2's 16 KB limit is on what is sent).
    return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode()


def role_of(resource: Registration) -> str:
    name = resource.name
    if name.endswith("-head"):
        return "slurm-head"
    if "replica" in name:
        return "serving-replica"
    return "training-node"


# Machine types and topologies the examples do not boot, each with its own boot path: RDMA GCP nodes (gIB),
# AMD nodes on Azure and OCI (the ROCm images), replicas admitting requests themselves (no queue).
VARIANTS = {
    "gcp-training": [
        ("training.nodes.instanceType=a3-ultragpu-8g",),
        ("training.nodes.instanceType=a4-highgpu-8g",),
        (ACCOUNTING,),
    ],
    "azure-training": [
        ("training.nodes.instanceType=Standard_ND96isr_MI300X_v5", "account.location=westus3"),
        (ACCOUNTING,),
    ],
    "aws-training": [(ACCOUNTING,)],
    "oci-training": [("training.nodes.instanceType=BM.GPU.MI300X.8",)],
    "aws-serving": [DIRECT],
    "azure-serving": [DIRECT],
    "gcp-serving": [DIRECT],
}


def captured(stack: str, overrides: tuple[str, ...]) -> Capture:
    return updated(stack, overrides) if overrides else deployed(stack)[0]


def image_for(cloud: str, role: str, resource: Registration) -> NodeImage:
    """The image row of what the resource boots (Azure's AMD sizes and OCI's AMD shapes boot the ROCm build)."""
    reference = str(resource.inputs.get("virtualMachineProfile", {}).get("storageProfile", {}).get("imageReference"))
    if cloud == "azure" and role == "training-node" and "rocm" in reference:
        return IMAGES[cloud]["training-node-rocm"]
    shape = resource.inputs.get("instanceDetails", {}).get("launchDetails", {}).get("shape")
    if cloud == "oci" and role == "training-node" and shape in OCI_CATALOG and OCI_CATALOG[shape].vendor == "amd":
        return IMAGES[cloud]["training-node-rocm"]
    return IMAGES[cloud][role]


def boot_launched(
    cloud: str,
    capture: Capture,
    resource: Registration,
    image: NodeImage,
    work: Path,
    after: str = "",
    local_disks: tuple[str, ...] = (),
) -> Boot:
    """Boot the document `resource` launches machines with, on `image`, as its cloud would: the metadata service
    answering for it, the disks attached to it (and `local_disks`, the machine type's own), its machine type's
    devices, what the stack stored."""
    [document] = documents(resource.inputs)
    disks = devices(cloud, capture, resource) + local_disks
    return boot(
        cloud, image, decoded(document), work, metadata(cloud, capture, resource), disks,
        image.release, sysfs(cloud, resource), after=after, stored=objects(cloud, capture, resource),
    )  # fmt: skip


STACK_CASES = [(stack, overrides) for stack in stacks() for overrides in [(), *VARIANTS.get(stack, [])]]


@pytest.mark.parametrize(
    ("stack", "overrides"), STACK_CASES, ids=[s + "".join("+" + o for o in x) for s, x in STACK_CASES]
)
def test_every_boot_reaches_its_last_step(stack: str, overrides: tuple[str, ...], tmp_path: Path) -> None:
    """Each machine the stack launches (the resources carrying a boot document), booted in turn."""
    cloud = stack.split("-", 1)[0]
    capture = captured(stack, overrides)
    booted = [r for r in capture.resources if documents(r.inputs)]
    assert booted, f"{stack} launches no machine with a boot document"
    problems = []
    for resource in sorted(booted, key=lambda r: r.urn):
        role = role_of(resource)
        image = image_for(cloud, role, resource)
        machine = boot_launched(cloud, capture, resource, image, tmp_path / resource.name)
        where = f"{resource.name} ({role}, {image.description})"
        if not machine.ok:
            problems.append(f"{where}: {machine.explain()}")
            continue
        serves = SERVES.get(role, set()) | (ACCOUNTING_SERVES.get(role, set()) if ACCOUNTING in overrides else set())
        missing = serves - set(machine.active_units)
        unknown_urls = [c["unmodelled_url"] for c in machine.calls if "unmodelled_url" in c]
        refused = [r for r in machine.metadata_requests if r["status"] in (400, 401, 403, 405)]
        problems += [f"{where}: not running {sorted(missing)}"] if missing else []
        problems += [f"{where}: fetched what the network model lacks: {unknown_urls}"] if unknown_urls else []
        problems += [f"{where}: the metadata service refused {refused}"] if refused else []
    assert problems == [], "\n\n".join(problems)
