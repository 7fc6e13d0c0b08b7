"""Azure rules: what Compute, Azure Managed Lustre, Storage and the network would reject at create time, or
what the training components cannot build, checked before anything exists.

One small function per rule; each docstring names the documentation it mirrors. The tables are data in
`accelstack.clouds.azure.catalog`. These rules run for azure stacks only (the Azure registration names
this module in `Cloud.rules`).
"""

from __future__ import annotations

import ipaddress
import posixpath
import re
from collections.abc import Iterator

from accelstack.clouds.azure import catalog as tables
from accelstack.spec.accounts import AzureAccount
from accelstack.spec.base import account_key, account_keys
from accelstack.spec.handoff import READERS, split_account_reference
from accelstack.spec.models import StackSpec, TrainingStack
from accelstack.spec.problems import Level, Problem
from accelstack.spec.uris import object_uris, split_bucket_uri
from accelstack.spec.validators import rule

# The training network: the nodes' subnet takes the first half of the VNet, the rest holds the Slurm
# head's addresses and the Lustre subnet (accelstack.components.azure.network.training_subnets).
NODES_SUBNET_SHARE = 1  # prefix length added to the VNet's for the nodes' subnet (half the VNet)


def blob_uri_parts(uri: str) -> tuple[str, str, str] | None:
    """`https://acct.blob.core.windows.net/container/prefix` -> (account, container, prefix); None if not a
    Blob URL of that form."""
    if not uri.startswith("https://"):
        return None
    host, path = split_bucket_uri(uri)
    if not host.endswith(tables.BLOB_HOST_SUFFIX):
        return None
    account = host.removesuffix(tables.BLOB_HOST_SUFFIX)
    container, _, prefix = path.partition("/")
    return account, container, prefix.strip("/")


@rule
def blob_uris(spec: StackSpec) -> Iterator[Problem]:
    """Object URIs are Blob URLs: https://<account>.blob.core.windows.net/<container>[/prefix], the account
    3-24 lowercase letters and digits and the container 3-63 lowercase letters, digits and single hyphens
    ("Storage account overview"; "Naming and referencing containers, blobs, and metadata")."""
    form = f"https://<account>{tables.BLOB_HOST_SUFFIX}/<container>[/prefix]"
    for path, uri in object_uris(spec):
        parts = blob_uri_parts(uri)
        if parts is None:
            if uri.startswith("https://"):  # another scheme: the neutral scheme rule reports it
                yield Problem(path, f"{uri!r} is not a Blob Storage URL; expected {form}")
            continue
        account, container, _ = parts
        if not re.fullmatch(tables.STORAGE_ACCOUNT_NAME, account):
            yield Problem(
                path, f"storage account {account!r}: 3 to 24 lowercase letters and digits (no hyphens); expected {form}"
            )
        if not re.fullmatch(tables.CONTAINER_NAME, container):
            yield Problem(
                path,
                f"container {container!r}: 3 to 63 lowercase letters, digits and single hyphens, starting with a "
                f"letter or digit; expected {form}",
            )


@rule(workload="training")
def artifact_reader_subnets(spec: TrainingStack) -> Iterator[Problem]:
    """The checkpoint account's firewall admits the serving replicas' subnets named in artifactReaderSubnets:
    each a subnet's ARM id, of a subscription in artifactReaders (a network of any other subscription would
    be let in past the separation), named once, within the account's 400 virtual network rules (one is the
    nodes' subnet). An artifact reader with no subnet here is warned of: its replicas' reads would be refused
    by the firewall (403 AuthorizationFailure) however their role assignment reads."""
    training = spec.training
    readers = account_keys(training.artifact_readers)
    admitted: dict[str, int] = {}
    covered: set[str] = set()  # the subscriptions some listed subnet belongs to
    for index, subnet in enumerate(training.artifact_reader_subnets):
        path = f"training.artifactReaderSubnets.{index}"
        match = re.match(tables.SUBNET_ID, subnet)
        if match is None:
            yield Problem(
                path,
                f"{subnet!r} is not a subnet resource id; expected /subscriptions/<subscription id>/resourceGroups/"
                "<group>/providers/Microsoft.Network/virtualNetworks/<network>/subnets/<subnet> (the serving "
                "stack's replicaSubnets output)",
            )
            continue
        subscription = account_key(match["subscription"])
        covered.add(subscription)
        if subscription not in readers:
            allowed = ", ".join(training.artifact_readers) or "none: training.artifactReaders is empty"
            yield Problem(
                path,
                f"the subnet is in subscription {subscription}, which is not one of training.artifactReaders "
                f"({allowed}); only the serving subscriptions that read the models are let through",
            )
        if subnet.lower() in admitted:
            yield Problem(path, f"the same subnet as training.artifactReaderSubnets.{admitted[subnet.lower()]}")
        admitted.setdefault(subnet.lower(), index)
    room = tables.STORAGE_VIRTUAL_NETWORK_RULES_MAX - 1
    if len(training.artifact_reader_subnets) > room:
        yield Problem(
            "training.artifactReaderSubnets",
            f"{len(training.artifact_reader_subnets)} subnets; a storage account takes at most "
            f"{tables.STORAGE_VIRTUAL_NETWORK_RULES_MAX} virtual network rules and the nodes' subnet is one, so at "
            f"most {room}",
        )
    for index, reader in enumerate(training.artifact_readers):
        if account_key(reader) not in covered:
            yield Problem(
                f"training.artifactReaders.{index}",
                f"serving subscription {reader} reads models from the checkpoint account, whose firewall admits "
                "only listed subnets: its replicas' reads would be refused; add its serving stack's "
                "replicaSubnets output to training.artifactReaderSubnets",
                Level.WARNING,
            )


# Address blocks a storage IP rule cannot name, and why (storage-network-security-limitations, "IP network rules":
# "IP network rules aren't allowed for private address ranges (as defined in RFC 1918)"; the others are never the
# public address a NAT fetches from, IANA IPv4 Special-Purpose Address Registry).
NOT_PUBLIC_BLOCKS = (
    ("10.0.0.0/8", "a private range (RFC 1918)"),
    ("172.16.0.0/12", "a private range (RFC 1918)"),
    ("192.168.0.0/16", "a private range (RFC 1918)"),
    ("100.64.0.0/10", "the shared address space of carrier-grade NAT (RFC 6598)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),
    ("0.0.0.0/8", "'this network' (RFC 791)"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved (RFC 1112)"),
)


def _address_problem(value: str) -> tuple[str | None, ipaddress.IPv4Network | None]:
    """(why `value` cannot be a storage IP rule, the network it names)."""
    allowed = (
        "a public IPv4 address (20.51.8.14) or CIDR range from /30 to "
        f"/{tables.STORAGE_IP_RULE_WIDEST_RANGE} (20.51.8.0/28)"
    )
    try:
        network = ipaddress.ip_network(value.strip(), strict=False)
    except ValueError:
        return f"{value!r} is not an IPv4 address or CIDR range; expected {allowed}", None
    if not isinstance(network, ipaddress.IPv4Network):
        return f"{value!r} is IPv6; storage IP rules take IPv4 only; expected {allowed}", None
    if "/" in value and network.prefixlen > tables.STORAGE_IP_RULE_NARROWEST_RANGE:
        return (
            f'{value!r}: Azure does not take /31 or /32 ranges in IP rules ("use individual IP address rules"); '
            "list each address on its own, without a prefix",
            None,
        )
    if network.prefixlen < tables.STORAGE_IP_RULE_WIDEST_RANGE:
        return (
            f"{value!r} admits {network.num_addresses} addresses: wider than a /{tables.STORAGE_IP_RULE_WIDEST_RANGE} "
            "is an internet audience, not a NAT's addresses (the guardrails pack refuses it); expected " + allowed,
            None,
        )
    if str(network) != value.strip() and "/" in value:
        return f"{value!r} has host bits set; write the range as {network}", None
    for block, why in NOT_PUBLIC_BLOCKS:
        if network.overlaps(ipaddress.IPv4Network(block)):
            return (
                f"{value!r} is in {block}, {why}: storage IP rules admit public internet addresses only (a network "
                "of Azure is admitted by subnet, artifactReaderSubnets); expected " + allowed,
                None,
            )
    if not (network.network_address.is_global and network.broadcast_address.is_global):
        return f"{value!r} is not a public internet address (a reserved range); expected {allowed}", None
    return None, network


def cross_cloud_readers(spec: TrainingStack) -> list[tuple[int, str]]:
    """(index, account) of the serving accounts of another cloud that read this stack's published models from the
    internet (a pair of accelstack.spec.handoff.READERS): `<cloud>:<id>` in separation.servingAccounts. They are
    not in artifactReaders, which takes this cloud's subscriptions only: their reader is declared by their serving
    stack, in this subscription, through a provider pinned to it."""
    found = []
    for index, account in enumerate(spec.separation.serving_accounts):
        cloud, _ = split_account_reference(account)
        if cloud is not None and cloud != spec.cloud and (spec.cloud, cloud) in READERS:
            found.append((index, account))
    return found


@rule(workload="training")
def artifact_reader_addresses(spec: TrainingStack) -> Iterator[Problem]:
    """The checkpoint account's firewall admits the public addresses in artifactReaderAddresses (its ipRules): the
    stable egress addresses of the serving stacks on other clouds, whose replicas read the blobs from the internet
    through NAT. Each a public IPv4 address or a /30 to /16 range, named once, within the account's 400 IP rules
    (storage-network-security-limitations). A reader of another cloud with no address here is warned of."""
    training = spec.training
    admitted: dict[ipaddress.IPv4Network, int] = {}
    for index, value in enumerate(training.artifact_reader_addresses):
        path = f"training.artifactReaderAddresses.{index}"
        problem, network = _address_problem(value)
        if problem is not None or network is None:
            yield Problem(path, problem or value)
            continue
        if network in admitted:
            yield Problem(path, f"the same address as training.artifactReaderAddresses.{admitted[network]}")
        admitted.setdefault(network, index)
    if len(training.artifact_reader_addresses) > tables.STORAGE_IP_RULES_MAX:
        yield Problem(
            "training.artifactReaderAddresses",
            f"{len(training.artifact_reader_addresses)} addresses; a storage account takes at most "
            f"{tables.STORAGE_IP_RULES_MAX} IP network rules: list ranges (a NAT's addresses often share one)",
        )
    if training.artifact_reader_addresses or training.storage.checkpoints is None:
        return
    # A warning, not an error, though the reads WILL be refused: the addresses come from the serving stack's
    # `egressAddresses` output, and that stack is deployed after this one (its reader is declared in this
    # subscription, on this account). Refusing here would block the first `up` that creates the account and
    # publishes the model; the serving replicas retry their fetch until the addresses are admitted.
    for index, account in cross_cloud_readers(spec):
        yield Problem(
            f"separation.servingAccounts.{index}",
            f"serving account {account} reads models from the checkpoint account over the internet, and its "
            "firewall admits only listed networks: its replicas' reads would be refused (403 AuthorizationFailure); "
            "add its serving stack's egressAddresses output (the public addresses its NAT fetches from) to "
            "training.artifactReaderAddresses",
            Level.WARNING,
        )


@rule(workload="training")
def head_node_vm_size(spec: StackSpec) -> Iterator[Problem]:
    """The Slurm head is an Azure VM: a stated size must be an Azure VM size name ("Standard_D8s_v5"), not an EC2
    type carried over from an AWS stack (omitted, it is the catalog's default)."""
    if not isinstance(spec, TrainingStack) or spec.training.scheduler.kind != "slurm":
        return
    size = spec.training.scheduler.head_node.instance_type
    if not re.fullmatch(tables.VM_SIZE_NAME, size):
        yield Problem(
            "training.scheduler.headNode.instanceType",
            f"{size!r} is not an Azure VM size; set a CPU size such as Standard_D8s_v5 (Standard_<family>...)",
        )


@rule(workload="training")
def infiniband_cluster_fits_one_placement_group(spec: TrainingStack) -> Iterator[Problem]:
    """InfiniBand joins only the VMs of one scale set, and only within one placement group; a scale set
    with singlePlacementGroup=true holds at most 100 VMs (VirtualMachineScaleSetProperties.SinglePlacementGroup;
    learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndh100v5-series). More is a support
    request, not a setting."""
    count = spec.training.nodes.count
    if count > tables.SINGLE_PLACEMENT_GROUP_MAX_VMS:
        yield Problem(
            "training.nodes.count",
            f"{count} nodes: InfiniBand connects only the VMs of one scale set in a single placement group, which "
            f"holds at most {tables.SINGLE_PLACEMENT_GROUP_MAX_VMS} VMs; use at most "
            f"{tables.SINGLE_PLACEMENT_GROUP_MAX_VMS} nodes per cluster (stack)",
        )


@rule(workload="training")
def capacity_reservation_group(spec: TrainingStack) -> Iterator[Problem]:
    """reservationId names a capacity reservation group (its ARM id). A Uniform scale set joins one only with
    singlePlacementGroup=false (learn.microsoft.com/azure/virtual-machines/capacity-reservation-associate-
    virtual-machine-scale-set, "Limitations"), which InfiniBand across several nodes needs true; Spot VMs
    cannot use capacity reservations (capacity-reservation-overview, "Limitations and restrictions")."""
    nodes = spec.training.nodes
    reservation = nodes.reservation_id
    if reservation is None:
        return
    path = "training.nodes.reservationId"
    if not re.fullmatch(tables.CAPACITY_RESERVATION_GROUP_ID, reservation):
        yield Problem(
            path,
            f"{reservation!r} is not a capacity reservation group id "
            "(/subscriptions/<id>/resourceGroups/<rg>/providers/Microsoft.Compute/capacityReservationGroups/<name>)",
        )
    if nodes.capacity == "spot":
        yield Problem(path, "Spot VMs cannot use a capacity reservation; remove reservationId or use on-demand")
    elif nodes.count > 1:
        yield Problem(
            path,
            f"a Uniform scale set uses a capacity reservation only with singlePlacementGroup=false, but "
            f"InfiniBand between {nodes.count} nodes needs a single placement group; remove reservationId, or "
            "train on one node",
        )


@rule(workload="training")
def availability_zone(spec: TrainingStack) -> Iterator[Problem]:
    """Azure zones are "1", "2" and "3" (Availability zones overview)."""
    zone = spec.training.network.availability_zone
    if zone is not None and zone not in tables.ZONES:
        yield Problem(
            "training.network.availabilityZone", f"{zone!r} is not an Azure zone; allowed: {', '.join(tables.ZONES)}"
        )


@rule(workload="training")
def new_network_only(spec: TrainingStack) -> Iterator[Problem]:
    """The Azure training components build their own VNet (the Lustre subnet must be dedicated and sized
    for the file system); an existing VNet is not supported yet."""
    if spec.training.network.vpc_id is not None:
        yield Problem(
            "training.network.vpcId",
            "an existing VNet is not supported on azure yet; remove vpcId/subnetId and set vpcCidr",
        )


def lustre_subnet_prefix(spec: TrainingStack) -> int | None:
    lustre = spec.training.storage.lustre
    if lustre is None or lustre.capacity_gib is None:
        return None
    return tables.amlfs_subnet_prefix(lustre.capacity_gib / tables.TIB_GIB)


@rule(workload="training")
def vnet_holds_the_subnets(spec: TrainingStack) -> Iterator[Problem]:
    """The VNet holds the nodes' subnet (its first half) and a dedicated Lustre subnet sized for the file
    system (amlfs-prerequisites: 4-16 TiB /27, 20-40 /26, 44-92 /25, 96-196 /24, 200-400 /23)."""
    if spec.training.network.vpc_cidr is None:
        return
    network = ipaddress.ip_network(spec.training.network.vpc_cidr)
    prefix = lustre_subnet_prefix(spec)
    lustre = spec.training.storage.lustre
    if prefix is None or lustre is None:
        return
    if (
        lustre.capacity_gib is not None
        and lustre.capacity_gib / tables.TIB_GIB > tables.AMLFS_SUBNET_PREFIX_BY_TIB[-1][0]
    ):
        yield Problem(
            "training.storage.lustre.capacityGiB",
            f"{lustre.capacity_gib} GiB is beyond Azure Managed Lustre's documented subnet table (400 TiB, /23); "
            f"accelstack gives it a /{tables.AMLFS_SUBNET_PREFIX_BEYOND_TABLE}",
            Level.WARNING,
        )
    # Nodes take the first half; the Lustre subnet must fit in the second half.
    if network.prefixlen + NODES_SUBNET_SHARE > prefix:
        yield Problem(
            "training.network.vpcCidr",
            f"{network} is too small: the nodes take its first half and Azure Managed Lustre of "
            f"{lustre.capacity_gib} GiB needs a dedicated /{prefix} subnet in the rest; use a /{prefix - 1} or larger",
        )


@rule(workload="training")
def lustre_import_path_is_the_dataset_prefix(spec: TrainingStack) -> Iterator[Problem]:
    """Azure Managed Lustre's Blob integration names each file by its blob name: a blob `<prefix>/x` appears
    at `/<prefix>/x` (amlfs-prerequisites, "Blob integration prerequisites"; import prefix). So the dataset
    directory (lustre.importPath) is the dataset URI's prefix."""
    if spec.training.storage.lustre is None:
        return
    parts = blob_uri_parts(spec.training.storage.datasets.uri)
    if parts is None:
        return
    expected = "/" + parts[2]
    lustre = spec.training.storage.lustre
    if posixpath.normpath(lustre.import_path) != posixpath.normpath(expected):
        yield Problem(
            "training.storage.lustre.importPath",
            f"{lustre.import_path}: Azure Managed Lustre shows the dataset blobs under their own names, so the "
            f"dataset directory is {expected} (the prefix of training.storage.datasets.uri); set importPath: {expected}",
        )


@rule(workload="training")
def lustre_needs_the_hpc_cache_principal(spec: TrainingStack) -> Iterator[Problem]:
    """Before Azure Managed Lustre with Blob integration is created, the "HPC Cache Resource Provider" service
    principal must hold Storage Account Contributor and Storage Blob Data Contributor on the storage account
    (amlfs-prerequisites); the role assignments need its object id in the stack's tenant."""
    if spec.training.storage.lustre is None:
        return
    account = spec.account
    if isinstance(account, AzureAccount) and account.hpc_cache_principal_id is None:
        yield Problem(
            "account.hpcCachePrincipalId",
            "required with training.storage.lustre: the object id of the HPC Cache Resource Provider service "
            "principal in your tenant (az ad sp show --id 4392ab71-2ce2-4b0d-8770-b352745c73f5 --query id -o tsv)",
        )


@rule(workload="training")
def managed_scheduler_reads_blob_not_lustre(spec: TrainingStack) -> Iterator[Problem]:
    """The managed scheduler's nodes (Azure Machine Learning AmlCompute) take no boot script, so they cannot
    load the Lustre client and mount Managed Lustre; its jobs read and write Blob datastores instead
    (accelstack.components.azure.machine_learning)."""
    if spec.training.scheduler.kind == "managed" and spec.training.storage.lustre is not None:
        yield Problem(
            "training.storage.lustre",
            "not available with training.scheduler.kind managed on azure: Azure Machine Learning compute "
            "takes no boot script to load the Lustre client, so its jobs read datasets and write checkpoints "
            "through Blob datastores; remove training.storage.lustre, or use scheduler kind slurm",
        )


@rule(workload="training")
def managed_scheduler_takes_no_reservation(spec: TrainingStack) -> Iterator[Problem]:
    """AmlCompute has no capacity reservation group setting (AmlComputeProperties: vmSize, vmPriority,
    scaleSettings, subnet, ...), so a reservation could never be drawn on."""
    if spec.training.scheduler.kind == "managed" and spec.training.nodes.reservation_id is not None:
        yield Problem(
            "training.nodes.reservationId",
            "not available with training.scheduler.kind managed on azure (Azure Machine Learning compute "
            "takes no capacity reservation group); remove it, or use scheduler kind slurm",
        )


@rule(workload="training")
def storage_accounts_are_created_here(spec: TrainingStack) -> Iterator[Problem]:
    """The Azure components create the dataset and checkpoint storage accounts (Managed Lustre's role
    assignments, the customer-managed key and versioning are set on them); bringing existing ones is not
    supported yet, and creating an account that exists elsewhere fails (account names are global)."""
    storage = spec.training.storage
    stores = [("datasets", storage.datasets.create)]
    if storage.checkpoints is not None:
        stores.append(("checkpoints", storage.checkpoints.create))
    for block, create in stores:
        if not create:
            yield Problem(
                f"training.storage.{block}.create",
                "false (an existing storage account) is not supported on azure yet; set create: true and name a "
                "storage account that does not exist yet in the URI",
            )


@rule(workload="training")
def capacity_reservation_matches_the_scale_set(spec: TrainingStack) -> Iterator[Problem]:
    """A VM joins a capacity reservation group only where the group holds a reservation of its size in its zone:
    a zonal scale set needs reservations in that zone, a group's reservations are all regional or all zonal, and
    a VM of another size or zone is refused (capacity-reservation-associate-virtual-machine-scale-set,
    "Limitations"; capacity-reservation-overview). The group's reservations are not in the spec, so they are named
    here for the deployer to check."""
    nodes = spec.training.nodes
    if nodes.reservation_id is None or nodes.capacity == "spot" or nodes.count > 1:
        return  # refused by capacity_reservation_group
    zone = spec.training.network.availability_zone
    where = f"zone {zone} of {spec.account.region}" if zone else f"{spec.account.region} (regional, no zone)"
    found = re.search(r"/resourceGroups/([^/]+)/.*/capacityReservationGroups/([^/]+)$", nodes.reservation_id, re.I)
    resource_group, group_name = (found[1], found[2]) if found else ("<group>", nodes.reservation_id)
    yield Problem(
        "training.nodes.reservationId",
        f"the group must hold a capacity reservation of {nodes.instance_type} in {where} with room for {nodes.count} "
        f"VM(s), or the scale set is refused; check with az capacity reservation list --capacity-reservation-group "
        f"{group_name} --resource-group {resource_group}",
        Level.WARNING,
    )
