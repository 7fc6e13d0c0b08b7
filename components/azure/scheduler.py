"""Slurm on Azure: a head VM (fixed private address, slurmctld state on a protected managed data disk), the
munge key in the stack's Key Vault, and the compute nodes' cloud-init, all from the neutral generator
(`accelstack.components.slurm`) with the Azure node platform.

The head and the nodes read the munge key with their own user-assigned identity ("Key Vault Secrets User" on
that one secret, granted before either boots). The head also copies the Lustre checkpoint directory to the
checkpoint container (Managed Lustre exports only to its dataset container), with a custom role that
cannot delete.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

import pulumi
import pulumi_azure_native as azure_native

from accelstack.clouds.azure.catalog import ACCELERATED_INSTANCES
from accelstack.components import slurm
from accelstack.components.azure.admin import ADMIN_USERNAME, admin_public_key, linux_configuration
from accelstack.components.azure.images import HEAD_IMAGE
from accelstack.components.azure.machine_learning import AzureMlScheduler
from accelstack.components.azure.node_platform import AzureNodePlatform
from accelstack.components.azure.provider import stack_tags
from accelstack.components.azure.storage import KEY_VAULT_SECRETS_USER, TrainingStorage
from accelstack.components.base import SchedulerResult
from accelstack.components.slurm.munge import munge_key
from accelstack.spec.models import TrainingStack

MUNGE_SECRET_NAME = "slurm-munge-key"
HEAD_OS_DISK_GIB = 64
STATE_DISK_GIB = 64
STATE_DISK_LUN = 0  # the head's only data disk: /dev/disk/azure/scsi1/lun0
# Appended to the head's and nodes' cloud-config: sshd refuses passwords too (the admin account has an SSH key
# only, components/azure/admin.py; reach the VMs with `az vm run-command` / serial console).
NO_SSH_PASSWORDS = "ssh_pwauth: false\n"


@dataclass
class AzureTrainingHandles:
    """What the scheduler needs from the training cluster."""

    resource_group: pulumi.Input[str]
    network_id: pulumi.Input[str]
    subnet_id: pulumi.Input[str]
    head_address: str
    zone: str
    storage: TrainingStorage
    nodes_identity: azure_native.managedidentity.UserAssignedIdentity
    checkpoint_interval_seconds: int
    # Role assignments the node scale set must wait for (the scheduler appends its own).
    node_grants: list[pulumi.Resource] = field(default_factory=list)


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def with_ssh_passwords_off(cloud_config: str) -> str:
    """The generator's cloud-config plus `ssh_pwauth: false` (a top-level key, appended)."""
    return cloud_config.rstrip("\n") + "\n" + NO_SSH_PASSWORDS


def build_scheduler(
    spec: TrainingStack, handles: AzureTrainingHandles, opts: pulumi.ResourceOptions
) -> SchedulerResult:
    kind = spec.training.scheduler.kind
    if kind == "slurm":
        return SlurmCluster(spec, handles, opts).result
    if kind == "managed":
        return AzureMlScheduler(spec, handles, opts).result
    return SchedulerResult()  # "none"


class SlurmCluster(pulumi.ComponentResource):
    def __init__(self, spec: TrainingStack, handles: AzureTrainingHandles, opts: pulumi.ResourceOptions):
        super().__init__("accelstack:azure:SlurmCluster", f"{spec.stack}-slurm", None, opts)
        name = spec.stack
        training = spec.training
        child = pulumi.ResourceOptions(parent=self)
        tags = stack_tags(spec)
        storage = handles.storage
        instance = ACCELERATED_INSTANCES.get(training.nodes.instance_type)
        rg = handles.resource_group

        randomness, key = munge_key(name, self)
        self.secret = azure_native.keyvault.Secret(
            f"{name}-munge-key",
            resource_group_name=rg,
            vault_name=storage.vault.name,
            secret_name=MUNGE_SECRET_NAME,
            properties={
                # mypy solves Output.secret's Input[T] against an Output as Never; it is Output[str].
                "value": pulumi.Output.secret(key.base64),  # type: ignore[arg-type]
                "content_type": "application/octet-stream;base64",
            },
            tags=tags,
            opts=pulumi.ResourceOptions(
                parent=self, protect=True, retain_on_delete=True, additional_secret_outputs=["properties"]
            ),
        )
        secret_uri = self.secret.properties.secret_uri
        handles.node_grants.append(
            storage.grant(
                f"{name}-nodes-munge-key", self.secret.id, KEY_VAULT_SECRETS_USER, handles.nodes_identity.principal_id
            )
        )

        # The head's own identity: the munge key and, where Lustre cannot export, writing checkpoints.
        self.head_identity = azure_native.managedidentity.UserAssignedIdentity(
            f"{name}-head-id", resource_group_name=rg, tags=tags, opts=child
        )
        head_grants: list[pulumi.Resource] = [
            storage.grant(
                f"{name}-head-munge-key", self.secret.id, KEY_VAULT_SECRETS_USER, self.head_identity.principal_id
            )
        ]
        head_nodes = slurm.Nodes(AzureNodePlatform(), instance)
        if slurm.checkpoint_export_units(spec, head_nodes) and storage.checkpoint_container is not None:
            head_grants.append(
                storage.grant(
                    f"{name}-head-checkpoints",
                    storage.checkpoint_container.id,
                    "",
                    self.head_identity.principal_id,
                    role_id=storage.checkpoint_writer_role,
                )
            )

        self.state_disk = azure_native.compute.Disk(
            f"{name}-slurmctld-state",
            resource_group_name=rg,
            disk_size_gb=STATE_DISK_GIB,
            sku={"name": "Premium_LRS"},
            creation_data={"create_option": "Empty"},
            zones=[handles.zone],  # a zonal VM attaches only disks of its zone
            network_access_policy="DenyAll",  # no SAS export of the state
            public_network_access="Disabled",
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, protect=True, retain_on_delete=True),
        )
        self.nic = azure_native.network.NetworkInterface(
            f"{name}-head",
            resource_group_name=rg,
            ip_configurations=[
                {
                    "name": "primary",
                    "primary": True,
                    "subnet": {"id": handles.subnet_id},
                    # Fixed: the nodes reach slurmctld here, and a rebuilt head keeps it.
                    "private_ip_allocation_method": "Static",
                    "private_ip_address": handles.head_address,
                }
            ],
            enable_accelerated_networking=True,
            tags=tags,
            opts=child,
        )
        admin_key = admin_public_key(f"{name}-head", pulumi.ResourceOptions(parent=self, provider=randomness))
        lustre_address = storage.lustre_address or pulumi.Output.from_input("")
        lustre_mount = storage.lustre_mount_name or pulumi.Output.from_input("")

        def head_cloud_init(values: list[str]) -> str:
            nodes = slurm.Nodes(AzureNodePlatform(identity_client_id=values[3]), instance)
            deploy = slurm.DeployValues(
                head_address=handles.head_address,
                munge_key_secret=values[0],
                state_volume=str(STATE_DISK_LUN),
                lustre_dns_name=values[1],
                lustre_mount_name=values[2],
                checkpoint_interval_seconds=handles.checkpoint_interval_seconds,
            )
            return b64(with_ssh_passwords_off(slurm.head_cloud_init(spec, nodes, deploy)))

        head_data = pulumi.Output.all(secret_uri, lustre_address, lustre_mount, self.head_identity.client_id).apply(
            head_cloud_init
        )
        self.head = azure_native.compute.VirtualMachine(
            f"{name}-head",
            resource_group_name=rg,
            hardware_profile={"vm_size": training.scheduler.head_node.instance_type},
            storage_profile={
                "image_reference": HEAD_IMAGE,
                "os_disk": {
                    "create_option": "FromImage",
                    "disk_size_gb": HEAD_OS_DISK_GIB,
                    "managed_disk": {"storage_account_type": "Premium_LRS"},
                    "delete_option": "Delete",
                },
                # Detach, never delete, when the head goes: the state disk outlives every head.
                "data_disks": [
                    {
                        "lun": STATE_DISK_LUN,
                        "create_option": "Attach",
                        "managed_disk": {"id": self.state_disk.id},
                        "delete_option": "Detach",
                    }
                ],
            },
            os_profile={
                "computer_name": f"{name}-head",
                "admin_username": ADMIN_USERNAME,
                "custom_data": head_data,
                "linux_configuration": linux_configuration(admin_key),
            },
            network_profile={"network_interfaces": [{"id": self.nic.id, "primary": True}]},
            identity={"type": "UserAssigned", "user_assigned_identities": [self.head_identity.id]},
            security_profile={
                "security_type": "TrustedLaunch",
                "uefi_settings": {"secure_boot_enabled": True, "v_tpm_enabled": True},
            },
            zones=[handles.zone],
            tags={**tags, "accelstack:role": "slurm-head"},
            # customData is read once, at first boot: a Slurm change rebuilds the head (its state is on the
            # disk and its address on the NIC, so nothing else changes). delete_before_replace: the NIC and
            # the disk attach to one VM at a time. depends_on: the head reads the munge key at boot.
            opts=pulumi.ResourceOptions(
                parent=self,
                replace_on_changes=["osProfile.customData"],
                delete_before_replace=True,
                ignore_changes=["osProfile.adminPassword"],
                depends_on=head_grants,
                additional_secret_outputs=["osProfile"],
            ),
        )

        def compute_cloud_init(values: list[str]) -> str:
            nodes = slurm.Nodes(AzureNodePlatform(identity_client_id=values[3]), instance)
            deploy = slurm.DeployValues(
                head_address=handles.head_address,
                munge_key_secret=values[0],
                lustre_dns_name=values[1],
                lustre_mount_name=values[2],
                checkpoint_interval_seconds=handles.checkpoint_interval_seconds,
            )
            return with_ssh_passwords_off(slurm.compute_cloud_init(spec, nodes, deploy))

        compute_user_data = pulumi.Output.all(
            secret_uri, lustre_address, lustre_mount, handles.nodes_identity.client_id
        ).apply(compute_cloud_init)
        outputs: dict[str, pulumi.Input] = {
            "scheduler": "slurm",
            "slurmHeadAddress": handles.head_address,
            "slurmHeadInstance": self.head.id,
            "mungeKeySecret": self.secret.id,
        }
        self.result = SchedulerResult(compute_user_data=compute_user_data, outputs=outputs, component=self)
        self.register_outputs({"headAddress": handles.head_address, "mungeKeySecret": self.secret.id})
