"""The replicas: a Flexible scale set of on-demand GPU VMs without public addresses in the Application Gateway's
backend pool, and a standby pool of deallocated, pre-initialised VMs sized by the planner's warm pool.

- Standby pools attach only to Flexible scale sets (learn.microsoft.com/azure/virtual-machine-scale-sets/
  standby-pools-faq); Flexible needs `networkApiVersion` in the network profile (VMs get their own NICs).
- The autoscale setting owns the capacity: `sku.capacity` is ignored after creation, so an `up` never resets a
  scaled-out group (a fixed fleet has no autoscale setting, and its `sku.capacity` is the spec's).
- A model change (weights, precision, server image: the VM profile) replaces the scale set, create-first: Flexible
  scale sets have no "Update Instances" (orchestration-modes API comparison: "invoke operations on individual
  VMs"), and standby-pool VMs keep the profile they were created with (standby-pools FAQ), so a profile update
  would leave running and pooled VMs on the old model indefinitely. The new set joins the same gateway backend
  pool and its VMs count as provisioned only once they have prepared (the extension below); then the old set,
  its VMs and its pool go. The standby pool follows the new set: its name carries the profile's digest (the
  set's `accelstack:replica-profile` tag), so a new pool is created for the new set before the old one goes.
- Deallocated standby VMs keep their OS disk (weights and the image pulled there); starting one still waits for
  GPU capacity, which only a Running pool (billed as running) or `replicas.min` guarantees.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_azure_native as azure_native

from accelstack.clouds.azure import names
from accelstack.components.azure.admin import ADMIN_USERNAME, linux_configuration
from accelstack.components.azure.images import HPC_NODE_IMAGE
from accelstack.components.azure.serving.edge import backend_pool_id
from accelstack.components.azure.serving.identity import ServingIdentities
from accelstack.components.azure.serving.network import ServingNetwork
from accelstack.components.azure.serving.placement import Placement
from accelstack.components.azure.serving.queue import AdmissionQueue
from accelstack.components.azure.serving.user_data import front_stop_seconds, replica_user_data
from accelstack.components.handoff import FederatedReader
from accelstack.components.handoff.boot import artifact_handoff_values
from accelstack.components.recipes.serving import ReplicaAdmission
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import ServingSpec

# Standby pools deallocate a VM once it is provisioned (standby-pools overview: pooled VMs "complete all post
# provisioning processes" first), and azure-native's standbypool API (2024-03-01) has no postProvisioningDelay.
# A VM is provisioned only when its extensions have succeeded, so this one holds provisioning until cloud-init
# has run the replica's runcmd, whose `systemctl enable --now accelstack-server` returns once the server's
# ExecStartPre (weights, `docker pull`) is done: a pooled VM is deallocated prepared, not mid-download.
WAIT_FOR_PREPARE = "cloud-init status --wait >/dev/null; systemctl is-active --quiet accelstack-server.service"
# Extensions' time budget: 15 to 120 minutes (VirtualMachineScaleSetExtensionProfile.extensionsTimeBudget).
EXTENSIONS_BUDGET_MINUTES = (15, 120)


def extensions_budget_minutes(plan: ServingPlan) -> int:
    """Twice the planned cold start (weights and image), within the API's 15 to 120 minutes."""
    low, high = EXTENSIONS_BUDGET_MINUTES
    return max(low, min(high, -(-2 * plan.cold_start_seconds // 60)))


# Scale-in (autoscale, or a smaller fixed fleet) deletes a replica with generations in flight. With a terminate
# notification the deletion waits until the VM approves its Terminate scheduled event, or the timeout passes (5 to
# 15 minutes: "Terminate notification for Azure Virtual Machine Scale Set instances"); the replica's terminate
# watcher (user_data.py) stops the unit in front of the server, which drains, then approves.
TERMINATE_NOTICE_MINUTES = (5, 15)


def terminate_notice_minutes(plan: ServingPlan) -> int:
    """The front unit's stop (its drain and release) and a minute of polling and approval, within the API's 5 to 15
    minutes."""
    low, high = TERMINATE_NOTICE_MINUTES
    return max(low, min(high, -(-(front_stop_seconds(plan) + 60) // 60)))


PROFILE_TAG = "accelstack:replica-profile"  # the digest of the scale set's VM profile (model, image, boot)


def profile_digest(profile: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(profile, sort_keys=True, default=str).encode()).hexdigest()[:7]


def standby_pool_name(stack: str, digest: str) -> str:
    return names.standby_pool_name(stack, digest)


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
    reader: FederatedReader | None = None,
    copies: Sequence[pulumi.Resource] = (),
) -> azure_native.compute.VirtualMachineScaleSet:
    """The scale set; its replicas run the queue worker on `queue`, or without one the admission proxy."""
    user_data: pulumi.Output[str]
    fetch = artifact_handoff_values(serving, reader)  # weights on another cloud: its reader's fetch lines
    if queue is None:
        user_data = pulumi.Output.all(identities.replicas.client_id, fetch).apply(
            lambda v: replica_user_data(serving, plan, client_id=v[0], admission=admission, fetch=v[1])
        )
    else:
        user_data = pulumi.Output.all(queue.endpoint, identities.replicas.client_id, fetch).apply(
            lambda values: replica_user_data(serving, plan, namespace=values[0], client_id=values[1], fetch=values[2])
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
        "scheduled_events_profile": {
            "terminate_notification_profile": {
                "enable": True,
                "not_before_timeout": f"PT{terminate_notice_minutes(plan)}M",
            }
        },
        "extension_profile": {
            "extensions_time_budget": f"PT{extensions_budget_minutes(plan)}M",
            "extensions": [
                {
                    "name": "accelstack-wait-for-prepare",
                    # Custom Script Extension for Linux 2.1: runs commandToExecute once, as root.
                    "publisher": "Microsoft.Azure.Extensions",
                    "type": "CustomScript",
                    "type_handler_version": "2.1",
                    "auto_upgrade_minor_version": True,
                    "settings": {"commandToExecute": f"/bin/bash -c '{WAIT_FOR_PREPARE}'"},
                }
            ],
        },
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
        tags={
            **placement.tags,
            "accelstack:config-digest": digest,
            PROFILE_TAG: pulumi.Output.from_input(profile).apply(profile_digest),
        },
        opts=pulumi.ResourceOptions.merge(
            placement.opts,
            pulumi.ResourceOptions(
                # Replicas join the gateway's pool and read the queue at first boot.
                depends_on=[gateway, *identities.replica_grants, *(reader.grants if reader else []), *copies],
                # A fixed fleet has no autoscale setting: its size is the spec's, applied on every `up`.
                ignore_changes=["sku.capacity"] if serving.replicas.scaling == "backlog" else [],
                # A new profile (model, image, boot) is a new scale set, created before the old one is deleted
                # (the set's name is Pulumi's, so both exist at once): blue/green behind the same backend pool.
                replace_on_changes=["virtualMachineProfile"],
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
    planner sizes it 0. The pool waits for the Standby Pool provider's grants to propagate."""
    size = plan.warm_pool_size
    if size <= 0:
        return None
    return azure_native.standbypool.StandbyVirtualMachinePool(
        f"{name}-standby",
        standby_virtual_machine_pool_name=group.tags.apply(
            lambda tags: standby_pool_name(name, (tags or {})[PROFILE_TAG])
        ),
        resource_group_name=placement.resource_group.name,
        attached_virtual_machine_scale_set_id=group.id,
        virtual_machine_state="Deallocated",
        elasticity_profile={"max_ready_capacity": size, "min_ready_capacity": size},
        tags=placement.tags,
        opts=pulumi.ResourceOptions.merge(
            placement.opts,
            pulumi.ResourceOptions(
                depends_on=[group, *identities.standby_ready],
                # A new scale set gets a new pool, filled from its profile (a new name: created before the old).
                replace_on_changes=["attachedVirtualMachineScaleSetId"],
            ),
        ),
    )
