"""What a node needs from its cloud, as shell: the small interface the neutral node generators speak.

The Slurm generator (`accelstack.components.slurm`) writes boot scripts, a preemption watcher and
checkpoint-sync units that run on the cloud's VMs. Everything in them that differs by cloud goes
through a `NodePlatform`; each cloud implements it in `accelstack.components.<cloud>.node_platform`
(a module exposing `node_platform(spec) -> NodePlatform`), found through the registry by
`node_platform_for`.

The members, and what each cloud answers with:

- instance metadata (`metadata_functions`, `metadata_command`): AWS IMDSv2 (PUT a token, then
  169.254.169.254/latest/meta-data), Azure IMDS (169.254.169.254/metadata/instance with
  `Metadata: true`), GCP (metadata.google.internal/computeMetadata/v1 with `Metadata-Flavor: Google`),
  OCI (169.254.169.254/opc/v2 with `Authorization: Bearer Oracle`).
- preemption notice (`preemption_functions`, `preemption_notice_seconds`): EC2's spot
  instance-action (404 until 2 minutes ahead), Azure Scheduled Events (a `Preempt` event, >= 30 s
  ahead), GCP `instance/preempted` (TRUE 30 s ahead) and `instance/maintenance-event`. A cloud that
  posts no notice on the node (OCI preemptible instances) answers with no function: the generator
  then runs no watcher and relies on Slurm's requeue of a lost node.
- secret fetch (`secret_command`): Secrets Manager, Key Vault, Secret Manager, OCI Vault, each with
  the node's own identity and a reference the components hand over (ARN, secret URI, name, OCID).
- object sync (`object_sync_command`): `aws s3 sync`, `azcopy sync`, `gcloud storage rsync`,
  `oci os object sync`; copies new and changed files only, never deletes at the destination.
- checkpoint copy (`checkpoint_copy_functions`): shell defining `copy_new_files` and `copy_new_file`, which copy
  to the object store without ever overwriting an object there where the cloud's CLI can refuse it
  (`gcloud storage --no-clobber`, `azcopy copy --overwrite=false`; the AWS CLI cannot: `aws s3 sync` re-sends a
  file only when its size or age differs, and the versioned bucket keeps what it replaces).
- block-device path (`block_device_path`): where an attached data volume appears (EBS by volume id
  under /dev/disk/by-id on Nitro, Azure's /dev/disk/azure/scsi1/lunN, GCP's
  /dev/disk/by-id/google-NAME, OCI's /dev/oracleoci/oraclevdX).
- Slurm's packages (`slurm_packages`): where the scheduler's daemons and munge come from. Ubuntu's archive
  (Slurm 23.11 on noble) on AWS and GCP; Microsoft's packages.microsoft.com `slurm-smd-*` at one pinned
  version on Azure, whose Ubuntu-HPC image pins Ubuntu's `slurm*` packages away.
- fabric hooks (`fabric_hooks`): what a fabric needs beside its NICs before NCCL can use them, set up at
  boot and around every multi-node job (`FabricHooks`). EFA (AWS's Deep Learning AMI carries the EFA
  installer and aws-ofi-nccl) and InfiniBand (Azure's HPC images: OFED, NCCL's IB transport, /etc/nccl.conf)
  need none; GPUDirect-TCPXO (A3 Mega) needs Google's receive-datapath manager beside every job and its NCCL
  net plugin, GCP's RDMA NICs (A3 Ultra / A4) Google's NCCL/gIB plugin and its settings.
- the fabric inside a job's container (`container_fabric`): what enroot binds into a pyxis container so NCCL
  there finds the host's fabric (`ContainerFabric`: devices, config files, the net plugin's libraries, settings),
  one place per fabric.
- local NVMe (`local_nvme`): which disks are the machine's own (instance store, local SSD) and where their RAID 0
  array is mounted at every boot before slurmd (enroot's image cache and container file systems go there).

Every shell fragment is bash, runs as root, and may be embedded in cloud-init user data (keep it short:
EC2 user data is 16 KB).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from accelstack.clouds import registry
from accelstack.clouds.base import InstanceType
from accelstack.spec.models import StackSpec


class NodeFact(StrEnum):
    """What a node asks its metadata service about itself."""

    INSTANCE_ID = "instance-id"
    INSTANCE_TYPE = "instance-type"
    REGION = "region"
    ZONE = "zone"
    PRIVATE_ADDRESS = "private-address"  # the primary interface's private IPv4 address


@dataclass(frozen=True)
class ContainerFabric:
    """What a job's container needs from its node to use the fabric as a job on the host would; enroot binds
    each path at the same path inside (mounts.d) and sets the settings (environ.d), for every container pyxis
    starts. Paths a node may lack (a device of another size, a plugin installed by the first multi-node job's
    prolog) are bound only where present (enroot's `nofail`).

    `devices`: device nodes, bound read-write (/dev/kfd); `device_directories`: directories of them (/dev/infiniband;
    enroot creates a bind target by the kind named, and with ENROOT_RESTRICT_DEV the container's /dev has none of
    the fabric's). `read_only`: files and
    directories bound read-only (/etc/nccl.conf, the net plugin's directory). `libraries`: directories among
    those whose libraries the container's loader must find (an enroot hook puts them first on LD_LIBRARY_PATH,
    the image's own value kept behind them, and in the container's ld.so cache). `environment`: NAME=value
    settings every container gets (enroot's environ.d; enroot's own hooks read some, e.g.
    MELLANOX_VISIBLE_DEVICES). `name`: for comments.

    `net_plugins`: the file names of the fabric's NCCL net plugin, looked for in `libraries` in order; where one
    is bound, every container's NCCL is pinned to it (NCCL_NET_PLUGIN, and `libraries` first on LD_LIBRARY_PATH,
    ahead of the image's own, e.g. HPC-X's libnccl-net.so in NGC images). `settings_file`: the node's file of
    NAME=value NCCL settings its Prolog resolves (the TaskProlog's), set in the container over the image's.
    `multi_node_only`: the plugin and settings are readied by the fabric's Prolog for multi-node jobs only (as the
    TaskProlog hands them), so one-node jobs keep the image's NCCL and plugin choice."""

    name: str = ""
    devices: tuple[str, ...] = ()
    device_directories: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    libraries: tuple[str, ...] = ()
    environment: tuple[tuple[str, str], ...] = ()
    net_plugins: tuple[str, ...] = ()
    settings_file: str = ""
    multi_node_only: bool = False

    def merged(self, other: ContainerFabric) -> ContainerFabric:
        """Both sets of paths and settings (this one's first; a setting named in both keeps this one's)."""
        names = {name for name, _ in self.environment}
        return ContainerFabric(
            name=" + ".join(n for n in (self.name, other.name) if n),
            devices=tuple(dict.fromkeys((*self.devices, *other.devices))),
            device_directories=tuple(dict.fromkeys((*self.device_directories, *other.device_directories))),
            read_only=tuple(dict.fromkeys((*self.read_only, *other.read_only))),
            libraries=tuple(dict.fromkeys((*self.libraries, *other.libraries))),
            environment=(*self.environment, *((n, v) for n, v in other.environment if n not in names)),
            net_plugins=tuple(dict.fromkeys((*self.net_plugins, *other.net_plugins))),
            settings_file=self.settings_file or other.settings_file,
            multi_node_only=self.multi_node_only or other.multi_node_only,
        )


@dataclass(frozen=True)
class LocalNvme:
    """A node's local NVMe disks, which a stop/start (or deallocation) hands back blank and a reboot keeps.

    `disks`: a shell glob of their stable device names, never matching the boot or a data disk (the node's setup
    also skips any disk that is partitioned, mounted or held by another array). `mount_point`: where the array is
    mounted. `source`: the cloud's documentation of those names, for the script's comments."""

    disks: str
    mount_point: str
    source: str


@dataclass(frozen=True)
class FabricHooks:
    """The node-side software a fabric needs before NCCL can use its NICs, as the Slurm generator places it.

    `install`: bash run once, at the node's first boot, before slurmd (packages, drivers: may take minutes).
    `boot_script`: run at every boot by a oneshot unit slurmd requires, so a node whose fabric did not come up
    never joins (kernel modules, device nodes). `prolog` / `epilog`: the scripts slurmd runs as root on each of
    a job's nodes at allocation and at its end (Prolog= with PrologFlags=Alloc, Epilog=). `environment_file`:
    NAME=value lines the prolog writes, which the TaskProlog hands every task of a multi-node job (a job's own
    value wins); `library_path`: a directory it prepends to those tasks' LD_LIBRARY_PATH. `prolog_seconds`:
    the longest the prolog may take (Slurm's BatchStartTimeout and PrologEpilogTimeout)."""

    name: str
    install: str
    boot_script: str
    prolog: str
    epilog: str
    environment_file: str
    library_path: str
    prolog_seconds: int
    container: ContainerFabric = ContainerFabric()  # what a job's container binds to use this fabric


# Debian's slurm packages create the `slurm` user with this fixed uid/gid (their preinst recreates a `slurm`
# user with any other); packages that create none (SchedMD's slurm-smd) get the same one from the setup.
SLURM_UID = 64030


@dataclass(frozen=True)
class SlurmPackages:
    """Where a node's Slurm comes from, as the setup scripts install it (apt, before anything else runs).

    `development`: the headers SPANK plugins build against (pyxis), of the same release.
    `source`: the repository, for the scripts' comments. `repository_setup`: bash adding that apt repository
    and its key ("": the image's own repositories carry the packages). `common`: what every role installs
    (munge, the client commands); `controller` / `node`: slurmctld's and slurmd's packages. A package may carry
    an apt version glob (`slurm-smd=25.11.5*`) so the head and every node run one release. `daemon_directory`:
    where the packages install slurmd and slurmctld (the generated units' ExecStart)."""

    source: str
    common: tuple[str, ...]
    controller: tuple[str, ...]
    node: tuple[str, ...]
    repository_setup: str = ""
    daemon_directory: str = "/usr/sbin"
    development: tuple[str, ...] = ()
    # slurmdbd with its MySQL storage plugin, on the head of a stack that keeps accounting (Debian's `slurmdbd`).
    accounting: tuple[str, ...] = ("slurmdbd",)

    def packages(self, controller: bool, accounting: bool = False) -> tuple[str, ...]:
        """What the head (`controller`, with slurmdbd when it keeps `accounting`) or a compute node installs."""
        return (*self.common, *(self.controller if controller else self.node), *(self.accounting if accounting else ()))


# noble's universe: Slurm 23.11 (munge, slurm-client, slurmctld, slurmd; slurmdbd for accounting), binaries in /usr/sbin.
UBUNTU_ARCHIVE_SLURM = SlurmPackages(
    source="Ubuntu's archive",
    common=("munge", "slurm-client"),
    controller=("slurmctld",),
    node=("slurmd",),
    development=("libslurm-dev",),  # slurm-wlm's headers: /usr/include/slurm/spank.h
)


class NodePlatform(Protocol):
    """How a node does the cloud-specific parts of booting and running under a scheduler."""

    @property
    def name(self) -> str:
        """The cloud's registry name ("aws"); used in messages."""
        ...

    @property
    def tool_functions(self) -> str:
        """Shell function definitions the node's other commands need (e.g. installing the cloud's CLI
        where the image lacks it); "" when none are needed."""
        ...

    @property
    def tool_setup(self) -> str | None:
        """The command that makes the tools ready (run once, before any other cloud call); None: nothing to do."""
        ...

    @property
    def metadata_functions(self) -> str:
        """Shell function definitions `metadata_command` relies on."""
        ...

    def metadata_command(self, fact: NodeFact) -> str:
        """A shell command printing `fact` about this node on stdout (no newline guaranteed)."""
        ...

    @property
    def preemption_notice_seconds(self) -> int:
        """Shortest time the cloud guarantees between posting a preemption notice and taking the node."""
        ...

    @property
    def preemption_source(self) -> str:
        """What the watcher polls, for its log and comments ("EC2 spot instance-action on IMDSv2")."""
        ...

    @property
    def preemption_functions(self) -> str | None:
        """Shell defining `preemption_notice`: prints nothing while no preemption is scheduled; on a
        notice, prints the action on the first line and, on the second, when the node goes (any
        format `date -d` reads; empty when the cloud does not say). Needs `metadata_functions`.
        None: the cloud posts no notice the node can see."""
        ...

    def secret_command(self, reference: str) -> str:
        """A shell command printing the secret's raw bytes on stdout, read with the node's identity."""
        ...

    def config_object_command(self, reference: str) -> str:
        """A shell command printing the bytes held by the stack's versioned configuration object `reference`
        (stored as base64 text; the Slurm head's configuration files), read with the node's identity."""
        ...

    def is_object_uri(self, uri: str) -> bool:
        """Whether `object_sync_command` can copy to and from `uri`."""
        ...

    @property
    def object_uri_form(self) -> str:
        """The object URI form `is_object_uri` accepts, for error messages ("s3://bucket[/prefix]")."""
        ...

    def object_sync_command(self, source: str, destination: str) -> str:
        """A shell command copying new and changed files from `source` to `destination` (a local
        directory or an object URI, both ending in "/"); it never deletes at the destination."""
        ...

    @property
    def checkpoint_copy_functions(self) -> str:
        """Shell defining `copy_new_files DIR/ PREFIX/ NAME`: every file under the local directory DIR to the object
        prefix PREFIX, recursively, except DIR's top-level file NAME; and `copy_new_file FILE OBJECT`: one file to
        one object. Neither overwrites an object that exists (where the cloud's CLI can refuse to) nor deletes;
        both return non-zero when a copy fails (a file skipped because it exists is no failure)."""
        ...

    def block_device_path(self, volume: str) -> str:
        """The stable device path on the node of the attached data volume `volume` (a cloud reference)."""
        ...

    @property
    def slurm_packages(self) -> SlurmPackages:
        """Where the head's and the nodes' Slurm and munge come from (one source, so one release)."""
        ...

    def fabric_hooks(self, instance: InstanceType | None) -> FabricHooks | None:
        """What the nodes' fabric needs set up at boot and around jobs; None: the image has everything."""
        ...

    def container_fabric(self, instance: InstanceType | None) -> ContainerFabric:
        """What a job's container binds from the node to use its fabric (the fabric hooks' `container` where the
        cloud has hooks); an empty one without a fabric."""
        ...

    def local_nvme(self, instance: InstanceType | None) -> LocalNvme | None:
        """The node's local NVMe disks and their mount point (enroot's scratch goes there); None: the nodes have
        none, and enroot's files stay on the boot disk."""
        ...

    def units_before_slurmd(self, instance: InstanceType | None) -> tuple[str, ...]:
        """Units the node image runs at every boot that jobs rely on (slurmd is ordered after them, so a job
        never starts on a node whose image has not finished configuring it; after a reboot too)."""
        ...

    @property
    def lustre_product(self) -> str:
        """The managed Lustre's name as the cloud sells it ("FSx for Lustre"), for the node scripts' comments."""
        ...

    @property
    def lustre_client_source(self) -> str:
        """Where the Lustre client comes from when the image lacks it ("FSx's repository")."""
        ...

    @property
    def lustre_client_install(self) -> str:
        """Shell lines that install the Lustre client matching the running kernel (run when
        `mount.lustre` is missing), from the repository the cloud's managed Lustre documents."""
        ...


def node_platform_for(spec: StackSpec) -> NodePlatform:
    """The spec's cloud's platform: `<components module>.node_platform.node_platform(spec)`."""
    cloud = registry.get(spec.cloud)
    if cloud.components is None:
        raise ValueError(f"cloud: {spec.cloud!r} is described but not deployable; no node platform")
    module = importlib.import_module(f"{cloud.components}.node_platform")
    platform: NodePlatform = module.node_platform(spec)
    return platform
