"""What a Vultr serving replica boots (components/node_images.py): Vultr's Ubuntu 22.04 x64 (`os_id` 1743, the
catalog's UBUNTU_2204_OS_ID) on a Cloud GPU plan, the facts the boot tests run the replica's cloud-init against.

Vultr deploys its GPU plans' stock OS images with the NVIDIA driver in place (nvidia-smi), as the replica's
RUNTIME_SETUP assumes (components/vultr/serving/user_data.py); Docker, the AWS CLI and NVIDIA's container toolkit
are not on the image and come from Ubuntu 22.04's archive (jammy: docker.io, awscli, curl, gnupg) and NVIDIA's
libnvidia-container apt repository, which the script adds.
"""

from __future__ import annotations

from accelstack.components.node_images import UBUNTU_BASE, NodeImage

# What jammy's main and universe archive offers of what the replica's boot installs (packages.ubuntu.com, jammy).
JAMMY_ARCHIVE = frozenset({"docker.io", "awscli", "curl", "gnupg"})

IMAGES: dict[str, NodeImage] = {
    "serving-replica": NodeImage(
        description="Vultr Ubuntu 22.04 x64 on a Cloud GPU plan (os_id 1743, NVIDIA driver)",
        release="ubuntu-22.04",
        package_manager="apt",
        ships=UBUNTU_BASE | {"nvidia-smi"},
        installable=JAMMY_ARCHIVE,
        repositories={"nvidia.github.io/libnvidia-container": frozenset({"nvidia-container-toolkit"})},
    ),
}
