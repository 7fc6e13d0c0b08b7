"""The images OCI machines boot, and what each has (the boot tests' rows, components/node_images.py).

The Slurm head (a VM.Standard.E5.Flex, no GPU) boots the newest Canonical Ubuntu 24.04 platform image OCI lists as
compatible with its shape (`core.get_images(shape=...)` returns only images the shape can boot).

The GPU nodes boot a build of the OCI HPC team's GPU images (github.com/oracle-quickstart/oci-hpc-images), one per
driver family: OCI's platform images carry no NVIDIA or ROCm driver and no Mellanox/DOCA OFED, and the HPC team's
builds are what oci-hpc's own stacks boot on BM.GPU shapes. They are not in any tenancy until imported: oci-hpc
(documentation/Prerequisites.md, "Images") publishes each build as an object behind a pre-authenticated request and
asks for it to be imported "from URL, OCI type"; its mgmt/lib/ociwrap.py import_custom_image calls CreateImage with
ImageSourceViaObjectStorageUriDetails(source_uri=<that URL>). The stack does the same, once, in its compartment.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pulumi
import pulumi_oci as oci

from accelstack.components.node_images import NOBLE_ARCHIVE, UBUNTU_BASE, NodeImage
from accelstack.components.oci.node_platform import OCA_UNIT

OPERATING_SYSTEM = "Canonical Ubuntu"
OPERATING_SYSTEM_VERSION = "24.04"


def image_for_shape(compartment_id: str, shape: str, opts: pulumi.InvokeOptions) -> pulumi.Output[str]:
    """The OCID of the newest Ubuntu 24.04 platform image compatible with `shape` (created-time descending, first):
    the head's. The head ignores later images (components/oci/scheduler.py ignore_changes sourceDetails)."""
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


# oci-hpc documentation/Prerequisites.md (oracle-quickstart/oci-hpc b5285a6, 2026-05-19, its newest commit when
# re-read 2026-12-06: the two URLs below are character for character the ones it links), "Ubuntu 24.04": the builds'
# objects, one bucket behind one pre-authenticated request. "Use the Lustre 6.8 kernel images to get the Lustre
# client": the 6.8 builds below. Each heading names the GPUs its builds are for (`gpus`); the Arm GB200/GB300 builds
# (aarch64) and MI355X with Pollara NICs (another bucket, MOFED 24.10) are not used: the catalog has no such shape.
HPC_IMAGES_PAR = (
    "https://objectstorage.ca-montreal-1.oraclecloud.com/p/"
    "AIo4CP0P_DlUelDlsWgGPWmY6FcBQzJWmmFyGKdY0epkh87a9Q3ndvFYycjIxTQ9/n/idxzjcdglx2s/b/images/o/"
)


@dataclass(frozen=True)
class GpuImageBuild:
    """One published build of the HPC team's GPU images: its object (and the image's display name), and what its
    Packer template (oci-hpc-images images/Ubuntu-24/<features>.pkr.hcl, build_groups) puts on it."""

    name: str  # <base image>-<features>-<build date>-<release>: the object's name
    slug: str  # the build in the image resource's name: a new build is a new image beside the old one
    gpus: tuple[str, ...]  # the GPUs Prerequisites.md lists the build under (its heading)
    driver: str
    ofed: str
    kernel: str
    lustre_client: str

    @property
    def source_uri(self) -> str:
        return HPC_IMAGES_PAR + self.name


# "Nvidia_x86 (A100, H100, H200, B200, B300,...)": images/Ubuntu-24/Canonical-Ubuntu-24.04-6.8-DOCA-OFED-3.2.1-GPU-
# 580-OPEN-CUDA-13.0.pkr.hcl (build_groups mofed_doca_321, nvidia_open_580, nvidia_cuda_13_0, kernel_6.8.0-90,
# lustre_client_215; options nvidia, monitoring (DCGM), lustre_client).
NVIDIA_BUILD = GpuImageBuild(
    name="Canonical-Ubuntu-24.04-2026.02.28-0-6.8-DOCA-OFED-3.2.1-GPU-580-OPEN-CUDA-13.0-2026.03.13-0",
    slug="nvidia-580-20260313",
    gpus=("A100", "H100", "H200", "B200", "B300"),
    driver="NVIDIA 580 (open kernel modules) with fabric manager, CUDA 13.0",
    ofed="DOCA-OFED 3.2.1",
    kernel="6.8.0-90-generic",
    lustre_client="2.15 (DKMS, TCP LNet)",
)
# "AMD (MI300X, MI355X CX-7)": images/Ubuntu-24/Canonical-Ubuntu-24.04-6.8-DOCA-OFED-3.2.1-AMD-ROCM-643.pkr.hcl
# (build_groups mofed_doca_321, amd_rocm_643 (ROCm 6.4.3, amdgpu-install --usecase=graphics,rocm), kernel_6.8.0-90,
# lustre_client_215).
AMD_BUILD = GpuImageBuild(
    name="Canonical-Ubuntu-24.04-2026.02.28-0-6.8-DOCA-OFED-3.2.1-AMD-ROCM-643-2026.03.13-0",
    slug="rocm-643-20260313",
    gpus=("MI300X", "MI355X"),
    driver="AMD ROCm 6.4.3 (amdgpu DKMS)",
    ofed="DOCA-OFED 3.2.1",
    kernel="6.8.0-90-generic",
    lustre_client="2.15 (DKMS, TCP LNet)",
)
BUILDS: dict[str, GpuImageBuild] = {"nvidia": NVIDIA_BUILD, "amd": AMD_BUILD}


@dataclass(frozen=True)
class NodeImageChoice:
    """The image the nodes launch from, and what must exist before they launch from it."""

    image_id: pulumi.Input[str]
    waits_for: tuple[pulumi.Resource, ...] = ()


def node_image(
    name: str,
    compartment_id: str,
    shape: str,
    vendor: str,
    tags: dict[str, str],
    parent: pulumi.Resource,
    image_id: str | None = None,
) -> NodeImageChoice:
    """The image the user named (`training.nodes.imageId`), as it is: no import, and no compatibility entry, which
    would change an image the stack does not own (and which a platform image refuses); its shape list is the user's
    to keep. Otherwise, import the vendor's pinned build into the compartment and make `shape` compatible with it.

    CreateImage from an Object Storage URL (source type objectStorageUri) with the build's URL; an image exported in
    OCI's own format carries its launch options, so neither sourceImageType (QCOW2/VMDK only) nor launchMode is set
    (pulumi-oci Image docs; oci-hpc sets neither either). The import takes the build's own OS, stated as oci-hpc's
    instructions ask ("choose the correct OS"). Every input the provider replaces the image on (source details,
    launch mode) is fixed by the build, and the build is in the resource's name: an `up` never re-imports it, and a
    newer pin is a new image created before the old one goes.

    A custom image launches only on the shapes in its compatibility list, and the builds are made on a Flex VM
    (oci-hpc-images' Packer templates launch the builder with a `shape_config` of 8 OCPUs and 64 GB), so whether an
    imported build lists a BM.GPU shape is not something oci-hpc assumes: its image.tf adds an
    `oci_core_shape_management` entry unless `data.oci_core_image_shapes` already lists the shape (validations.tf),
    and its `add_shape` command lists the entries first (mgmt/lib/ociwrap.py add_shape_to_image). The stack imports
    the image itself, so it cannot read the list before the image exists: it always adds the nodes' shape
    (AddImageShapeCompatibilityEntry, oci.core.ShapeManagement: a PUT of the shape under the image) and the nodes
    wait for it. Whether OCI answers that PUT for a shape the image already lists with success, as oci-hpc's check
    avoids finding out, was not confirmed by a source read here."""
    if image_id is not None:
        return NodeImageChoice(image_id)
    build = BUILDS[vendor]
    image = oci.core.Image(
        f"{name}-node-image-{build.slug}",
        compartment_id=compartment_id,
        display_name=build.name,
        image_source_details={
            "source_type": "objectStorageUri",
            "source_uri": build.source_uri,
            "operating_system": OPERATING_SYSTEM,
            "operating_system_version": OPERATING_SYSTEM_VERSION,
        },
        freeform_tags=tags,
        opts=pulumi.ResourceOptions(parent=parent),
    )
    compatible = oci.core.ShapeManagement(
        f"{name}-node-image-{build.slug}-shape",
        compartment_id=compartment_id,
        image_id=image.id,
        shape_name=shape,
        opts=pulumi.ResourceOptions(parent=parent),
    )
    return NodeImageChoice(image.id, (image, compatible))


# The head's row. OCI's Canonical Ubuntu platform images are Canonical's cloud image plus OCI's guest pieces: the
# Oracle Cloud Agent, which Ubuntu carries as a snap (its unit is snap.oracle-cloud-agent.oracle-cloud-agent.service,
# not the RPM's oracle-cloud-agent.service of Oracle Linux), and cloud-init's Oracle datasource. No NVIDIA driver,
# no OFED, no oci CLI, no Slurm: the generator installs noble's archive packages (Slurm 23.11).
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

# oci-hpc-images ansible/roles/kernel/tasks/ubuntu.yml installs the pinned kernel with its headers, then writes
# /etc/apt/preferences.d/00_pin_kernel ("Package: linux-*", "Pin: version *", "Pin-Priority: -1"): no linux-*
# package has a candidate afterwards, installed ones included (apt-cache policy: "Candidate: (none)"), so
# `apt-get install linux-headers-$(uname -r)` fails there. The Lustre client is on the image already.
_KERNEL_PINNED = "oci-hpc-images pins linux-* to -1 (/etc/apt/preferences.d/00_pin_kernel, roles/kernel)"

# The NVIDIA build (NVIDIA_BUILD): Ubuntu 24.04 (noble's archive stays configured: Slurm 23.11, as on the head, whose
# dynamic nodes `slurmd -Z` need >= 22.05), the NVIDIA driver and fabric manager from NVIDIA's CUDA repository
# (roles/nvidia_driver), DCGM, DOCA OFED (ibstat, ibv_devinfo), the Lustre client built by roles/lustre_client
# (lustre-client-utils: mount.lustre, lfs; lustre-client-modules-dkms built for the pinned kernel), the Oracle Cloud
# Agent snap, stopped while building and enabled again at the end (roles/oracle_cloud_agent_enable). No Slurm, no
# enroot (its "enroot" option only sets kernel parameters), no docker, no NVIDIA container toolkit on Ubuntu
# (roles/nvidia_cuda installs it for RHEL only), no oci CLI.
_HPC_NVIDIA = NodeImage(
    description=f"OCI HPC GPU image {NVIDIA_BUILD.name} (imported from oci-hpc's URL)",
    release="ubuntu-24.04",
    package_manager="apt",
    ships=UBUNTU_BASE
    | {"nvidia-smi", "dcgmi", "ibstat", "ibv_devinfo", "mount.lustre", "lfs", "module:lustre", "dkms", "snap"},
    installable=NOBLE_ARCHIVE,
    pinned_away={"linux-*": _KERNEL_PINNED},
    repositories=_PLATFORM_UBUNTU.repositories,
    # nvidia-persistenced: roles/nvidia_driver installs its override (nvidia-persistenced-override.conf).
    services=frozenset({OCA_UNIT, "snapd.service", "nvidia-persistenced.service"}),
)
# The AMD build (AMD_BUILD): the same base, DOCA OFED and Lustre client; ROCm 6.4.3 in place of NVIDIA's stack
# (roles/amd_rocm: amdgpu-install, rocm-smi and amd-smi; the kernel pinned again after it).
_HPC_ROCM = dataclasses.replace(
    _HPC_NVIDIA,
    description=f"OCI HPC GPU image {AMD_BUILD.name} (imported from oci-hpc's URL)",
    ships=(_HPC_NVIDIA.ships - {"nvidia-smi", "dcgmi"}) | {"rocm-smi", "amd-smi"},
    services=frozenset({OCA_UNIT, "snapd.service"}),
)
IMAGES: dict[str, NodeImage] = {
    "slurm-head": _PLATFORM_UBUNTU,
    "training-node": _HPC_NVIDIA,
    "training-node-rocm": _HPC_ROCM,
}
