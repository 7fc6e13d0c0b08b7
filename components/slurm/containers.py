"""Jobs in containers: NVIDIA's pyxis SPANK plugin and enroot, set up so `srun --container-image=...` sees the fabric.

What the anchors do, and what accelstack does the same way:
- ParallelCluster 3.11+ (aws-parallelcluster-cookbook): enroot and pyxis in its AMI, configured from sample files
  (enroot.conf with the runtime on tmpfs and the cache on local storage; pyxis' plugstack line with
  runtime_path=/run/pyxis). accelstack's nodes do not boot that AMI (the DLAMI, Ubuntu-HPC and Canonical's images
  carry neither), so the first boot installs them: enroot from NVIDIA's release .deb files (apt resolves their
  dependencies; the package carries its AppArmor profile, which Ubuntu 24.04 needs for unprivileged user
  namespaces: enroot's pkg/deb builds with dh-apparmor), pyxis built from its release tarball against the node's own Slurm headers (pyxis ships no
  packages; a SPANK plugin must match the Slurm release that loads it, so an image's pyxis, built for the
  image's Slurm, would not do). The same versions as CycleCloud Workspace for Slurm installs (enroot 3.5.0,
  pyxis 0.20.0), whose enroot scratch goes on the node's NVMe where the image mounts it, else the boot disk.
- Cluster Toolkit's A3 blueprints bind the fabric's plugin directories and devices into each enroot container
  (--container-mounts). Here they are bound for every container, from one place per fabric: the cloud's
  `NodePlatform.container_fabric` (`ContainerFabric`), written as an enroot mounts.d fstab, an environ.d file
  and a hook that puts the fabric's libraries first on the container's loader path and pins NCCL's net plugin
  to the fabric's (an NGC image's ENV would otherwise have NCCL load HPC-X's plugin first).
- plugstack.conf travels with slurm.conf in the configuration bundle (config_delivery.py): slurmctld serves it
  to the configless nodes, and srun/sbatch on the head read the same file, where pyxis is built too (srun needs
  the plugin to accept --container-image).
- AMD nodes: /dev/kfd and /dev/dri bound into the container (ROCm's device nodes); NVIDIA nodes: enroot's own
  NVIDIA hook binds the GPUs through nvidia-container-cli (libnvidia-container), installed where the image lacks it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from accelstack.clouds.base import InstanceType
from accelstack.components.node_platform import ContainerFabric, NodePlatform
from accelstack.components.slurm.layout import Nodes, layout
from accelstack.components.templates import template_environment
from accelstack.spec.models import StackSpec, TrainingStack

ENROOT_VERSION = "3.5.0"
PYXIS_VERSION = "0.20.0"
ENROOT_RELEASES = f"https://github.com/NVIDIA/enroot/releases/download/v{ENROOT_VERSION}"
PYXIS_TARBALL = f"https://github.com/NVIDIA/pyxis/archive/refs/tags/v{PYXIS_VERSION}.tar.gz"
# pyxis' Makefile installs the plugin under $(prefix)/lib/slurm with prefix /usr/local.
PYXIS_PLUGIN = "/usr/local/lib/slurm/spank_pyxis.so"
PYXIS_RUNTIME = "/run/pyxis"  # tmpfs, as pyxis' setup guide asks
ENROOT_CONF_DIR = "/etc/enroot"
ENROOT_RUNTIME = "/run/enroot"  # per user, on tmpfs (pyxis' setup guide)
# The image cache and the containers' file systems: a link to the NVMe directory chosen at boot, else the boot disk.
ENROOT_SCRATCH = "/var/lib/accelstack/enroot"
ENROOT_SCRATCH_ON_BOOT_DISK = "/var/lib/enroot-scratch"
FABRIC_MOUNTS = f"{ENROOT_CONF_DIR}/mounts.d/50-accelstack.fstab"
FABRIC_ENVIRONMENT = f"{ENROOT_CONF_DIR}/environ.d/50-accelstack.env"
FABRIC_HOOK = f"{ENROOT_CONF_DIR}/hooks.d/50-accelstack-fabric.sh"
# Inside each container: a link to the fabric's net plugin under a name no image carries (NCCL_NET_PLUGIN's suffix).
NET_PLUGIN_LINK_DIR = "/usr/local/lib/accelstack-nccl-net"
NET_PLUGIN_SUFFIX = "accelstack"
# ROCm's device nodes: the compute interface (kfd) and the render nodes (ROCm's container guide binds both).
AMD_CONTAINER = ContainerFabric(name="ROCm", devices=("/dev/kfd",), device_directories=("/dev/dri",))

_env = template_environment("accelstack.components.slurm")


@dataclass(frozen=True)
class Containers:
    """What a node's setup needs to run jobs in containers: the versions, where things come from, the fabric."""

    fabric: ContainerFabric
    shared: tuple[str, ...]  # the stack's file system and checkpoint paths, bound read-write at the same path
    scratch: tuple[str, ...]  # where the node's local NVMe is mounted at boot (enroot's cache goes there), if any
    development: str  # the Slurm headers package(s), quoted for apt-get
    nvidia: bool  # the GPUs are NVIDIA's: enroot's NVIDIA hook needs nvidia-container-cli


def uses_containers(spec: StackSpec) -> bool:
    """Whether the stack's Slurm runs jobs in containers (training.scheduler.containers: pyxis)."""
    return (
        isinstance(spec, TrainingStack)
        and spec.training.scheduler.kind == "slurm"
        and spec.training.scheduler.containers == "pyxis"
    )


def container_fabric(platform: NodePlatform, instance: InstanceType | None) -> ContainerFabric:
    """The cloud's fabric paths and settings, and the accelerator's device nodes where enroot has no hook for them."""
    fabric = platform.container_fabric(instance)
    if instance is not None and instance.vendor == "amd":
        fabric = fabric.merged(AMD_CONTAINER)
    return fabric


def containers(
    spec: StackSpec, platform: NodePlatform, instance: InstanceType | None, shared: tuple[str, ...]
) -> Containers | None:
    """The node's container setup; None when the stack runs none."""
    if not uses_containers(spec):
        return None
    nvme = platform.local_nvme(instance)
    return Containers(
        fabric=container_fabric(platform, instance),
        shared=shared,
        scratch=(nvme.mount_point,) if nvme else (),
        development=" ".join(shlex.quote(name) for name in platform.slurm_packages.development),
        nvidia=instance is None or instance.vendor == "nvidia",
    )


def plugstack_conf(spec: StackSpec) -> str:
    """Slurm's SPANK plugin stack: pyxis where the stack runs containers, else no plugin."""
    return _env.get_template("plugstack.conf.j2").render(
        pyxis=uses_containers(spec), plugin=PYXIS_PLUGIN, runtime=PYXIS_RUNTIME, version=PYXIS_VERSION
    )


def template_values(setup: Containers | None) -> dict[str, object]:
    """What the setup scripts' container steps render from (`containers` None: the steps are left out)."""
    return {
        "containers": setup,
        "enroot": {
            "version": ENROOT_VERSION,
            "releases": ENROOT_RELEASES,
            "runtime": ENROOT_RUNTIME,
            "scratch": ENROOT_SCRATCH,
            "boot_disk": ENROOT_SCRATCH_ON_BOOT_DISK,
        },
        "pyxis": {"version": PYXIS_VERSION, "tarball": PYXIS_TARBALL, "plugin": PYXIS_PLUGIN},
    }


def _mount_line(path: str, options: str) -> str:
    return f"{path} {path} none {options}"


def fabric_mounts(setup: Containers) -> str:
    """The enroot fstab: devices read-write, the fabric's files read-only, the stack's shared paths read-write.
    Fabric paths a node may lack are `nofail` (enroot skips them); the shared paths exist on every node. Read-only
    paths take the host path's kind (`x-create=auto`: a file or a directory); devices are named by kind, as
    enroot's own Mellanox hook binds them."""
    lines = [f"# accelstack: what a job's container binds from its node ({setup.fabric.name or 'no fabric'})"]
    for device in setup.fabric.devices:
        lines.append(_mount_line(device, "x-create=file,bind,nosuid,noexec,nofail,silent"))
    for directory in setup.fabric.device_directories:
        lines.append(_mount_line(directory, "x-create=dir,rbind,nosuid,noexec,nofail,silent"))
    for path in setup.fabric.read_only:
        lines.append(_mount_line(path, "x-create=auto,rbind,ro,nosuid,nodev,nofail,silent"))
    for path in setup.shared:
        lines.append(_mount_line(path, "x-create=dir,rbind,nosuid,nodev"))
    return "\n".join(lines) + "\n"


def fabric_environment(setup: Containers) -> str:
    """The enroot environ.d file: the fabric's settings for every container."""
    lines = [f"# accelstack: the fabric's settings in every container ({setup.fabric.name or 'no fabric'})"]
    lines += [f"{name}={value}" for name, value in setup.fabric.environment]
    return "\n".join(lines) + "\n"


def fabric_hook(fabric: ContainerFabric) -> str:
    """The enroot hook that puts the fabric's libraries first on the container's loader path and pins NCCL to the
    fabric's net plugin, over whatever the image's ENV chose (see the template for enroot's and NCCL's rules);
    only a fabric with libraries gets one (`container_files`)."""
    return _env.get_template("enroot-fabric-hook.sh.j2").render(
        fabric_name=fabric.name,
        libraries=fabric.libraries,
        net_plugins=fabric.net_plugins,
        settings_file=fabric.settings_file,
        multi_node_only=fabric.multi_node_only,
        link_dir=NET_PLUGIN_LINK_DIR,
        suffix=NET_PLUGIN_SUFFIX,
    )


def container_files(setup: Containers | None) -> list[tuple[str, str, str]]:
    """(path, content, mode) of enroot's configuration on a compute node; [] without containers."""
    if setup is None:
        return []
    files = [
        (
            f"{ENROOT_CONF_DIR}/enroot.conf",
            _env.get_template("enroot.conf.j2").render(runtime=ENROOT_RUNTIME, scratch=ENROOT_SCRATCH),
            "0644",
        ),
        (FABRIC_MOUNTS, fabric_mounts(setup), "0644"),
        (FABRIC_ENVIRONMENT, fabric_environment(setup), "0644"),
    ]
    # A node without fabric libraries (no EFA, TCPXO, gIB...) gets no hook: it would only exit.
    return files + ([(FABRIC_HOOK, fabric_hook(setup.fabric), "0755")] if setup.fabric.libraries else [])


def node_containers(spec: StackSpec, nodes: Nodes, controller: bool) -> dict[str, object]:
    """The setup script's container values for the head (`controller`: pyxis only, for srun and sbatch) or a
    compute node (enroot too, with the fabric and the stack's shared paths bound into every container)."""
    plan = layout(spec, nodes)
    shared = tuple(path for path in (plan.lustre_mount_path, plan.local_checkpoints_path) if path)
    return {**template_values(containers(spec, nodes.platform, nodes.instance, shared)), "controller": controller}


def node_container_files(spec: StackSpec, nodes: Nodes) -> list[dict[str, str]]:
    """enroot's configuration as cloud-init files on a compute node; [] without containers."""
    setup = node_containers(spec, nodes, controller=False)["containers"]
    assert setup is None or isinstance(setup, Containers)
    return [
        {"path": path, "owner": "root:root", "permissions": mode, "content": text}
        for path, text, mode in container_files(setup)
    ]
