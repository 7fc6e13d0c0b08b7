"""The replicas: a Flexible scale set of on-demand GPU VMs without public addresses in the Application Gateway's
backend pool, and a standby pool of deallocated, pre-initialised VMs sized by the planner's warm pool.

- Standby pools attach only to Flexible scale sets (learn.microsoft.com/azure/virtual-machine-scale-sets/
  standby-pools-faq); Flexible needs `networkApiVersion` in the network profile (VMs get their own NICs).
- The autoscale setting owns the capacity: `sku.capacity` is ignored after creation, so an `up` never resets a
  scaled-out group (a fixed fleet has no autoscale setting, and its `sku.capacity` is the spec's). Upgrades are Manual: a model change reaches new VMs (scale-out, standby) first, and never
  reimages a replica mid-request.
- Deallocated standby VMs keep their OS disk (weights and the image pulled there); starting one still waits for
  GPU capacity, which only a Running pool (billed as running) or `replicas.min` guarantees.
"""

from __future__ import annotations

import base64
from typing import Any

import pulumi
import pulumi_azure_native as azure_native

from accelstack.components.azure.admin import ADMIN_USERNAME, linux_configuration
from accelstack.components.azure.images import HPC_NODE_IMAGE
from accelstack.components.azure.serving.edge import backend_pool_id
from accelstack.components.azure.serving.identity import ServingIdentities
from accelstack.components.azure.serving.network import ServingNetwork
from accelstack.components.azure.serving.placement import Placement
from accelstack.components.azure.serving.queue import AdmissionQueue
from accelstack.components.azure.serving.user_data import replica_user_data
from accelstack.components.recipes.serving import ReplicaAdmission
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import ServingSpec

STANDBY_POOL_NAME_MAX = 24  # ^[a-zA-Z0-9-]{3,24}$ (Microsoft.StandbyPool/standbyVirtualMachinePools)


def standby_pool_name(stack: str) -> str:
    return f"{stack[:16].rstrip('-')}-standby"


def replica_group(
    name: str,
    serving: ServingSpec,
    plan: ServingPlan,
    *,
    admin_key: pulumi.Input[str],
    digest: str,
    network: ServingNetwork,
    queue: AdmissionQueue | None,
    identities: ServingIdentities,
    gateway: azure_native.network.ApplicationGateway,
    placement: Placement,
    admission: ReplicaAdmission | None = None,
) -> azure_native.compute.VirtualMachineScaleSet:
    """The scale set; its replicas run the queue worker on `queue`, or without one the admission proxy."""
    user_data: pulumi.Output[str]
    if queue is None:
        user_data = identities.replicas.client_id.apply(
            lambda client_id: replica_user_data(serving, plan, client_id=client_id, admission=admission)
        )
    else:
        user_data = pulumi.Output.all(queue.endpoint, identities.replicas.client_id).apply(
            lambda values: replica_user_data(serving, plan, namespace=values[0], client_id=values[1])
        )
    profile: dict[str, Any] = {
        "storage_profile": {
            # Ubuntu-HPC: the NVIDIA driver for the NC/ND sizes and AzCopy (components/azure/images.py).
            "image_reference": HPC_NODE_IMAGE,
            "os_disk": {
                "create_option": "FromImage",
                "caching": "ReadWrite",
                "disk_size_gb": plan.root_volume_gib,  # image + weights + the server image
                "managed_disk": {"storage_account_type": "Premium_LRS"},
                "delete_option": "Delete",
            },
        },
        "os_profile": {
            "computer_name_prefix": f"{name[:9]}-r",
            "admin_username": ADMIN_USERNAME,
            "custom_data": user_data.apply(lambda text: base64.b64encode(text.encode()).decode()),
            "linux_configuration": linux_configuration(admin_key),
        },
        "network_profile": {
            "network_api_version": "2020-11-01",
            "network_interface_configurations": [
                {
                    "name": "primary",
                    "primary": True,
                    "enable_accelerated_networking": True,
                    "delete_option": "Delete",
                    # No public_ip_address_configuration: replicas are reached through the gateway only.
                    "ip_configurations": [
                        {
                            "name": "primary",
                            "primary": True,
                            "subnet": {"id": network.replicas_subnet.id},
                            "application_gateway_backend_address_pools": [{"id": backend_pool_id(name, placement)}],
                        }
                    ],
                }
            ],
        },
        "priority": "Regular",  # on-demand only (the spec rules refuse spot for serving)
    }
    return azure_native.compute.VirtualMachineScaleSet(
        f"{name}-replicas",
        resource_group_name=placement.resource_group.name,
        orchestration_mode="Flexible",
        platform_fault_domain_count=1,
        single_placement_group=False,
        sku={"name": serving.replicas.instance_type, "tier": "Standard", "capacity": serving.replicas.min},
        upgrade_policy={"mode": "Manual"},
        identity={"type": "UserAssigned", "user_assigned_identities": [identities.replicas.id]},
        virtual_machine_profile=profile,
        tags={**placement.tags, "accelstack:config-digest": digest},
        opts=pulumi.ResourceOptions.merge(
            placement.opts,
            pulumi.ResourceOptions(
                # Replicas join the gateway's pool and read the queue at first boot.
                depends_on=[gateway, *identities.replica_grants],
                # A fixed fleet has no autoscale setting: its size is the spec's, applied on every `up`.
                ignore_changes=["sku.capacity"] if serving.replicas.scaling == "backlog" else [],
            ),
        ),
    )


def standby_pool(
    name: str,
    plan: ServingPlan,
    group: azure_native.compute.VirtualMachineScaleSet,
    identities: ServingIdentities,
    placement: Placement,
) -> azure_native.standbypool.StandbyVirtualMachinePool | None:
    """Deallocated VMs beside the group, `plan.warm_pool_size` of them (min = max: a fixed pool); none when the
    planner sizes it 0. The pool waits for the Standby Pool provider's grants."""
    size = plan.warm_pool_size
    if size <= 0:
        return None
    return azure_native.standbypool.StandbyVirtualMachinePool(
        f"{name}-standby",
        standby_virtual_machine_pool_name=standby_pool_name(name),
        resource_group_name=placement.resource_group.name,
        attached_virtual_machine_scale_set_id=group.id,
        virtual_machine_state="Deallocated",
        elasticity_profile={"max_ready_capacity": size, "min_ready_capacity": size},
        tags=placement.tags,
        opts=pulumi.ResourceOptions.merge(
            placement.opts, pulumi.ResourceOptions(depends_on=[group, *identities.standby_grants])
        ),
    )
