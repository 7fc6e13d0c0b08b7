"""The fabric software beside the NICs: what A3 Mega, A3 Ultra and A4 nodes run so NCCL uses their 8 GPU NICs
(pure, no Pulumi).

GPUDirect-TCPXO (A3 Mega).

The NICs alone (components/gcp/network.py: 8 gVNIC VPCs at MTU 8244) carry NCCL's traffic over plain sockets at a
fraction of the fabric's rate. GPUDirect-TCPXO also needs, on every node of a multi-node job: the dma-buf import
helper kernel module and the NICs' aperture devices (at boot), Google's receive-datapath manager (RxDM) running in
a privileged host container, and the matching NCCL net plugin with its NCCL build (at job start). Sources: Google's
GPUDirect guide for A3 Mega VMs (cloud.google.com/compute/docs/gpus/gpudirect) and the Slurm prolog Google ships in
slurm-gcp (tools/prologs-epilogs/receive-data-path-manager-mega), whose image pair is pinned here; Cluster
Toolkit's A3 Mega image builds the same pieces into a custom image, where accelstack installs them at first boot
on the pinned Canonical accelerator image (components/gcp/images.py). Not run on A3 Mega hardware from here:
versions and device ids are as those sources give them (catalog.GPUDIRECT_TCPXO).

NCCL/gIB (A3 Ultra, A4: RDMA over 8 MRDMA NICs). The image's RDMA stack moves the bytes; Google's gIB net plugin,
its NCCL build and the settings its script chooses per machine type make NCCL use it as Google tunes it (stock
NCCL runs, with other GID, traffic-class and tuner choices). Installed at first boot and held; the settings are
resolved at every boot and handed to multi-node jobs as TCPXO's are (catalog.GPUDIRECT_GIB, from Cluster
Toolkit's A3 Ultra / A4 blueprints).

A3 High (GPUDirect-TCPX) first needs a kernel with Google's TCPX patches (`linux-gcp-tcpx`, installed with
credentials Google grants on request, per Cluster Toolkit's a3-highgpu-8g README), which no public image carries;
accelstack does not set it up (the spec warns).
"""

from __future__ import annotations

from functools import cache
from pathlib import PurePosixPath

from accelstack.clouds.base import InstanceType
from accelstack.clouds.gcp.catalog import GPUDIRECT_GIB, GPUDIRECT_TCPXO
from accelstack.components.node_platform import ContainerFabric, FabricHooks
from accelstack.components.templates import template_environment

_templates = template_environment("accelstack.components.gcp", trim_blocks=False)
LIBRARY_PATH = "/var/lib/tcpxo/lib64"  # where the plugin's installer puts the plugin and its NCCL
ENVIRONMENT_FILE = "/var/lib/accelstack/fabric.env"  # beside the libraries: both survive a reboot
STATE_DIR = "/run/accelstack/fabric"  # the jobs using RxDM now: none after a reboot
RXDM_CONTAINER = "accelstack-rxdm"
RXDM_READY_LINE = "Buffer manager initialization complete"
RXDM_POLL_SECONDS = 2
RXDM_POLLS = 60  # 2 minutes, as slurm-gcp's prolog waits
# Image pulls (plugin ~1 GB, RxDM) plus RxDM's start, with room: Slurm's BatchStartTimeout/PrologEpilogTimeout.
PROLOG_SECONDS = 600
# gIB's prolog reads a few sysfs files: Slurm's default BatchStartTimeout (10 s) with room.
GIB_PROLOG_SECONDS = 60


def _artifact_registry_transport() -> str:
    return _templates.get_template("_artifact-registry.sh.j2").render()


def _render(name: str, **values: object) -> str:
    common = {
        "machine_type": GPUDIRECT_TCPXO.machine_type,
        "aperture_dir": GPUDIRECT_TCPXO.aperture_dir,
        "container": RXDM_CONTAINER,
        "state_dir": STATE_DIR,
    }
    return _templates.get_template(name).render(**common, **values)


@cache  # pure, and asked for by every Slurm artifact that a fabric touches: rendered once
def tcpxo_hooks() -> FabricHooks:
    tables = GPUDIRECT_TCPXO
    return FabricHooks(
        name=f"GPUDirect-TCPXO ({tables.machine_type})",
        install=_render(
            "gpudirect-tcpxo-install.sh.j2",
            helper_module=tables.helper_module,
            helper_repository=tables.helper_repository,
            helper_package=tables.helper_package,
            helper_version=tables.helper_version,
            registry_host=tables.registry_host,
            artifact_registry_transport=_artifact_registry_transport(),
        ),
        boot_script=_render(
            "gpudirect-tcpxo-boot.sh.j2",
            helper_module=tables.helper_module,
            vendor=tables.aperture_pci_vendor,
            device=tables.aperture_pci_device,
        ),
        prolog=_render(
            "gpudirect-tcpxo-prolog.sh.j2",
            plugin_image=tables.nccl_plugin_image,
            rxdm_image=tables.rxdm_image,
            library_path=LIBRARY_PATH,
            environment_file=ENVIRONMENT_FILE,
            polls=RXDM_POLLS,
            poll_seconds=RXDM_POLL_SECONDS,
            ready_line=RXDM_READY_LINE,
            host_nic=tables.host_nic,
            gpu_nics=tables.gpu_nics,
        ),
        epilog=_render("gpudirect-tcpxo-epilog.sh.j2"),
        environment_file=ENVIRONMENT_FILE,
        library_path=LIBRARY_PATH,
        prolog_seconds=PROLOG_SECONDS,
        # A container's NCCL uses the host's plugin and its NCCL build (installed by the prolog) and the NICs'
        # aperture devices, as Cluster Toolkit's A3 Mega enroot jobs bind them (--container-mounts of
        # /var/lib/tcpxo/lib64, LD_LIBRARY_PATH=/var/lib/tcpxo/lib64 first, the profile's NCCL_FASTRAK_* settings:
        # examples/machine-learning/a3-megagpu-8g/nccl-tests/run-nccl-tests.sh). RxDM serves the plugin over the
        # host network, which pyxis containers share (no socket directory to bind: slurm-gcp's
        # receive-data-path-manager-mega and Google's GKE manifest give RxDM and NCCL no shared volume, unlike
        # A3 High's TCPX, whose NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX names a directory both bind).
        container=ContainerFabric(
            name="GPUDirect-TCPXO",
            devices=("/dev/dmabuf_import_helper",),
            device_directories=(tables.aperture_dir,),
            read_only=(LIBRARY_PATH,),
            libraries=(LIBRARY_PATH,),
            net_plugins=("libnccl-net.so",),
            settings_file=ENVIRONMENT_FILE,
            multi_node_only=True,
        ),
    )


@cache
def gib_hooks(rdma_nics: int) -> FabricHooks:
    """NCCL/gIB's hooks for a machine type with `rdma_nics` RDMA NICs."""
    tables = GPUDIRECT_GIB
    values = {
        "rdma_nics": rdma_nics,
        "environment_file": ENVIRONMENT_FILE,
        "environment_script": tables.environment_script,
        "plugin_package": tables.plugin_package,
        "socket_nics": tables.socket_nics,
    }
    return FabricHooks(
        name=f"NCCL/gIB ({tables.plugin_package} {tables.plugin_version})",
        install=_templates.get_template("gpudirect-gib-install.sh.j2").render(
            plugin_package=tables.plugin_package,
            plugin_version=tables.plugin_version,
            plugin_repository=tables.plugin_repository,
            repository_key_url=tables.repository_key_url,
            nccl_version=tables.nccl_version,
            cuda_keyring_url=tables.cuda_keyring_url,
            artifact_registry_transport=_artifact_registry_transport(),
        ),
        boot_script=_templates.get_template("gpudirect-gib-boot.sh.j2").render(**values),
        prolog=_templates.get_template("gpudirect-gib-prolog.sh.j2").render(**values),
        epilog=_templates.get_template("gpudirect-gib-epilog.sh.j2").render(),
        environment_file=ENVIRONMENT_FILE,
        library_path=tables.library_path,
        prolog_seconds=GIB_PROLOG_SECONDS,
        # gIB's plugin and scripts (/usr/local/gib) bound as Cluster Toolkit's A3 Ultra / A4 enroot jobs bind
        # them; the RDMA NICs' verbs devices and mlx5 provider through enroot's Mellanox hook.
        container=ContainerFabric(
            name="NCCL/gIB",
            read_only=(str(PurePosixPath(tables.library_path).parent),),
            libraries=(tables.library_path,),
            environment=(("MELLANOX_VISIBLE_DEVICES", "all"),),
            net_plugins=("libnccl-net.so",),
            settings_file=ENVIRONMENT_FILE,  # with NCCL_NET=gIB: NCCL fails rather than fall back to sockets
            multi_node_only=True,
        ),
    )


def fabric_hooks(instance: InstanceType | None) -> FabricHooks | None:
    """TCPXO's hooks on A3 Mega, gIB's on the RDMA machine types; None for every other (TCPX: see above)."""
    if instance is None:
        return None
    if instance.fabric == "gpudirect-tcpxo":
        return tcpxo_hooks()
    if instance.fabric == "rdma":
        return gib_hooks(instance.fabric_interfaces)
    return None
