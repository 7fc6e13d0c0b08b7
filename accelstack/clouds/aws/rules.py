"""AWS rules: what EC2, FSx, S3 and IAM would reject at create time, checked before anything exists.

One small function per rule; each docstring names the AWS documentation it mirrors. The limits
themselves are data in `accelstack.clouds.aws.catalog`. These rules run for aws stacks only: the AWS
registration names this module (`Cloud.rules`), so no rule asks which cloud a stack is on.
"""

from __future__ import annotations

import ipaddress
import posixpath
import re
from collections.abc import Iterator

from accelstack.clouds.aws import catalog as tables
from accelstack.spec.accounts import AwsAccount
from accelstack.spec.models import LustreSpec, StackSpec, TrainingStack
from accelstack.spec.problems import Level, Problem
from accelstack.spec.uris import object_uris
from accelstack.spec.validators import bucket_of, path_within, rule

# --- accounts, regions, IAM ---------------------------------------------------------------------


@rule
def deploy_role_arn(spec: StackSpec) -> Iterator[Problem]:
    """deployRole is an IAM role ARN (IAM User Guide, "IAM identifiers") in the stack's own account
    and the Region's partition; assuming a role elsewhere would deploy into the wrong account."""
    account = spec.account
    role = account.deploy_role if isinstance(account, AwsAccount) else None
    if role is None:
        return
    match = tables.IAM_ROLE_ARN.match(role)
    if match is None:
        yield Problem(
            "account.deployRole",
            f"{role!r} is not an IAM role ARN (arn:aws:iam::<12-digit account>:role/<name>)",
        )
        return
    if match["account"] != account.account_id:
        yield Problem(
            "account.deployRole",
            f"role is in account {match['account']}, but the stack deploys to account.id {account.account_id}",
        )
    partition = tables.REGIONS.get(spec.account.region)
    if partition and match["partition"] != partition:
        yield Problem(
            "account.deployRole",
            f"ARN partition {match['partition']!r} does not match {spec.account.region} (partition {partition!r})",
        )


# --- EC2 capacity, the head node ----------------------------------------------------------------


@rule(workload="training")
def capacity_block_reservation(spec: TrainingStack) -> Iterator[Problem]:
    """Reserved capacity is consumed through its capacity reservation id, `cr-` + 17 hex digits: a
    Capacity Block (EC2 User Guide, "Capacity Blocks for ML") or, with capacity: on-demand, an
    On-Demand Capacity Reservation ("Use Capacity Reservations"; launches target it by id). Spot
    Instances cannot launch into a capacity reservation."""
    nodes = spec.training.nodes
    if nodes.reservation_id is not None and not tables.CAPACITY_RESERVATION_ID.match(nodes.reservation_id):
        yield Problem(
            "training.nodes.reservationId",
            f"{nodes.reservation_id!r} is not a capacity reservation id (cr- followed by 17 hex digits, "
            "e.g. cr-0123456789abcdef0)",
        )
    if nodes.capacity == "capacity-block" and nodes.reservation_id is None:
        yield Problem(
            "training.nodes.reservationId",
            "capacity: capacity-block needs the Capacity Block's reservation id (cr-...)",
        )
    if nodes.capacity == "spot" and nodes.reservation_id is not None:
        yield Problem(
            "training.nodes.reservationId",
            "spot instances cannot launch into a capacity reservation; for an On-Demand Capacity Reservation "
            "set capacity: on-demand, for a Capacity Block capacity: capacity-block",
        )


@rule(workload="training")
def capacity_block_instance_type(spec: TrainingStack) -> Iterator[Problem]:
    """Capacity Blocks are sold for a fixed list of instance types (EC2 User Guide, "Capacity Blocks
    for ML", supported instance types)."""
    nodes = spec.training.nodes
    if (
        nodes.capacity == "capacity-block"
        and nodes.instance_type in tables.ACCELERATED_INSTANCES
        and nodes.instance_type not in tables.CAPACITY_BLOCK_INSTANCES
    ):
        yield Problem(
            "training.nodes.instanceType",
            f"{nodes.instance_type} is not offered as a Capacity Block; allowed: "
            f"{', '.join(tables.CAPACITY_BLOCK_INSTANCES)}",
        )


@rule(workload="training")
def capacity_block_count(spec: TrainingStack) -> Iterator[Problem]:
    """A Capacity Block holds 1 to 64 instances (EC2 User Guide, "Capacity Blocks for ML")."""
    nodes = spec.training.nodes
    if nodes.capacity == "capacity-block" and nodes.count > tables.CAPACITY_BLOCK_MAX_INSTANCES:
        yield Problem(
            "training.nodes.count",
            f"{nodes.count} is more than a Capacity Block holds; allowed: "
            f"{tables.CAPACITY_BLOCK_MIN_INSTANCES} to {tables.CAPACITY_BLOCK_MAX_INSTANCES}",
        )


@rule(workload="training")
def capacity_block_zone(spec: TrainingStack) -> Iterator[Problem]:
    """A Capacity Block or On-Demand Capacity Reservation is reserved in ONE Availability Zone and its
    instances launch only there (EC2 User Guide, "Capacity Blocks for ML", "Capacity Reservations");
    the cluster subnet must be in that zone, and a new VPC cannot guess it."""
    nodes, network = spec.training.nodes, spec.training.network
    reserved = nodes.capacity == "capacity-block" or nodes.reservation_id is not None
    if reserved and not network.existing and not network.availability_zone:
        kind = "Capacity Block" if nodes.capacity == "capacity-block" else "capacity reservation"
        yield Problem(
            "training.network.availabilityZone",
            f"a {kind} lives in one Availability Zone; name it here (see `aws ec2 "
            f"describe-capacity-reservations --capacity-reservation-ids {nodes.reservation_id or 'cr-...'}`); "
            "the cluster subnet is created in it",
        )


@rule(workload="training")
def managed_scheduler_is_not_spot(spec: TrainingStack) -> Iterator[Problem]:
    """AWS Batch (the managed scheduler on AWS): "Multi-node parallel jobs aren't supported on Spot Instances" (CreateComputeEnvironment)."""
    training = spec.training
    if training.scheduler.kind == "managed" and training.nodes.capacity == "spot":
        yield Problem(
            "training.nodes.capacity",
            "spot is not supported with training.scheduler.kind managed (AWS Batch multi-node parallel "
            "jobs cannot run on Spot); use on-demand or capacity-block, or scheduler kind slurm",
        )


@rule(workload="training")
def managed_scheduler_and_capacity_block(spec: TrainingStack) -> Iterator[Problem]:
    """AWS Batch ignores a launch template's instance market options (AWS Batch User Guide, "Use Amazon
    EC2 launch templates with AWS Batch": "Instance market options (AWS Batch must control Spot
    Instance configuration)"), so the capacity-block market type never reaches the instances and the
    jobs do not run in the purchased block. Whether Batch keeps the template's capacity reservation
    target for an On-Demand Capacity Reservation is not documented."""
    nodes = spec.training.nodes
    if spec.training.scheduler.kind != "managed":
        return
    if nodes.capacity == "capacity-block":
        yield Problem(
            "training.scheduler.kind",
            "managed (AWS Batch) cannot use capacity: capacity-block: Batch ignores the launch template's "
            "market options, so jobs would not run in the block; use scheduler kind slurm or none",
        )
    elif nodes.reservation_id is not None:
        yield Problem(
            "training.nodes.reservationId",
            "managed (AWS Batch) with an On-Demand Capacity Reservation is unverified: Batch may not keep the "
            "launch template's reservation target; check the compute environment's instances, or use scheduler "
            "kind slurm",
            Level.WARNING,
        )


@rule(workload="training")
def scarce_on_demand(spec: TrainingStack) -> Iterator[Problem]:
    """Large unreserved requests for the newest GPU families usually fail with
    InsufficientInstanceCapacity, on-demand and spot alike (spot draws on the same spare capacity,
    and one cluster placement group must fit every node); AWS sells them as Capacity Blocks (EC2 User
    Guide, "Capacity Blocks for ML") and On-Demand Capacity Reservations."""
    nodes = spec.training.nodes
    itype = tables.ACCELERATED_INSTANCES.get(nodes.instance_type)
    if (
        itype is not None
        and itype.family in tables.SCARCE_FAMILIES
        and nodes.capacity in ("on-demand", "spot")
        and nodes.reservation_id is None
        and nodes.count >= tables.SCARCE_ON_DEMAND_COUNT
    ):
        yield Problem(
            "training.nodes.count",
            f"{nodes.count} {nodes.capacity} {itype.name} without a capacity reservation: insufficient capacity is "
            "likely; consider capacity: capacity-block with a reservationId, or an On-Demand Capacity "
            "Reservation (capacity: on-demand with reservationId)",
            Level.WARNING,
        )


# EC2 instance type names: family (letters, digits, "-" options like p6-b200), ".", size.
INSTANCE_TYPE_NAME = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$")


@rule(workload="training")
def head_node_instance_type_format(spec: TrainingStack) -> Iterator[Problem]:
    """The Slurm head is a general-purpose instance (any type EC2 has); offline only its shape can be
    checked, which catches a missing size or a stray character before RunInstances does."""
    itype = spec.training.scheduler.head_node.instance_type
    if spec.training.scheduler.kind == "slurm" and not INSTANCE_TYPE_NAME.match(itype):
        yield Problem(
            "training.scheduler.headNode.instanceType",
            f"{itype!r} is not an EC2 instance type name (family.size, e.g. m7i.2xlarge)",
        )


# --- FSx for Lustre -----------------------------------------------------------------------------


def _lustre(spec: TrainingStack) -> tuple[LustreSpec, tables.LustreDeploymentType] | None:
    """The file system and its FSx deployment type (`lustre.tier`); an unknown tier is reported by
    accelstack.spec.validators.parallel_fs_tier_known."""
    lustre = spec.training.storage.lustre
    if lustre is None:
        return None
    kind = tables.LUSTRE_DEPLOYMENT_TYPES.get(lustre.tier or "")
    return (lustre, kind) if kind is not None else None


@rule(workload="training")
def lustre_within_default_quota(spec: TrainingStack) -> Iterator[Problem]:
    """FSx for Lustre's default storage quota per account and Region (Service Quotas); above it the
    create fails until an increase is granted."""
    found = _lustre(spec)
    if found is None:
        return
    lustre, kind = found
    if lustre.capacity_gib is None or not kind.capacity_allowed(lustre.capacity_gib):
        return  # derived by the planner, or reported by parallel_fs_capacity_step
    if lustre.capacity_gib > tables.LUSTRE_DEFAULT_QUOTA_GIB:
        yield Problem(
            "training.storage.lustre.capacityGiB",
            f"{lustre.capacity_gib} GiB is above the default FSx for Lustre storage quota "
            f"({tables.LUSTRE_DEFAULT_QUOTA_GIB} GiB per account and Region); request an increase first",
            Level.WARNING,
        )


@rule(workload="training")
def lustre_dataset_link(spec: TrainingStack) -> Iterator[Problem]:
    """Linking S3 to a directory needs a data repository association, which SCRATCH_1 lacks; it can
    only import at the file system root (FSx for Lustre User Guide, "Linking your file system to an
    Amazon S3 bucket")."""
    found = _lustre(spec)
    if found is None:
        return
    lustre, kind = found
    if not kind.data_repository_associations and lustre.import_path.rstrip("/") != "":
        yield Problem(
            "training.storage.lustre.importPath",
            f"{kind.name} cannot link the dataset bucket to {lustre.import_path} (no data repository "
            "associations); set importPath: / or use SCRATCH_2 or PERSISTENT_2",
        )


# --- S3 -----------------------------------------------------------------------------------------


def bucket_name_problem(name: str) -> str | None:
    """None if `name` is a valid general purpose bucket name (S3 User Guide, "General purpose bucket
    naming rules"), else why not."""
    if not tables.S3_BUCKET_MIN_LENGTH <= len(name) <= tables.S3_BUCKET_MAX_LENGTH:
        return f"must be {tables.S3_BUCKET_MIN_LENGTH} to {tables.S3_BUCKET_MAX_LENGTH} characters long"
    if not tables.S3_BUCKET_CHARS.match(name):
        return (
            "may contain only lowercase letters, digits, dots and hyphens, and must begin and end "
            "with a letter or digit"
        )
    if ".." in name:
        return "must not contain two adjacent dots"
    if tables.IPV4_LIKE.match(name):
        return "must not be formatted as an IP address"
    for prefix in tables.S3_BUCKET_RESERVED_PREFIXES:
        if name.startswith(prefix):
            return f"must not start with the reserved prefix {prefix!r}"
    for suffix in tables.S3_BUCKET_RESERVED_SUFFIXES:
        if name.endswith(suffix):
            return f"must not end with the reserved suffix {suffix!r}"
    return None


@rule
def s3_bucket_names(spec: StackSpec) -> Iterator[Problem]:
    """Bucket names in s3:// URIs obey the S3 naming rules (S3 User Guide, "General purpose bucket naming rules")."""
    for path, uri in object_uris(spec):
        if not uri.startswith("s3://"):
            continue
        name = bucket_of(uri)
        problem = bucket_name_problem(name)
        if problem:
            yield Problem(path, f"bucket name {name!r} {problem}")
        elif "." in name:
            yield Problem(
                path,
                f"bucket name {name!r} contains dots: virtual-hosted HTTPS and Transfer Acceleration do not "
                "work with it; prefer hyphens",
                Level.WARNING,
            )


# --- VPC ----------------------------------------------------------------------------------------


@rule(workload="training")
def training_vpc_has_room(spec: TrainingStack) -> Iterator[Problem]:
    """A new training VPC must hold the cluster subnet (nodes, their ENIs and the Lustre servers'
    ENIs) plus the public/NAT subnet; AWS also reserves 5 addresses per subnet (VPC User Guide,
    "Subnet CIDR blocks")."""
    network = spec.training.network
    if network.existing or network.vpc_cidr is None:
        return
    prefix = ipaddress.ip_network(network.vpc_cidr).prefixlen
    if prefix > tables.VPC_MAX_PREFIX:
        yield Problem(
            "training.network.vpcCidr",
            f"/{prefix} is too small for the cluster subnet plus the NAT subnet; use a /{tables.VPC_MAX_PREFIX} "
            "or larger block (e.g. 10.20.0.0/16)",
        )


@rule(workload="training")
def training_network_is_one_subnet(spec: TrainingStack) -> Iterator[Problem]:
    """Training lives in one subnet: EFA traffic cannot cross Availability Zones and a cluster
    placement group is in one zone (EFA User Guide, "EFA limitations"; EC2 User Guide, "Placement
    groups"), so the components take `subnetId`, never a list; a list would leave the cluster with
    no subnet at all."""
    network = spec.training.network
    if network.subnet_ids is not None:
        example = f" (e.g. subnetId: {network.subnet_ids[0]})" if network.subnet_ids else ""
        yield Problem(
            "training.network.subnetIds",
            "training uses one subnet: EFA and cluster placement groups cannot span Availability Zones; "
            f"use subnetId{example}",
        )
    if network.public_subnet_ids is not None:
        yield Problem(
            "training.network.publicSubnetIds",
            "only serving uses public subnets (for its load balancer); training nodes have no public address: remove it",
        )


def _id_problems(path: str, ids: list[str], pattern: re.Pattern[str], kind: str, example: str) -> Iterator[Problem]:
    """Format and duplicates of each id in a list (`subnet-...`, account ids)."""
    seen: dict[str, int] = {}
    for index, item in enumerate(ids):
        if not pattern.match(item):
            yield Problem(f"{path}.{index}", f"{item!r} is not {kind} (e.g. {example})")
        elif item in seen:
            yield Problem(f"{path}.{index}", f"duplicate of item {seen[item]} ({item})")
        seen.setdefault(item, index)


@rule
def network_ids_valid(spec: StackSpec) -> Iterator[Problem]:
    """VPC and subnet ids are `vpc-`/`subnet-` + 8 or 17 hex digits (EC2 API "Resource IDs"); a
    subnet listed twice counts once, so it cannot stand in for a second zone."""
    side, network = (
        ("training", spec.training.network) if isinstance(spec, TrainingStack) else ("serving", spec.serving.network)
    )
    base = f"{side}.network"
    if network.vpc_id is not None and not tables.VPC_ID.match(network.vpc_id):
        yield Problem(f"{base}.vpcId", f"{network.vpc_id!r} is not a VPC id (e.g. vpc-0123456789abcdef0)")
    if network.subnet_id is not None and not tables.SUBNET_ID.match(network.subnet_id):
        yield Problem(f"{base}.subnetId", f"{network.subnet_id!r} is not a subnet id (e.g. subnet-0123456789abcdef0)")
    example = "subnet-0123456789abcdef0"
    yield from _id_problems(f"{base}.subnetIds", network.subnet_ids or [], tables.SUBNET_ID, "a subnet id", example)
    yield from _id_problems(
        f"{base}.publicSubnetIds", network.public_subnet_ids or [], tables.SUBNET_ID, "a subnet id", example
    )
    for index, subnet in enumerate(network.public_subnet_ids or []):
        if subnet in (network.subnet_ids or []):
            yield Problem(
                f"{base}.publicSubnetIds.{index}",
                f"{subnet} is also in subnetIds; replicas belong in private subnets, the load balancer in public ones",
            )


@rule
def account_lists_have_no_duplicates(spec: StackSpec) -> Iterator[Problem]:
    """Each account or Region is listed once (a duplicate is usually a typo for another one)."""
    lists = [
        ("separation.trainingAccounts", spec.separation.training_accounts),
        ("separation.servingAccounts", spec.separation.serving_accounts),
        ("separation.allowedRegions", spec.separation.allowed_regions or []),
    ]
    if isinstance(spec, TrainingStack):
        lists.append(("training.artifactReaders", spec.training.artifact_readers))
    for path, items in lists:
        seen: dict[str, int] = {}
        for index, item in enumerate(items):
            if item in seen:
                yield Problem(f"{path}.{index}", f"duplicate of item {seen[item]} ({item})")
            seen.setdefault(item, index)


@rule(workload="training")
def lustre_exports_checkpoints(spec: TrainingStack) -> Iterator[Problem]:
    """Checkpoints on Lustre reach their bucket through a data repository association with automatic
    export, which accelstack links only on PERSISTENT_2 (accelstack.components.aws.storage). On other types the
    bucket named in checkpoints.uri would never receive a checkpoint, and a spot fleet counts on it."""
    found = _lustre(spec)
    if found is None:
        return
    lustre, kind = found
    checkpoints = spec.training.storage.checkpoints
    if checkpoints is None or not path_within(checkpoints.path, lustre.mount_path):
        return
    if kind.name in tables.CHECKPOINT_EXPORT_DEPLOYMENT_TYPES:
        return
    spot = spec.training.nodes.capacity == "spot"
    yield Problem(
        "training.storage.lustre.tier",
        f"{kind.name} cannot export checkpoints: {checkpoints.path} is never copied to {checkpoints.uri} "
        f"(accelstack links checkpoints to S3 only on {', '.join(tables.CHECKPOINT_EXPORT_DEPLOYMENT_TYPES)})"
        + ("; spot capacity relies on that copy" if spot else "")
        + "; use PERSISTENT_2",
        Level.ERROR if spot else Level.WARNING,
    )


@rule(workload="training")
def lustre_checkpoint_link_paths(spec: TrainingStack) -> Iterator[Problem]:
    """FSx refuses a data repository association whose file system path is the root, or the same as
    or nested in another association's (CreateDataRepositoryAssociation `FileSystemPath`): the
    checkpoints directory must be its own subdirectory, beside the dataset's."""
    found = _lustre(spec)
    if found is None:
        return
    lustre, kind = found
    checkpoints = spec.training.storage.checkpoints
    if checkpoints is None or kind.name not in tables.CHECKPOINT_EXPORT_DEPLOYMENT_TYPES:
        return
    if not path_within(checkpoints.path, lustre.mount_path):
        return  # checkpoints_on_lustre reports it
    mount = posixpath.normpath(lustre.mount_path)
    relative = "/" + posixpath.relpath(posixpath.normpath(checkpoints.path), mount).lstrip(".").strip("/")
    path = "training.storage.checkpoints.path"
    if relative == "/":
        yield Problem(
            path,
            f"{checkpoints.path} is the Lustre root; use a subdirectory, e.g. {posixpath.join(mount, 'checkpoints')}",
        )
        return
    dataset = posixpath.normpath(lustre.import_path)
    if path_within(relative, dataset) or path_within(dataset, relative):
        yield Problem(
            path,
            f"{checkpoints.path} (file system path {relative}) overlaps the dataset link at lustre.importPath "
            f"{lustre.import_path}; FSx links a directory to one bucket only: keep them side by side, e.g. "
            f"{posixpath.join(mount, 'checkpoints')} and importPath /datasets",
        )


@rule(workload="training")
def accounting_database_in_a_new_vpc(spec: TrainingStack) -> Iterator[Problem]:
    """slurmdbd's RDS instance needs a DB subnet group over two Availability Zones, which the stack carves from a
    VPC it creates (components/aws/slurm_accounting.py); in an existing VPC it would have to create subnets in a
    network that is the operator's."""
    scheduler = spec.training.scheduler
    if scheduler.kind == "slurm" and scheduler.accounting == "database" and spec.training.network.existing:
        yield Problem(
            "training.scheduler.accounting",
            "accounting: database on AWS builds its RDS subnets in a VPC the stack creates (training.network.vpcCidr); "
            "with an existing VPC use accounting: none",
        )
