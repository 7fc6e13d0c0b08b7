"""Slurm on OCI: a head VM (a fixed private address; slurmctld state on a protected, retained block volume encrypted
with the stack key), the munge key in the stack's Vault, and the compute nodes' cloud-init, all from the neutral
generator (`accelstack.components.slurm`) with the OCI node platform.

The head and the nodes read the munge key as instance principals (the stack compartment's dynamic group, allowed to
read that one secret's bundle). Slurm's configuration files are a metadata key of the head beside user_data: OCI
updates metadata in place (UpdateInstance), the head polls its own metadata service for it (which answers only that
instance: no grant), and only a user_data change rebuilds the head.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

import pulumi
import pulumi_oci as oci
import pulumi_random as random

from accelstack.clouds.oci import catalog, names
from accelstack.clouds.oci.catalog import SLURM_CONFIG_METADATA_KEY, STATE_DEVICE
from accelstack.components.node_platform import NodePlatform
from accelstack.components.oci.images import image_for_shape
from accelstack.components.oci.network import TrainingNetwork
from accelstack.components.oci.node_platform import OciNodePlatform
from accelstack.components.oci.storage import TrainingStorage
from accelstack.components.recipes.slurm import (
    HeadNode,
    MungeSecret,
    NodeRole,
    SlurmConfig,
    SlurmParts,
    SlurmRecipe,
    StateVolume,
)

HEAD_BOOT_GB = 100
STATE_VOLUME_GB = 64
# What replaces the head: its cloud-init (read once, at first boot), and nothing else of its metadata.
HEAD_REPLACED_ON = ["metadata.user_data"]


@dataclass
class OciTrainingHandles:
    """What the Slurm parts build from (the training parts' network, storage and identity)."""

    network: TrainingNetwork
    storage: TrainingStorage
    availability_domain: pulumi.Output[str]
    compartment_id: str
    tags: dict[str, str]
    nodes_group_name: pulumi.Output[str]  # the stack's own dynamic group, or its landing stack's for its side
    node_grants: list[pulumi.Resource] = field(default_factory=list)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class OciSlurmParts(SlurmParts[OciTrainingHandles]):
    """Slurm's parts on OCI: the munge key in Vault, the instance principal's read of it, a fixed address, a
    protected block volume and a flexible head VM without a public IP."""

    def _common(self) -> dict[str, object]:
        return {"compartment_id": self.handles.compartment_id, "freeform_tags": self.handles.tags}

    def munge_secret(self, key: random.RandomBytes) -> MungeSecret:
        ctx, storage = self.ctx, self.handles.storage
        self.secret = oci.vault.Secret(
            f"{ctx.name}-munge-key",
            secret_name=f"{ctx.name}-munge-key",
            vault_id=storage.vault.id,
            key_id=storage.key.id,
            # BASE64 content: the raw key bytes, which the node prints decoded.
            secret_content={"content_type": "BASE64", "content": key.base64},
            **self._common(),
            opts=pulumi.ResourceOptions(parent=ctx.parent, protect=True, retain_on_delete=True),
        )
        return MungeSecret(self.secret.id, self.secret.id)

    def nodes_read_secret(self, secret: MungeSecret) -> pulumi.Resource:
        """The compartment's dynamic group reads that one secret's bundle (the head is of the same group)."""
        ctx, handles = self.ctx, self.handles
        group = handles.nodes_group_name
        return oci.identity.Policy(
            f"{ctx.name}-munge-key",
            compartment_id=handles.compartment_id,
            name=names.iam_name(ctx.name, "munge-key"),
            description=f"accelstack {ctx.name}: the Slurm nodes and head read the munge key",
            statements=pulumi.Output.all(group, self.secret.id).apply(
                lambda found: [
                    f"allow dynamic-group {found[0]} to read secret-bundles in compartment id "
                    f"{handles.compartment_id} where target.secret.id = '{found[1]}'"
                ]
            ),
            freeform_tags=handles.tags,
            opts=pulumi.ResourceOptions(parent=ctx.parent, depends_on=list(handles.node_grants)),
        )

    def head_identity(self, secret: MungeSecret) -> list[pulumi.Resource]:
        """The head is an instance of the stack's compartment: it reads with the nodes' dynamic group, whose grants
        (the munge key, the data) it waits for."""
        return list(self.ctx.node_grants)

    def slurm_config(self, bundle: str) -> SlurmConfig:
        self.config_bundle = bundle
        return SlurmConfig(SLURM_CONFIG_METADATA_KEY)

    def head_reads_config(self, config: SlurmConfig) -> list[pulumi.Resource]:
        return []  # the metadata service answers the instance's own metadata to that instance alone

    def head_reads_datasets(self) -> list[pulumi.Resource]:
        return []  # the dynamic group's policy already reads the dataset bucket (training.py node_identity)

    def head_writes_checkpoints(self) -> list[pulumi.Resource]:
        return []  # and creates, never deletes nor overwrites, checkpoints

    def head_network(self) -> None:
        """Nothing to reserve: the head's private IP is fixed in its VNIC (createVnicDetails.privateIp), and the
        nodes' NSG admits the VCN."""

    def state_volume(self) -> StateVolume:
        ctx, handles = self.ctx, self.handles
        self.state = oci.core.Volume(
            f"{ctx.name}-slurmctld-state",
            availability_domain=handles.availability_domain,
            size_in_gbs=str(STATE_VOLUME_GB),
            kms_key_id=handles.storage.key.id,
            display_name=f"{ctx.name}-slurmctld-state",
            **self._common(),
            opts=pulumi.ResourceOptions(parent=ctx.parent, protect=True, retain_on_delete=True),
        )
        return StateVolume(STATE_DEVICE)

    def head_boot_address(self) -> pulumi.Input[str]:
        return self.handles.network.head_address

    def head_node(self, user_data: pulumi.Output[str], waits_for: list[pulumi.Resource]) -> HeadNode:
        ctx, handles = self.ctx, self.handles
        shape = ctx.spec.training.scheduler.head_node.instance_type
        ocpus, memory_gb = catalog.HEAD_SHAPES[shape]
        network = handles.network
        head = oci.core.Instance(
            f"{ctx.name}-head",
            availability_domain=handles.availability_domain,
            shape=shape,
            shape_config={"ocpus": ocpus, "memory_in_gbs": memory_gb},
            source_details={
                "source_type": "image",
                "source_id": image_for_shape(handles.compartment_id, shape, pulumi.InvokeOptions(parent=ctx.parent)),
                "boot_volume_size_in_gbs": str(HEAD_BOOT_GB),
            },
            create_vnic_details={
                "subnet_id": network.subnet.id,
                "assign_public_ip": "false",
                "private_ip": network.head_address,
                "nsg_ids": [network.nodes_nsg.id],
                "hostname_label": "slurmhead",
            },
            metadata={
                "user_data": user_data.apply(_b64),
                SLURM_CONFIG_METADATA_KEY: self.config_bundle,
            },
            display_name=f"{ctx.name}-head",
            **self._common(),
            # user_data is read once, at first boot: a change of the head's setup rebuilds it (its state is on the
            # volume, its address fixed); a newer image does not. The volume attaches to one head at a time.
            opts=pulumi.ResourceOptions(
                parent=ctx.parent,
                replace_on_changes=HEAD_REPLACED_ON,
                delete_before_replace=True,
                ignore_changes=["sourceDetails"],
                depends_on=waits_for,
            ),
        )
        oci.core.VolumeAttachment(
            f"{ctx.name}-slurmctld-state",
            attachment_type="paravirtualized",
            instance_id=head.id,
            volume_id=self.state.id,
            device=STATE_DEVICE,
            display_name=f"{ctx.name}-slurmctld-state",
            opts=pulumi.ResourceOptions(parent=ctx.parent),
        )
        return HeadNode(head.id, network.head_address)

    def platform(self, role: NodeRole) -> pulumi.Output[NodePlatform]:
        return pulumi.Output.from_input(OciNodePlatform())


class SlurmCluster(SlurmRecipe[OciTrainingHandles]):
    """Slurm on OCI: the Slurm recipe over `OciSlurmParts`."""

    cloud = "oci"
    parts_class = OciSlurmParts
