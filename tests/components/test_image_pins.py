"""Every image a GCP or Azure VM boots is one pinned version, never a family or "latest" (a family resolves anew at
each VM creation, so Spot nodes recreated mid-cluster would boot other kernels and drivers than their peers), and
the GPU image carries the driver stack of the machine type's GPUs (ROCm for AMD's MI300X). Read from what the
programs register (the previews' inputs), for each GPU machine type and each workload."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from accelstack.clouds.azure.catalog import ACCELERATED_INSTANCES as AZURE_INSTANCES
from accelstack.clouds.gcp.catalog import ACCELERATED_INSTANCES as GCP_INSTANCES
from accelstack.components.azure import images as azure_images
from accelstack.components.gcp import images as gcp_images
from accelstack.engine.capture import capture, config_for_pulumi
from accelstack.spec.loader import apply_overrides, read_stack_file

REPO = Path(__file__).resolve().parents[2]
# A GCP image by version: projects/<project>/global/images/<name>, never .../images/family/<family>.
GCP_PINNED = re.compile(r"projects/[a-z][-a-z0-9]+/global/images/(?!family/)[a-z][-a-z0-9]*-v\d{8}[-a-z0-9]*")
# An Azure Marketplace version: dotted numbers (24.04.2026072901), never "latest".
AZURE_PINNED = re.compile(r"\d+\.\d+\.\d+")


def previewed(stack: str, *overrides: str):
    raw = apply_overrides(read_stack_file(REPO / "stacks" / f"Pulumi.{stack}.yaml"), list(overrides))
    return capture(REPO / "__main__.py", config_for_pulumi(raw), stack=stack)


def gcp_images_of(inputs: Any) -> Iterator[str]:
    """Every GCP image reference in a resource's inputs (instance templates' sourceImage, an instance's boot
    disk image, a cluster's node image)."""
    if isinstance(inputs, dict):
        for key, value in inputs.items():
            if key in {"sourceImage", "image"} and isinstance(value, str):
                yield value
            else:
                yield from gcp_images_of(value)
    elif isinstance(inputs, list):
        for value in inputs:
            yield from gcp_images_of(value)


def azure_images_of(inputs: Any) -> Iterator[dict[str, str]]:
    if isinstance(inputs, dict):
        for key, value in inputs.items():
            if key == "imageReference" and isinstance(value, dict):
                yield value
            else:
                yield from azure_images_of(value)
    elif isinstance(inputs, list):
        for value in inputs:
            yield from azure_images_of(value)


def test_the_image_tables_name_versions_only():
    for image in [*gcp_images.NODE_IMAGES.values(), gcp_images.HEAD_IMAGE, gcp_images.REPLICA_IMAGE]:
        assert GCP_PINNED.fullmatch(image), image
    assert set(gcp_images.NODE_IMAGES) == set(GCP_INSTANCES)  # a row for every GPU machine type
    for image in [*azure_images.NODE_IMAGES_BY_VENDOR.values(), azure_images.HEAD_IMAGE]:
        assert AZURE_PINNED.fullmatch(image["version"]), image
    assert {i.vendor for i in AZURE_INSTANCES.values()} <= set(azure_images.NODE_IMAGES_BY_VENDOR)


@pytest.mark.parametrize(
    ("stack", "overrides"),
    [
        ("gcp-training", ()),
        ("gcp-training", ("training.nodes.instanceType=a3-ultragpu-8g",)),
        (
            "gcp-training",
            (
                "training.nodes.instanceType=a4-highgpu-8g",
                "training.nodes.capacity=flex-start",
                "training.nodes.maxRunHours=72",
            ),
        ),
        ("gcp-serving", ()),
    ],
)
def test_every_gcp_vm_boots_a_pinned_image(stack, overrides):
    found = [image for r in previewed(stack, *overrides).resources for image in gcp_images_of(r.inputs)]
    assert found, "no image reference found: the walk no longer matches the resources"
    for image in found:
        assert GCP_PINNED.fullmatch(image), image


@pytest.mark.parametrize(
    ("stack", "overrides", "gpu_sku"),
    [
        ("azure-training", (), "2404"),
        (
            "azure-training",
            ("training.nodes.instanceType=Standard_ND96isr_MI300X_v5", "account.location=westus3"),
            "2404-rocm",
        ),
        ("azure-serving", (), "2404"),
    ],
)
def test_every_azure_vm_boots_a_pinned_image_with_its_gpus_driver_stack(stack, overrides, gpu_sku):
    found = [image for r in previewed(stack, *overrides).resources for image in azure_images_of(r.inputs)]
    assert found, "no image reference found: the walk no longer matches the resources"
    for image in found:
        assert AZURE_PINNED.fullmatch(image.get("version", "")), image
    gpu = [image for image in found if image["offer"] == "ubuntu-hpc"]
    assert gpu and {image["sku"] for image in gpu} == {gpu_sku}


@pytest.mark.parametrize("instance_type", ["Standard_ND96isr_H100_v5", "Standard_ND96isr_MI300X_v5"])
def test_azure_nodes_use_the_images_own_infiniband_stack(instance_type):
    """The HPC images carry the InfiniBand stack and write NCCL's settings themselves (/etc/nccl.conf from their
    sku-customizations unit): a node's boot installs no OFED/DOCA and does not overwrite that file."""
    from accelstack.components import slurm
    from accelstack.spec import parse_spec

    raw = apply_overrides(
        read_stack_file(REPO / "stacks" / "Pulumi.azure-training.yaml"),
        [f"training.nodes.instanceType={instance_type}", "account.location=westus3"],
    )
    spec = parse_spec(raw, "azure-training")
    nodes = slurm.nodes_for(spec)
    assert nodes.platform.fabric_hooks(nodes.instance) is None
    boot = slurm.compute_cloud_init(spec, nodes, slurm.DeployValues.placeholders())
    assert not re.search(r"(?i)mlnxofed|mlnx_ofed|doca-|ofed", boot)
    # The file is only bound read-only into containers (enroot's mounts.d fstab), never written.
    for line in (line for line in boot.splitlines() if "/etc/nccl.conf" in line):
        assert re.fullmatch(r"\s*/etc/nccl\.conf /etc/nccl\.conf none \S*\bro\b\S*", line), line
