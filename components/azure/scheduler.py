"""Slurm on Azure: a head VM (fixed private address, slurmctld state on a protected managed data disk), the
munge key in the stack's Key Vault, and the compute nodes' cloud-init, all from the neutral generator
(`accelstack.components.slurm`) with the Azure node platform.

The head and the nodes read the munge key with their own user-assigned identity ("Key Vault Secrets User" on
that one secret, granted before either boots). Slurm's configuration files are a second secret of the vault,
which only the head reads: a day-2 `up` writes a new version in place and the head applies it, so its
customData (which would rebuild it) carries none of them. The head also copies the Lustre checkpoint directory to the
checkpoint container (Managed Lustre exports only to its dataset container), with a custom role that
cannot delete.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

import pulumi
import pulumi_azure_native as azure_native
import pulumi_random as random

from accelstack.clouds.base import Feature
from accelstack.components.azure.admin import ADMIN_USERNAME, admin_public_key, linux_configuration
from accelstack.components.azure.images import HEAD_IMAGE
from accelstack.components.azure.network import TrainingNetwork
from accelstack.components.azure.node_platform import AzureNodePlatform
from accelstack.components.azure.provider import stack_tags
from accelstack.components.azure.slurm_accounting import accounting_database
from accelstack.components.azure.storage import KEY_VAULT_SECRETS_USER, STORAGE_BLOB_DATA_READER, TrainingStorage
from accelstack.components.node_platform import NodePlatform
from accelstack.components.recipes.implements import implements
from accelstack.components.recipes.slurm import (
    AccountingDatabase,
    HeadNode,
    MungeSecret,
    NodeRole,
    SlurmConfig,
    SlurmParts,
    SlurmRecipe,
    StateVolume,
)

MUNGE_SECRET_NAME = "slurm-munge-key"
# Slurm's configuration files (config_delivery's bundle). A new value is a new version of the same secret: Key
# Vault's secret PUT (azure-native keyvault:Secret) updates in place; only the vault, group and name are fixed.
SLURM_CONFIG_SECRET_NAME = "slurm-config"
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
    # The VNet and its subnets (slurmdbd's database adds a delegated subnet after them).
    vnet: TrainingNetwork | None = None


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def with_ssh_passwords_off(cloud_config: str) -> str:
    """The generator's cloud-config plus `ssh_pwauth: false` (a top-level key, appended)."""
    return cloud_config.rstrip("\n") + "\n" + NO_SSH_PASSWORDS


class AzureSlurmParts(SlurmParts[AzureTrainingHandles]):
    """Slurm's parts on Azure: the munge key in the stack's Key Vault, the head's own user-assigned identity, a
    NIC at the fixed address, a Premium state disk that cannot be exported, and a Trusted Launch head VM."""

    def munge_secret(self, key: random.RandomBytes) -> MungeSecret:
        handles = self.handles
        self.secret = azure_native.keyvault.Secret(
            f"{self.ctx.name}-munge-key",
            resource_group_name=handles.resource_group,
            vault_name=handles.storage.vault.name,
            secret_name=MUNGE_SECRET_NAME,
            properties={
                # mypy solves Output.secret's Input[T] against an Output as Never; it is Output[str].
                "value": pulumi.Output.secret(key.base64),  # type: ignore[arg-type]
                "content_type": "application/octet-stream;base64",
            },
            tags=stack_tags(self.ctx.spec),
            opts=pulumi.ResourceOptions(
                parent=self.ctx.parent, protect=True, retain_on_delete=True, additional_secret_outputs=["properties"]
            ),
        )
        return MungeSecret(self.secret.properties.secret_uri, self.secret.id)

    def nodes_read_secret(self, secret: MungeSecret) -> pulumi.Resource:
        handles = self.handles
        return handles.storage.grant(
            f"{self.ctx.name}-nodes-munge-key",
            self.secret.id,
            KEY_VAULT_SECRETS_USER,
            handles.nodes_identity.principal_id,
        )

    def head_identity(self, secret: MungeSecret) -> list[pulumi.Resource]:
        """The head's own identity: the munge key and, where Lustre cannot export or import, the data."""
        ctx, handles = self.ctx, self.handles
        self.identity = azure_native.managedidentity.UserAssignedIdentity(
            f"{ctx.name}-head-id", resource_group_name=handles.resource_group, tags=stack_tags(ctx.spec), opts=ctx.child
        )
        return [
            handles.storage.grant(
                f"{ctx.name}-head-munge-key", self.secret.id, KEY_VAULT_SECRETS_USER, self.identity.principal_id
            )
        ]

    def slurm_config(self, bundle: str) -> SlurmConfig:
        ctx, handles = self.ctx, self.handles
        self.config_secret = azure_native.keyvault.Secret(
            f"{ctx.name}-slurm-config",
            resource_group_name=handles.resource_group,
            vault_name=handles.storage.vault.name,
            secret_name=SLURM_CONFIG_SECRET_NAME,
            properties={"value": bundle, "content_type": "application/gzip;base64"},
            tags=stack_tags(ctx.spec),
            # Protected and kept on destroy like the munge key (every secret of the vault is): the vault
            # soft-deletes secrets, and a deleted name cannot be created again in it until purged.
            opts=pulumi.ResourceOptions(parent=ctx.parent, protect=True, retain_on_delete=True),
        )
        # The URI without a version: Key Vault answers the latest (what the head's config command reads).
        return SlurmConfig(self.config_secret.properties.secret_uri)

    def head_reads_config(self, config: SlurmConfig) -> list[pulumi.Resource]:
        ctx, storage = self.ctx, self.handles.storage
        return [
            storage.grant(
                f"{ctx.name}-head-slurm-config",
                self.config_secret.id,
                KEY_VAULT_SECRETS_USER,
                self.identity.principal_id,
            )
        ]

    def head_reads_datasets(self) -> list[pulumi.Resource]:
        storage = self.handles.storage
        return [
            storage.grant(
                f"{self.ctx.name}-head-datasets",
                storage.dataset_container.id,
                STORAGE_BLOB_DATA_READER,
                self.identity.principal_id,
            )
        ]

    def head_writes_checkpoints(self) -> list[pulumi.Resource]:
        storage = self.handles.storage
        assert storage.checkpoint_container is not None  # the generator exports only to a stated container
        return [
            storage.grant(
                f"{self.ctx.name}-head-checkpoints",
                storage.checkpoint_container.id,
                "",
                self.identity.principal_id,
                role_id=storage.checkpoint_writer_role,
            )
        ]

    def head_network(self) -> None:
        ctx, handles = self.ctx, self.handles
        self.nic = azure_native.network.NetworkInterface(
            f"{ctx.name}-head",
            resource_group_name=handles.resource_group,
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
            tags=stack_tags(ctx.spec),
            opts=ctx.child,
        )

    @implements(Feature.SLURM_ACCOUNTING)
    def accounting_database(self, password: random.RandomPassword) -> AccountingDatabase:
        return accounting_database(self, password)

    def state_volume(self) -> StateVolume:
        ctx, handles = self.ctx, self.handles
        self.state_disk = azure_native.compute.Disk(
            f"{ctx.name}-slurmctld-state",
            resource_group_name=handles.resource_group,
            disk_size_gb=STATE_DISK_GIB,
            sku={"name": "Premium_LRS"},
            creation_data={"create_option": "Empty"},
            zones=[handles.zone],  # a zonal VM attaches only disks of its zone
            network_access_policy="DenyAll",  # no SAS export of the state
            public_network_access="Disabled",
            tags=stack_tags(ctx.spec),
            opts=pulumi.ResourceOptions(parent=ctx.parent, protect=True, retain_on_delete=True),
        )
        return StateVolume(str(STATE_DISK_LUN))

    def head_boot_address(self) -> pulumi.Input[str]:
        return self.handles.head_address

    def head_node(self, user_data: pulumi.Output[str], waits_for: list[pulumi.Resource]) -> HeadNode:
        ctx, handles = self.ctx, self.handles
        name, parent = ctx.name, ctx.parent
        # The munge key's randomness provider: random values make no cloud calls, one provider serves both.
        admin_key = admin_public_key(f"{name}-head", pulumi.ResourceOptions(parent=parent, provider=ctx.randomness))
        head = azure_native.compute.VirtualMachine(
            f"{name}-head",
            resource_group_name=handles.resource_group,
            hardware_profile={"vm_size": ctx.spec.training.scheduler.head_node.instance_type},
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
                "custom_data": user_data,
                "linux_configuration": linux_configuration(admin_key),
            },
            network_profile={"network_interfaces": [{"id": self.nic.id, "primary": True}]},
            identity={"type": "UserAssigned", "user_assigned_identities": [self.identity.id]},
            security_profile={
                "security_type": "TrustedLaunch",
                "uefi_settings": {"secure_boot_enabled": True, "v_tpm_enabled": True},
            },
            zones=[handles.zone],
            tags={**stack_tags(ctx.spec), "accelstack:role": "slurm-head"},
            # customData is read once, at first boot: a change of the head's setup rebuilds it (its state is on
            # the disk and its address on the NIC, so nothing else changes; Slurm's configuration files are in the
            # vault, so the node count and partitions never do). delete_before_replace: the NIC and the disk
            # attach to one VM at a time. depends_on: the head reads the munge key and its configuration at boot.
            opts=pulumi.ResourceOptions(
                parent=parent,
                replace_on_changes=["osProfile.customData"],
                delete_before_replace=True,
                ignore_changes=["osProfile.adminPassword"],
                depends_on=waits_for,
                additional_secret_outputs=["osProfile"],
            ),
        )
        return HeadNode(head.id, handles.head_address)

    def platform(self, role: NodeRole) -> pulumi.Output[NodePlatform]:
        """The node reads Key Vault and Blob with its own identity: the head's, or the compute nodes'."""
        identity = self.identity if role == "head" else self.handles.nodes_identity
        return identity.client_id.apply(lambda client_id: AzureNodePlatform(identity_client_id=client_id))

    def finish_boot(self, cloud_init: str, role: NodeRole) -> str:
        """ssh_pwauth off on every VM; a VirtualMachine takes customData base64-encoded (the scale set's is
        encoded where the training recipe's node group takes it)."""
        text = with_ssh_passwords_off(cloud_init)
        return b64(text) if role == "head" else text


class SlurmCluster(SlurmRecipe[AzureTrainingHandles]):
    """Slurm on Azure: the Slurm recipe over `AzureSlurmParts`."""

    cloud = "azure"
    parts_class = AzureSlurmParts
