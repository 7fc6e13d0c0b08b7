"""The images the training VMs boot, as Marketplace references (publisher:offer:sku:version).

- GPU nodes: Microsoft's Ubuntu-HPC 24.04 (github.com/Azure/azhpc-images: "microsoft-dsvm:ubuntu-hpc:2404:latest"),
  which carries the NVIDIA driver, CUDA, NCCL, the Mellanox OFED InfiniBand stack, the Managed Lustre client
  and AzCopy; so no driver extension is needed and nothing downloads drivers at boot. 24.04 because its
  Slurm (23.11) supports dynamic nodes (`slurmd -Z`); 22.04's 21.08 does not, and the head runs 24.04 too.
- Slurm head: Canonical's Ubuntu 24.04 LTS server image (same Slurm major as the nodes).
"latest" is resolved by Azure when a VM is created: a scale set's existing VMs keep theirs.
"""

from __future__ import annotations

from accelstack.components.node_images import UBUNTU_BASE, NodeImage

HPC_NODE_IMAGE = {"publisher": "microsoft-dsvm", "offer": "ubuntu-hpc", "sku": "2404", "version": "latest"}
HEAD_IMAGE = {"publisher": "Canonical", "offer": "ubuntu-24_04-lts", "sku": "server", "version": "latest"}

# What those images have and can install, per node role (components/node_images.py): the boot tests' machines.
_NOBLE_PACKAGES = frozenset(
    {"munge", "slurmctld", "slurmd", "slurm-client", "curl", "unzip", "jq", "python3-venv", "python3-pip"}
)
# Microsoft's package repositories a script may add: the Managed Lustre client built per kernel
# (learn.microsoft.com/azure/azure-managed-lustre/client-install, Ubuntu 24.04), and the Slurm builds CycleCloud
# installs (Azure/cyclecloud-slurm azure-slurm-install/ubuntu.sh: packages.microsoft.com/repos/slurm-ubuntu-noble).
_MICROSOFT_REPOSITORIES = {
    "packages.microsoft.com/repos/amlfs-noble": frozenset({"amlfs-lustre-client-2.15.7-33-g79ddf99"}),
    "nvidia.github.io/libnvidia-container": frozenset({"nvidia-container-toolkit"}),
    "packages.microsoft.com/repos/slurm-ubuntu-noble": frozenset(
        {"slurm-smd", "slurm-smd-client", "slurm-smd-slurmd", "slurm-smd-slurmctld"}
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
# (install_lustre_client.sh) and AzCopy (install_azcopy.sh); docker with the NVIDIA runtime (install_docker.sh).
_UBUNTU_HPC = NodeImage(
    description="Microsoft Ubuntu-HPC 24.04 (microsoft-dsvm:ubuntu-hpc:2404)",
    release="ubuntu-24.04",
    package_manager="apt",
    ships=UBUNTU_BASE | {"nvidia-smi", "azcopy", "mount.lustre", "module:lustre", "docker", "ibstat"},
    installable=_NOBLE_PACKAGES,
    pinned_away={"slurm*": _UBUNTU_SLURM_PINNED},
    repositories=_MICROSOFT_REPOSITORIES,
    services=frozenset({"walinuxagent.service", "docker.service", "nvidia-persistenced.service"}),
)
IMAGES: dict[str, NodeImage] = {
    "slurm-head": NodeImage(
        description="Canonical Ubuntu Server 24.04 LTS (Canonical:ubuntu-24_04-lts:server)",
        release="ubuntu-24.04",
        package_manager="apt",
        ships=UBUNTU_BASE,
        installable=_NOBLE_PACKAGES,
        repositories=_MICROSOFT_REPOSITORIES,
        services=frozenset({"walinuxagent.service"}),
    ),
    "training-node": _UBUNTU_HPC,
    "serving-replica": _UBUNTU_HPC,
}
