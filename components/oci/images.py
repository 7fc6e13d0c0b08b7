"""The images the nodes boot: the newest Canonical Ubuntu 24.04 platform image OCI lists as compatible with the shape
(`core.get_images(shape=...)` returns only images the shape can boot), so a bare-metal GPU shape never gets an image
it refuses at launch. Ubuntu because the Slurm generator installs Ubuntu's archive packages (noble: Slurm 23.11).
"""

from __future__ import annotations

import pulumi
import pulumi_oci as oci

from accelstack.components.node_images import NOBLE_ARCHIVE, UBUNTU_BASE, NodeImage
from accelstack.components.oci.node_platform import OCA_UNIT

OPERATING_SYSTEM = "Canonical Ubuntu"
OPERATING_SYSTEM_VERSION = "24.04"


def image_for_shape(compartment_id: str, shape: str, opts: pulumi.InvokeOptions) -> pulumi.Output[str]:
    """The OCID of the newest Ubuntu 24.04 image compatible with `shape` (created-time descending, first)."""
    images = oci.core.get_images_output(
        compartment_id=compartment_id,
        operating_system=OPERATING_SYSTEM,
        operating_system_version=OPERATING_SYSTEM_VERSION,
        shape=shape,
        sort_by="TIMECREATED",
        sort_order="DESC",
        opts=opts,
    )

    def first(found: list[oci.core.outputs.GetImagesImageResult]) -> str:
        if not found:
            raise ValueError(f"no {OPERATING_SYSTEM} {OPERATING_SYSTEM_VERSION} image is compatible with {shape}")
        return found[0].id

    return images.images.apply(first)


# What that image has and can install, per node role (components/node_images.py): the boot tests' machines.
# OCI's Canonical Ubuntu platform images are Canonical's cloud image plus OCI's guest pieces: the Oracle Cloud Agent,
# which Ubuntu carries as a snap (its unit is snap.oracle-cloud-agent.oracle-cloud-agent.service, not the RPM's
# oracle-cloud-agent.service of Oracle Linux), and cloud-init's Oracle datasource. They carry no NVIDIA driver, no
# CUDA, no Mellanox OFED / DOCA and no oci CLI: the GPU-ready images with driver, CUDA and OFED for BM.GPU shapes are
# the OCI HPC team's custom builds (github.com/oracle-quickstart/oci-hpc-images: "Canonical-Ubuntu-22.04-DOCA-OFED-
# 3.2.1-GPU-580-OPEN-CUDA-13.0", "Oracle-Linux-8.10-RHCK-DOCA-OFED-...-GPU-..."), imported per tenancy from an
# object storage URI, never returned by get_images for "Canonical Ubuntu". No Slurm either: the generator installs
# noble's archive packages.
_PLATFORM_UBUNTU = NodeImage(
    description=f"OCI platform image {OPERATING_SYSTEM} {OPERATING_SYSTEM_VERSION} (newest compatible with the shape)",
    release="ubuntu-24.04",
    package_manager="apt",
    ships=UBUNTU_BASE,
    installable=NOBLE_ARCHIVE,
    # NVIDIA's apt repository for the container toolkit the node's enroot setup adds.
    repositories={"nvidia.github.io/libnvidia-container": frozenset({"nvidia-container-toolkit"})},
    services=frozenset({OCA_UNIT, "snapd.service"}),
)
IMAGES: dict[str, NodeImage] = {"slurm-head": _PLATFORM_UBUNTU, "training-node": _PLATFORM_UBUNTU}
