"""The images Azure VMs boot, as Marketplace references (publisher:offer:sku:version), each pinned to one published
version (never "latest"): the one place they are named.

- NVIDIA GPU nodes and replicas: Microsoft's Ubuntu-HPC 24.04 (github.com/Azure/azhpc-images README:
  "microsoft-dsvm:ubuntu-hpc:2404"), which carries the NVIDIA driver, CUDA, NCCL, the InfiniBand stack (DOCA/OFED),
  the Managed Lustre client and AzCopy, so nothing installs drivers or OFED at boot; its sku-customizations unit
  writes /etc/nccl.conf for the ND sizes at boot (the NDv4/NDv5 topology files under /opt/microsoft).
  Release 24.04.2026072901: driver 580.173.02, CUDA 13.0, NCCL 2.30.4.
- AMD GPU nodes (ND MI300X v5): the same image built with ROCm ("Ubuntu-HPC 24.04 ROCm
  (microsoft-dsvm:ubuntu-hpc:2404-rocm)", the same README; its install.sh installs ROCm only for GPU=AMD, and its
  sku-customizations run the MI300X NCCL/RCCL settings). Release 24.04.2026072801: ROCm 6.4.4, RCCL 2.22.3.
- Slurm head: Canonical's Ubuntu 24.04 LTS server image. Slurm itself is not the images': Ubuntu-HPC pins Ubuntu's
  slurm* packages away, so head and nodes alike install Microsoft's slurm-smd builds at one pinned version
  (components/azure/node_platform.py, as CycleCloud does); 24.04 for the rest of the userland both share.

Why pinned: "latest" resolves whenever a VM is created, so a scale set's nodes recreated after an eviction would
boot a newer driver, NCCL and kernel than their peers. Moving a pin: list the versions (`az vm image list --all
--publisher microsoft-dsvm --offer ubuntu-hpc --sku 2404 --query "[].version" -o tsv`, likewise `--sku 2404-rocm`
and `--publisher Canonical --offer ubuntu-24_04-lts --sku server`; the azhpc-images release notes give each
version's components), boot one node on the new version, then change the row here. On `up` the scale set's model
takes the new image (its upgrade policy is Manual: running nodes keep theirs until reimaged), the head VM is
recreated on its retained data disk; no dataset, checkpoint, Lustre or key is touched.
"""

from __future__ import annotations

import dataclasses

from accelstack.clouds.base import InstanceType
from accelstack.components.node_images import NOBLE_ARCHIVE, UBUNTU_BASE, NodeImage

HPC_NODE_IMAGE = {"publisher": "microsoft-dsvm", "offer": "ubuntu-hpc", "sku": "2404", "version": "24.04.2026072901"}
HPC_ROCM_NODE_IMAGE = {
    "publisher": "microsoft-dsvm",
    "offer": "ubuntu-hpc",
    "sku": "2404-rocm",
    "version": "24.04.2026072801",
}
HEAD_IMAGE = {"publisher": "Canonical", "offer": "ubuntu-24_04-lts", "sku": "server", "version": "24.04.202607280"}

# The GPU image per accelerator vendor (`InstanceType.vendor`): the driver stack the GPUs need.
NODE_IMAGES_BY_VENDOR: dict[str, dict[str, str]] = {"nvidia": HPC_NODE_IMAGE, "amd": HPC_ROCM_NODE_IMAGE}


def node_image(instance: InstanceType | None) -> dict[str, str]:
    """The pinned image of a GPU VM of `instance` (NVIDIA's when the size is not in the catalog)."""
    vendor = instance.vendor if instance is not None else "nvidia"
    return NODE_IMAGES_BY_VENDOR[vendor]


# What those images have and can install, per node role (components/node_images.py): the boot tests' machines.
# Microsoft's package repositories a script may add: the Managed Lustre client built per kernel
# (learn.microsoft.com/azure/azure-managed-lustre/client-install, Ubuntu 24.04), and the Slurm builds CycleCloud
# installs (Azure/cyclecloud-slurm azure-slurm-install/ubuntu.sh: packages.microsoft.com/repos/slurm-ubuntu-noble).
_MICROSOFT_REPOSITORIES = {
    "packages.microsoft.com/repos/amlfs-noble": frozenset({"amlfs-lustre-client-2.15.7-33-g79ddf99"}),
    "nvidia.github.io/libnvidia-container": frozenset({"nvidia-container-toolkit"}),
    "packages.microsoft.com/repos/slurm-ubuntu-noble": frozenset(
        {
            "slurm-smd",
            "slurm-smd-client",
            "slurm-smd-slurmd",
            "slurm-smd-slurmctld",
            "slurm-smd-dev",
            "slurm-smd-slurmdbd",
        }
    ),
}
# Azure/azhpc-images components/install_pmix.sh copies components/slurm-repo/slurm-u.pin to
# /etc/apt/preferences.d/slurm-repository-pin-990 on Ubuntu-HPC (since 2024-04): "Package: slurm*",
# "Pin: origin *ubuntu.com*", "Pin-Priority: -1". Ubuntu's Slurm has no candidate there; Microsoft's does.
_UBUNTU_SLURM_PINNED = (
    "Ubuntu-HPC pins Ubuntu's slurm* packages to -1 (azhpc-images slurm-u.pin, "
    "/etc/apt/preferences.d/slurm-repository-pin-990): only packages.microsoft.com's slurm-smd builds install"
)
# Ubuntu-HPC (azhpc-images ubuntu24.04 install.sh): NVIDIA driver, CUDA, DOCA OFED, the AMLFS Lustre client
# (install_lustre_client.sh) and AzCopy (install_azcopy.sh); docker with the NVIDIA runtime (install_docker.sh)
# and NVIDIA's container toolkit (install_nvidia_container_toolkit.sh: nvidia-container-cli). No enroot or pyxis:
# its components/ has no installer for either (CycleCloud Workspace for Slurm installs both itself).
_UBUNTU_HPC = NodeImage(
    description="Microsoft Ubuntu-HPC 24.04 (microsoft-dsvm:ubuntu-hpc:2404)",
    release="ubuntu-24.04",
    package_manager="apt",
    ships=UBUNTU_BASE
    | {
        "nvidia-smi",
        "azcopy",
        "mount.lustre",
        "module:lustre",
        "docker",
        "ibstat",
        "nvidia-ctk",
        "nvidia-container-cli",
    },
    installable=NOBLE_ARCHIVE,
    pinned_away={"slurm*": _UBUNTU_SLURM_PINNED},
    repositories=_MICROSOFT_REPOSITORIES,
    # sku_customizations.service: azhpc-images' per-size oneshot (writes /etc/nccl.conf for the ND sizes).
    services=frozenset(
        {"walinuxagent.service", "docker.service", "nvidia-persistenced.service", "sku_customizations.service"}
    ),
)
# Ubuntu-HPC 24.04 ROCm (the azhpc-images README's "microsoft-dsvm:ubuntu-hpc:2404-rocm"): install.sh installs
# ROCm for GPU=AMD in place of NVIDIA's stack; the rest is the same build.
_UBUNTU_HPC_ROCM = dataclasses.replace(
    _UBUNTU_HPC,
    description="Microsoft Ubuntu-HPC 24.04 ROCm (microsoft-dsvm:ubuntu-hpc:2404-rocm)",
    ships=(_UBUNTU_HPC.ships - {"nvidia-smi", "nvidia-ctk", "nvidia-container-cli"}) | {"rocm-smi"},
    services=_UBUNTU_HPC.services - {"nvidia-persistenced.service"},
)
IMAGES: dict[str, NodeImage] = {
    "slurm-head": NodeImage(
        description="Canonical Ubuntu Server 24.04 LTS (Canonical:ubuntu-24_04-lts:server)",
        release="ubuntu-24.04",
        package_manager="apt",
        ships=UBUNTU_BASE,
        installable=NOBLE_ARCHIVE,
        repositories=_MICROSOFT_REPOSITORIES,
        services=frozenset({"walinuxagent.service"}),
    ),
    "training-node": _UBUNTU_HPC,
    "training-node-rocm": _UBUNTU_HPC_ROCM,
    "serving-replica": _UBUNTU_HPC,
}
