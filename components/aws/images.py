"""What each node image has, and what its package manager can install: the table every generated
boot script is tested against (a script must not `apt-get install` a package its image's repositories
do not carry, nor call a tool the image lacks without installing it first).

Sources per row. Only what the scripts rely on is listed; "ships" is what they use without installing.
"""

from __future__ import annotations

from accelstack.components.node_images import NOBLE_ARCHIVE, UBUNTU_BASE, NodeImage

__all__ = ["IMAGES", "ROOT_DEVICE", "NodeImage"]

# Root device name of the Ubuntu AMIs training nodes and serving replicas boot (the DLAMI): the
# launch templates' root block-device mapping must name it, or EC2 attaches a second volume instead.
# Amazon Linux's is /dev/xvda (accelstack.components.aws.batch.BATCH_ROOT_DEVICE).
ROOT_DEVICE = "/dev/sda1"

_NO_AWSCLI_DEB = (
    "Ubuntu 24.04 (noble) no longer ships the awscli package: \"E: Package 'awscli' has no installation "
    'candidate" (aws/aws-cli#8978); the AWS CLI v2 bundle is installed instead (ensure_aws_cli)'
)

# FSx for Lustre's Ubuntu client repository (FSx User Guide, "Installing the Lustre client", Ubuntu): a
# module package per kernel it has built for.
_FSX_REPOSITORY = {
    "fsx-lustre-client-repo.s3.amazonaws.com/ubuntu": frozenset(
        {"lustre-client-modules-@KERNEL@", "lustre-client-utils"}
    )
}

IMAGES: dict[str, NodeImage] = {
    # accelstack.components.aws.scheduler.HEAD_IMAGE_PARAMETER: Canonical's Ubuntu Server 24.04 for EC2.
    "slurm-head": NodeImage(
        description="Canonical Ubuntu Server 24.04 LTS",
        release="ubuntu-24.04",
        package_manager="apt",
        ships=UBUNTU_BASE,
        installable=NOBLE_ARCHIVE,
        absent={"awscli": _NO_AWSCLI_DEB},
        repositories=_FSX_REPOSITORY,
    ),
    # accelstack.components.aws.training.NODE_IMAGE: Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 24.04):
    # NVIDIA driver, CUDA, EFA installer, NCCL, docker with NVIDIA's container toolkit (its release notes' package
    # table). Whether it carries the AWS CLI is not stated there, so the scripts do not rely on it (ensure_aws_cli).
    # No enroot or pyxis (ParallelCluster's AMI has them; the DLAMI's table lists neither).
    "training-node": NodeImage(
        description="AWS Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 24.04)",
        release="ubuntu-24.04",
        package_manager="apt",
        ships=UBUNTU_BASE | {"docker", "nvidia-ctk", "nvidia-container-cli", "nvidia-smi"},
        installable=NOBLE_ARCHIVE,
        services=frozenset({"docker.service"}),
        absent={"awscli": _NO_AWSCLI_DEB},
        repositories=_FSX_REPOSITORY,
    ),
    # accelstack.spec.models.Replicas.image_id default: the same DLAMI family on Ubuntu 22.04.
    "serving-replica": NodeImage(
        description="AWS Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04)",
        release="ubuntu-22.04",
        package_manager="apt",
        ships=UBUNTU_BASE | {"docker", "pip3"},
        services=frozenset({"docker.service"}),
        installable=frozenset({"unzip"}),
    ),
    # accelstack.components.aws.batch.BATCH_IMAGE_TYPE: the ECS-optimized Amazon Linux 2023 NVIDIA AMI AWS
    # Batch picks. AL2023 has dnf, curl (curl-minimal) and tar; amazon-linux-extras was AL2 only; the
    # FSx Lustre client is `lustre-client` in the AL2023 repositories (FSx User Guide, "Installing the
    # Lustre client", Amazon Linux 2023).
    "batch-node": NodeImage(
        description="Amazon ECS-optimized Amazon Linux 2023 NVIDIA AMI (AWS Batch ECS_AL2023_NVIDIA)",
        release="amzn-2023",
        package_manager="dnf",
        ships=frozenset({"bash", "curl", "tar", "dnf", "mount", "mkdir", "install", "cloud-init-per"}),
        installable=frozenset({"lustre-client"}),
        absent={
            "amazon-linux-extras": "an Amazon Linux 2 tool; AL2023 has no amazon-linux-extras",
            "wget": "not on the AL2023 ECS image; the scripts use curl",
        },
    ),
}
