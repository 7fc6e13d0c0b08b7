"""Slurm on Google Cloud: a head VM (fixed, reserved private address; slurmctld state on a protected,
CMEK-encrypted persistent disk), the munge key in Secret Manager, and the compute nodes' cloud-init, all from
the neutral generator (`accelstack.components.slurm`) with the GCP node platform.

The head and the nodes read the munge key with their own service accounts (secretAccessor on that one
secret, granted before either boots). The head also copies the Lustre checkpoint directory to the
checkpoint bucket (Managed Lustre exports only when asked), with objectCreator: it cannot delete. Slurm's
configuration files are a second metadata key of the head, beside user-data: Compute Engine updates metadata in
place (setMetadata), the head polls its own metadata server for it (which answers only that VM: no grant), and
only a user-data change rebuilds the head.
Google's Ubuntu images run cloud-init from the `user-data` metadata key
(cloud.google.com/compute/docs/instances/startup-scripts/linux: cloud-init images read user-data).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import pulumi
import pulumi_gcp as gcp
import pulumi_random as random

from accelstack.clouds.base import Feature
from accelstack.clouds.gcp import names
from accelstack.components.gcp.images import HEAD_IMAGE, SHIELDED_VM
from accelstack.components.gcp.network import TrainingNetwork
from accelstack.components.gcp.node_platform import GcpNodePlatform
from accelstack.components.gcp.provider import CLOUD_PLATFORM_SCOPE, resource_id
from accelstack.components.gcp.slurm_accounting import accounting_database
from accelstack.components.gcp.storage import OBJECT_CREATOR, OBJECT_VIEWER, TrainingStorage
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

HEAD_BOOT_GIB = 64
STATE_DISK_GIB = 64
STATE_DEVICE_NAME = "slurmctld-state"  # /dev/disk/by-id/google-slurmctld-state on the head
SECRET_ACCESSOR = "roles/secretmanager.secretAccessor"
# OS Login instead of metadata SSH keys: who may log in is IAM (roles/compute.osLogin), not a key in metadata
# (cloud.google.com/compute/docs/oslogin).
LOGIN_METADATA = {"enable-oslogin": "TRUE", "block-project-ssh-keys": "TRUE"}
# The head's metadata key holding Slurm's configuration files (config_delivery's bundle; a value may take 256 KB:
# cloud.google.com/compute/docs/metadata/setting-custom-metadata#limitations).
SLURM_CONFIG_METADATA_KEY = "accelstack-slurm-config"
# What replaces the head: its cloud-init (read once, at first boot), and nothing else of its metadata.
HEAD_REPLACED_ON = ['metadata["user-data"]']


@dataclass
class GcpTrainingHandles:
    """What the scheduler needs from the training cluster."""

    network: TrainingNetwork
    storage: TrainingStorage
    # The nodes' own service account (None under Cluster Director, whose VMs take none: see cluster_director.py).
    nodes_account: gcp.serviceaccount.Account | None
    checkpoint_interval_seconds: int
    # Grants the node group must wait for (the scheduler appends its own).
    node_grants: list[pulumi.Resource] = field(default_factory=list)


class GcpSlurmParts(SlurmParts[GcpTrainingHandles]):
    """Slurm's parts on Google Cloud: the munge key in Secret Manager (one region), the head's own service
    account, a reserved internal address, a CMEK-encrypted state disk, and a shielded head VM on OS Login."""

    def munge_secret(self, key: random.RandomBytes) -> MungeSecret:
        ctx = self.ctx
        name, parent = ctx.name, ctx.parent
        self.secret = gcp.secretmanager.Secret(
            f"{name}-munge-key",
            secret_id=names.munge_secret_id(name),
            replication={"user_managed": {"replicas": [{"location": ctx.spec.account.region}]}},
            opts=pulumi.ResourceOptions(parent=parent, protect=True, retain_on_delete=True),
        )
        version = gcp.secretmanager.SecretVersion(
            f"{name}-munge-key",
            secret=self.secret.id,
            # The raw key bytes: the API base64-decodes secret_data, and the node prints payload.data decoded.
            secret_data=key.base64,
            is_secret_data_base64=True,
            opts=pulumi.ResourceOptions(parent=parent, protect=True, retain_on_delete=True),
        )
        # projects/<number>/secrets/<id>/versions/<n>: what the node's secret command reads.
        return MungeSecret(version.name, self.secret.id)

    def _reads_key(self, resource_name: str, account: gcp.serviceaccount.Account) -> pulumi.Resource:
        return gcp.secretmanager.SecretIamMember(
            resource_name, secret_id=self.secret.id, role=SECRET_ACCESSOR, member=account.member, opts=self.ctx.child
        )

    def nodes_read_secret(self, secret: MungeSecret) -> pulumi.Resource:
        nodes_account = self.handles.nodes_account
        assert nodes_account is not None  # the Slurm path's nodes have their own account
        return self._reads_key(f"{self.ctx.name}-nodes-munge-key", nodes_account)

    def head_identity(self, secret: MungeSecret) -> list[pulumi.Resource]:
        name = self.ctx.name
        self.head_account = gcp.serviceaccount.Account(
            f"{name}-head",
            account_id=resource_id(name, "head", 30),
            display_name=f"{name} Slurm head",
            opts=self.ctx.child,
        )
        return [self._reads_key(f"{name}-head-munge-key", self.head_account)]

    def slurm_config(self, bundle: str) -> SlurmConfig:
        """A metadata key of the head itself (set in `head_node`): updated in place, never a new head."""
        self.config_bundle = bundle
        return SlurmConfig(SLURM_CONFIG_METADATA_KEY)

    def head_reads_config(self, config: SlurmConfig) -> list[pulumi.Resource]:
        """Nothing to grant: the metadata server answers the VM's own metadata to that VM alone."""
        return []

    def head_reads_datasets(self) -> list[pulumi.Resource]:
        storage = self.handles.storage
        return [
            storage.grant(
                f"{self.ctx.name}-head-datasets", storage.dataset_bucket_name, OBJECT_VIEWER, self.head_account.member
            )
        ]

    def head_writes_checkpoints(self) -> list[pulumi.Resource]:
        storage = self.handles.storage
        bucket = storage.checkpoint_bucket_name
        assert bucket is not None  # the generator exports only to a stated checkpoint bucket
        return [
            storage.grant(
                f"{self.ctx.name}-head-checkpoints-{role.rsplit('.', 1)[1]}", bucket, role, self.head_account.member
            )
            for role in (OBJECT_VIEWER, OBJECT_CREATOR)
        ]

    def head_network(self) -> None:
        """The fixed address, reserved so no node takes it while the head is being replaced."""
        ctx, network = self.ctx, self.handles.network
        self.address = gcp.compute.Address(
            f"{ctx.name}-head",
            address_type="INTERNAL",
            subnetwork=network.nodes_subnet.id,
            address=network.head_address,
            region=ctx.spec.account.region,
            opts=ctx.child,
        )

    # The Cloud SQL instance's server CA certificates, a metadata key of the head (set by accounting_database).
    accounting_ca_metadata: Mapping[str, pulumi.Input[str]] = MappingProxyType({})

    @implements(Feature.SLURM_ACCOUNTING)
    def accounting_database(self, password: random.RandomPassword) -> AccountingDatabase:
        return accounting_database(self, password)

    def state_volume(self) -> StateVolume:
        ctx, handles = self.ctx, self.handles
        self.state_disk = gcp.compute.Disk(
            f"{ctx.name}-slurmctld-state",
            zone=handles.network.zone,
            size=STATE_DISK_GIB,
            type="pd-balanced",
            disk_encryption_key={"kms_key_self_link": handles.storage.key.id},
            opts=pulumi.ResourceOptions(
                parent=ctx.parent,
                protect=True,
                retain_on_delete=True,
                depends_on=handles.storage.key_usable("compute"),
            ),
        )
        return StateVolume(STATE_DEVICE_NAME)

    def head_boot_address(self) -> pulumi.Input[str]:
        return self.handles.network.head_address

    def head_node(self, user_data: pulumi.Output[str], waits_for: list[pulumi.Resource]) -> HeadNode:
        ctx, network = self.ctx, self.handles.network
        head = gcp.compute.Instance(
            f"{ctx.name}-head",
            zone=network.zone,
            machine_type=ctx.spec.training.scheduler.head_node.instance_type,
            boot_disk={
                "auto_delete": True,
                "initialize_params": {"image": HEAD_IMAGE, "size": HEAD_BOOT_GIB, "type": "pd-balanced"},
            },
            # Detached, never deleted, when the head goes: the state disk outlives every head.
            attached_disks=[{"source": self.state_disk.id, "device_name": STATE_DEVICE_NAME, "mode": "READ_WRITE"}],
            network_interfaces=[
                # No access_configs: no external IP.
                {"subnetwork": network.nodes_subnet.id, "network_ip": self.address.address, "nic_type": "GVNIC"}
            ],
            service_account={"email": self.head_account.email, "scopes": [CLOUD_PLATFORM_SCOPE]},
            metadata={
                **LOGIN_METADATA,
                "user-data": user_data,
                SLURM_CONFIG_METADATA_KEY: self.config_bundle,
                **self.accounting_ca_metadata,
            },
            shielded_instance_config=SHIELDED_VM,
            labels={"accelstack-role": "slurm-head"},
            allow_stopping_for_update=True,
            # user-data is read once, at first boot: a change of the head's setup rebuilds it (its state is on the
            # disk and its address reserved). The other keys (Slurm's configuration, OS Login, the accounting
            # database's CA) update in place.
            # delete_before_replace: the disk attaches read-write to one VM at a time.
            opts=pulumi.ResourceOptions(
                parent=ctx.parent,
                replace_on_changes=HEAD_REPLACED_ON,
                delete_before_replace=True,
                depends_on=waits_for,
            ),
        )
        return HeadNode(head.id, network.head_address)

    def platform(self, role: NodeRole) -> pulumi.Output[NodePlatform]:
        """Head and compute nodes: one platform (each reads with its VM's own service account)."""
        return pulumi.Output.from_input(GcpNodePlatform())


class SlurmCluster(SlurmRecipe[GcpTrainingHandles]):
    """Slurm on Google Cloud: the Slurm recipe over `GcpSlurmParts`."""

    cloud = "gcp"
    parts_class = GcpSlurmParts
