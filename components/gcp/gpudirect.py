"""GPUDirect-TCPXO beside the NICs: what an A3 Mega node runs so NCCL can use its 8 GPU NICs (pure, no Pulumi).

The NICs alone (components/gcp/network.py: 8 gVNIC VPCs at MTU 8244) carry NCCL's traffic over plain sockets at a
fraction of the fabric's rate. GPUDirect-TCPXO also needs, on every node of a multi-node job: the dma-buf import
helper kernel module and the NICs' aperture devices (at boot), Google's receive-datapath manager (RxDM) running in
a privileged host container, and the matching NCCL net plugin with its NCCL build (at job start). Sources: Google's
GPUDirect guide for A3 Mega VMs (cloud.google.com/compute/docs/gpus/gpudirect) and the Slurm prolog Google ships in
slurm-gcp (tools/prologs-epilogs/receive-data-path-manager-mega), whose image pair is pinned here; Cluster
Toolkit's A3 Mega image builds the same pieces into a custom image, where accelstack installs them at first boot
on Canonical's accelerator image. Not run on A3 Mega hardware from here: versions and device ids are as those
sources give them (catalog.GPUDIRECT_TCPXO).

A3 High (GPUDirect-TCPX) first needs a kernel with Google's TCPX patches (`linux-gcp-tcpx`, installed with
credentials Google grants on request, per Cluster Toolkit's a3-highgpu-8g README), which no public image carries;
accelstack does not set it up (the spec warns), and A3 Ultra / A4 (RDMA) need nothing beyond the image.
"""

from __future__ import annotations

from functools import cache

from accelstack.clouds.base import InstanceType
from accelstack.clouds.gcp.catalog import GPUDIRECT_TCPXO
from accelstack.components.node_platform import FabricHooks
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
            registry_host=tables.registry_host,
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
        ),
        epilog=_render("gpudirect-tcpxo-epilog.sh.j2"),
        environment_file=ENVIRONMENT_FILE,
        library_path=LIBRARY_PATH,
        prolog_seconds=PROLOG_SECONDS,
    )


def fabric_hooks(instance: InstanceType | None) -> FabricHooks | None:
    """TCPXO's hooks for its machine type; None for every other (RDMA's image has its stack; TCPX: see above)."""
    if instance is not None and instance.fabric == "gpudirect-tcpxo":
        return tcpxo_hooks()
    return None
