"""Google Cloud constraint tables. Checked 2026-12-03 against the sources named beside each table.

Data only, like `accelstack.clouds.aws.catalog`: rules that read these tables come with the GCP port.

Left out because the sources at hand did not confirm them (add a row once a source does):
- The fabric bandwidth of each machine type (`fabric_gbps` is 0, "unknown"): the pages read give NIC
  counts and types but no per-NIC rate for the GPU NICs.
- A4X (GB200, Arm) and G4 (RTX PRO 6000); a3-highgpu-1g/2g/4g and a3-edgegpu-8g (no GPUDirect fabric
  of their own in the Cluster Toolkit blueprints read).
- Which zone offers which machine type: per-zone GPU availability was not readable here, so `REGIONS`
  is Compute Engine's regions and the machine/zone pairing is left to Google at create time.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelstack.clouds.base import InstanceType

CHECKED = "2026-12-03"

SOURCES = (
    "GKE cluster autoscaler machine-family table (Google LLC, k8s.io/gke-autoscaling machinetypes): vCPUs, "
    "memory and GPUs of a2-*, a3-*, a4-highgpu-8g, g2-*; maxCompactPlacementNodes per family",
    "Google Cloud, Accelerator-optimized machine family (cloud.google.com/compute/docs/accelerator-optimized-"
    "machines): A3 High and Mega 208 vCPUs and 1,872 GB",
    "GoogleCloudPlatform/cluster-toolkit @1047080 (2026-06-25): examples/machine-learning/a3-highgpu-8g "
    "(network_count 4, TCPX), a3-megagpu-8g (network_count 8, MTU 8244, TCPXO), a3-ultragpu-8g and "
    "a4-highgpu-8g (2 gVNIC at MTU 8896 + RoCE VPC of 8 MRDMA subnets); modules/compute/gke-node-pool README",
    "Google Cloud, Managed Lustre performance tiers and Increase capacity (docs.cloud.google.com/managed-lustre/"
    "docs/performance-tiers, /increase-capacity): min, max and step per tier",
    "Google Cloud, gcloud lustre instances import-data / export-data; REST projects.locations.instances.exportData",
    "Google Cloud, About future reservation requests in calendar mode (1 to 90 days, GPU VMs)",
    "Google Cloud, Cloud Run / Compute Engine region list (region names)",
)


# --- Machine types ------------------------------------------------------------------------------


def _a(
    name: str,
    accelerator: str,
    accelerators: int,
    accelerator_memory_gib: int,
    vcpus: int,
    memory_gib: int,
    *,
    fabric: str | None = None,
    gpu_nics: int = 0,
    nics: int = 1,
    calendar_mode: bool = False,
) -> InstanceType:
    """One machine type; `gpu_nics` are the NICs the fabric uses, `nics` every NIC one VM configures."""
    return InstanceType(
        name,
        accelerator,
        accelerators,
        accelerator_memory_gib,
        vcpus,
        memory_gib,
        fabric=fabric if gpu_nics else None,
        fabric_interfaces=gpu_nics,
        network_cards=nics,
        time_boxed_reservation=calendar_mode,
    )


# vCPUs, memory (GB as Google prints it, binary) and GPU count per machine type: GKE autoscaler table;
# a3-highgpu-8g / a3-megagpu-8g also on the accelerator-optimized page (208 vCPUs, 1,872 GB). A100 is the
# 40 GB part on a2-highgpu and the 80 GB part on a2-ultragpu; a3-megagpu carries "nvidia-h100-mega-80gb",
# a3-ultragpu the 141 GB H200, a4-highgpu the 180 GB B200; g2 the 24 GB L4 (the autoscaler table's 23
# vCPUs for g2-standard-24 is taken as a typo: the name and the G2 tables give 24).
# Fabric (Cluster Toolkit blueprints): A3 High = GPUDirect-TCPX over 4 extra gVNICs (1 + 4 NICs), A3 Mega =
# GPUDirect-TCPXO over 8 extra gVNICs (1 + 8), A3 Ultra and A4 = GPUDirect RDMA (RoCE) over 8 MRDMA NICs
# plus 2 gVNICs (10 NICs). A2 and G2 have no GPU-to-GPU network across VMs.
# Calendar mode: a4-highgpu-8g is listed with a DWS Calendar Mode price (and no plain on-demand price);
# the other types' calendar-mode eligibility was not confirmed, so they are not marked.
ACCELERATED_INSTANCES: dict[str, InstanceType] = {
    i.name: i
    for i in (
        _a("a4-highgpu-8g", "B200", 8, 180, 224, 3968, fabric="rdma", gpu_nics=8, nics=10, calendar_mode=True),
        _a("a3-ultragpu-8g", "H200", 8, 141, 224, 2952, fabric="rdma", gpu_nics=8, nics=10),
        _a("a3-megagpu-8g", "H100", 8, 80, 208, 1872, fabric="gpudirect-tcpxo", gpu_nics=8, nics=9),
        _a("a3-highgpu-8g", "H100", 8, 80, 208, 1872, fabric="gpudirect-tcpx", gpu_nics=4, nics=5),
        _a("a2-highgpu-1g", "A100", 1, 40, 12, 85),
        _a("a2-highgpu-2g", "A100", 2, 40, 24, 170),
        _a("a2-highgpu-4g", "A100", 4, 40, 48, 340),
        _a("a2-highgpu-8g", "A100", 8, 40, 96, 680),
        _a("a2-megagpu-16g", "A100", 16, 40, 96, 1360),
        _a("a2-ultragpu-1g", "A100", 1, 80, 12, 170),
        _a("a2-ultragpu-2g", "A100", 2, 80, 24, 340),
        _a("a2-ultragpu-4g", "A100", 4, 80, 48, 680),
        _a("a2-ultragpu-8g", "A100", 8, 80, 96, 1360),
        _a("g2-standard-4", "L4", 1, 24, 4, 16),
        _a("g2-standard-8", "L4", 1, 24, 8, 32),
        _a("g2-standard-12", "L4", 1, 24, 12, 48),
        _a("g2-standard-16", "L4", 1, 24, 16, 64),
        _a("g2-standard-24", "L4", 2, 24, 24, 96),
        _a("g2-standard-32", "L4", 1, 24, 32, 128),
        _a("g2-standard-48", "L4", 4, 24, 48, 192),
        _a("g2-standard-96", "L4", 8, 24, 96, 384),
    )
}

# Source: GKE autoscaler table, maxCompactPlacementNodes per machine family (the most VMs one compact
# placement policy holds for that family).
COMPACT_PLACEMENT_MAX_VMS: dict[str, int] = {"a2": 150, "a3": 96, "a4": 1500, "g2": 150}
# Source: calendar-mode future reservations run 1 to 90 days.
CALENDAR_MODE_MAX_DAYS = 90


# --- Managed Lustre -----------------------------------------------------------------------------


@dataclass(frozen=True)
class LustreTier:
    """One Managed Lustre performance tier (`per_unit_storage_throughput`, MB/s per TiB).

    `capacity_gib` is a multiple of `step_gib` from `min_gib` up to `fine_max_gib`. Tiers with two step
    sizes take a coarser step above that threshold, and an instance created at or below the threshold can
    never grow past it; that range is not modelled, so the threshold is the largest size accepted.
    """

    throughput_mbps_per_tib: int
    min_gib: int
    step_gib: int
    fine_max_gib: int

    @property
    def name(self) -> str:
        return f"managed-lustre-{self.throughput_mbps_per_tib}"


# Source: Managed Lustre "Performance tiers" (min capacity, max capacity, step size): 1000 MB/s/TiB min
# 9,000 step 9,000 up to 1,530,000 GiB (then 72,000); 500: 18,000 / 18,000 up to 3,060,000 (then 144,000);
# 250: 36,000 / 36,000 up to 6,120,000 (then 288,000); 125: 72,000 / 72,000 up to 12,240,000 (one step).
# The Dynamic tier (25 MB/s/TiB aggregate, min 472,000 GiB) is not modelled: its price was not confirmed.
LUSTRE_TIERS: dict[str, LustreTier] = {
    t.name: t
    for t in (
        LustreTier(1000, 9_000, 9_000, 1_530_000),
        LustreTier(500, 18_000, 18_000, 3_060_000),
        LustreTier(250, 36_000, 36_000, 6_120_000),
        LustreTier(125, 72_000, 72_000, 12_240_000),
    )
}


# --- Filestore (NFS), for clusters Managed Lustre's minimum would oversize ------------------------------
@dataclass(frozen=True)
class FilestoreTier:
    """One Filestore service tier as the neutral file-system keys see it: `api_tier` is the Filestore API's
    tier, capacity a multiple of `step_gib` from `min_gib` to `max_gib`, and performance fixed per TiB."""

    api_tier: str
    min_gib: int
    step_gib: int
    max_gib: int
    write_mbps_per_tib: int

    @property
    def name(self) -> str:
        return f"filestore-{self.api_tier.lower()}"


# Source: Filestore "Service tiers" (docs.cloud.google.com/filestore/docs/service-tiers): zonal 1 TiB to 9.75 TiB,
# up or down in 256 GiB units (10 to 100 TiB is a separate range in 2.5 TiB units, not modelled: an instance
# does not move between the ranges); "Performance" (/filestore/docs/performance): ZONAL at 1 TiB writes 88 MiB/s
# (92 MB/s) and reads 260 MiB/s, scaling linearly with capacity. Zonal takes a customer-managed key (kmsKeyName)
# and a private services access connection. Basic tiers are left out: no CMEK, and HDD writes 100 MiB/s whatever
# the size.
FILESTORE_TIERS: dict[str, FilestoreTier] = {
    t.name: t for t in (FilestoreTier("ZONAL", min_gib=1_024, step_gib=256, max_gib=9_984, write_mbps_per_tib=92),)
}
# A file share name: a letter, then letters, digits and '_', 16 characters at most (Filestore API FileShareConfig).
FILESTORE_SHARE = "shared"

# --- Regions ------------------------------------------------------------------------------------

# Compute Engine regions. Not every region has every machine type above or Managed Lustre.
REGIONS: tuple[str, ...] = (
    "africa-south1", "asia-east1", "asia-east2", "asia-northeast1", "asia-northeast2", "asia-northeast3",
    "asia-south1", "asia-south2", "asia-southeast1", "asia-southeast2", "asia-southeast3",
    "australia-southeast1", "australia-southeast2", "europe-central2", "europe-north1", "europe-north2",
    "europe-southwest1", "europe-west1", "europe-west10", "europe-west12", "europe-west2", "europe-west3",
    "europe-west4", "europe-west6", "europe-west8", "europe-west9", "me-central1", "me-central2", "me-west1",
    "northamerica-northeast1", "northamerica-northeast2", "northamerica-south1", "southamerica-east1",
    "southamerica-west1", "us-central1", "us-east1", "us-east4", "us-east5", "us-south1", "us-west1",
    "us-west2", "us-west3", "us-west4",
)  # fmt: skip


# --- Every NIC of a training node -------------------------------------------------------------------


@dataclass(frozen=True)
class NicLayout:
    """The networks one VM of a machine type attaches, as Cluster Toolkit's blueprints build them.

    `gvnic_networks` VPCs with one gVNIC each (the first is the system network: Slurm, Lustre, Cloud
    Storage, always at the maximum MTU 8896; the others at `gvnic_mtu`); `rdma_subnets` MRDMA NICs in ONE RoCE VPC made from the zone's RoCE network
    profile, at `rdma_mtu` (0: no RoCE VPC). `boot_disk_type`: A3 Ultra and A4 boot from Hyperdisk only."""

    gvnic_networks: int
    gvnic_mtu: int
    rdma_subnets: int = 0
    rdma_mtu: int = 0
    boot_disk_type: str = "pd-ssd"

    @property
    def nics(self) -> int:
        return self.gvnic_networks + self.rdma_subnets


# Sources: cluster-toolkit examples/machine-learning/a3-highgpu-8g (multivpc network_count 4, MTU 8244,
# GPUDirect-TCPX), a3-megagpu-8g (network_count 8, MTU 8244, TCPXO), a3-ultragpu-8g and a4-highgpu-8g
# (net-0 and net-1 gVNIC at MTU 8896 + gpu-rdma-vpc with 8 subnets, nic_type MRDMA, MTU 8896, profile
# "<zone>-vpc-roce"; boot disk hyperdisk-balanced). A2 and G2 attach the system network only.
NIC_LAYOUTS: dict[str, NicLayout] = {
    "gpudirect-tcpx": NicLayout(gvnic_networks=1 + 4, gvnic_mtu=8244),
    "gpudirect-tcpxo": NicLayout(gvnic_networks=1 + 8, gvnic_mtu=8244),
    "rdma": NicLayout(
        gvnic_networks=2, gvnic_mtu=8896, rdma_subnets=8, rdma_mtu=8896, boot_disk_type="hyperdisk-balanced"
    ),
    "none": NicLayout(gvnic_networks=1, gvnic_mtu=8896),
}


@dataclass(frozen=True)
class GpuDirectSoftware:
    """What GPUDirect-TCPXO runs beside the NICs, pinned (components/gcp/gpudirect.py installs it)."""

    machine_type: str
    nccl_plugin_image: str  # the NCCL net plugin and its NCCL build (`install --install-nccl`)
    rxdm_image: str  # the receive-datapath manager the plugin talks to; the two are released as a pair
    registry_host: str
    helper_module: str  # the dma-buf import helper kernel module RxDM maps GPU memory with
    helper_package: str  # its DKMS package
    helper_version: str  # its DKMS module version (/usr/src/<package>-<version>)
    helper_repository: str  # the apt source (Artifact Registry, ar+https transport)
    aperture_pci_vendor: str  # the GPU NICs' aperture devices, exposed under aperture_dir for the plugin
    aperture_pci_device: str
    aperture_dir: str
    host_nic: str  # Ubuntu's names for the control NIC and the 8 GPU NICs (PCI-path naming)
    gpu_nics: tuple[str, ...]


# Sources (read 2026-12-05): slurm-gcp tools/prologs-epilogs/receive-data-path-manager-mega @13fd92b (commit
# f10bb0e9, 2026-07-20: the plugin v1.0.17 / RxDM v1.0.23 pair, `--num_hops=2 --num_nics=8`, /dev/aperture_devices),
# which Cluster Toolkit's a3mega-slurm-blueprint.yaml @1047080 links as its RxDM prolog; the same blueprint's
# install_dmabuf.yml (dmabuf-import-helper 1.1 from the gce-ai-infra gpudirect-tcpxo-apt repository, patched for
# kernels >= 6.13) and aperture_devices.yml (PCI 1ae0:0084); its nccl-tests/run-nccl-tests.sh (Ubuntu's NIC names:
# control enp0s12, GPU NICs enp6s0 ... enp142s0); cloud.google.com/compute/docs/gpus/gpudirect.
GPUDIRECT_TCPXO = GpuDirectSoftware(
    machine_type="a3-megagpu-8g",
    nccl_plugin_image="us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.17",
    rxdm_image="us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.23",
    registry_host="us-docker.pkg.dev",
    helper_module="import-helper",
    helper_package="dmabuf-import-helper",
    helper_version="1.1",
    helper_repository="ar+https://us-apt.pkg.dev/projects/gce-ai-infra gpudirect-tcpxo-apt main",
    aperture_pci_vendor="0x1ae0",
    aperture_pci_device="0x0084",
    aperture_dir="/dev/aperture_devices",
    host_nic="enp0s12",
    gpu_nics=("enp6s0", "enp7s0", "enp13s0", "enp14s0", "enp134s0", "enp135s0", "enp141s0", "enp142s0"),
)


@dataclass(frozen=True)
class GibSoftware:
    """Google's NCCL build with its gIB net plugin, for every RDMA (RoCE) machine type (A3 Ultra, A4), pinned
    (components/gcp/gpudirect.py installs it and hands its settings to jobs)."""

    plugin_package: str  # nccl-gib: the plugin, Google's NCCL, and the settings script under /usr/local/gib
    plugin_version: str
    plugin_repository: str  # the apt source (Artifact Registry, ar+https transport)
    repository_key_url: str  # the key that signs it
    nccl_version: str  # libnccl2 held at the version the plugin was released with
    cuda_keyring_url: str  # NVIDIA's CUDA apt repository, which carries libnccl2
    environment_script: str  # Google's script that sets NCCL's variables for the machine type
    library_path: str
    socket_nics: tuple[str, ...]  # Ubuntu's names for the two gVNICs NCCL bootstraps over


# Sources (read 2026-12-05): Cluster Toolkit @1047080 examples/machine-learning/a3-ultragpu-8g/
# a3ultra-slurm-blueprint.yaml and a4-highgpu-8g/a4high-slurm-blueprint.yaml (nccl_gib_version 1.1.0, libnccl_version
# 2.27.5-1+cuda12.9, `deb ar+https://us-apt.pkg.dev/projects/gce-ai-infra gpudirect-gib-apt main` signed by
# us-apt.pkg.dev/doc/repo-signing-key.gpg, both held; /etc/profile.d sources /usr/local/gib/scripts/set_nccl_env.sh
# and prepends /usr/local/gib/lib64), their nccl-tests scripts (NCCL_NET=gIB, NCCL_SOCKET_IFNAME=enp0s19,enp192s20);
# Google's "NCCL/gIB release notes (x86)" (docs.cloud.google.com/ai-hypercomputer/docs/nccl/release-notes-x86).
GPUDIRECT_GIB = GibSoftware(
    plugin_package="nccl-gib",
    plugin_version="1.1.0",
    plugin_repository="ar+https://us-apt.pkg.dev/projects/gce-ai-infra gpudirect-gib-apt main",
    repository_key_url="https://us-apt.pkg.dev/doc/repo-signing-key.gpg",
    nccl_version="2.27.5-1+cuda12.9",
    cuda_keyring_url="https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/cuda-keyring_1.1-1_all.deb",
    environment_script="/usr/local/gib/scripts/set_nccl_env.sh",
    library_path="/usr/local/gib/lib64",
    socket_nics=("enp0s19", "enp192s20"),
)


def nic_layout(machine_type: str) -> NicLayout:
    """The NICs of `machine_type` (a catalog type: the rules refuse others first)."""
    itype = ACCELERATED_INSTANCES[machine_type]
    return NIC_LAYOUTS[itype.fabric or "none"]


# Workload policies (HIGH_THROUGHPUT) place a MIG's A4, A3 Ultra, A3 Mega and A3 High (8 GPU) VMs densely,
# for Spot and reservation-bound capacity (and flex-start on A4 / A3 Ultra); on-demand capacity is not listed
# (docs.cloud.google.com/ai-hypercomputer/docs/placement-policy-and-workload-policy, comparison table).
WORKLOAD_POLICY_TYPES = frozenset({"a4-highgpu-8g", "a3-ultragpu-8g", "a3-megagpu-8g", "a3-highgpu-8g"})

# Cloud Storage bucket names: 3-63 lowercase letters, digits, '-', '_' and '.', starting and ending with a
# letter or digit (cloud.google.com/storage/docs/buckets#naming; dotted names up to 222 are domain-verified
# only, not accepted here).
BUCKET_NAME = r"[a-z0-9][a-z0-9_.-]{1,61}[a-z0-9]"
# Compute Engine machine type names ("n2-standard-8", "c3-standard-22"): family-kind-size.
MACHINE_TYPE_NAME = r"[a-z][a-z0-9]*-[a-z]+(-[a-z0-9]+)*"
# A reservation the nodes consume: its name, or projects/<p>/reservations/<name> for a shared one
# (cloud.google.com/compute/docs/instances/reservations-consume#consuming_a_specific_shared_reservation).
RESERVATION_NAME = r"(projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/reservations/)?[a-z]([-a-z0-9]{0,61}[a-z0-9])?"
# Private services access range for Managed Lustre: Google's example allocates a /20
# (cloud.google.com/managed-lustre/docs/vpc: `gcloud compute addresses create ... --prefix-length=20`).
LUSTRE_PEERING_PREFIX = 20
# Subnets reserve 4 addresses each (cloud.google.com/vpc/docs/subnets#unusable-ip-addresses-in-every-subnet).
SUBNET_RESERVED_ADDRESSES = 4

# --- Dynamic Workload Scheduler flex-start ------------------------------------------------------------
# Flex-start VMs run for the duration their request names, 10 minutes to seven days, then are deleted; a MIG
# takes them through a resize request (compute.ResizeRequest `requestedRunDuration`;
# cloud.google.com/compute/docs/instance-groups/about-resize-requests-mig). Cluster Director's consumption
# table says the same ("7 days maximum").
FLEX_START_MAX_HOURS = 7 * 24

# --- Cluster Director (managed Slurm: hypercomputecluster.Cluster) -----------------------------------
# Source: docs.cloud.google.com/cluster-director/docs/choose-consumption-option, comparison table: GPU partitions
# run A4, A3 Ultra or A3 Mega (A4X too, not in this catalog) from reservations (blocks or calendar mode),
# flex-start or Spot; on-demand capacity is for N2 only. /cluster-director/docs/compute: login nodes are N2
# standard with 32 vCPUs or fewer.
CLUSTER_DIRECTOR_GPU_TYPES = frozenset({"a4-highgpu-8g", "a3-ultragpu-8g", "a3-megagpu-8g"})
CLUSTER_DIRECTOR_LOGIN_TYPE = r"n2-standard-(2|4|8|16|32)"
# The cluster id: a lowercase letter, then lowercase letters and digits, 10 characters at most; node set and
# partition ids are RFC 1034 labels (magic-modules mmv1/products/hypercomputecluster/Cluster.yaml).
CLUSTER_DIRECTOR_ID_CHARS = 10
RFC1034_LABEL = r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?"


# Compute Engine custom metadata: one value at most 256 KB, all entries together at most 512 KB
# (cloud.google.com/compute/docs/metadata/setting-custom-metadata#limitations). A machine's boot document is one
# value (user-data); the Slurm head carries a second (its Slurm configuration), so the total counts too.
METADATA_VALUE_MAX_BYTES = 256 * 1024
METADATA_TOTAL_MAX_BYTES = 512 * 1024

# How long a new IAM binding may take to be honoured: changes to allow policies "typically propagate in 2 minutes,
# but could potentially take 7 minutes or longer" (cloud.google.com/iam/docs/access-change-propagation). A resource
# whose creation a service agent's fresh grant decides (a bucket, disk, topic or file system naming a key the agent
# was just granted; Managed Lustre's import reading the dataset bucket) waits the documented 7 minutes after it
# (components/propagation.py).
IAM_PROPAGATION_SECONDS = 7 * 60
