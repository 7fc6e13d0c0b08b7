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
from accelstack.components.azure.admin import ADMIN_USERNAME, admin_public_key, linux_configuration
from accelstack.components.azure.images import HPC_NODE_IMAGE
from accelstack.components.azure.network import TrainingNetwork
from accelstack.components.azure.provider import account_of, resource_group, stack_tags
from accelstack.components.azure.scheduler import (
    AzureTrainingHandles,
    build_scheduler,
    with_ssh_passwords_off,
)
from accelstack.components.azure.storage import STORAGE_BLOB_DATA_READER, TrainingStorage
from accelstack.components.base import TrainingClusterArgs
from accelstack.components.node_environment import environment_cloud_config, node_environment

NODE_OS_DISK_GIB = 256  # containers and CUDA caches; scratch is the VMs' local NVMe
SPOT_MAX_PRICE = -1  # up to the on-demand price: evicted for capacity only, never for price


def priority_settings(capacity: str) -> dict[str, Any]:
    """The scale set's VM profile for `capacity`: Regular, or Spot with eviction Delete and max price -1."""
    if capacity == "spot":
        return {"priority": "Spot", "eviction_policy": "Delete", "billing_profile": {"max_price": SPOT_MAX_PRICE}}
    return {"priority": "Regular"}


def fabric_interfaces(instance_type: str) -> int:
    itype = ACCELERATED_INSTANCES.get(instance_type)
    return itype.fabric_interfaces if itype is not None and itype.fabric == "infiniband" else 0


class TrainingCluster(pulumi.ComponentResource):
    """The training stack's main component; `outputs` holds what the stack exports.

    What a test can assert on: `resource_group`, `network`, `storage`, `file_system` (Managed Lustre; None
    without it), `nodes_identity`, `scheduler` (None without one), `launch_template` (the scale set, which is
    Azure's node template and group at once), `group` (the same scale set; None with the managed scheduler, whose
    AmlCompute cluster is the nodes), `placement_group` (the scale set: its single placement group is the
    InfiniBand placement; None for one node)."""

    def __init__(self, name: str, args: TrainingClusterArgs, opts: pulumi.ResourceOptions | None = None):
        """`name` prefixes every resource of the cluster and is its `accelstack:stack` tag; `opts.provider`
        is the (pinned) azure-native provider the cluster deploys with."""
        args = args.named(name)
        super().__init__("accelstack:azure:TrainingCluster", name, None, opts)
        spec = args.spec
        training = spec.training
        self.spec, self.digest, self.plan = spec, args.digest, args.plan
        digest = args.digest
        child = pulumi.ResourceOptions(parent=self)
        tags = stack_tags(spec)
        account = account_of(spec)
        self.checkpoint_interval_seconds = args.plan.interval_seconds

        self.resource_group = resource_group(spec, child)
        rg = self.resource_group.name
        self.network = TrainingNetwork(f"{name}-net", spec, rg, child)
        self.storage = TrainingStorage(
            f"{name}-storage",
            spec,
            rg,
            self.resource_group.id,
            self.network.lustre_subnet.id if self.network.lustre_subnet is not None else None,
            self.network.zone,
            child,
            nodes_subnet_id=self.network.nodes_subnet.id,
            file_system=args.plan.file_system,
        )
        storage = self.storage
        self.file_system = storage.file_system

        # The nodes' identity: read datasets, write (never delete) checkpoints, read the munge key (scheduler).
        self.nodes_identity = azure_native.managedidentity.UserAssignedIdentity(
            f"{name}-nodes-id", resource_group_name=rg, tags=tags, opts=child
        )
        grants: list[pulumi.Resource] = [
            storage.grant(
                f"{name}-nodes-datasets",
                storage.dataset_container.id,
                STORAGE_BLOB_DATA_READER,
                self.nodes_identity.principal_id,
            )
        ]
        if storage.checkpoint_container is not None:
            grants.append(
                storage.grant(
                    f"{name}-nodes-checkpoints",
                    storage.checkpoint_container.id,
                    "",
                    self.nodes_identity.principal_id,
                    role_id=storage.checkpoint_writer_role,
                )
            )
        handles = AzureTrainingHandles(
            resource_group=rg,
            network_id=self.network.vnet.id,
            subnet_id=self.network.nodes_subnet.id,
            head_address=self.network.head_address,
            zone=self.network.zone,
            storage=storage,
            nodes_identity=self.nodes_identity,
            checkpoint_interval_seconds=self.checkpoint_interval_seconds,
            node_grants=grants,
        )
        result = build_scheduler(spec, handles, child)
        self.scheduler = result.component
        user_data = result.compute_user_data
        if user_data is None:
            user_data = with_ssh_passwords_off(
                environment_cloud_config(node_environment(spec, self.checkpoint_interval_seconds))
            )

        # A managed scheduler (Azure Machine Learning) runs the nodes itself: no scale set then.
        self.group: azure_native.compute.VirtualMachineScaleSet | None = None
        if result.needs_compute_group:
            randomness = random.Provider(f"{name}-nodes-random", opts=child)
            admin_key = admin_public_key(f"{name}-nodes", pulumi.ResourceOptions(parent=self, provider=randomness))
            self.group = self._scale_set(name, user_data, admin_key, handles.node_grants)
        self.launch_template = self.group
        self.placement_group = self.group if training.nodes.count > 1 else None

        self.outputs: dict[str, pulumi.Input[Any]] = {
            "configDigest": digest,
            "account": account.subscription_id,
            "region": account.region,
            "networkId": self.network.vnet.id,
            "subnetId": self.network.nodes_subnet.id,
            "zone": self.network.zone,
            "datasetBucket": storage.dataset_uri,
            "encryptionKey": storage.encryption_key,
            "fabricInterfacesPerNode": fabric_interfaces(training.nodes.instance_type),
            "checkpointIntervalSeconds": self.checkpoint_interval_seconds,
        }
        if self.group is not None:
            self.outputs["nodeGroup"] = self.group.name
        if storage.checkpoint_uri is not None:
            self.outputs["checkpointBucket"] = storage.checkpoint_uri
        if storage.lustre_address is not None and storage.lustre_mount_name is not None:
            self.outputs["lustreAddress"] = storage.lustre_address
            self.outputs["lustreMountName"] = storage.lustre_mount_name
        self.outputs.update(result.outputs)
        self.register_outputs(self.outputs)

    def _scale_set(
        self,
        name: str,
        user_data: pulumi.Input[str],
        admin_key: pulumi.Input[str],
        grants: list[pulumi.Resource],
    ) -> azure_native.compute.VirtualMachineScaleSet:
        spec = self.spec
        nodes = spec.training.nodes
        profile: dict[str, Any] = {
            "storage_profile": {
                "image_reference": HPC_NODE_IMAGE,
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
                            {"name": "primary", "primary": True, "subnet": {"id": self.network.nodes_subnet.id}}
                        ],
                    }
                ]
            },
            **priority_settings(nodes.capacity),
        }
        if nodes.reservation_id is not None:
            profile["capacity_reservation"] = {"capacity_reservation_group": {"id": nodes.reservation_id}}
        depends_on: list[pulumi.Resource] = list(grants)
        if self.file_system is not None:
            depends_on.append(self.file_system)  # the nodes mount it at first boot
        if self.scheduler is not None:
            depends_on.append(self.scheduler)  # and join slurmctld
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
            zones=[self.network.zone],
            identity={"type": "UserAssigned", "user_assigned_identities": [self.nodes_identity.id]},
            virtual_machine_profile=profile,
            tags={**stack_tags(spec), "accelstack:config-digest": self.digest},
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=depends_on, ignore_changes=["virtualMachineProfile.osProfile.adminPassword"]
            ),
        )
