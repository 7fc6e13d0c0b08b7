"""The command names stub.py answers for (kept apart so the host side can read them without booting)."""

MODELLED = frozenset(
    {"apt-get", "apt-cache", "dnf", "yum", "systemctl", "mount", "mountpoint", "umount", "blkid", "mkfs.ext4",
     "mkfs.xfs", "modprobe", "modinfo", "curl", "aws", "gcloud", "gsutil", "gpg", "unzip", "sleep", "azcopy",
     "docker", "nvidia-ctk", "nvidia-smi", "udevadm", "sysctl", "hostnamectl", "logger", "dkms", "apt-mark",
     "munge", "unmunge", "mungekey", "scontrol", "sinfo", "squeue", "scancel", "sbatch", "srun", "sacct", "salloc",
     "slurmd", "slurmctld", "munged", "dockerd", "lfs", "mount.lustre", "mount.nfs", "cloud-init", "jq", "pip3",
     "python3 -m pip", "python3 -m venv", "venv-pip", "dpkg-deb", "dpkg", "dpkg-query", "make", "gcc", "enroot",
     "nvidia-container-cli", "mksquashfs", "unsquashfs", "parallel", "slurmdbd", "sacctmgr", "sshare", "oci",
     "mdadm"}
)  # fmt: skip
# Base-image commands the harness answers for itself: those that change the machine or reach the network are
# modelled; the rest (dpkg's database, the journal) would read the host's, so stub.py fails them as not modelled.
BASE_STUBS = frozenset(
    {"apt-get", "apt-cache", "apt-mark", "dnf", "systemctl", "mount", "mountpoint", "umount", "blkid", "mkfs.ext4",
     "modprobe", "modinfo", "curl", "gpg", "sleep", "udevadm", "sysctl", "hostnamectl", "logger", "cloud-init",
     "dpkg", "dpkg-query", "dpkg-deb", "journalctl", "lsblk", "wget", "mdadm"}
)  # fmt: skip
