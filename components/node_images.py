"""What a node image has, and what its package manager can install: the facts every generated boot script
is tested against, per cloud (`components/<cloud>/images.py` keeps each cloud's table, keyed by node role).

A script must not `apt-get install` a package its image's repositories do not carry (or that a preference
pin removes), nor call a tool the image lacks without installing it first. The tests boot every script
against a machine modelled from these rows, so a row is a claim about the published image: each cites its
source beside it. Only what the scripts rely on is listed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Node roles a cloud's table has a row for: the boot documents each stack kind sends.
ROLES = ("slurm-head", "training-node", "serving-replica")


@dataclass(frozen=True)
class NodeImage:
    description: str
    release: str  # the distribution release it is built on: "ubuntu-24.04", "ubuntu-22.04", "amzn-2023"
    package_manager: str  # "apt" or "dnf": the only installer the scripts may call on it
    ships: frozenset[str]  # commands present on the image as published (beyond the distribution's base)
    installable: frozenset[str]  # packages its configured repositories offer that the scripts install
    # Packages known NOT to be installable there, and the evidence; listed so a test names the reason.
    absent: dict[str, str] = field(default_factory=dict)
    # apt preference pins at priority -1 the image ships ("Package:" glob -> evidence): no candidate.
    pinned_away: dict[str, str] = field(default_factory=dict)
    # Repositories a script may add (a fragment of its URL) and the packages each then offers.
    repositories: dict[str, frozenset[str]] = field(default_factory=dict)
    # Units enabled on the image as published (the scripts may restart them without installing anything).
    services: frozenset[str] = frozenset()
    # /etc/hosts lines the cloud's guest environment writes (name -> address).
    hosts: dict[str, str] = field(default_factory=dict)


# Commands of every Ubuntu server/cloud image (coreutils, util-linux, e2fsprogs, systemd, curl, gnupg,
# python3: cloud-init itself is Python). The boot tests give a machine these and nothing else unless its row
# says so: a script calling anything beyond fails there as it would on the node.
UBUNTU_BASE = frozenset(
    {"bash", "sh", "dash", "curl", "gpg", "python3", "systemctl", "base64", "stat", "mktemp", "install", "blkid",
     "mkfs.ext4", "mountpoint", "mount", "umount", "grep", "sed", "awk", "lsb_release", "uname", "chmod",
     "chown", "cat", "cp", "mv", "rm", "ln", "ls", "mkdir", "rmdir", "touch", "echo", "printf", "head", "tail",
     "tr", "cut", "sort", "uniq", "wc", "tee", "seq", "sleep", "date", "env", "id", "hostname", "getent",
     "useradd", "groupadd", "usermod", "basename", "dirname", "readlink", "realpath", "find", "xargs", "tar",
     "gzip", "gunzip", "bzip2", "xz", "sha256sum", "md5sum", "true", "false", "test", "[", "expr", "timeout",
     "flock", "nproc", "df", "du", "chgrp", "sync", "modprobe", "modinfo", "ip", "ss", "sysctl", "ps", "kill",
     "pkill", "pgrep", "logger", "mkfifo", "od", "dd", "stdbuf", "nohup", "setsid", "runuser", "su", "sudo",
     "wget", "openssl", "apt-get", "apt-cache", "dpkg", "dpkg-query", "journalctl", "udevadm", "lsblk",
     "hostnamectl", "cloud-init", "fold", "comm", "join", "paste", "split", "numfmt", "whoami", "nl", "rev",
     "zcat", "diff", "cmp", "mkswap", "swapon", "findmnt", "lscpu", "free", "dpkg-deb", "apt-mark", "mdadm"}
)  # fmt: skip

# What Ubuntu 24.04 (noble)'s main and universe archive offers of what the boot scripts install (Slurm 23.11's
# split packages with slurmdbd and headers, munge, docker.io, DKMS and the running kernel's headers, the Python venv/pip
# packages, the compiler pyxis builds with, enroot's dependencies): the packages an image that keeps Ubuntu's archive
# can install (`@KERNEL@`: the running kernel's release).
NOBLE_ARCHIVE = frozenset(
    {"munge", "slurmctld", "slurmd", "slurmdbd", "slurm-client", "curl", "unzip", "jq", "docker.io", "dkms",
     "linux-headers-@KERNEL@", "python3-venv", "python3-pip", "build-essential", "libslurm-dev", "squashfs-tools",
     "parallel"}
)  # fmt: skip
