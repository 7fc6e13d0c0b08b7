"""The Azure machines' custom data as the Azure components will render it, at its longest, for the spec rule that
holds it to Azure's limit (`accelstack.spec.catalog_rules.boot_data_fits_the_clouds_limit`; the limit is the
Azure description's `boot_data_limit`).

The replica's custom data carries the queue worker, its Service Bus client and one AzCopy line per LoRA adapter,
so enough adapters would make `pulumi up` fail at the scale set, after the gateway and the queues exist. The Slurm
head's and nodes' custom data (their cloud-config, which grows with the features and dataset syncs) would fail at
the head VM or the nodes' scale set, after the VNet, Lustre and Key Vault exist. The size is only known by
rendering, so Azure's registration lists this module among its rule modules (`Cloud.rules`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from accelstack.clouds import registry
from accelstack.clouds.azure import catalog
from accelstack.clouds.azure.serving_rules import MIN_SERVING_VNET_PREFIX
from accelstack.components import slurm
from accelstack.components.azure.network import training_subnets
from accelstack.components.azure.node_platform import AzureNodePlatform
from accelstack.components.azure.scheduler import STATE_DISK_LUN, with_ssh_passwords_off
from accelstack.components.azure.serving.edge import WAF_V2_MAX_INSTANCES
from accelstack.components.azure.serving.network import serving_subnets
from accelstack.components.azure.serving.user_data import replica_user_data
from accelstack.components.azure.slurm_accounting import SERVER_CA, database_subnet
from accelstack.components.slurm import accounting
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec.address_rules import CarvedRange, carves
from accelstack.spec.catalog_rules import BootData, boot_data
from accelstack.spec.models import ServingStack, TrainingStack

# What the components fill in at deploy time, at its longest: a namespace name (6-50 characters) and a client id.
LONGEST_NAMESPACE = "n" * 50 + ".servicebus.windows.net"
CLIENT_ID = "00000000-0000-0000-0000-000000000000"
# A Key Vault secret's URI with its version: vault names 3-24 characters, secret names 1-127 (Key Vault "Object
# identifiers"), versions 32 hex digits.
LONGEST_SECRET_URI = f"https://{'v' * 24}.vault.azure.net/secrets/{'s' * 127}/{'0' * 32}"


@boot_data(workload="training")
def slurm_nodes_custom_data(spec: TrainingStack) -> Iterator[BootData]:
    """The head's and the compute nodes' cloud-init, as the Azure Slurm components finish it (ssh_pwauth off);
    Azure Machine Learning (scheduler kind managed) boots its own."""
    if spec.training.scheduler.kind != "slurm":
        return
    values = slurm.DeployValues(
        head_address="255.255.255.255",
        lustre_dns_name="255.255.255.255",
        lustre_mount_name="lustrefs",
        munge_key_secret=LONGEST_SECRET_URI,
        slurm_config=LONGEST_SECRET_URI,
        state_volume=str(STATE_DISK_LUN),
        checkpoint_interval_seconds=86_400,
        # A server name at its longest (63) in Azure's MySQL domain, and its password secret's URI.
        accounting_storage=accounting.Storage(f"{'d' * 63}.mysql.database.azure.com", SERVER_CA),
        accounting_password_secret=LONGEST_SECRET_URI,
    )
    try:
        # Each node reads with its managed identity's client id, which the deployed platform carries.
        nodes = slurm.Nodes(AzureNodePlatform(identity_client_id=CLIENT_ID), slurm.nodes_for(spec).instance)
        head = slurm.head_cloud_init(spec, nodes, values)
        compute = slurm.compute_cloud_init(spec, nodes, values)
    except ValueError:
        return  # an input another rule reports (unknown preset, a foreign checkpoint URI) stops rendering
    remedy = "use fewer features or dataset syncs"
    yield BootData("training.scheduler", "the head node", with_ssh_passwords_off(head), remedy=remedy)
    yield BootData("training.scheduler", "the compute nodes", with_ssh_passwords_off(compute), remedy=remedy)


@boot_data(workload="serving")
def replica_custom_data_at_its_longest(spec: ServingStack) -> Iterator[BootData]:
    """The replica's cloud-init, rendered as the Azure components will."""
    serving = spec.serving
    try:
        plan = plan_serving(serving, registry.get(spec.cloud).catalog)
        text = replica_user_data(serving, plan, namespace=LONGEST_NAMESPACE, client_id=CLIENT_ID)
    except (ValueError, KeyError):
        return  # an input another rule reports stops rendering
    yield BootData.of_replicas(serving, text)


# --- address plans (accelstack.spec.address_rules) ---------------------------------------------------


@carves(workload="training")
def training_ranges(spec: TrainingStack) -> Iterator[CarvedRange]:
    """The VNet's nodes' subnet (nodes and the Slurm head's static address) and the dedicated Azure Managed Lustre
    subnet, carved as components.azure.network carves them; the Lustre subnet's size is its capacity's row of
    Microsoft's table (vnet_holds_the_subnets)."""
    network = spec.training.network
    if network.vpc_id is not None or network.vpc_cidr is None:
        return
    path, vnet = "training.network.vpcCidr", "the VNet"
    plan = training_subnets(spec)
    yield CarvedRange(path, "the VNet range", ipaddress.IPv4Network(network.vpc_cidr))
    holds = ((spec.training.nodes.count, "nodes"), (1, "Slurm head"))
    nodes = ipaddress.IPv4Network(plan.nodes)
    yield CarvedRange(path, "the nodes' subnet", nodes, vnet, catalog.SUBNET_RESERVED_ADDRESSES, holds)
    if plan.lustre is not None:
        lustre = ipaddress.IPv4Network(plan.lustre)
        yield CarvedRange(path, "the Azure Managed Lustre subnet", lustre, vnet)
    if spec.training.scheduler.kind == "slurm" and spec.training.scheduler.accounting == "database":
        database = ipaddress.IPv4Network(database_subnet(spec))
        yield CarvedRange(path, "slurmdbd's MySQL subnet (delegated)", database, vnet)


@carves(workload="serving")
def serving_ranges(spec: ServingStack) -> Iterator[CarvedRange]:
    """The Application Gateway's dedicated subnet (one address per instance at its autoscale maximum) and the
    replicas' subnet (the scale set at replicas.max, whose upgrade policy is Manual: no surge, and the standby
    pool's VMs, which keep their NICs' addresses while deallocated)."""
    network = spec.serving.network
    if network.vpc_id is not None or network.vpc_cidr is None:
        return
    vnet = ipaddress.IPv4Network(network.vpc_cidr)
    if vnet.prefixlen > MIN_SERVING_VNET_PREFIX:
        return  # serving_new_network_only reports it
    path, reserved = "serving.network.vpcCidr", catalog.SUBNET_RESERVED_ADDRESSES
    plan = serving_subnets(network.vpc_cidr)
    replicas = spec.serving.replicas
    gateway = min(WAF_V2_MAX_INSTANCES, max(2, replicas.max))  # components.azure.serving.edge's autoscale bounds
    warm = plan_serving(spec.serving, registry.get(spec.cloud).catalog).warm_pool_size
    yield CarvedRange(path, "the VNet range", vnet)
    yield CarvedRange(path, "the Application Gateway subnet", ipaddress.IPv4Network(plan.gateway), "the VNet",
                      reserved, ((gateway, "gateway instances at its autoscale maximum"),))  # fmt: skip
    holds = ((replicas.max, "replicas (serving.replicas.max)"), (warm, "standby VMs (serving.replicas.warmPool)"))
    yield CarvedRange(path, "the replicas' subnet", ipaddress.IPv4Network(plan.replicas), "the VNet", reserved, holds)
