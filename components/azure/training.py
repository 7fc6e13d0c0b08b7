"""The Azure training cluster: network + storage + ONE Uniform scale set of ND InfiniBand VMs.

InfiniBand joins only the VMs of one scale set, within one placement group
(learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndh100v5-series; VirtualMachineScaleSetProperties.
SinglePlacementGroup, at most 100 VMs: a spec rule refuses more). So the nodes are one scale set, fixed size,
single placement group, one fault domain, no overprovisioning (extra VMs would join the fabric and Slurm, then
vanish), upgrades Manual (a model change never reimages nodes in the middle of a job). The resource graph is the
same for 2 or 100 nodes. The image carries the GPU and InfiniBand drivers (components/azure/images.py);
every IB port is an RDMA device NCCL uses (the image's NCCL topology for the ND sizes).

Capacity: on-demand ("Regular"); Spot (priority Spot, eviction Delete so an evicted VM stops counting against
the regional low-priority quota, max price -1: pay up to the on-demand price, never evicted for price,
learn.microsoft.com/azure/virtual-machine-scale-sets/use-spot); or a capacity reservation group
(reservationId, one node only: the spec rules say why). Azure sells no time-boxed block (capacity-block is
refused through the feature table).
"""

from __future__ import annotations

import base64
from typing import Any

import pulumi
import pulumi_azure_native as azure_native
import pulumi_random as random

from accelstack.clouds.azure.catalog import ACCELERATED_INSTANCES
from accelstack.clouds.base import Feature
from accelstack.components.azure.admin import ADMIN_USERNAME, admin_public_key, linux_configuration
from accelstack.components.azure.images import node_image
from accelstack.components.azure.machine_learning import AzureMlScheduler
from accelstack.components.azure.network import TrainingNetwork
from accelstack.components.azure.provider import resource_group, stack_tags
from accelstack.components.azure.scheduler import AzureTrainingHandles, SlurmCluster, with_ssh_passwords_off
from accelstack.components.azure.storage import STORAGE_BLOB_DATA_READER, TrainingStorage
from accelstack.components.base import SchedulerResult
from accelstack.components.recipes.implements import implements
from accelstack.components.recipes.parts import (
    BuildContext,
    FromParts,
    NodeGroup,
    NodeIdentity,
    NodeNetwork,
    Placement,
    TrainingData,
    TrainingParts,
    WithManagedScheduler,
    planned_network_storage,
)
from accelstack.components.recipes.training import TrainingRecipe

NODE_OS_DISK_GIB = 256  # containers and CUDA caches; scratch is the VMs' local NVMe
SPOT_MAX_PRICE = -1  # up to the on-demand price: evicted for capacity only, never for price
# Evicted Spot VMs are deleted; "Try & restore" brings the scale set back to its count when capacity returns,
# trying for this long after each eviction (use-spot: spotRestorePolicy). Without it the cluster only shrinks.
SPOT_RESTORE_TIMEOUT = "PT1H"


def priority_settings(capacity: str) -> dict[str, Any]:
    """The scale set's VM profile for `capacity`: Regular, or Spot with eviction Delete and max price -1."""
    if capacity == "spot":
        return {"priority": "Spot", "eviction_policy": "Delete", "billing_profile": {"max_price": SPOT_MAX_PRICE}}
    return {"priority": "Regular"}


def fabric_interfaces(instance_type: str) -> int:
    itype = ACCELERATED_INSTANCES.get(instance_type)
    return itype.fabric_interfaces if itype is not None and itype.fabric == "infiniband" else 0


# What Azure takes only when the scale set is created (use-spot FAQ: "setting the Spot flag is only supported at
# creation time"); accelstack.clouds.azure.replace_rows says the same for `accelstack diff`.
SPOT_CREATE_ONLY = ["virtualMachineProfile.priority", "virtualMachineProfile.evictionPolicy"]
# A new VM size is a new scale set too: in place, ARM changes only the model (upgrade policy Manual), so the running
# nodes keep the old size while Slurm's gres.conf already names the new GPU, and the single placement group would
# mix two sizes on one InfiniBand fabric. The ND sizes each count against their own vCPU family
# (accelstack.clouds.azure.quotas), so the new set is created beside the old one without sharing its quota; two
# sizes of one family (NC H100 v5) need room for both while the new set comes up.
NODES_CREATE_ONLY = [*SPOT_CREATE_ONLY, "sku.name"]


class AzureTrainingParts(TrainingParts[AzureTrainingHandles], WithManagedScheduler[AzureTrainingHandles]):
    """Azure's training parts: a resource group and VNet, Blob + Key Vault + Managed Lustre, a user-assigned
    identity, Slurm or Azure Machine Learning, and ONE Uniform scale set of InfiniBand nodes."""

    slurm_cluster = SlurmCluster

    def __init__(self, ctx: BuildContext):
        super().__init__(ctx)
        self.scale_set: azure_native.compute.VirtualMachineScaleSet | None = None

    def network(self) -> NodeNetwork:
        ctx = self.ctx
        self.resource_group = resource_group(ctx.spec, ctx.child)
        self.vnet = TrainingNetwork(f"{ctx.name}-net", ctx.spec, self.resource_group.name, ctx.child)
        return NodeNetwork(self.vnet.vnet.id, self.vnet.nodes_subnet.id, self.vnet.zone)

    @implements(
        Feature.MANAGED_LUSTRE,
        Feature.OBJECT_LINKED_FS,
        Feature.CROSS_ACCOUNT_ARTIFACTS,
        Feature.OBJECT_STORE_NETWORK_RULES,
    )
    def storage(self, network: NodeNetwork) -> TrainingData:
        ctx, vnet = self.ctx, self.vnet
        self.store = store = TrainingStorage(
            f"{ctx.name}-storage",
            ctx.spec,
            self.resource_group.name,
            self.resource_group.id,
            vnet.lustre_subnet.id if vnet.lustre_subnet is not None else None,
            vnet.zone,
            ctx.child,
            nodes_subnet_id=vnet.nodes_subnet.id,
            file_system=ctx.plan.file_system,
        )
        file_system = planned_network_storage(
            ctx.spec, store.file_system, store.lustre_address, store.lustre_mount_name
        )
        return TrainingData(store.dataset_uri, store.checkpoint_uri, store.encryption_key, file_system)

    def node_identity(self, network: NodeNetwork, data: TrainingData) -> NodeIdentity:
        """Read datasets, write (never delete) checkpoints; the scheduler adds reading the munge key."""
        ctx, store = self.ctx, self.store
        name = ctx.name
        self.nodes_identity = azure_native.managedidentity.UserAssignedIdentity(
            f"{name}-nodes-id", resource_group_name=self.resource_group.name, tags=stack_tags(ctx.spec), opts=ctx.child
        )
        grants: list[pulumi.Resource] = [
            store.grant(
                f"{name}-nodes-datasets",
                store.dataset_container.id,
                STORAGE_BLOB_DATA_READER,
                self.nodes_identity.principal_id,
            )
        ]
        if store.checkpoint_container is not None:
            grants.append(
                store.grant(
                    f"{name}-nodes-checkpoints",
                    store.checkpoint_container.id,
                    "",
                    self.nodes_identity.principal_id,
                    role_id=store.checkpoint_writer_role,
                )
            )
        return NodeIdentity(grants)

    def scheduler_handles(
        self, network: NodeNetwork, data: TrainingData, identity: NodeIdentity
    ) -> AzureTrainingHandles:
        ctx, vnet = self.ctx, self.vnet
        return AzureTrainingHandles(
            resource_group=self.resource_group.name,
            network_id=vnet.vnet.id,
            subnet_id=vnet.nodes_subnet.id,
            head_address=vnet.head_address,
            zone=vnet.zone,
            storage=self.store,
            nodes_identity=self.nodes_identity,
            checkpoint_interval_seconds=ctx.plan.interval_seconds,
            node_grants=identity.grants,
            vnet=vnet,
        )

    def managed_scheduler(self, handles: AzureTrainingHandles) -> SchedulerResult:
        """Azure Machine Learning: an AmlCompute cluster that runs the nodes itself."""
        return AzureMlScheduler(self.ctx.spec, handles, self.ctx.child).result

    def plain_boot(self, cloud_config: str) -> str:
        return with_ssh_passwords_off(cloud_config)

    @implements(Feature.RDMA_FABRIC, Feature.SPOT, Feature.ON_DEMAND_RESERVATION)
    def node_group(
        self,
        network: NodeNetwork,
        data: TrainingData,
        identity: NodeIdentity,
        scheduler: SchedulerResult,
        user_data: pulumi.Input[str],
    ) -> NodeGroup:
        ctx = self.ctx
        name = ctx.name
        randomness = random.Provider(f"{name}-nodes-random", opts=ctx.child)
        admin_key = admin_public_key(f"{name}-nodes", pulumi.ResourceOptions(parent=ctx.parent, provider=randomness))
        depends_on: list[pulumi.Resource] = list(identity.grants)
        if data.file_system is not None:
            depends_on += data.file_system.waits_for  # the nodes mount it at first boot
        if scheduler.component is not None:
            depends_on.append(scheduler.component)  # and join slurmctld
        self.scale_set = self._scale_set(name, user_data, admin_key, depends_on)
        # The scale set is Azure's node template and group at once.
        return NodeGroup(self.scale_set, self.scale_set.name, self.scale_set)

    def placement(self) -> Placement | None:
        """The scale set's single placement group is the InfiniBand placement (none for one node)."""
        if self.scale_set is None or self.ctx.spec.training.nodes.count < 2:
            return None
        return Placement(self.scale_set)

    def fabric_interfaces_per_node(self) -> int:
        return fabric_interfaces(self.ctx.spec.training.nodes.instance_type)

    def _scale_set(
        self,
        name: str,
        user_data: pulumi.Input[str],
        admin_key: pulumi.Input[str],
        depends_on: list[pulumi.Resource],
    ) -> azure_native.compute.VirtualMachineScaleSet:
        spec = self.ctx.spec
        nodes = spec.training.nodes
        profile: dict[str, Any] = {
            "storage_profile": {
                "image_reference": node_image(ACCELERATED_INSTANCES.get(nodes.instance_type)),
                "os_disk": {
                    "create_option": "FromImage",
                    "caching": "ReadWrite",
                    "disk_size_gb": NODE_OS_DISK_GIB,
                    "managed_disk": {"storage_account_type": "Premium_LRS"},
                },
            },
            "os_profile": {
                "computer_name_prefix": f"{name[:9]}-n",
                "admin_username": ADMIN_USERNAME,
                "custom_data": pulumi.Output.from_input(user_data).apply(
                    lambda text: base64.b64encode(text.encode()).decode()
                ),
                "linux_configuration": linux_configuration(admin_key),
            },
            "network_profile": {
                "network_interface_configurations": [
                    {
                        "name": "primary",
                        "primary": True,
                        # Accelerated networking for the Ethernet side (Lustre, Blob); InfiniBand is separate.
                        "enable_accelerated_networking": True,
                        # No public_ip_address_configuration: the nodes have no public address.
                        "ip_configurations": [
                            {"name": "primary", "primary": True, "subnet": {"id": self.vnet.nodes_subnet.id}}
                        ],
                    }
                ]
            },
            **priority_settings(nodes.capacity),
        }
        if nodes.reservation_id is not None:
            profile["capacity_reservation"] = {"capacity_reservation_group": {"id": nodes.reservation_id}}
        return azure_native.compute.VirtualMachineScaleSet(
            f"{name}-nodes",
            resource_group_name=self.resource_group.name,
            sku={"name": nodes.instance_type, "tier": "Standard", "capacity": nodes.count},
            orchestration_mode="Uniform",
            # InfiniBand spans one placement group; a capacity reservation needs false (one node: the rules).
            single_placement_group=nodes.reservation_id is None,
            platform_fault_domain_count=1,
            overprovision=False,
            upgrade_policy={"mode": "Manual"},
            zones=[self.vnet.zone],
            identity={"type": "UserAssigned", "user_assigned_identities": [self.nodes_identity.id]},
            virtual_machine_profile=profile,
            spot_restore_policy=(
                {"enabled": True, "restore_timeout": SPOT_RESTORE_TIMEOUT} if nodes.capacity == "spot" else None
            ),
            tags={**stack_tags(spec), "accelstack:config-digest": self.ctx.digest},
            opts=pulumi.ResourceOptions(
                parent=self.ctx.parent,
                depends_on=depends_on,
                ignore_changes=["virtualMachineProfile.osProfile.adminPassword"],
                # Spot and the VM size are chosen at creation only: a switch makes a new scale set (auto-named, so
                # created first).
                replace_on_changes=NODES_CREATE_ONLY,
            ),
        )


class TrainingCluster(TrainingRecipe):
    """The Azure training cluster: the training recipe over `AzureTrainingParts`. Beside the recipe's attributes:
    `resource_group`, `network` (the VNet), `storage` (Blob, Key Vault, Managed Lustre) and `nodes_identity`, kept
    on `parts`; the scale set is the recipe's `group`, `launch_template` and, for several nodes, `placement_group`."""

    cloud = "azure"
    parts_class = AzureTrainingParts
    parts: AzureTrainingParts

    resource_group: FromParts[azure_native.resources.ResourceGroup] = FromParts("resource_group")
    network: FromParts[TrainingNetwork] = FromParts("vnet")
    storage: FromParts[TrainingStorage] = FromParts("store")
    nodes_identity: FromParts[azure_native.managedidentity.UserAssignedIdentity] = FromParts("nodes_identity")
