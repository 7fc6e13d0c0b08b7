"""Slurm on Google Cloud: a head VM (fixed, reserved private address; slurmctld state on a protected,
CMEK-encrypted persistent disk), the munge key in Secret Manager, and the compute nodes' cloud-init, all from
the neutral generator (`accelstack.components.slurm`) with the GCP node platform.

The head and the nodes read the munge key with their own service accounts (secretAccessor on that one
secret, granted before either boots). The head also copies the Lustre checkpoint directory to the
checkpoint bucket (Managed Lustre exports only when asked), with objectCreator: it cannot delete.
Google's Ubuntu images run cloud-init from the `user-data` metadata key
(cloud.google.com/compute/docs/instances/startup-scripts/linux: cloud-init images read user-data).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from accelstack.clouds.gcp.catalog import ACCELERATED_INSTANCES
from accelstack.components import slurm
from accelstack.components.base import SchedulerResult
from accelstack.components.gcp.cluster_director import ClusterDirectorScheduler
from accelstack.components.gcp.images import HEAD_IMAGE, SHIELDED_VM
from accelstack.components.gcp.network import TrainingNetwork
from accelstack.components.gcp.node_platform import GcpNodePlatform
from accelstack.components.gcp.provider import CLOUD_PLATFORM_SCOPE, resource_id
from accelstack.components.gcp.storage import OBJECT_CREATOR, OBJECT_VIEWER, TrainingStorage
from accelstack.components.slurm.munge import munge_key
from accelstack.spec.models import TrainingStack

HEAD_BOOT_GIB = 64
STATE_DISK_GIB = 64
STATE_DEVICE_NAME = "slurmctld-state"  # /dev/disk/by-id/google-slurmctld-state on the head
SECRET_ACCESSOR = "roles/secretmanager.secretAccessor"
# OS Login instead of metadata SSH keys: who may log in is IAM (roles/compute.osLogin), not a key in metadata
# (cloud.google.com/compute/docs/oslogin).
LOGIN_METADATA = {"enable-oslogin": "TRUE", "block-project-ssh-keys": "TRUE"}


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


def build_scheduler(spec: TrainingStack, handles: GcpTrainingHandles, opts: pulumi.ResourceOptions) -> SchedulerResult:
    kind = spec.training.scheduler.kind
    if kind == "slurm":
        return SlurmCluster(spec, handles, opts).result
    if kind == "managed":
        return ClusterDirectorScheduler(spec, handles, opts).result
    return SchedulerResult()  # "none"


class SlurmCluster(pulumi.ComponentResource):
    def __init__(self, spec: TrainingStack, handles: GcpTrainingHandles, opts: pulumi.ResourceOptions):
        super().__init__("accelstack:gcp:SlurmCluster", f"{spec.stack}-slurm", None, opts)
        name = spec.stack
        training = spec.training
        child = pulumi.ResourceOptions(parent=self)
        storage, network = handles.storage, handles.network
        instance = ACCELERATED_INSTANCES.get(training.nodes.instance_type)

        _, key = munge_key(name, self)
        self.secret = gcp.secretmanager.Secret(
            f"{name}-munge-key",
            secret_id=f"{name}-munge-key",
            replication={"user_managed": {"replicas": [{"location": spec.account.region}]}},  # type: ignore[attr-defined]
            opts=pulumi.ResourceOptions(parent=self, protect=True, retain_on_delete=True),
        )
        self.secret_version = gcp.secretmanager.SecretVersion(
            f"{name}-munge-key",
            secret=self.secret.id,
            # The raw key bytes: the API base64-decodes secret_data, and the node prints payload.data decoded.
            secret_data=key.base64,
            is_secret_data_base64=True,
            opts=pulumi.ResourceOptions(parent=self, protect=True, retain_on_delete=True),
        )
        version_name = self.secret_version.name  # projects/<number>/secrets/<id>/versions/<n>

        def reads_key(resource_name: str, account: gcp.serviceaccount.Account) -> pulumi.Resource:
            return gcp.secretmanager.SecretIamMember(
                resource_name, secret_id=self.secret.id, role=SECRET_ACCESSOR, member=account.member, opts=child
            )

        assert handles.nodes_account is not None  # the Slurm path's nodes have their own account
        handles.node_grants.append(reads_key(f"{name}-nodes-munge-key", handles.nodes_account))

        self.head_account = gcp.serviceaccount.Account(
            f"{name}-head",
            account_id=resource_id(name, "head", 30),
            display_name=f"{name} Slurm head",
            opts=child,
        )
        head_grants: list[pulumi.Resource] = [reads_key(f"{name}-head-munge-key", self.head_account)]
        nodes = slurm.Nodes(GcpNodePlatform(), instance)  # head and compute nodes: one platform, one type
        if slurm.dataset_import_units(spec, nodes):  # the head copies the dataset into a file system that cannot
            head_grants.append(
                storage.grant(
                    f"{name}-head-datasets", storage.dataset_bucket_name, OBJECT_VIEWER, self.head_account.member
                )
            )
        if slurm.checkpoint_export_units(spec, nodes) and storage.checkpoint_bucket_name is not None:
            head_grants += [
                storage.grant(
                    f"{name}-head-checkpoints-{role.rsplit('.', 1)[1]}",
                    storage.checkpoint_bucket_name,
                    role,
                    self.head_account.member,
                )
                for role in (OBJECT_VIEWER, OBJECT_CREATOR)
            ]

        self.state_disk = gcp.compute.Disk(
            f"{name}-slurmctld-state",
            zone=network.zone,
            size=STATE_DISK_GIB,
            type="pd-balanced",
            disk_encryption_key={"kms_key_self_link": storage.key.id},
            opts=pulumi.ResourceOptions(
                parent=self, protect=True, retain_on_delete=True, depends_on=[storage.key_grants["compute"]]
            ),
        )
        # The fixed address, reserved so no node takes it while the head is being replaced.
        self.address = gcp.compute.Address(
            f"{name}-head",
            address_type="INTERNAL",
            subnetwork=network.nodes_subnet.id,
            address=network.head_address,
            region=spec.account.region,  # type: ignore[attr-defined]
            opts=child,
        )
        lustre_address = storage.lustre_address or pulumi.Output.from_input("")
        lustre_mount = storage.lustre_mount_name or pulumi.Output.from_input("")

        def head_cloud_init(values: list[str]) -> str:
            deploy = slurm.DeployValues(
                head_address=network.head_address,
                munge_key_secret=values[0],
                state_volume=STATE_DEVICE_NAME,
                lustre_dns_name=values[1],
                lustre_mount_name=values[2],
                checkpoint_interval_seconds=handles.checkpoint_interval_seconds,
            )
            return slurm.head_cloud_init(spec, nodes, deploy)

        head_data = pulumi.Output.all(version_name, lustre_address, lustre_mount).apply(head_cloud_init)
        self.head = gcp.compute.Instance(
            f"{name}-head",
            zone=network.zone,
            machine_type=training.scheduler.head_node.instance_type,
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
            metadata={**LOGIN_METADATA, "user-data": head_data},
            shielded_instance_config=SHIELDED_VM,
            labels={"accelstack-role": "slurm-head"},
            allow_stopping_for_update=True,
            # user-data is read once, at first boot: a Slurm change rebuilds the head (its state is on the disk
            # and its address reserved). delete_before_replace: the disk attaches read-write to one VM at a time.
            opts=pulumi.ResourceOptions(
                parent=self,
                replace_on_changes=["metadata"],
                delete_before_replace=True,
                depends_on=head_grants,
            ),
        )

        def compute_cloud_init(values: list[str]) -> str:
            deploy = slurm.DeployValues(
                head_address=network.head_address,
                munge_key_secret=values[0],
                lustre_dns_name=values[1],
                lustre_mount_name=values[2],
                checkpoint_interval_seconds=handles.checkpoint_interval_seconds,
            )
            return slurm.compute_cloud_init(spec, nodes, deploy)

        compute_user_data = pulumi.Output.all(version_name, lustre_address, lustre_mount).apply(compute_cloud_init)
        outputs: dict[str, pulumi.Input] = {
            "scheduler": "slurm",
            "slurmHeadAddress": network.head_address,
            "slurmHeadInstance": self.head.id,
            "mungeKeySecret": self.secret.id,
        }
        self.result = SchedulerResult(compute_user_data=compute_user_data, outputs=outputs, component=self)
        self.register_outputs({"headAddress": network.head_address, "mungeKeySecret": self.secret.id})
