"""The node's local NVMe at every boot: one RAID 0 array over the machine's own disks, mounted before slurmd.

A stop/start (AWS instance store), a deallocation (Azure's local NVMe) or a stop (GCP's local SSD, unless preserved)
hands the node back blank disks; a reboot keeps them as they were. A first-boot step would leave a restarted node
with no array and enroot's cache path on the boot disk under the mount point, so a oneshot unit that slurmd
requires runs at every boot: it assembles the array whose superblocks the disks still carry, creates one over blank
disks, makes a file system only where none exists, and mounts it, as Cluster Toolkit's A3 blueprints do with their
create-localssd-raid and mount-localssd-raid units (modules/scripts/startup-script/files/setup-raid.yml).
"""

from __future__ import annotations

from accelstack.components.node_platform import LocalNvme
from accelstack.components.slurm.layout import Nodes
from accelstack.components.templates import template_environment

LOCAL_NVME_SCRIPT = "/usr/local/sbin/accelstack-local-nvme"
LOCAL_NVME_UNIT = "accelstack-local-nvme"
# The array's name in its superblocks (with --homehost=any, udev assembles it at boot as /dev/md/<name>).
ARRAY_NAME = "accelstack-nvme"

_env = template_environment("accelstack.components.slurm")


def local_nvme(nodes: Nodes) -> LocalNvme | None:
    """The compute nodes' local NVMe, as their cloud names it; None where the nodes have none."""
    return nodes.platform.local_nvme(nodes.instance)


def local_nvme_files(nodes: Nodes) -> list[dict[str, str]]:
    """The per-boot script and its unit, as cloud-init files; [] where the nodes have no local NVMe."""
    disks = local_nvme(nodes)
    if disks is None:
        return []
    script = _env.get_template("local-nvme.sh.j2").render(nvme=disks, array=ARRAY_NAME)
    unit = _env.get_template("local-nvme.service.j2").render(
        nvme=disks, script=LOCAL_NVME_SCRIPT, image_units=nodes.platform.units_before_slurmd(nodes.instance)
    )
    return [
        {"path": LOCAL_NVME_SCRIPT, "owner": "root:root", "permissions": "0755", "content": script},
        {
            "path": f"/etc/systemd/system/{LOCAL_NVME_UNIT}.service",
            "owner": "root:root",
            "permissions": "0644",
            "content": unit,
        },
    ]
