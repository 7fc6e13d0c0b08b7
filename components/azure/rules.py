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

from collections.abc import Iterator

from accelstack.clouds import registry
from accelstack.components import slurm
from accelstack.components.azure.node_platform import AzureNodePlatform
from accelstack.components.azure.scheduler import STATE_DISK_LUN, with_ssh_passwords_off
from accelstack.components.azure.serving.user_data import replica_user_data
from accelstack.planner.serving_plan import plan_serving
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
    yield BootData(
        "serving.model.adapters",
        "the replicas",
        text,
        cause=f"{len(serving.model.adapters)} adapter(s)",
        remedy="serve fewer adapters per stack",
    )
