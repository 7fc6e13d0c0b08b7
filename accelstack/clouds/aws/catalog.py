"""AWS constraint tables. Checked 2026-12-02 against the AWS documentation named beside each table.

Data only: the rules that read these tables live in `accelstack.clouds.aws.rules`. When AWS changes a
limit, change the table (and its date), not the rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from accelstack.clouds.base import InstanceType
from accelstack.spec import text_grammar

CHECKED = "2026-12-02"


# --- EC2 accelerated instances ------------------------------------------------------------------


# EC2 fabric bandwidth, Gb/s per instance (EC2 accelerated computing specifications: "EFA network bandwidth").
_EFA_GBPS = {
    "p6-b200": 3200,
    "p5en": 3200,
    "p5e": 3200,
    "p5": 3200,
    "p4de": 400,
    "p4d": 400,
    "trn1": 800,
    "trn1n": 1600,
}


def _ec2(
    name: str,
    accelerator: str,
    accelerators: int,
    accelerator_memory_gib: int,
    efa_interfaces: int,
    vcpus: int,
    memory_gib: int,
    *,
    network_cards: int = 1,
    capacity_blocks: bool = False,
    vendor: str = "nvidia",
) -> InstanceType:
    """One EC2 row in the neutral shape: EFA is the fabric (one EFA device per network card that takes one)."""
    return InstanceType(
        name,
        accelerator,
        accelerators,
        accelerator_memory_gib,
        vcpus,
        memory_gib,
        fabric="efa" if efa_interfaces else None,
        fabric_interfaces=efa_interfaces,
        fabric_gbps=_EFA_GBPS.get(name.split(".", 1)[0], 0) if efa_interfaces else 0,
        network_cards=network_cards,
        time_boxed_reservation=capacity_blocks,
        vendor=vendor,
    )


def _sizes(
    family: str,
    accelerator: str,
    memory_per_accelerator: int,
    rows: tuple[tuple[str, int, int, int, int], ...],
    vendor: str = "nvidia",
) -> tuple[InstanceType, ...]:
    """(size, accelerators, vcpus, memory GiB, EFA interfaces) rows of one single-network-card family."""
    return tuple(
        _ec2(f"{family}.{size}", accelerator, count, memory_per_accelerator, efa, vcpus, mem, vendor=vendor)
        for size, count, vcpus, mem, efa in rows
    )


# Sources: "Amazon EC2 instance types - Accelerated computing" specifications (GPU count and memory,
# vCPU, memory, network cards), EFA user guide "Supported instance types" and "Maximize network
# bandwidth on instances with multiple network cards" (one EFA per network card: p5/p5e 32, p5en 16,
# p6-b200 8, p4d/p4de 4, trn1 8, trn1n 16), and the Capacity Blocks for ML "Supported instance types"
# list (p4d, p4de, p5, p5e, p5en, p6-b200, trn1.32xlarge). g5/g6/g6e: EFA on 8xlarge and larger,
# one network card; the 1-GPU sizes below 8xlarge have no EFA.
_G_ROWS = (
    # size, accelerators, vcpus, memory GiB (g5/g6), EFA
    ("xlarge", 1, 4, 16, 0),
    ("2xlarge", 1, 8, 32, 0),
    ("4xlarge", 1, 16, 64, 0),
    ("8xlarge", 1, 32, 128, 1),
    ("12xlarge", 4, 48, 192, 1),
    ("16xlarge", 1, 64, 256, 1),
    ("24xlarge", 4, 96, 384, 1),
    ("48xlarge", 8, 192, 768, 1),
)
# g6e has twice the host memory of g5/g6 at every size.
_G6E_ROWS = tuple((size, gpus, vcpus, mem * 2, efa) for size, gpus, vcpus, mem, efa in _G_ROWS)

ACCELERATED_INSTANCES: dict[str, InstanceType] = {
    i.name: i
    for i in (
        # NVIDIA Blackwell / Hopper / Ampere training instances (multi-card EFA).
        _ec2("p6-b200.48xlarge", "B200", 8, 179, 8, 192, 2048, network_cards=8, capacity_blocks=True),
        _ec2("p5en.48xlarge", "H200", 8, 141, 16, 192, 2048, network_cards=16, capacity_blocks=True),
        _ec2("p5e.48xlarge", "H200", 8, 141, 32, 192, 2048, network_cards=32, capacity_blocks=True),
        _ec2("p5.48xlarge", "H100", 8, 80, 32, 192, 2048, network_cards=32, capacity_blocks=True),
        _ec2("p4de.24xlarge", "A100", 8, 80, 4, 96, 1152, network_cards=4, capacity_blocks=True),
        _ec2("p4d.24xlarge", "A100", 8, 40, 4, 96, 1152, network_cards=4, capacity_blocks=True),
        # AWS Trainium.
        _ec2("trn1.2xlarge", "Trainium", 1, 32, 0, 8, 32, vendor="aws-trainium"),
        _ec2(
            "trn1.32xlarge",
            "Trainium",
            16,
            32,
            8,
            128,
            512,
            network_cards=8,
            capacity_blocks=True,
            vendor="aws-trainium",
        ),
        _ec2("trn1n.32xlarge", "Trainium", 16, 32, 16, 128, 512, network_cards=16, vendor="aws-trainium"),
        # AWS Inferentia2 (serving; no EFA).
        _ec2("inf2.xlarge", "Inferentia2", 1, 32, 0, 4, 16, vendor="aws-inferentia"),
        _ec2("inf2.8xlarge", "Inferentia2", 1, 32, 0, 32, 128, vendor="aws-inferentia"),
        _ec2("inf2.24xlarge", "Inferentia2", 6, 32, 0, 96, 384, vendor="aws-inferentia"),
        _ec2("inf2.48xlarge", "Inferentia2", 12, 32, 0, 192, 768, vendor="aws-inferentia"),
        # NVIDIA A10G / L4 / L40S (serving and small fine-tuning).
        *_sizes("g5", "A10G", 24, _G_ROWS),
        *_sizes("g6", "L4", 24, _G_ROWS),
        *_sizes("g6e", "L40S", 48, _G6E_ROWS),
    )
}

# Families where on-demand capacity for more than a handful of instances is rarely available without
# a reservation (AWS steers these to Capacity Blocks / ODCRs).
SCARCE_FAMILIES = ("p5", "p5e", "p5en", "p6-b200")
SCARCE_ON_DEMAND_COUNT = 16  # at or above this many on-demand instances, warn


# --- EC2 Capacity Blocks for ML -----------------------------------------------------------------

# Source: EC2 User Guide "Capacity Blocks for ML" (instance count 1 to 64 per block; the block is
# delivered as a capacity reservation whose id is `cr-` + 17 hex digits) and API_CapacityReservation.
CAPACITY_BLOCK_MIN_INSTANCES = 1
CAPACITY_BLOCK_MAX_INSTANCES = 64
CAPACITY_RESERVATION_ID = re.compile(r"^cr-[0-9a-f]{17}$")
# Source: EC2 API Reference "Resource IDs": a prefix and 8 (older) or 17 hexadecimal characters.
VPC_ID = re.compile(r"^vpc-(?:[0-9a-f]{8}|[0-9a-f]{17})$")
SUBNET_ID = re.compile(r"^subnet-(?:[0-9a-f]{8}|[0-9a-f]{17})$")
CAPACITY_BLOCK_INSTANCES = tuple(name for name, itype in ACCELERATED_INSTANCES.items() if itype.time_boxed_reservation)


# --- FSx for Lustre -----------------------------------------------------------------------------


@dataclass(frozen=True)
class LustreDeploymentType:
    name: str
    # StorageCapacity: `first_steps` are allowed as-is; above them, multiples of `increment_gib`.
    first_steps_gib: tuple[int, ...]
    increment_gib: int
    throughput_tiers: tuple[int, ...]  # PerUnitStorageThroughput MB/s/TiB; () = not settable
    data_repository_associations: bool  # CreateDataRepositoryAssociation (link S3 to a directory)
    legacy_import_path: bool  # CreateFileSystem ImportPath (links S3 at the file system root only)
    persistent: bool  # data replicated and file servers replaced on failure

    def capacity_allowed(self, gib: int) -> bool:
        return gib in self.first_steps_gib or (gib > 0 and gib % self.increment_gib == 0)

    def capacity_rule(self) -> str:
        steps = ", ".join(str(s) for s in self.first_steps_gib)
        return f"{steps} or a multiple of {self.increment_gib} GiB"


# Sources: FSx API Reference CreateFileSystem `StorageCapacity` (SCRATCH_1: 1200, 2400, then
# increments of 3600 GiB; SCRATCH_2, PERSISTENT_1 and PERSISTENT_2 on SSD: 1200 GiB, then increments
# of 2400 GiB) and `PerUnitStorageThroughput` (PERSISTENT_1 SSD: 50, 100, 200; PERSISTENT_2 SSD: 125,
# 250, 500, 1000; not accepted for scratch); FSx for Lustre User Guide "Linking your file system to
# an Amazon S3 bucket" (DRAs on every 2.12/2.15 file system except SCRATCH_1) and CreateFileSystem
# `ImportPath` (not supported for PERSISTENT_2). Only the SSD storage type is modelled.
LUSTRE_DEPLOYMENT_TYPES: dict[str, LustreDeploymentType] = {
    d.name: d
    for d in (
        LustreDeploymentType("SCRATCH_1", (1200, 2400), 3600, (), False, True, False),
        LustreDeploymentType("SCRATCH_2", (1200,), 2400, (), True, True, False),
        LustreDeploymentType("PERSISTENT_1", (1200,), 2400, (50, 100, 200), True, True, True),
        LustreDeploymentType("PERSISTENT_2", (1200,), 2400, (125, 250, 500, 1000), True, False, True),
    )
}
# Source: FSx for Lustre User Guide "Performance": scratch file systems have a fixed baseline of 200 MB/s
# per TiB of storage (PerUnitStorageThroughput is not settable on them).
SCRATCH_BASELINE_MBPS_PER_TIB = 200
# Source: FSx for Lustre User Guide "Service quotas": default total Lustre storage per account and
# Region. It is a soft quota (raise it in Service Quotas), so exceeding it is a warning.
LUSTRE_DEFAULT_QUOTA_GIB = 100_800
# Deployment types on which accelstack links the checkpoints directory to its bucket (a data repository
# association with automatic export; accelstack.components.aws.storage.DRA_DEPLOYMENT_TYPES, kept equal by a test).
CHECKPOINT_EXPORT_DEPLOYMENT_TYPES = ("PERSISTENT_2",)


# --- S3 -----------------------------------------------------------------------------------------

# Source: S3 User Guide "General purpose bucket naming rules".
S3_BUCKET_MIN_LENGTH = 3
S3_BUCKET_MAX_LENGTH = 63
S3_BUCKET_CHARS = re.compile(r"^[a-z0-9][a-z0-9.-]*[a-z0-9]$")
S3_BUCKET_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
S3_BUCKET_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")
IPV4_LIKE = re.compile(r"^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$")


# --- Accounts, Regions, IAM ---------------------------------------------------------------------

# Source: AWS Account Management reference "View account identifiers" (12 digits).
ACCOUNT_ID = re.compile(r"^\d{12}$")

# Source: AWS General Reference "AWS Regions" / `aws ec2 describe-regions --all-regions`.
REGION_NAME = re.compile(r"^[a-z]{2,4}(-[a-z]+)+-\d{1,2}$")
REGIONS: dict[str, str] = {  # region -> ARN partition
    **{
        r: "aws"
        for r in (
            "us-east-1", "us-east-2", "us-west-1", "us-west-2",
            "af-south-1",
            "ap-east-1", "ap-east-2", "ap-south-1", "ap-south-2",
            "ap-northeast-1", "ap-northeast-2", "ap-northeast-3",
            "ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4",
            "ap-southeast-5", "ap-southeast-6", "ap-southeast-7",
            "ca-central-1", "ca-west-1",
            "eu-central-1", "eu-central-2", "eu-west-1", "eu-west-2", "eu-west-3",
            "eu-south-1", "eu-south-2", "eu-north-1",
            "il-central-1", "me-south-1", "me-central-1", "mx-central-1", "sa-east-1",
        )
    },
    "cn-north-1": "aws-cn",
    "cn-northwest-1": "aws-cn",
    "us-gov-east-1": "aws-us-gov",
    "us-gov-west-1": "aws-us-gov",
}  # fmt: skip

# Source: IAM User Guide "IAM identifiers" (ARN format) and "IAM and AWS STS quotas" (role names are
# 1-64 of [A-Za-z0-9+=,.@_-]; paths are / or /segment/.../): the spec's grammar (accelstack.spec.text_grammar).
IAM_ROLE_ARN = text_grammar.IAM_ROLE_ARN


# --- VPC ----------------------------------------------------------------------------------------

# The training network carves one large private cluster subnet plus small public/endpoint subnets
# out of vpcCidr; below /22 there is no room for them (AWS reserves 5 addresses per subnet too).
VPC_MAX_PREFIX = 22

# EC2 User Guide, "Run commands when you launch an EC2 instance with user data input": "User data is limited
# to 16 KB, in raw form, before it is base64-encoded". The Slurm nodes and the serving replicas both meet it.
EC2_USER_DATA_MAX_BYTES = 16 * 1024
# Systems Manager User Guide, "Managing parameter tiers": a standard parameter's value holds up to 4 KB, an
# advanced one's up to 8 KB. The Slurm head's configuration files travel in one (Intelligent-Tiering).
SSM_PARAMETER_MAX_BYTES = 8 * 1024
