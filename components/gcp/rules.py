"""The GCP machines' metadata as the GCP components will render it, at its longest, for the spec rule that holds
it to Compute Engine's metadata limits (`accelstack.spec.catalog_rules.boot_data_fits_the_clouds_limit`; the limits
are the GCP description's `boot_data_limit`: 256 KB a value, 512 KB a machine).

The replica's cloud-config carries the queue worker and one download line per LoRA adapter, so enough adapters
would make `pulumi up` fail at the instance template, after the load balancer and the topics exist. The Slurm head
carries its cloud-config (user-data) and its Slurm configuration files (a second key) and the nodes their
cloud-config, which grow with the partitions, features and dataset syncs. The size is only known by rendering, so
GCP's registration lists this module among its rule modules (`Cloud.rules`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from accelstack.clouds import registry
from accelstack.clouds.gcp import catalog
from accelstack.clouds.gcp.rules import address_plan
from accelstack.components import slurm
from accelstack.components.gcp.scheduler import LOGIN_METADATA, SLURM_CONFIG_METADATA_KEY, STATE_DEVICE_NAME
from accelstack.components.gcp.serving.replicas import REGIONAL_GROUP_ZONES
from accelstack.components.gcp.serving.user_data import replica_user_data
from accelstack.components.gcp.slurm_accounting import CA_METADATA_KEY, ca_metadata_value
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec.address_rules import CarvedRange, carves
from accelstack.spec.catalog_rules import BootData, boot_data
from accelstack.spec.models import ServingStack, TrainingStack

# What the components fill in at deploy time, at its longest: a project id (30 characters) and Pub/Sub names
# (255 characters, cloud.google.com/pubsub/docs/pubsub-basics#resource_names).
LONGEST_PROJECT = "p" * 30
LONGEST_SUBSCRIPTION = f"projects/{LONGEST_PROJECT}/subscriptions/{'s' * 255}"
LONGEST_TOPIC = f"projects/{LONGEST_PROJECT}/topics/{'t' * 255}"
# A Secret Manager version's name (secret ids up to 255 characters; the project as its number, 19 digits at most).
LONGEST_SECRET_VERSION = f"projects/{'9' * 19}/secrets/{'s' * 255}/versions/{'9' * 19}"
# The accounting database's server CA certificates on the head: the current, an upcoming (a rotation under way) and
# a spare, each an RSA CA certificate of well under 2 KB in PEM.
LONGEST_SERVER_CAS = ["C" * 2048] * 3


def _metadata_bytes(values: dict[str, str]) -> int:
    """What metadata entries count towards the instance's total: keys and values."""
    return sum(len(key.encode()) + len(value.encode()) for key, value in values.items())


@boot_data(workload="training")
def slurm_nodes_metadata(spec: TrainingStack) -> Iterator[BootData]:
    """The head's metadata (user-data and its Slurm configuration) and the nodes' user-data, rendered as the GCP
    Slurm components will (Cluster Director, scheduler kind managed, boots Google's own)."""
    if spec.training.scheduler.kind != "slurm":
        return
    values = slurm.DeployValues(
        head_address="255.255.255.255",
        lustre_dns_name="255.255.255.255",
        lustre_mount_name="lustrefs",
        munge_key_secret=LONGEST_SECRET_VERSION,
        slurm_config=SLURM_CONFIG_METADATA_KEY,
        state_volume=STATE_DEVICE_NAME,
        checkpoint_interval_seconds=86_400,
    )
    rendered = slurm.boot_data_at_longest(spec, values)
    if rendered is None:
        return  # an input another rule reports stops rendering
    head, compute, bundle = rendered
    partitions = f"{len(spec.training.scheduler.partitions)} partition(s)"
    fewer = "use fewer partitions (or features) or dataset syncs"
    login = _metadata_bytes(LOGIN_METADATA) + len(b"user-data")
    config = _metadata_bytes({SLURM_CONFIG_METADATA_KEY: bundle})
    if spec.training.scheduler.accounting == "database":
        config += _metadata_bytes({CA_METADATA_KEY: ca_metadata_value(LONGEST_SERVER_CAS)})
    yield BootData("training.scheduler", "the head node", head, beside=login + config, remedy=fewer)
    yield BootData("training.scheduler.partitions", "the head node", bundle, cause=partitions, remedy=fewer)
    yield BootData("training.scheduler", "the compute nodes", compute, beside=login, remedy=fewer)


@boot_data(workload="serving")
def replica_user_data_at_its_longest(spec: ServingStack) -> Iterator[BootData]:
    """The replica's cloud-config (metadata key user-data), rendered as the GCP components will."""
    serving = spec.serving
    queued = serving.admission.kind == "queue"
    try:
        plan = plan_serving(serving, registry.get(spec.cloud).catalog)
        text = replica_user_data(
            serving,
            plan,
            project=LONGEST_PROJECT,
            request_subscription=LONGEST_SUBSCRIPTION if queued else "",
            response_topic=LONGEST_TOPIC if queued else "",
        )
    except (ValueError, KeyError):
        return  # an input another rule reports stops rendering
    yield BootData.of_replicas(serving, text)


# --- address plans (accelstack.spec.address_rules) ---------------------------------------------------


@carves(workload="training")
def training_ranges(spec: TrainingStack) -> Iterator[CarvedRange]:
    """The system VPC's nodes' subnet and Managed Lustre's private services access range, and one subnet per GPU
    NIC's VPC, carved as components.gcp.network carves them (`address_plan`). Each fabric subnet's room for the
    nodes is gcp_training_network's (it names the vpcCidr that fits)."""
    network = spec.training.network
    if network.vpc_id is not None or network.vpc_cidr is None:
        return
    path, reserved = "training.network.vpcCidr", catalog.SUBNET_RESERVED_ADDRESSES
    plan = address_plan(network.vpc_cidr)
    yield CarvedRange(path, "the VPC range", ipaddress.IPv4Network(network.vpc_cidr))
    holds = ((spec.training.nodes.count, "nodes"), (1, "Slurm head (or login node)"))
    yield CarvedRange(path, "the nodes' subnet", plan.nodes, "the system VPC", reserved, holds)
    peering = "Managed Lustre's private services access range"
    yield CarvedRange(path, peering, plan.lustre_peering, "the system VPC")
    if spec.training.nodes.instance_type not in catalog.ACCELERATED_INSTANCES:
        return  # training_machine_type_in_catalog reports it
    layout = catalog.nic_layout(spec.training.nodes.instance_type)
    gvnics = layout.gvnic_networks - 1
    for index, block in enumerate(plan.fabric[: gvnics + layout.rdma_subnets]):
        vpc = f"GPU NIC VPC {index + 1}" if index < gvnics else "the RoCE VPC"
        yield CarvedRange(path, f"GPU NIC subnet {index + 1}", block, vpc, reserved)


@carves(workload="serving")
def serving_ranges(spec: ServingStack) -> Iterator[CarvedRange]:
    """serving.network.vpcCidr is the replicas' one subnet: the regional group at replicas.max, the surge of a
    rolling update (maxSurge is the zone count: components.gcp.serving.replicas) and the standby VMs, which keep
    their internal addresses while stopped."""
    network = spec.serving.network
    if network.vpc_id is not None or network.vpc_cidr is None:
        return
    replicas = spec.serving.replicas
    warm = plan_serving(spec.serving, registry.get(spec.cloud).catalog).warm_pool_size
    holds = (
        (replicas.max, "replicas (serving.replicas.max)"),
        (REGIONAL_GROUP_ZONES, f"surge VMs of a rolling update (maxSurge {REGIONAL_GROUP_ZONES}, one per zone)"),
        (warm, "standby VMs (serving.replicas.warmPool)"),
    )
    subnet = ipaddress.IPv4Network(network.vpc_cidr)
    yield CarvedRange("serving.network.vpcCidr", "the replicas' subnet", subnet, "the serving VPC",
                      catalog.SUBNET_RESERVED_ADDRESSES, holds)  # fmt: skip
