"""GCP training rules: what Compute Engine, Managed Lustre and Cloud Storage would reject at create time, or
what the training components cannot build, checked at the config path before anything exists.

One small function per rule; each docstring names the documentation it mirrors. The tables are data in
`accelstack.clouds.gcp.catalog`. These rules run for gcp stacks only (the GCP registration names this
module in `Cloud.rules`).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from dataclasses import dataclass

from accelstack.clouds.gcp import catalog as tables
from accelstack.spec.models import StackSpec, TrainingStack
from accelstack.spec.problems import Level, Problem
from accelstack.spec.uris import object_uris, split_bucket_uri
from accelstack.spec.validators import rule

# Lustre file system names: at most 8 letters and digits (lustre.Instance `filesystem`).
LUSTRE_FILESYSTEM = "lustrefs"
SMALLEST_VPC_PREFIX = 18  # the nodes' half, the fabric quarter and the Lustre peering /20 must fit
FABRIC_BLOCKS = 16  # the fabric quarter splits into 16 equal subnets: room for 1 + 8 RDMA + 1 gVNIC


@dataclass(frozen=True)
class AddressPlan:
    """How `training.network.vpcCidr` is carved (the system VPC and the fabric VPCs; pure, for rules and
    components alike): the nodes' subnet is the first half, the fabric subnets (each in its own VPC, so
    they may not overlap the system VPC's routes) split the third quarter, and Managed Lustre's private
    services access range opens the last quarter."""

    nodes: ipaddress.IPv4Network
    fabric: tuple[ipaddress.IPv4Network, ...]
    lustre_peering: ipaddress.IPv4Network

    @property
    def head_address(self) -> str:
        # The first usable addresses are Google's (network, gateway); .10 leaves room and never moves.
        return str(self.nodes.network_address + 10)

    def fabric_capacity(self) -> int:
        """Nodes one fabric subnet holds."""
        return self.fabric[0].num_addresses - tables.SUBNET_RESERVED_ADDRESSES


def address_plan(vpc_cidr: str) -> AddressPlan:
    network = ipaddress.ip_network(vpc_cidr, strict=False)
    if not isinstance(network, ipaddress.IPv4Network):
        raise ValueError(f"{vpc_cidr}: an IPv4 range is needed")
    halves = list(network.subnets(prefixlen_diff=1))
    quarters = list(halves[1].subnets(prefixlen_diff=1))
    fabric = tuple(quarters[0].subnets(new_prefix=quarters[0].prefixlen + FABRIC_BLOCKS.bit_length() - 1))
    peering_prefix = max(tables.LUSTRE_PEERING_PREFIX, quarters[1].prefixlen)
    lustre = next(quarters[1].subnets(new_prefix=peering_prefix))
    return AddressPlan(nodes=halves[0], fabric=fabric, lustre_peering=lustre)


def _training(spec: StackSpec) -> TrainingStack | None:
    # Only gcp_head_machine_type still reads the stack through it (its body is kept as it was).
    return spec if isinstance(spec, TrainingStack) else None


@rule
def gcs_uris(spec: StackSpec) -> Iterator[Problem]:
    """Object URIs name a Cloud Storage bucket: gs://<bucket>[/prefix], the bucket 3-63 lowercase letters,
    digits, '-', '_' and '.', starting and ending with a letter or digit (cloud.google.com/storage/docs/buckets#naming)."""
    for path, uri in object_uris(spec):
        if not uri.startswith("gs://"):
            continue  # another scheme: the neutral scheme rule reports it
        bucket, _ = split_bucket_uri(uri)
        if (
            not re.fullmatch(tables.BUCKET_NAME, bucket)
            or ".." in bucket
            or bucket.startswith("goog")
            or re.search(r"g[o0][o0]g[l1]e", bucket)
            or re.fullmatch(r"[0-9]+(\.[0-9]+){3}", bucket)
        ):
            yield Problem(
                path,
                f"bucket {bucket!r} is not a Cloud Storage bucket name: 3 to 63 lowercase letters, digits, '-', "
                "'_' and '.', starting and ending with a letter or digit, not an IP address, not starting with "
                "'goog' and without 'google' (or a look-alike); expected gs://<bucket>[/prefix]",
            )


@rule(workload="training")
def gpudirect_tcpx_not_set_up(spec: TrainingStack) -> Iterator[Problem]:
    """A3 High's GPUDirect-TCPX needs a kernel carrying Google's TCPX patches (`linux-gcp-tcpx`, installed with
    credentials Google grants on request: Cluster Toolkit's examples/machine-learning/a3-highgpu-8g README; its
    legacy solution used a DLVM image available on request too), then Google's receive-datapath manager with a
    GPU-to-NIC topology file and the NCCL plugin (cloud.google.com/compute/docs/gpus/gpudirect). Canonical's public
    accelerator image has no such kernel, so accelstack sets the software up for A3 Mega's TCPXO only: several
    A3 High nodes talk over their 4 GPU NICs with plain sockets."""
    if spec.training.nodes.count < 2:
        return
    instance = tables.ACCELERATED_INSTANCES.get(spec.training.nodes.instance_type)
    if instance is not None and instance.fabric == "gpudirect-tcpx" and spec.training.scheduler.kind == "slurm":
        yield Problem(
            "training.nodes.instanceType",
            f"{instance.name}: accelstack attaches its 4 GPU NICs but cannot set up GPUDirect-TCPX on a public "
            "image (it needs Google's linux-gcp-tcpx kernel, granted on request), so NCCL uses them as plain "
            "sockets (a fraction of the fabric's rate); prefer a3-megagpu-8g (GPUDirect-TCPXO, set up for every "
            "multi-node job)",
            Level.WARNING,
        )


@rule(workload="training")
def gcp_head_machine_type(spec: StackSpec) -> Iterator[Problem]:
    """The Slurm head is a Compute Engine VM: a stated type must be a machine type name ("n2-standard-8"), not an
    EC2 type carried over from an AWS stack (omitted, it is the catalog's default)."""
    training = _training(spec)
    if training is None or training.training.scheduler.kind != "slurm":
        return
    machine = training.training.scheduler.head_node.instance_type
    if not re.fullmatch(tables.MACHINE_TYPE_NAME, machine):
        yield Problem(
            "training.scheduler.headNode.instanceType",
            f"{machine!r} is not a Compute Engine machine type; set a CPU type such as n2-standard-8",
        )


def _cluster_director(spec: TrainingStack) -> bool:
    """The stack runs on the managed scheduler, Cluster Director."""
    return spec.training.scheduler.kind == "managed"


@rule(workload="training")
def cluster_director_machine_type(spec: TrainingStack) -> Iterator[Problem]:
    """The managed scheduler is Cluster Director's managed Slurm, whose GPU partitions run A4, A3 Ultra or A3
    Mega only (docs.cloud.google.com/cluster-director/docs/choose-consumption-option)."""
    if not _cluster_director(spec):
        return
    machine = spec.training.nodes.instance_type
    if machine in tables.ACCELERATED_INSTANCES and machine not in tables.CLUSTER_DIRECTOR_GPU_TYPES:
        yield Problem(
            "training.nodes.instanceType",
            f"{machine} is not offered by Cluster Director (training.scheduler.kind managed); allowed: "
            f"{', '.join(sorted(tables.CLUSTER_DIRECTOR_GPU_TYPES))}, or scheduler kind slurm",
        )


@rule(workload="training")
def cluster_director_capacity(spec: TrainingStack) -> Iterator[Problem]:
    """Cluster Director sells GPU nodes from a reservation, as flex-start or as Spot; its on-demand
    capacity is N2 only (the consumption-option table)."""
    if not _cluster_director(spec):
        return
    nodes = spec.training.nodes
    if nodes.capacity == "on-demand" and nodes.reservation_id is None:
        yield Problem(
            "training.nodes.capacity",
            "Cluster Director (training.scheduler.kind managed) has no on-demand GPU nodes; allowed: spot, "
            "flex-start, capacity-block, or on-demand with reservationId (a specific reservation)",
        )


@rule(workload="training")
def cluster_director_login_node(spec: TrainingStack) -> Iterator[Problem]:
    """Cluster Director's login node (where users run sbatch) is an N2 standard machine with 32 vCPUs or fewer
    (docs.cloud.google.com/cluster-director/docs/compute); training.scheduler.headNode names it."""
    if not _cluster_director(spec):
        return
    machine = spec.training.scheduler.head_node.instance_type
    if not re.fullmatch(tables.CLUSTER_DIRECTOR_LOGIN_TYPE, machine):
        yield Problem(
            "training.scheduler.headNode.instanceType",
            f"{machine!r} cannot be Cluster Director's login node; allowed: n2-standard-2, -4, -8, -16 or -32",
        )


@rule(workload="training")
def cluster_director_partitions(spec: TrainingStack) -> Iterator[Problem]:
    """Cluster Director's Slurm partitions are an id (an RFC 1034 label) and their node sets: no MaxTime, no
    feature selection (hypercomputecluster Cluster `orchestrator.slurm.partitions`). What it cannot express
    is refused rather than dropped."""
    if not _cluster_director(spec):
        return
    if not spec.training.scheduler.partitions:
        yield Problem("training.scheduler.partitions", "Cluster Director needs at least one partition (e.g. gpu)")
    for index, partition in enumerate(spec.training.scheduler.partitions):
        path = f"training.scheduler.partitions[{index}]"
        if not re.fullmatch(tables.RFC1034_LABEL, partition.name):
            yield Problem(
                f"{path}.name",
                f"{partition.name!r}: Cluster Director partition ids are lowercase letters, digits and '-', "
                "starting with a letter",
            )
        if partition.max_time != "UNLIMITED":
            yield Problem(
                f"{path}.maxTime",
                f"Cluster Director partitions take no MaxTime ({partition.max_time!r}); remove it (UNLIMITED), "
                "or limit jobs with sbatch --time",
            )
        if partition.features:
            yield Problem(
                f"{path}.features",
                "Cluster Director partitions select node sets, not node features; remove features",
            )


@rule(workload="training")
def cluster_director_node_identity(spec: TrainingStack) -> Iterator[Problem]:
    """Cluster Director's VMs run as the project's Compute Engine default service account: the API the pinned
    provider speaks (hypercomputecluster Cluster) has no service account field. The stack grants that account
    only the Slurm path's node roles, but projects made before May 2024, or without the org constraint
    iam.automaticIamGrantsForDefaultServiceAccounts, gave it the project Editor role
    (cloud.google.com/compute/docs/access/service-accounts#default_service_account): every job would hold it."""
    if _cluster_director(spec):
        yield Problem(
            "training.scheduler.kind",
            "Cluster Director's nodes run as this project's Compute Engine default service account (its API "
            "takes no other); remove the Editor role from PROJECT_NUMBER-compute@developer.gserviceaccount.com if "
            "the project granted it, or use scheduler kind slurm (nodes get their own least-privilege account)",
            Level.WARNING,
        )
        if getattr(spec.account, "project_number", None) is None and spec.training.storage.lustre is None:
            # With Lustre, its service agent carries the number; without, nothing of the stack does.
            yield Problem(
                "account.projectNumber",
                "Cluster Director's grants name the project's Compute Engine default service account by the "
                "project's number, which no resource of this stack carries: set account.projectNumber (gcloud "
                "projects describe PROJECT --format='value(projectNumber)') or the separation pack cannot place "
                "that account and fails closed",
                Level.WARNING,
            )


@rule(workload="training")
def gcp_flex_start_run_time(spec: TrainingStack) -> Iterator[Problem]:
    """Flex-start VMs run 10 minutes to seven days (MIG resize request `requestedRunDuration`,
    cloud.google.com/compute/docs/instance-groups/about-resize-requests-mig)."""
    hours = spec.training.nodes.max_run_hours
    if spec.training.nodes.capacity == "flex-start" and hours is not None and hours > tables.FLEX_START_MAX_HOURS:
        yield Problem(
            "training.nodes.maxRunHours",
            f"{hours} h: flex-start VMs run {tables.FLEX_START_MAX_HOURS} h (seven days) at most; allowed: 1 to "
            f"{tables.FLEX_START_MAX_HOURS}",
        )


@rule(workload="training")
def gcp_capacity(spec: TrainingStack) -> Iterator[Problem]:
    """How GCP sells the nodes: Spot (provisioning model SPOT) takes no reservation; a calendar-mode future
    reservation (capacity-block: RESERVATION_BOUND VMs) needs its reservation's name, and a specific
    reservation is named projects/<p>/reservations/<name> or <name>
    (cloud.google.com/compute/docs/instances/reservations-consume)."""
    nodes = spec.training.nodes
    if nodes.capacity == "spot" and nodes.reservation_id is not None:
        yield Problem(
            "training.nodes.reservationId",
            "Spot VMs cannot consume a reservation; remove reservationId or set capacity: on-demand",
        )
    if nodes.capacity == "capacity-block" and nodes.reservation_id is None:
        yield Problem(
            "training.nodes.reservationId",
            "capacity-block consumes a calendar-mode future reservation: name it (its reservation's name)",
        )
    if nodes.reservation_id is not None and not re.fullmatch(tables.RESERVATION_NAME, nodes.reservation_id):
        yield Problem(
            "training.nodes.reservationId",
            f"{nodes.reservation_id!r} is not a reservation name; allowed: <name> or "
            "projects/<project>/reservations/<name> (a shared reservation)",
        )


@rule(workload="training")
def gcp_dense_placement(spec: TrainingStack) -> Iterator[Problem]:
    """A MIG's A3/A4 VMs are placed densely by a workload policy only for Spot and reservation capacity
    (docs.cloud.google.com/ai-hypercomputer/docs/placement-policy-and-workload-policy): on-demand nodes
    without a reservation land wherever the zone has room, and NCCL crosses more switches."""
    nodes = spec.training.nodes
    clustered = nodes.instance_type in tables.WORKLOAD_POLICY_TYPES
    if clustered and nodes.count > 1 and nodes.capacity == "on-demand" and nodes.reservation_id is None:
        yield Problem(
            "training.nodes.capacity",
            f"{nodes.count} on-demand {nodes.instance_type} nodes without a reservation get no dense placement "
            "(workload policies take Spot or reservations); set reservationId, or capacity: spot",
            Level.WARNING,
        )


@rule(workload="training")
def gcp_training_network(spec: TrainingStack) -> Iterator[Problem]:
    """training.network.vpcCidr holds the nodes' subnet (first half), one subnet per fabric VPC (16 equal
    blocks of the third quarter, each holding every node plus the 4 addresses Google reserves per subnet) and
    Managed Lustre's /20 private services access range (cloud.google.com/managed-lustre/docs/vpc)."""
    network = spec.training.network
    if network.vpc_id is not None or network.subnet_id is not None or network.subnet_ids:
        yield Problem(
            "training.network.vpcId",
            "an existing VPC is not supported on Google Cloud yet: the stack builds its system and fabric VPCs "
            "from vpcCidr",
        )
        return
    if network.vpc_cidr is None:
        return
    try:
        cidr = ipaddress.ip_network(network.vpc_cidr, strict=False)
    except ValueError:
        return  # the neutral CIDR rule reports it
    if not isinstance(cidr, ipaddress.IPv4Network) or cidr.prefixlen > SMALLEST_VPC_PREFIX:
        yield Problem(
            "training.network.vpcCidr",
            f"{network.vpc_cidr}: an IPv4 /{SMALLEST_VPC_PREFIX} or larger is needed (nodes' half, fabric "
            f"quarter and Managed Lustre's /{tables.LUSTRE_PEERING_PREFIX} peering range)",
        )
        return
    plan = address_plan(network.vpc_cidr)
    count = spec.training.nodes.count
    if plan.fabric_capacity() < count:
        prefix = next(
            p for p in range(cidr.prefixlen, 0, -1) if address_plan(f"10.0.0.0/{p}").fabric_capacity() >= count
        )
        yield Problem(
            "training.network.vpcCidr",
            f"{network.vpc_cidr}: each fabric subnet holds {plan.fabric_capacity()} nodes, fewer than {count}; "
            f"use a /{prefix} or larger",
        )
    zone = network.availability_zone
    region = getattr(spec.account, "region", None)
    if zone is None:
        yield Problem(
            "training.network.availabilityZone",
            f"name the zone the nodes, Managed Lustre and the Slurm state live in (e.g. {region}-b): GPU machine "
            "types, reservations and Lustre are zonal, and zone letters differ per region",
        )
    elif region and not re.fullmatch(rf"{re.escape(region)}-[a-z]", zone):
        yield Problem(
            "training.network.availabilityZone",
            f"{zone!r} is not a zone of region {region}; allowed: {region}-a, {region}-b, {region}-c, ...",
        )


@rule(workload="training")
def gcp_lustre_mount(spec: TrainingStack) -> Iterator[Problem]:
    """Managed Lustre imports from Cloud Storage into a path under its root; the import path is a Lustre path
    (importData `lustrePath.path`, absolute)."""
    lustre = spec.training.storage.lustre
    if lustre is None:
        return
    if not lustre.import_path.startswith("/"):
        yield Problem(
            "training.storage.lustre.importPath",
            f"{lustre.import_path!r}: an absolute path in the file system (e.g. /datasets)",
        )
