"""The managed alternative on Google Cloud (`training.scheduler.kind: managed`): Cluster Director's managed Slurm
(`hypercomputecluster.Cluster`), on the stack's network, Managed Lustre and buckets.

Why Cluster Director and not Vertex AI persistent resources: it is Slurm, so jobs written for the stack's own
Slurm run unchanged (`sbatch` on a login node); it mounts Managed Lustre natively (Vertex AI custom jobs mount
NFS and Cloud Storage, not Lustre); and it offers the consumption options GPU capacity on Google Cloud comes in
(Spot, flex-start, reservations). Vertex AI would need a second job format and a second data path.

What the API checks, and how the stack meets it (magic-modules mmv1/products/hypercomputecluster/Cluster.yaml,
docs.cloud.google.com/cluster-director/docs):
- `clusterId` is a lowercase letter then letters and digits, 10 characters at most, and with `location` it is
  immutable: a change replaces the cluster, and since the id is fixed the old one is deleted first. The
  cluster keeps no data of its own: datasets and checkpoints live in the stack's Lustre and buckets, which
  Cluster Director only imports (`existingLustre`, `existingBucket`) and never deletes.
- One network resource at most: the stack's system VPC and nodes' subnet (`existingNetwork`). Cluster Director
  configures the GPU NICs of A4, A3 Ultra and A3 Mega itself (its rail-aligned fabric); the API takes no
  fabric VPCs, so the stack builds none for this scheduler.
- Compute: one resource per stack, bought as the spec says: Spot (`newSpotInstances`, termination DELETE),
  flex-start (`newFlexStartInstances`, `maxDuration` = maxRunHours), or a reservation (`newReservedInstances`,
  projects/<p>/zones/<z>/reservations/<r>: a specific reservation or a calendar-mode one). On-demand GPU nodes
  are not offered (the spec rules refuse them, and machine types Cluster Director does not run).
- Slurm: one node set on that compute resource, each partition of the spec over it. Reserved nodes are
  static (the reservation is paid for anyway); Spot and flex-start nodes are dynamic, created for the jobs
  that need them and gone after, up to `training.nodes.count`.
- Login node: `training.scheduler.headNode.instanceType` (an N2 standard type), OS Login, no external IP
  (reached through IAP, which the network's firewall admits on port 22).
- Mounts on every node and the login node: Lustre at `lustre.mountPath`, with checkpoints at `checkpoints.path`
  inside it as on the Slurm path; the login node plays the Slurm head's part and copies them to the checkpoint
  bucket on a timer, never deleting (the neutral generator's units, `gcloud storage rsync` without deletes).
  Without Lustre: the dataset bucket at /datasets and the checkpoint bucket at `checkpoints.path` (Cloud
  Storage FUSE; the stack's IAM lets nodes create objects, never delete them).
- Identity: the API the pinned provider speaks has no service account for the cluster's VMs, so they run as
  the project's Compute Engine default service account (the identity of VMs created without one:
  cloud.google.com/compute/docs/access/service-accounts#default_service_account). The stack grants that
  account only what the Slurm path's nodes get (read datasets, write checkpoints); keep it free of the
  project Editor grant Google once gave it (org constraint iam.automaticIamGrantsForDefaultServiceAccounts).
"""

from __future__ import annotations

import hashlib
import re
import shlex
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_gcp as gcp

from accelstack.clouds.gcp import catalog
from accelstack.components import slurm
from accelstack.components.base import SchedulerResult
from accelstack.components.gcp.node_platform import GcpNodePlatform
from accelstack.components.gcp.provider import account_of, stack_labels
from accelstack.components.node_environment import environment_script, node_environment
from accelstack.spec.models import TrainingStack

if TYPE_CHECKING:  # scheduler.py builds this scheduler from its handles
    from accelstack.components.gcp.scheduler import GcpTrainingHandles

SCHEDULER_NAME = "cluster-director"
COMPUTE_ID = "gpu"  # the compute resource and the node set on it
NODE_BOOT_GIB = 256
LOGIN_BOOT_GIB = 64
DATASETS_MOUNT = "/datasets"  # where the dataset bucket is mounted when there is no Lustre


def cluster_id(stack: str) -> str:
    """A cluster id Cluster Director takes (a lowercase letter, then letters and digits, 10 at most) that two
    stacks do not share: the stack's first letters and a digest of its whole name."""
    letters = re.sub(r"[^a-z0-9]", "", stack.lower())
    if not letters[:1].isalpha():
        letters = "c" + letters
    digest = hashlib.sha256(stack.encode()).hexdigest()[:5]
    return letters[: catalog.CLUSTER_DIRECTOR_ID_CHARS - len(digest)] + digest


def reservation_path(reservation: str, project: str, zone: str) -> str:
    """projects/<p>/zones/<z>/reservations/<r> from the spec's `<name>` or `projects/<p>/reservations/<name>`
    (a reservation shared from another project)."""
    owner, name = project, reservation
    if reservation.startswith("projects/"):
        owner, name = reservation.split("/")[1], reservation.rsplit("/", 1)[1]
    return f"projects/{owner}/zones/{zone}/reservations/{name}"


def compute_config(spec: TrainingStack, project: str, zone: str) -> dict[str, Any]:
    """How the GPU nodes are bought (the spec rules leave only what Cluster Director offers)."""
    nodes = spec.training.nodes
    if nodes.capacity == "spot":
        return {
            "new_spot_instances": {"machine_type": nodes.instance_type, "zone": zone, "termination_action": "DELETE"}
        }
    if nodes.capacity == "flex-start":
        hours = nodes.max_run_hours or catalog.FLEX_START_MAX_HOURS
        return {
            "new_flex_start_instances": {
                "machine_type": nodes.instance_type,
                "zone": zone,
                "max_duration": f"{hours * 3600}s",
            }
        }
    assert nodes.reservation_id is not None  # on-demand needs one here, capacity-block always names one
    return {"new_reserved_instances": {"reservation": reservation_path(nodes.reservation_id, project, zone)}}


def storage_mounts(spec: TrainingStack) -> list[tuple[str, str]]:
    """(storage resource id, mount path) on every node and the login node."""
    storage = spec.training.storage
    if storage.lustre is not None:
        return [("lustre", storage.lustre.mount_path)]
    mounts = [("datasets", DATASETS_MOUNT)]
    if storage.checkpoints is not None:
        mounts.append(("checkpoints", storage.checkpoints.path))
    return mounts


def login_script(spec: TrainingStack, interval_seconds: int) -> str:
    """The login node's startup script: the jobs' environment, and, where checkpoints live on Lustre, the
    timer copying them to their bucket (the Slurm head's units from the neutral generator)."""
    script = environment_script(node_environment(spec, interval_seconds))
    platform = GcpNodePlatform()
    nodes = slurm.Nodes(platform, catalog.ACCELERATED_INSTANCES.get(spec.training.nodes.instance_type))
    exports, imports = slurm.checkpoint_export_units(spec, nodes), slurm.dataset_import_units(spec, nodes)
    if not exports and not imports:
        return script
    # The units copy with `gcloud storage rsync`: installed first where the login image lacks the Cloud SDK
    # (Google's images carry it; a no-op then), rather than assumed.
    lines = [platform.tool_functions.rstrip("\n"), *([platform.tool_setup] if platform.tool_setup else [])]
    lines += [
        f"printf %s {shlex.quote(text)} > {shlex.quote('/etc/systemd/system/' + unit)}"
        for units in (exports, imports)
        for unit, text in units.items()
    ]
    copier = slurm.checkpoint_copier(spec, nodes) if exports else None
    if copier is not None:  # what the export unit runs: completed checkpoints only, never overwriting
        path = slurm.CHECKPOINT_EXPORT_PATH
        lines += [f"printf %s {shlex.quote(copier)} > {path}", f"chmod 0755 {path}"]
    lines.append("systemctl daemon-reload")
    if imports:  # in the background: the script must finish within Cluster Director's 5 minutes
        lines += [
            f"systemctl enable {slurm.DATASET_IMPORT_UNIT}.service",
            f"systemctl start --no-block {slurm.DATASET_IMPORT_UNIT}.service",
        ]
    if exports:
        lines.append(f"systemctl enable --now {slurm.CHECKPOINT_EXPORT_UNIT}.timer")
    return script + "\n".join(lines) + "\n"


def disk_type(project: str, zone: str, kind: str) -> str:
    return f"projects/{project}/zones/{zone}/diskTypes/{kind}"


class ClusterDirectorScheduler(pulumi.ComponentResource):
    """`cluster` (the hypercomputecluster Cluster) and `result` (what the training cluster exports)."""

    def __init__(self, spec: TrainingStack, handles: GcpTrainingHandles, opts: pulumi.ResourceOptions):
        super().__init__("accelstack:gcp:ClusterDirectorScheduler", f"{spec.stack}-cluster-director", None, opts)
        name = spec.stack
        training = spec.training
        account = account_of(spec)
        project, zone = account.project_id, handles.network.zone
        storage = handles.storage
        layout = catalog.nic_layout(training.nodes.instance_type)

        resources: list[dict[str, Any]] = []
        depends_on: list[pulumi.Resource] = list(handles.node_grants)
        if storage.file_system is not None:
            kind = "filestore" if isinstance(storage.file_system, gcp.filestore.Instance) else "lustre"
            resources.append({"id": "lustre", "config": {f"existing_{kind}": {kind: storage.file_system.id}}})
            depends_on.append(storage.file_system)
            if storage.lustre_import is not None:
                depends_on.append(storage.lustre_import)  # nodes find the dataset there
        else:
            bucket = storage.dataset_bucket.name if storage.dataset_bucket is not None else storage.dataset_bucket_name
            resources.append({"id": "datasets", "config": {"existing_bucket": {"bucket": bucket}}})
        if storage.checkpoint_bucket_name is not None and storage.file_system is None:
            bucket = (
                storage.checkpoint_bucket.name
                if storage.checkpoint_bucket is not None
                else storage.checkpoint_bucket_name
            )
            resources.append({"id": "checkpoints", "config": {"existing_bucket": {"bucket": bucket}}})
        mounts = [{"id": rid, "local_mount": path} for rid, path in storage_mounts(spec)]

        purchase = compute_config(spec, project, zone)
        reserved = "new_reserved_instances" in purchase
        count = str(training.nodes.count)
        node_set: dict[str, Any] = {
            "id": COMPUTE_ID,
            "compute_id": COMPUTE_ID,
            "compute_instance": {
                "boot_disk": {"size_gb": str(NODE_BOOT_GIB), "type": disk_type(project, zone, layout.boot_disk_type)},
                # The VMs Cluster Director creates are not Pulumi resources: the stack's labels reach them here.
                "labels": {**stack_labels(spec), "accelstack-role": "training-node"},
                "startup_script": environment_script(node_environment(spec, handles.checkpoint_interval_seconds)),
            },
            "storage_configs": mounts,
            # Reserved capacity is paid for: keep every node up. Spot and flex-start: nodes come with the jobs.
            **({"static_node_count": count} if reserved else {"max_dynamic_node_count": count}),
        }
        partitions = training.scheduler.partitions
        slurm: dict[str, Any] = {
            "login_nodes": {
                "count": "1",
                "machine_type": training.scheduler.head_node.instance_type,
                "zone": zone,
                "enable_os_login": True,
                "enable_public_ips": False,
                "boot_disk": {"size_gb": str(LOGIN_BOOT_GIB), "type": disk_type(project, zone, "pd-balanced")},
                "labels": {**stack_labels(spec), "accelstack-role": "slurm-login"},
                "startup_script": login_script(spec, handles.checkpoint_interval_seconds),
                "storage_configs": mounts,
            },
            "node_sets": [node_set],
            "partitions": [{"id": p.name, "node_set_ids": [COMPUTE_ID]} for p in partitions],
        }
        if len(partitions) > 1:  # required exactly then (the API's defaultPartition)
            default = next((p.name for p in partitions if p.default), partitions[0].name)
            slurm["default_partition"] = default
        self.cluster = gcp.hypercomputecluster.Cluster(
            f"{name}-cluster",
            cluster_id=cluster_id(name),
            location=account.region,
            description=f"accelstack {name}: training on {training.nodes.count} x {training.nodes.instance_type}",
            network_resources=[
                {
                    "id": "system",
                    "config": {
                        "existing_network": {
                            "network": handles.network.system.id,
                            "subnetwork": handles.network.nodes_subnet.id,
                        }
                    },
                }
            ],
            storage_resources=resources,
            compute_resources=[{"id": COMPUTE_ID, "config": purchase}],
            orchestrator={"slurm": slurm},
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=depends_on,
                # clusterId is fixed per stack: a replacement must delete the old cluster before it creates the new.
                delete_before_replace=True,
                replace_on_changes=["clusterId", "location", "orchestrator.slurm.loginNodes.zone"],
            ),
        )
        queue = partitions[0].name if len(partitions) == 1 else slurm["default_partition"]
        outputs: dict[str, pulumi.Input[Any]] = {
            "scheduler": SCHEDULER_NAME,
            # Jobs go to a Slurm partition of the cluster (sbatch -p on the login node).
            "managedJobQueue": pulumi.Output.concat(self.cluster.name, f"/partitions/{queue}"),
            "managedCompute": self.cluster.name,
            # What every job's nodes are: the node set (machine type, count, mounts, startup).
            "managedJobDefinition": pulumi.Output.concat(self.cluster.name, f"/nodeSets/{COMPUTE_ID}"),
        }
        self.result = SchedulerResult(needs_compute_group=False, outputs=outputs, component=self)
        self.register_outputs({"cluster": self.cluster.name})
