"""The images GCP VMs boot, each pinned to one image version (never a family): the one place they are named.

Nodes: Canonical's Ubuntu 24.04 accelerator image with NVIDIA's 580 driver, the version Cluster Toolkit's A3 Mega,
A3 Ultra and A4 Slurm blueprints build on (@1047080, `base_image: ubuntu-accelerator-2404-amd64-with-nvidia-580-
v20260522`, project ubuntu-os-accelerator-images; Google's A3 Ultra / A4 creation guides boot the same project,
cloud.google.com/compute/docs/gpus/create-gpu-vm-a3u-a4). It carries the driver and, on A3 Ultra and A4, the MRDMA
(RoCE) stack. 24.04, not 22.04: the head's Slurm major, and dynamic nodes (`slurmd -Z`) need Slurm >= 22.05. The
fabric software beside it (TCPXO on A3 Mega, NCCL/gIB on A3 Ultra and A4) is installed at first boot by
components/gcp/gpudirect.py; A3 High's TCPX needs a kernel this image lacks (the spec warns).

Why pinned: a family resolves to its newest image whenever a VM is created, and Spot and flex-start nodes are
recreated all the time, so one cluster would run several kernels and drivers, and a kernel newer than the fabric's
DKMS module (A3 Mega's dma-buf helper) or the Lustre client's modules breaks a node at boot. Every node of a
cluster boots the same tested image; Cluster Toolkit pins its base image for the same reason.

Moving a pin: list the candidates (`gcloud compute images list --project=ubuntu-os-accelerator-images
--filter="family~ubuntu-accelerator-2404-amd64-with-nvidia-580" --sort-by=~creationTimestamp`, likewise
ubuntu-os-cloud for the head, deeplearning-platform-release for replicas), boot one node of each fabric on the new
image, then change the row here. On `up` the node template is replaced (new and recreated nodes take the new image,
running ones keep theirs: the group updates opportunistically), the head VM is recreated on its retained state
disk, and the serving template rolls; no dataset, checkpoint, Lustre or key is touched.
"""

from __future__ import annotations

from accelstack.clouds.gcp.catalog import ACCELERATED_INSTANCES
from accelstack.components.node_images import NOBLE_ARCHIVE, UBUNTU_BASE, NodeImage

_UBUNTU_ACCELERATOR_2404_NVIDIA_580 = (
    "projects/ubuntu-os-accelerator-images/global/images/ubuntu-accelerator-2404-amd64-with-nvidia-580-v20260522"
)

# Per machine type (every GPU type of the catalog): A4, A3 Ultra and A3 Mega as Cluster Toolkit pins them; A3 High,
# A2 and G2 (driver 580 covers Hopper, Ampere and Ada) the same image, so one image is tested for all.
NODE_IMAGES: dict[str, str] = {
    machine_type: _UBUNTU_ACCELERATOR_2404_NVIDIA_580 for machine_type in ACCELERATED_INSTANCES
}
# Head: Canonical's Ubuntu 24.04 LTS server image (no GPU; slurmctld from Ubuntu's packages, as on the other clouds).
HEAD_IMAGE = "projects/ubuntu-os-cloud/global/images/ubuntu-2404-noble-amd64-v20260723"
# Serving replicas: a Deep Learning VM image (NVIDIA driver, Docker and the NVIDIA container toolkit, cloud-init;
# cloud.google.com/deep-learning-vm/docs/images), pinned to one release of its Ubuntu 22.04 family.
REPLICA_IMAGE = "projects/deeplearning-platform-release/global/images/pytorch-latest-gpu-v20250325-ubuntu-2204-py310"


def node_image(machine_type: str) -> str:
    """The pinned image of a training node of `machine_type` (a catalog type: the rules refuse others first)."""
    return NODE_IMAGES[machine_type]


# Shielded VM with vTPM and integrity monitoring (Checkov CKV_GCP_39), without Secure Boot: the Lustre client's
# kernel modules come from Google's repository for the running kernel and are not signed for the image's
# Secure Boot keys, so a Secure Boot VM would refuse to load them (cloud.google.com/compute/shielded-vm/docs/
# shielded-vm#secure-boot: "unsigned kernel modules ... won't load"). Nodes and the head (which mounts Lustre
# to export checkpoints) alike.
SHIELDED_VM = {"enable_secure_boot": False, "enable_vtpm": True, "enable_integrity_monitoring": True}

# What those images have and can install, per node role (components/node_images.py): the boot tests' machines.
# Google's package repositories a script may add: Managed Lustre's client per kernel (cloud.google.com/
# managed-lustre/docs/install-client), the Cloud SDK, the Artifact Registry apt transport, and the GPUDirect
# repositories in gce-ai-infra (TCPXO's dma-buf import helper; gIB's NCCL plugin), NVIDIA's container toolkit.
_GOOGLE_REPOSITORIES = {
    "us-apt.pkg.dev/projects/lustre-client-binaries": frozenset({"lustre-client-modules-@KERNEL@", "lustre-client-utils"}),
    "packages.cloud.google.com/apt cloud-sdk": frozenset({"google-cloud-cli"}),
    "packages.cloud.google.com/apt apt-transport-artifact-registry-stable": frozenset({"apt-transport-artifact-registry"}),
    "us-apt.pkg.dev/projects/gce-ai-infra gpudirect-tcpxo-apt": frozenset({"dmabuf-import-helper"}),
    "us-apt.pkg.dev/projects/gce-ai-infra gpudirect-gib-apt": frozenset({"nccl-gib"}),
    "developer.download.nvidia.com/compute/cuda/repos/ubuntu2404": frozenset({"libnccl2"}),
    "nvidia.github.io/libnvidia-container": frozenset({"nvidia-container-toolkit"}),
}  # fmt: skip
# The guest environment writes the metadata server's name (cloud.google.com/compute/docs/metadata/overview).
_GCE_HOSTS = {"metadata.google.internal": "169.254.169.254"}
# Canonical's GCE images carry the Google Cloud CLI as a snap (/snap/bin) and the guest agent.
_GCE_UBUNTU = UBUNTU_BASE | {"/snap/bin/gcloud", "/snap/bin/gsutil"}
IMAGES: dict[str, NodeImage] = {
    "slurm-head": NodeImage(
        description="Canonical Ubuntu 24.04 LTS for Compute Engine",
        release="ubuntu-24.04",
        package_manager="apt",
        ships=_GCE_UBUNTU,
        installable=NOBLE_ARCHIVE,
        repositories=_GOOGLE_REPOSITORIES,
        services=frozenset({"google-guest-agent.service"}),
        hosts=_GCE_HOSTS,
    ),
    "training-node": NodeImage(
        description="Canonical Ubuntu 24.04 accelerator image with the NVIDIA driver (ubuntu-os-accelerator-images)",
        release="ubuntu-24.04",
        package_manager="apt",
        ships=_GCE_UBUNTU | {"nvidia-smi"},
        installable=NOBLE_ARCHIVE,
        repositories=_GOOGLE_REPOSITORIES,
        services=frozenset({"google-guest-agent.service"}),
        hosts=_GCE_HOSTS,
    ),
    # Deep Learning VM (cloud.google.com/deep-learning-vm/docs/images): driver, Docker with the NVIDIA
    # toolkit, the Cloud SDK from Google's apt repository.
    "serving-replica": NodeImage(
        description="Deep Learning VM (Ubuntu 22.04, REPLICA_IMAGE)",
        release="ubuntu-22.04",
        package_manager="apt",
        ships=UBUNTU_BASE | {"nvidia-smi", "docker", "gcloud", "gsutil", "nvidia-ctk", "pip3"},
        installable=frozenset({"curl", "unzip", "jq", "python3-venv", "python3-pip"}),
        services=frozenset({"google-guest-agent.service", "docker.service"}),
        hosts=_GCE_HOSTS,
    ),
}
