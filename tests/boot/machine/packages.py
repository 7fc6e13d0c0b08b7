"""What installing a package puts on an Ubuntu machine: its commands, units, users, kernel modules.

The facts of the distribution's and vendors' packages that the boot scripts rely on (Ubuntu noble's
munge and slurm-wlm packages, Microsoft's slurm-smd builds, Docker's, NVIDIA's and Google's); a package a
script installs that is not here fails the boot with "not modelled", so a new dependency is modelled on
purpose. `@KERNEL@` is the running kernel's release (`uname -r`). Standard library only.
"""

from __future__ import annotations

SLURM_CLIENT_COMMANDS = {
    c: f"/usr/bin/{c}"
    for c in ("scontrol", "squeue", "sinfo", "sbatch", "srun", "scancel", "sacct", "salloc", "sacctmgr", "sshare")
}

# name -> {"depends": [packages from the same repositories], "commands": {command: path}, "units": {unit: ExecStart}, "users": [...], "modules": [...],
#          "files": [paths], "starts": [units started by the package's postinst]}
PACKAGES: dict[str, dict] = {
    # Debian/Ubuntu munge: postinst makes the munge user and a key, and starts munged.
    "munge": {
        "commands": {"munge": "/usr/bin/munge", "unmunge": "/usr/bin/unmunge", "munged": "/usr/sbin/munged",
                     "mungekey": "/usr/sbin/mungekey"},
        "units": {"munge.service": "/usr/sbin/munged"},
        "users": ["munge"],
        "dirs": {"/etc/munge": "munge:munge:0700"},
        "starts": ["munge.service"],
    },
    # Ubuntu's slurm-wlm split packages (noble: 23.11): the daemon's unit has ConditionPathExists on slurm.conf.
    "slurmctld": {
        "commands": {"slurmctld": "/usr/sbin/slurmctld"},
        "units": {"slurmctld.service": "/usr/sbin/slurmctld -D -s $SLURMCTLD_OPTIONS"},
        "conditions": {"slurmctld.service": "/etc/slurm/slurm.conf"},
        "users": ["slurm"],
        "starts": ["slurmctld.service"],
    },
    "slurmd": {
        "commands": {"slurmd": "/usr/sbin/slurmd"},
        "units": {"slurmd.service": "/usr/sbin/slurmd -D -s $SLURMD_OPTIONS"},
        "conditions": {"slurmd.service": "/etc/slurm/slurm.conf"},
        "users": ["slurm"],
        "starts": ["slurmd.service"],
    },
    # slurmdbd with its MySQL storage plugin (noble's slurmdbd depends on libmariadb3); no unit runs without its conf.
    "slurmdbd": {
        "commands": {"slurmdbd": "/usr/sbin/slurmdbd"},
        "units": {"slurmdbd.service": "/usr/sbin/slurmdbd -D -s $SLURMDBD_OPTIONS"},
        "conditions": {"slurmdbd.service": "/etc/slurm/slurmdbd.conf"},
        "users": ["slurm"],
    },
    "slurm-client": {"commands": SLURM_CLIENT_COMMANDS},
    # Microsoft's Slurm builds on packages.microsoft.com (what CycleCloud installs): same paths and units.
    "slurm-smd": {"users": ["slurm"]},
    "slurm-smd-slurmctld": {
        "commands": {"slurmctld": "/usr/sbin/slurmctld"},
        "units": {"slurmctld.service": "/usr/sbin/slurmctld --systemd $SLURMCTLD_OPTIONS"},
        "conditions": {"slurmctld.service": "/etc/slurm/slurm.conf"},
        "users": ["slurm"],
    },
    "slurm-smd-slurmd": {
        "commands": {"slurmd": "/usr/sbin/slurmd"},
        "units": {"slurmd.service": "/usr/sbin/slurmd --systemd $SLURMD_OPTIONS"},
        "conditions": {"slurmd.service": "/etc/slurm/slurm.conf"},
        "users": ["slurm"],
    },
    "slurm-smd-client": {"commands": SLURM_CLIENT_COMMANDS},
    "slurm-smd-slurmdbd": {
        "commands": {"slurmdbd": "/usr/sbin/slurmdbd"},
        "units": {"slurmdbd.service": "/usr/sbin/slurmdbd -D -s $SLURMDBD_OPTIONS"},
        "conditions": {"slurmdbd.service": "/etc/slurm/slurmdbd.conf"},
        "users": ["slurm"],
    },
    "curl": {},
    "gnupg": {},
    # Ubuntu's awscli (jammy: 1.22): the aws command; credentials from its environment or the instance's role.
    "awscli": {"commands": {"aws": "/usr/bin/aws"}},
    "unzip": {"commands": {"unzip": "/usr/bin/unzip"}},
    "jq": {"commands": {"jq": "/usr/bin/jq"}},
    "python3-venv": {},
    "python3-pip": {"commands": {"pip3": "/usr/bin/pip3"}},
    "nfs-common": {"commands": {"mount.nfs": "/usr/sbin/mount.nfs"}},
    "docker.io": {"commands": {"docker": "/usr/bin/docker", "dockerd": "/usr/bin/dockerd"}, "units": {"docker.service": "/usr/bin/dockerd"},
                  "starts": ["docker.service"]},
    # NVIDIA's toolkit pulls in libnvidia-container-tools (nvidia-container-cli, what enroot's NVIDIA hook calls).
    "nvidia-container-toolkit": {"commands": {"nvidia-ctk": "/usr/bin/nvidia-ctk",
                                              "nvidia-container-cli": "/usr/bin/nvidia-container-cli"}},
    # What pyxis builds with: a compiler and make, and the Slurm headers of the node's Slurm (spank.h).
    "build-essential": {"commands": {"make": "/usr/bin/make", "gcc": "/usr/bin/gcc"}},
    "libslurm-dev": {"files": {"/usr/include/slurm/spank.h": "/* slurm-wlm 23.11 */\n"}},
    "slurm-smd-dev": {"files": {"/usr/include/slurm/spank.h": "/* slurm-smd */\n"}},
    # enroot's .deb dependencies (enroot's README, Debian: jq, squashfs-tools, parallel, among the base's).
    "squashfs-tools": {"commands": {"mksquashfs": "/usr/bin/mksquashfs", "unsquashfs": "/usr/bin/unsquashfs"}},
    "parallel": {"commands": {"parallel": "/usr/bin/parallel"}},
    "google-cloud-cli": {"commands": {"gcloud": "/usr/bin/gcloud", "gsutil": "/usr/bin/gsutil"}},
    "apt-transport-artifact-registry": {"files": {"/usr/lib/apt/methods/ar+https": ""}},
    "dkms": {"commands": {"dkms": "/usr/sbin/dkms"}},
    "linux-headers-@KERNEL@": {},
    # Google's gpudirect-tcpxo-apt package: DKMS source (/usr/src/<name>-<version>); its module builds for the
    # running kernel. import-helper.c names the DMA_BUF namespace unquoted, which kernels from 6.13 refuse.
    "dmabuf-import-helper": {
        "modules": ["import-helper"],
        "source": {"version": "1.1", "files": {"import-helper.c": "MODULE_IMPORT_NS(DMA_BUF);\n", "dkms.conf": ""}},
    },
    # FSx's and Google's Ubuntu client repositories: the kernel-matched modules pull in the utilities.
    "lustre-client-modules-@KERNEL@": {"modules": ["lustre"], "depends": ["lustre-client-utils"]},
    "lustre-client-utils": {"commands": {"mount.lustre": "/sbin/mount.lustre", "lfs": "/usr/bin/lfs"}},
    "amlfs-lustre-client-2.15.7-33-g79ddf99": {
        "commands": {"mount.lustre": "/sbin/mount.lustre", "lfs": "/usr/bin/lfs"}, "modules": ["lustre"],
        "version": "@KERNEL@",
    },
    # A newer AMLFS client not (yet) built for the image's kernel: its only version is another kernel's. No image
    # lists it; a test adds it to the repository to see the boot fall back to the newest client that is built.
    "amlfs-lustre-client-2.16.1-9-g0a1b2c3": {
        "commands": {"mount.lustre": "/sbin/mount.lustre", "lfs": "/usr/bin/lfs"}, "modules": ["lustre"],
        "version": "6.99.0-1-azure",
    },
    # Google's gIB package: the plugin and set_nccl_env.sh, which exports the NCCL settings for the machine
    # (docs.cloud.google.com/ai-hypercomputer/docs/nccl: "source /usr/local/gib/scripts/set_nccl_env.sh").
    "nccl-gib": {
        "files": {"/usr/local/gib/scripts/set_nccl_env.sh": "export NCCL_NET=gIB\nexport NCCL_CROSS_NIC=0\n"
                  "export NCCL_NET_GDR_LEVEL=PIX\nexport NCCL_IB_TC=52\nexport NCCL_IB_FIFO_TC=84\n"},
        "version": "1.1.0",
    },
    "libnccl2": {"version": "2.27.5-1+cuda12.9"},
    "lustre-client": {"commands": {"mount.lustre": "/sbin/mount.lustre", "lfs": "/usr/bin/lfs"}, "modules": ["lustre"]},
}  # fmt: skip
