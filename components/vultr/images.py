"""What a Vultr serving replica boots (components/node_images.py): Vultr's Ubuntu 22.04 x64 (`os_id` 1743, the
catalog's UBUNTU_2204_OS_ID) on a Cloud GPU plan, the facts the boot tests run the replica's cloud-init against.

Sources, read 2026-12-06 (Vultr's own documentation on its GPU images was not readable here, so these are the
public records of code that deploys on those plans):
- `os_id` 1743 is "Ubuntu 22.04 LTS x64" in Vultr's OS list (GET /v2/os), as recorded by public Terraform
  variables ("ubuntu_jammy" = 1743) and API fixtures ({"id": 1743, "name": "Ubuntu 22.04 LTS x64"}).
- dstack's Vultr backend (github.com/dstackai/dstack, src/dstack/_internal/core/backends/vultr/api_client.py at
  commit 6f53b5d051272b1cb44301830cd4ac1096c42def) launches every Cloud GPU plan ("vcg") with `os_id` 1743 and says
  "Ubuntu 22.04 will be installed. For gpu VMs, docker is preinstalled."; its jobs run in Docker containers on those
  GPUs with no driver install of its own (compute.py: `dockerized=True`, the shim's commands install no driver),
  which is what the NVIDIA driver on the image (nvidia-smi) rests on.

So the row ships Docker (its unit enabled) and the NVIDIA driver. Not confirmed by either record, so not on the row:
the AWS CLI and NVIDIA's container toolkit (the replica's RUNTIME_SETUP installs each when its command is missing:
jammy's awscli, NVIDIA's libnvidia-container repository, components/vultr/serving/user_data.py). Because the row
rests on a third party's record, the boot tests also run the replica on the same image without Docker
(tests/boot/test_vultr_replica_boot.py), and it must boot on both.
"""

from __future__ import annotations

from accelstack.components.node_images import UBUNTU_BASE, NodeImage

# What jammy's main and universe archive offers of what the replica's boot installs (packages.ubuntu.com, jammy).
JAMMY_ARCHIVE = frozenset({"docker.io", "awscli", "curl", "gnupg"})
DSTACK_VULTR = (
    "dstackai/dstack src/dstack/_internal/core/backends/vultr/api_client.py @6f53b5d "
    '("For gpu VMs, docker is preinstalled", os_id 1743)'
)

IMAGES: dict[str, NodeImage] = {
    "serving-replica": NodeImage(
        description="Vultr Ubuntu 22.04 x64 on a Cloud GPU plan (os_id 1743, NVIDIA driver, Docker)",
        release="ubuntu-22.04",
        package_manager="apt",
        ships=UBUNTU_BASE | {"nvidia-smi", "docker"},
        installable=JAMMY_ARCHIVE,
        repositories={"nvidia.github.io/libnvidia-container": frozenset({"nvidia-container-toolkit"})},
        services=frozenset({"docker.service"}),
    ),
}
