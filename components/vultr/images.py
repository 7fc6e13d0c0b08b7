"""What the replicas boot (`os_id`: accelstack/clouds/vultr/catalog.py UBUNTU_2204_OS_ID): Vultr's Ubuntu 22.04 x64
image on a Cloud GPU plan, as the boot tests model it (components/node_images.py).

The NVIDIA driver comes with the GPU plan's image (the replica setup relies on it: serving/user_data.py; Vultr
deploys Cloud GPU instances with the driver installed); Docker, NVIDIA's container toolkit and the AWS CLI are not part
of Canonical's server image, so the replica's setup installs them (jammy's archive: docker.io, awscli 1.22; NVIDIA's
apt repository for the toolkit). Vultr's metadata service answers on 169.254.169.254 (`/v1.json`), without a header.
"""

from __future__ import annotations

from accelstack.components.node_images import UBUNTU_BASE, NodeImage

# What Ubuntu 22.04 (jammy)'s main and universe archive offers of what the replica's setup installs.
JAMMY_ARCHIVE = frozenset({"docker.io", "awscli", "curl", "gnupg", "jq", "unzip"})

IMAGES: dict[str, NodeImage] = {
    "serving-replica": NodeImage(
        description="Vultr Ubuntu 22.04 x64 (os_id 1743) on a Cloud GPU plan",
        release="ubuntu-22.04",
        package_manager="apt",
        ships=UBUNTU_BASE | {"nvidia-smi"},
        installable=JAMMY_ARCHIVE,
        repositories={"nvidia.github.io/libnvidia-container": frozenset({"nvidia-container-toolkit"})},
        services=frozenset({"nvidia-persistenced.service"}),
    ),
}
