"""The images GCP training VMs boot.

Nodes: Canonical's Ubuntu accelerator image family, which carries the NVIDIA driver and, on A3 Ultra and
A4, the MRDMA (RoCE) stack the RDMA NICs need; Google's A3 Ultra / A4 creation guides boot this family
(`--image-project=ubuntu-os-accelerator-images`, cloud.google.com/compute/docs/gpus/create-gpu-vm-a3u-a4).
24.04, not 22.04: the same Slurm major as the head, and dynamic nodes (`slurmd -Z`) need Slurm >= 22.05,
which 22.04's 21.08 is not. A3 Ultra and A4 use the MRDMA NICs through the image's RDMA stack. A3 Mega needs
more than its NICs for GPUDirect-TCPXO (Google's receive-datapath manager beside each job, its NCCL plugin, the
dma-buf import helper): components/gcp/gpudirect.py installs and runs them on this image. A3 High's TCPX needs
Google's linux-gcp-tcpx kernel (granted on request), which this image lacks: not set up (the spec warns), NCCL
moves data over its extra gVNICs with plain sockets. A family, not a pinned image: a rebuilt template picks the
newest patched image, and running nodes keep theirs (the group updates opportunistically).

Head: Ubuntu 24.04 LTS (no GPU; slurmctld from Debian/Ubuntu packages, as on the other clouds).
"""

from __future__ import annotations

from accelstack.components.node_images import UBUNTU_BASE, NodeImage

NODE_IMAGE = "projects/ubuntu-os-accelerator-images/global/images/family/ubuntu-accelerator-2404-amd64-with-nvidia-570"
HEAD_IMAGE = "projects/ubuntu-os-cloud/global/images/family/ubuntu-2404-lts-amd64"

# Shielded VM with vTPM and integrity monitoring (Checkov CKV_GCP_39), without Secure Boot: the Lustre client's
# kernel modules come from Google's repository for the running kernel and are not signed for the image's
# Secure Boot keys, so a Secure Boot VM would refuse to load them (cloud.google.com/compute/shielded-vm/docs/
# shielded-vm#secure-boot: "unsigned kernel modules ... won't load"). Nodes and the head (which mounts Lustre
# to export checkpoints) alike.
SHIELDED_VM = {"enable_secure_boot": False, "enable_vtpm": True, "enable_integrity_monitoring": True}

# What those images have and can install, per node role (components/node_images.py): the boot tests' machines.
_NOBLE_PACKAGES = frozenset(
    {"munge", "slurmctld", "slurmd", "slurm-client", "curl", "unzip", "jq", "docker.io", "dkms", "linux-headers-@KERNEL@",
     "python3-venv", "python3-pip"}
)  # fmt: skip
# Google's package repositories a script may add: Managed Lustre's client per kernel (cloud.google.com/
# managed-lustre/docs/install-client), the Cloud SDK, the Artifact Registry apt transport, and the GPUDirect
# repositories in gce-ai-infra (TCPXO's dma-buf import helper; gIB's NCCL plugin), NVIDIA's container toolkit.
_GOOGLE_REPOSITORIES = {
    "us-apt.pkg.dev/projects/lustre-client-binaries": frozenset({"lustre-client-modules-@KERNEL@", "lustre-client-utils"}),
    "packages.cloud.google.com/apt cloud-sdk": frozenset({"google-cloud-cli"}),
    "packages.cloud.google.com/apt apt-transport-artifact-registry-stable": frozenset({"apt-transport-artifact-registry"}),
    "us-apt.pkg.dev/projects/gce-ai-infra gpudirect-tcpxo-apt": frozenset({"dmabuf-import-helper"}),
    "us-apt.pkg.dev/projects/gce-ai-infra gpudirect-gib-apt": frozenset({"nccl-gib", "libnccl2"}),
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
        installable=_NOBLE_PACKAGES,
        repositories=_GOOGLE_REPOSITORIES,
        services=frozenset({"google-guest-agent.service"}),
        hosts=_GCE_HOSTS,
    ),
    "training-node": NodeImage(
        description="Canonical Ubuntu 24.04 accelerator image with the NVIDIA driver (ubuntu-os-accelerator-images)",
        release="ubuntu-24.04",
        package_manager="apt",
        ships=_GCE_UBUNTU | {"nvidia-smi"},
        installable=_NOBLE_PACKAGES,
        repositories=_GOOGLE_REPOSITORIES,
        services=frozenset({"google-guest-agent.service"}),
        hosts=_GCE_HOSTS,
    ),
    # Deep Learning VM (cloud.google.com/deep-learning-vm/docs/images): driver, Docker with the NVIDIA
    # toolkit, the Cloud SDK from Google's apt repository.
    "serving-replica": NodeImage(
        description="Deep Learning VM common-cu124 (Ubuntu 22.04)",
        release="ubuntu-22.04",
        package_manager="apt",
        ships=UBUNTU_BASE | {"nvidia-smi", "docker", "gcloud", "gsutil", "nvidia-ctk", "pip3"},
        installable=frozenset({"curl", "unzip", "jq", "python3-venv", "python3-pip"}),
        services=frozenset({"google-guest-agent.service", "docker.service"}),
        hosts=_GCE_HOSTS,
    ),
}
