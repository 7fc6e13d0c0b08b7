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

NODE_IMAGE = "projects/ubuntu-os-accelerator-images/global/images/family/ubuntu-accelerator-2404-amd64-with-nvidia-570"
HEAD_IMAGE = "projects/ubuntu-os-cloud/global/images/family/ubuntu-2404-lts-amd64"

# Shielded VM with vTPM and integrity monitoring (Checkov CKV_GCP_39), without Secure Boot: the Lustre client's
# kernel modules come from Google's repository for the running kernel and are not signed for the image's
# Secure Boot keys, so a Secure Boot VM would refuse to load them (cloud.google.com/compute/shielded-vm/docs/
# shielded-vm#secure-boot: "unsigned kernel modules ... won't load"). Nodes and the head (which mounts Lustre
# to export checkpoints) alike.
SHIELDED_VM = {"enable_secure_boot": False, "enable_vtpm": True, "enable_integrity_monitoring": True}
