"""Oracle Cloud constraint tables (pure data). Checked 2026-12-05 against the sources named beside each table.

Left out because the sources at hand did not confirm them (add a row once a source does): the GB200 / GB300
shapes (GPU memory clusters, `core.ComputeGpuMemoryCluster`, whose fabric must live in the root compartment),
the A100 and L40S shapes, and which availability domain of a region holds each shape (OCI answers that per
tenancy: `oci limits resource-availability get`), so `offers` is not tracked.
"""

from __future__ import annotations

from accelstack.clouds.base import InstanceType

CHECKED = "2026-12-05"

SOURCES = (
    "Oracle, Compute shapes: Bare metal GPU shapes (docs.oracle.com/iaas/Content/Compute/References/"
    "computeshapes.htm#bm-gpu): OCPUs, memory, GPUs and RDMA network per BM.GPU.H100.8 / H200.8 / B200.8 / MI300X.8",
    "oracle-quickstart/oci-hpc schema.yaml and cluster-network-configuration.tf: the cluster-network shapes, the "
    "agent plugins 'Compute HPC RDMA Authentication' and 'Compute HPC RDMA Auto-Configuration', one instance pool "
    "per cluster network, Lustre minimum 31200 GB",
    "Oracle, File Storage with Lustre: file system capacity (docs.oracle.com/iaas/Content/lustre/"
    "file-system-capacity.htm): 31.2 TB minimum, +10.4 TB up to 124.8 TB, then +41.6 TB; capacity only grows",
    "pulumi-oci 5.5.0 lustre.FileStorageLustreFileSystem (performance_tier MBPS_PER_TB_125/250/500/1000, "
    "capacity_in_gbs) and lustre.FileStorageObjectStorageLink (import/export triggers)",
    "Oracle, Regions and availability domains (docs.oracle.com/iaas/Content/General/Concepts/regions.htm)",
    "Oracle, Service limits: compute GPU limits per availability domain (gpu-h100-count, gpu-b200-count)",
)


def _bm(name: str, accelerator: str, gib: int, ocpus: int, memory_gb: int, rdma_nics: int, vendor: str = "nvidia"):
    """One bare-metal GPU shape: 8 GPUs, 2 vCPUs per OCPU (x86), `rdma_nics` RoCE NICs at 3,200 Gb/s in all."""
    return InstanceType(
        name,
        accelerator,
        8,
        gib,
        2 * ocpus,
        memory_gb,
        fabric="roce",
        fabric_interfaces=rdma_nics,
        fabric_gbps=3200,
        network_cards=rdma_nics + 1,  # the RDMA NICs plus the front-end VNIC
        vendor=vendor,
    )


# Oracle's bare-metal GPU table: H100 8 x 80 GB, 112 OCPUs, 2 TB, 16 x 200 Gb/s RDMA; H200 8 x 141 GB, 112 OCPUs,
# 3 TB, 8 x 400 Gb/s; B200 8 x 180 GB, 128 OCPUs, 4 TB, 8 x 400 Gb/s; MI300X 8 x 192 GB, 112 OCPUs, 2 TB,
# 8 x 400 Gb/s. Every one is sold in cluster networks (RoCE v2), on-demand or from a capacity reservation.
ACCELERATED_INSTANCES: dict[str, InstanceType] = {
    i.name: i
    for i in (
        _bm("BM.GPU.H100.8", "H100", 80, 112, 2048, 16),
        _bm("BM.GPU.H200.8", "H200", 141, 112, 3072, 8),
        _bm("BM.GPU.B200.8", "B200", 180, 128, 4096, 8),
        _bm("BM.GPU.MI300X.8", "MI300X", 192, 112, 2048, 8, vendor="amd"),
    )
}

# The Slurm head: a flexible E5 VM; a Flex shape takes its OCPUs and memory in `shape_config`
# (docs.oracle.com/iaas/Content/Compute/References/computeshapes.htm#flexible).
HEAD_SHAPE = "VM.Standard.E5.Flex"
HEAD_SHAPES: dict[str, tuple[int, int]] = {HEAD_SHAPE: (4, 32)}  # shape -> (OCPUs = 8 vCPUs, memory GB)

# Commercial regions (oc1 realm) with bare-metal GPU capacity listed by Oracle's GPU pages; the identifiers are
# the ones `oci iam region list` prints.
REGIONS = (
    "us-ashburn-1",
    "us-chicago-1",
    "us-phoenix-1",
    "us-sanjose-1",
    "ca-toronto-1",
    "eu-frankfurt-1",
    "eu-amsterdam-1",
    "uk-london-1",
    "ap-osaka-1",
    "ap-tokyo-1",
    "ap-sydney-1",
    "ap-mumbai-1",
    "sa-saopaulo-1",
    "me-jeddah-1",
)

# Each region's key (Regions and Availability Domains, docs.oracle.com/iaas/Content/General/Concepts/regions.htm;
# `oci iam region list` prints it): a regional OCID names its region by the key in lowercase (ocid1.image.oc1.iad...)
# or, for newer regions, by the identifier itself.
REGION_KEYS = {
    "us-ashburn-1": "iad",
    "us-chicago-1": "ord",
    "us-phoenix-1": "phx",
    "us-sanjose-1": "sjc",
    "ca-toronto-1": "yyz",
    "eu-frankfurt-1": "fra",
    "eu-amsterdam-1": "ams",
    "uk-london-1": "lhr",
    "ap-osaka-1": "kix",
    "ap-tokyo-1": "nrt",
    "ap-sydney-1": "syd",
    "ap-mumbai-1": "bom",
    "sa-saopaulo-1": "gru",
    "me-jeddah-1": "jed",
}

# How many availability domains each region has, 2026-12-06: Oracle's regions table, "Availability Domains"
# column (docs.oracle.com/iaas/Content/General/Concepts/regions.htm: "A region is composed of one or more
# availability domains"; "we've chosen to launch regions in new geographies with one availability domain"). The
# stored copy of that page at hand ends before the table, so the threes are corroborated by tenancies' own domain
# names in public code (PHX-AD-3, US-CHICAGO-1-AD-3, EU-FRANKFURT-1-AD-3), the ones by the page's rule for new
# regions. The landing packs need the count: Oracle documents no rule for how a region-wide `zero` and an
# AD-scoped `set` of the same quota combine (quota_policy_syntax.htm, sample_quotas.htm), so a cap in one domain is
# proven only by a zero in each other domain of the region (policies/separation/landing_oci.py); a region missing
# here fails closed there, and a tenancy listing other domains fails the landing preview (landing_quotas.py).
AVAILABILITY_DOMAINS: dict[str, int] = {
    "us-ashburn-1": 3,
    "us-chicago-1": 3,
    "us-phoenix-1": 3,
    "us-sanjose-1": 1,
    "ca-toronto-1": 1,
    "eu-frankfurt-1": 3,
    "eu-amsterdam-1": 1,
    "uk-london-1": 3,
    "ap-osaka-1": 1,
    "ap-tokyo-1": 1,
    "ap-sydney-1": 1,
    "ap-mumbai-1": 1,
    "sa-saopaulo-1": 1,
    "me-jeddah-1": 1,
}
# How a domain's name spells its region, after the tenancy's prefix ("Uocm:US-ASHBURN-AD-1"): the first regions
# kept older spellings (PHX-AD-1, US-ASHBURN-AD-1); the others spell the region identifier (EU-FRANKFURT-1-AD-1),
# as ListAvailabilityDomains answers in those regions.
DOMAIN_LABELS: dict[str, str] = {"us-ashburn-1": "US-ASHBURN", "us-phoenix-1": "PHX"}


def domain_labels(region: str) -> list[str]:
    """The region's availability domains as their names end (no tenancy prefix), in number order; KeyError for a
    region the catalog does not list."""
    label = DOMAIN_LABELS.get(region, region.upper())
    return [f"{label}-AD-{n}" for n in range(1, AVAILABILITY_DOMAINS[region] + 1)]


# --- File Storage with Lustre -----------------------------------------------------------------------------------

# OCI sells Lustre in decimal GB (capacity_in_gbs): 31,200 GB, then +10,400 GB up to 124,800 GB, then +41,600 GB.
LUSTRE_MIN_GB = 31_200
LUSTRE_FINE_STEP_GB = 10_400
LUSTRE_FINE_MAX_GB = 124_800
LUSTRE_COARSE_STEP_GB = 41_600
# accelstack's table stops after 20 coarse steps (956,800 GB); a larger file system is a limit increase
# (a service request) that this table does not assume.
LUSTRE_COARSE_STEPS = 20
BYTES_PER_GB = 10**9
BYTES_PER_GIB = 2**30

LUSTRE_STEPS_GB: tuple[int, ...] = (
    *range(LUSTRE_MIN_GB, LUSTRE_FINE_MAX_GB + 1, LUSTRE_FINE_STEP_GB),
    *(LUSTRE_FINE_MAX_GB + LUSTRE_COARSE_STEP_GB * k for k in range(1, LUSTRE_COARSE_STEPS + 1)),
)


def gib_of_gb(gb: int) -> int:
    """The whole GiB a step of `gb` GB holds (rounded down: the spec never asks for more than OCI sells)."""
    return gb * BYTES_PER_GB // BYTES_PER_GIB


def gb_for_gib(gib: int) -> int:
    """The OCI step (GB) holding exactly `gib` GiB as the spec states it: the one whose whole GiB it is.
    ValueError for a size that is no step's (the spec rules refuse it first, naming the steps)."""
    for gb in LUSTRE_STEPS_GB:
        if gib_of_gb(gb) == gib:
            return gb
    raise ValueError(f"{gib} GiB is not a File Storage with Lustre capacity step ({LUSTRE_STEPS_GB[0]} GB ...)")


# The spec's capacityGiB values: one per OCI step, each the step's whole GiB (31,200 GB = 29,057 GiB + 0.33 GiB).
LUSTRE_STEPS_GIB: tuple[int, ...] = tuple(gib_of_gb(gb) for gb in LUSTRE_STEPS_GB)

# performance_tier is MB/s per decimal TB; the planner counts MB/s per TiB: 1 TiB = 1.0995 TB, rounded down so the
# plan never promises more than the tier gives.
LUSTRE_TIER_MBPS_PER_TB = (125, 250, 500, 1000)


def mbps_per_tib(mbps_per_tb: int) -> int:
    return mbps_per_tb * BYTES_PER_GIB * 1024 // (BYTES_PER_GB * 1000)


def lustre_tier_name(mbps_per_tb: int) -> str:
    return f"MBPS_PER_TB_{mbps_per_tb}"  # the API's performance_tier value, as the spec names it


# The addresses a file system takes in its subnet: "43 to 60 IP addresses per 100TB, depending on the selected
# performance tier" (Oracle Architecture Center, "Deploy Lustre file systems", Configuring Lustre connectivity), the
# subnet having to hold them when the file system is created. Counted at the top of the range, by started 100 TB.
LUSTRE_ADDRESSES_PER_100_TB = (43, 60)


def lustre_addresses(capacity_gb: int) -> int:
    """The most addresses a file system of `capacity_gb` GB takes in its subnet (60 per 100 TB, rounded up)."""
    most = LUSTRE_ADDRESSES_PER_100_TB[1]
    return -(-capacity_gb * most // 100_000)


# The file system's name: at most 8 characters (`oci lfs file-system create --file-system-name`).
LUSTRE_NAME_MAX = 8

# --- What the components build, as the pure rules measure it -----------------------------------------------------

DEFAULT_VCN_CIDR = "10.60.0.0/16"
# The head's metadata key holding Slurm's configuration files (beside user_data; updated in place).
SLURM_CONFIG_METADATA_KEY = "accelstack_slurm_config"
# slurmctld's state volume at a consistent device path (paravirtualized: /dev/oracleoci/oraclevd[b-z],
# docs.oracle.com/iaas/Content/Block/References/consistentdevicepaths.htm).
STATE_DEVICE = "/dev/oracleoci/oraclevdb"

# "When you create a policy, make changes to an existing policy, or delete a policy, your changes go into effect
# typically within 10 seconds" (docs.oracle.com/iaas/Content/Identity/Tasks/managingpolicies.htm). No maximum is
# documented, so a resource whose creation a fresh service policy decides (File Storage with Lustre placing its servers
# under lustrefs's virtual-network-family grant) waits three times the typical figure (components/propagation.py).
IAM_PROPAGATION_SECONDS = 30
