"""The images the training VMs boot, as Marketplace references (publisher:offer:sku:version).

- GPU nodes: Microsoft's Ubuntu-HPC 24.04 (github.com/Azure/azhpc-images: "microsoft-dsvm:ubuntu-hpc:2404:latest"),
  which carries the NVIDIA driver, CUDA, NCCL, the Mellanox OFED InfiniBand stack, the Managed Lustre client
  and AzCopy; so no driver extension is needed and nothing downloads drivers at boot. 24.04 because its
  Slurm (23.11) supports dynamic nodes (`slurmd -Z`); 22.04's 21.08 does not, and the head runs 24.04 too.
- Slurm head: Canonical's Ubuntu 24.04 LTS server image (same Slurm major as the nodes).
"latest" is resolved by Azure when a VM is created: a scale set's existing VMs keep theirs.
"""

from __future__ import annotations

HPC_NODE_IMAGE = {"publisher": "microsoft-dsvm", "offer": "ubuntu-hpc", "sku": "2404", "version": "latest"}
HEAD_IMAGE = {"publisher": "Canonical", "offer": "ubuntu-24_04-lts", "sku": "server", "version": "latest"}
