"""The Google Cloud training cluster: networks (every GPU NIC's VPC) + storage + ONE zonal managed instance
group of GPU VMs, flat in node count.

The node template attaches every NIC the machine type has (components/gcp/network.py): A3 High 1 + 4 gVNIC,
A3 Mega 1 + 8 gVNIC, A3 Ultra and A4 2 gVNIC + 8 MRDMA; no external IP on any. The group is fixed-size
(target size = training.nodes.count), updates opportunistically (a template change never replaces nodes in
the middle of a job: new VMs get it), and has no autohealing health check (Slurm judges its nodes).

Capacity: on-demand (STANDARD), Spot (provisioning model SPOT, termination action DELETE so the group
recreates the VM when capacity returns, cloud.google.com/compute/docs/instances/spot), a specific
reservation (reservation affinity SPECIFIC_RESERVATION), or a calendar-mode future reservation
(capacity-block: RESERVATION_BOUND VMs of that reservation). Dense placement: a HIGH_THROUGHPUT workload
policy on the group for A3/A4 on Spot or reservations (docs.cloud.google.com/ai-hypercomputer/docs/
placement-policy-and-workload-policy); VMs of one future reservation are densely placed already.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from accelstack.clouds.base import Feature
from accelstack.clouds.gcp import catalog, names
from accelstack.components.base import SchedulerResult
from accelstack.components.gcp.apis import project_apis
from accelstack.components.gcp.cluster_director import ClusterDirectorScheduler
from accelstack.components.gcp.images import SHIELDED_VM, node_image
from accelstack.components.gcp.network import TrainingNetwork, training_network
from accelstack.components.gcp.provider import CLOUD_PLATFORM_SCOPE, account_of, resource_id
from accelstack.components.gcp.scheduler import LOGIN_METADATA, GcpTrainingHandles, SlurmCluster
from accelstack.components.gcp.storage import OBJECT_CREATOR, OBJECT_VIEWER, TrainingStorage
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

NODE_BOOT_GIB = 256  # containers and CUDA caches; scratch is the VMs' local SSD


def scheduling(capacity: str) -> dict[str, Any]:
    """The template's scheduling for `capacity`; GPU VMs cannot live-migrate (onHostMaintenance TERMINATE)."""
    if capacity == "spot":
        return {
            "provisioning_model": "SPOT",
            "preemptible": True,
            "automatic_restart": False,
            "on_host_maintenance": "TERMINATE",
            "instance_termination_action": "DELETE",
        }
    if capacity == "flex-start":
        # Flex-start VMs are deleted at the end of their run time (the resize request's); they cannot restart.
        return {
            "provisioning_model": "FLEX_START",
            "automatic_restart": False,
            "on_host_maintenance": "TERMINATE",
            "instance_termination_action": "DELETE",
        }
    if capacity == "capacity-block":
        return {
            "provisioning_model": "RESERVATION_BOUND",
            "automatic_restart": False,
            "on_host_maintenance": "TERMINATE",
            "instance_termination_action": "DELETE",
        }
    return {"provisioning_model": "STANDARD", "automatic_restart": True, "on_host_maintenance": "TERMINATE"}


def reservation_affinity(reservation: str | None) -> dict[str, Any]:
    if reservation is None:
        # Said outright: left unset, a template consumes ANY matching reservation, silently eating capacity
        # reserved for something else (on-demand), or a resize request's flex-start VMs would try to
        # (Google's resize-request example sets NO_RESERVATION). Spot VMs consume none either way.
        return {"type": "NO_RESERVATION"}
    return {
        "type": "SPECIFIC_RESERVATION",
        "specific_reservation": {"key": "compute.googleapis.com/reservation-name", "values": [reservation]},
    }


def fabric_interfaces(machine_type: str) -> int:
    itype = catalog.ACCELERATED_INSTANCES.get(machine_type)
    return itype.fabric_interfaces if itype is not None else 0


def uses_workload_policy(machine_type: str, count: int, capacity: str, reservation: str | None) -> bool:
    return (
        machine_type in catalog.WORKLOAD_POLICY_TYPES
        and count > 1
        and (capacity == "spot" or (reservation is not None and capacity == "on-demand"))
    )


class GcpTrainingParts(TrainingParts[GcpTrainingHandles], WithManagedScheduler[GcpTrainingHandles]):
    """Google Cloud's training parts: a system VPC and one VPC per GPU NIC, Cloud Storage + Cloud KMS + Managed
    Lustre, a service account, Slurm or Cluster Director, and ONE zonal managed instance group of GPU VMs."""

    slurm_cluster = SlurmCluster

    def __init__(self, ctx: BuildContext):
        super().__init__(ctx)
        account = account_of(ctx.spec)
        self.project_number = project_apis(ctx.spec.stack).project_number(ctx.parent)
        # Required by the GCP rules (zone letters differ per region: us-east1 has no -a).
        self.zone = ctx.spec.training.network.availability_zone or f"{account.region}-b"
        self.managed = ctx.spec.training.scheduler.kind == "managed"
        self.nodes_account: gcp.serviceaccount.Account | None = None
        self.placement_group: gcp.compute.ResourcePolicy | None = None
        self.launch_template: gcp.compute.InstanceTemplate | None = None
        self.resize_request: gcp.compute.ResizeRequest | None = None

    def network(self) -> NodeNetwork:
        ctx = self.ctx
        # Cluster Director configures the GPU NICs itself and takes one network: no fabric VPCs for it.
        self.vpcs: TrainingNetwork = training_network(ctx.name, ctx.spec, self.zone, ctx.child, fabric=not self.managed)
        return NodeNetwork(self.vpcs.system.id, self.vpcs.nodes_subnet.id, self.zone)

    @implements(Feature.MANAGED_LUSTRE, Feature.OBJECT_LINKED_FS, Feature.CROSS_ACCOUNT_ARTIFACTS)
    def storage(self, network: NodeNetwork) -> TrainingData:
        ctx = self.ctx
        self.store = store = TrainingStorage(
            f"{ctx.name}-storage", ctx.spec, self.vpcs, self.project_number, ctx.child, file_system=ctx.plan.file_system
        )
        file_system = planned_network_storage(
            ctx.spec,
            store.file_system,
            store.lustre_address,
            store.lustre_mount_name,
            # The nodes find the dataset there at first boot.
            (store.lustre_import,) if store.lustre_import is not None else (),
        )
        checkpoint_uri = f"gs://{store.checkpoint_bucket_name}" if store.checkpoint_bucket_name is not None else None
        return TrainingData(f"gs://{store.dataset_bucket_name}", checkpoint_uri, store.key.id, file_system)

    def node_identity(self, network: NodeNetwork, data: TrainingData) -> NodeIdentity:
        """Read datasets, write (never delete) checkpoints; the scheduler adds reading the munge key. Cluster
        Director's VMs take no service account of ours: they run as the project's Compute Engine default one
        (components/gcp/cluster_director.py), which then gets exactly these grants."""
        ctx, store = self.ctx, self.store
        name = ctx.name
        if self.managed:
            member: pulumi.Input[str] = self.project_number.apply(
                lambda number: f"serviceAccount:{number}-compute@developer.gserviceaccount.com"
            )
        else:
            self.nodes_account = gcp.serviceaccount.Account(
                f"{name}-nodes",
                account_id=resource_id(name, "nodes", 30),
                display_name=f"{name} training nodes",
                opts=ctx.child,
            )
            member = self.nodes_account.member
        grants: list[pulumi.Resource] = [
            store.grant(f"{name}-nodes-datasets", store.dataset_bucket_name, OBJECT_VIEWER, member)
        ]
        if store.checkpoint_bucket_name is not None:
            grants += [
                store.grant(
                    f"{name}-nodes-checkpoints-{role.rsplit('.', 1)[1]}", store.checkpoint_bucket_name, role, member
                )
                for role in (OBJECT_VIEWER, OBJECT_CREATOR)
            ]
        return NodeIdentity(grants)

    def scheduler_handles(self, network: NodeNetwork, data: TrainingData, identity: NodeIdentity) -> GcpTrainingHandles:
        ctx = self.ctx
        return GcpTrainingHandles(
            network=self.vpcs,
            storage=self.store,
            nodes_account=self.nodes_account,
            checkpoint_interval_seconds=ctx.plan.interval_seconds,
            node_grants=identity.grants,
        )

    def managed_scheduler(self, handles: GcpTrainingHandles) -> SchedulerResult:
        """Cluster Director: managed Slurm whose node sets run the nodes itself."""
        return ClusterDirectorScheduler(self.ctx.spec, handles, self.ctx.child).result

    @implements(
        Feature.RDMA_FABRIC,
        Feature.SPOT,
        Feature.TIME_BOXED_RESERVATION,
        Feature.FLEX_START,
        Feature.ON_DEMAND_RESERVATION,
    )
    def node_group(
        self,
        network: NodeNetwork,
        data: TrainingData,
        identity: NodeIdentity,
        scheduler: SchedulerResult,
        user_data: pulumi.Input[str],
    ) -> NodeGroup:
        ctx = self.ctx
        name, nodes = ctx.name, ctx.spec.training.nodes
        if uses_workload_policy(nodes.instance_type, nodes.count, nodes.capacity, nodes.reservation_id):
            self.placement_group = gcp.compute.ResourcePolicy(
                f"{name}-placement",
                region=ctx.spec.account.region,
                # Best effort, no max distance: a distance the zone cannot meet fails the whole group.
                workload_policy={"type": "HIGH_THROUGHPUT"},
                opts=ctx.child,
            )
        depends_on: list[pulumi.Resource] = list(identity.grants)
        if data.file_system is not None:
            depends_on += data.file_system.waits_for  # the nodes mount it (and find the dataset) at first boot
        if scheduler.component is not None:
            depends_on.append(scheduler.component)  # and join slurmctld
        self.launch_template = template = self._template(name, user_data)
        group = self._group(name, template, depends_on)
        if nodes.capacity == "flex-start":
            self.resize_request = self._flex_start_request(name, group)
        return NodeGroup(group, group.name, template)

    def placement(self) -> Placement | None:
        return Placement(self.placement_group, self.placement_group.id) if self.placement_group else None

    def fabric_interfaces_per_node(self) -> int:
        return fabric_interfaces(self.ctx.spec.training.nodes.instance_type)

    def _template(self, name: str, user_data: pulumi.Input[str]) -> gcp.compute.InstanceTemplate:
        spec = self.ctx.spec
        nodes = spec.training.nodes
        nodes_account = self.nodes_account
        assert nodes_account is not None  # a node group runs on the stack's own nodes account
        layout = catalog.nic_layout(nodes.instance_type)
        interfaces: list[dict[str, Any]] = [
            {"network": self.vpcs.system.id, "subnetwork": self.vpcs.nodes_subnet.id, "nic_type": "GVNIC"}
        ]
        interfaces += [
            {"network": vpc.id, "subnetwork": subnet.id, "nic_type": nic_type}
            for vpc, subnet, nic_type in self.vpcs.fabric_nics
        ]  # no access_configs anywhere: no external IP
        return gcp.compute.InstanceTemplate(
            f"{name}-node",
            name_prefix=names.node_template_prefix(name),
            region=spec.account.region,
            machine_type=nodes.instance_type,
            disks=[
                {
                    "boot": True,
                    "auto_delete": True,
                    "source_image": node_image(nodes.instance_type),
                    "disk_size_gb": NODE_BOOT_GIB,
                    "disk_type": layout.boot_disk_type,
                }
            ],
            network_interfaces=interfaces,
            scheduling=scheduling(nodes.capacity),
            reservation_affinity=reservation_affinity(nodes.reservation_id),
            service_account={"email": nodes_account.email, "scopes": [CLOUD_PLATFORM_SCOPE]},
            shielded_instance_config=SHIELDED_VM,
            metadata={**LOGIN_METADATA, "user-data": user_data},
            labels={"accelstack-config-digest": self.ctx.digest},
            # Templates are immutable: a change is a new template, created before the old one goes.
            opts=self.ctx.child,
        )

    def _group(
        self, name: str, template: gcp.compute.InstanceTemplate, depends_on: list[pulumi.Resource]
    ) -> gcp.compute.InstanceGroupManager:
        nodes = self.ctx.spec.training.nodes
        flex_start = nodes.capacity == "flex-start"
        return gcp.compute.InstanceGroupManager(
            f"{name}-nodes",
            zone=self.vpcs.zone,
            base_instance_name=names.node_base_instance_name(name),
            # Flex-start: the group starts empty and the resize request adds every node at once when the
            # capacity is granted (about-resize-requests-mig); the stack must not size it back to 0 after.
            target_size=0 if flex_start else nodes.count,
            versions=[{"name": "nodes", "instance_template": template.self_link_unique}],
            update_policy={
                "type": "OPPORTUNISTIC",
                "minimal_action": "REPLACE",
                "max_surge_fixed": 0,  # a reservation or quota holds exactly count nodes
                "max_unavailable_fixed": 1,
                "replacement_method": "RECREATE",  # keeps instance names, so Slurm node names return
            },
            # A failed flex-start VM is left for Slurm to drain, not recreated outside the request.
            instance_lifecycle_policy={"default_action_on_failure": "DO_NOTHING"} if flex_start else None,
            resource_policies={"workload_policy": self.placement_group.self_link} if self.placement_group else None,
            wait_for_instances=False,
            opts=pulumi.ResourceOptions(
                parent=self.ctx.parent,
                depends_on=depends_on,
                ignore_changes=["targetSize"] if flex_start else None,
            ),
        )

    def _flex_start_request(self, name: str, group: gcp.compute.InstanceGroupManager) -> gcp.compute.ResizeRequest:
        """DWS flex-start: ask for every node at once, for maxRunHours; the VMs come together when Google can
        grant them and are deleted at the end. Every input of a resize request is immutable: a new run is a
        new request (`pulumi up --replace` on it)."""
        nodes = self.ctx.spec.training.nodes
        hours = nodes.max_run_hours or catalog.FLEX_START_MAX_HOURS
        return gcp.compute.ResizeRequest(
            f"{name}-flex-start",
            name=resource_id(name, "flex-start", 63),  # RFC 1035: a stack name may start with a digit
            instance_group_manager=group.name,
            zone=self.vpcs.zone,
            resize_by=nodes.count,
            requested_run_duration={"seconds": str(hours * 3600)},
            description=f"accelstack {name}: {nodes.count} x {nodes.instance_type} for {hours} h",
            opts=pulumi.ResourceOptions(parent=self.ctx.parent, delete_before_replace=True),
        )


class TrainingCluster(TrainingRecipe):
    """The Google Cloud training cluster: the training recipe over `GcpTrainingParts`. Beside the recipe's
    attributes: `network` (system and fabric VPCs), `storage` (Cloud Storage, Cloud KMS, Managed Lustre),
    `nodes_account` (None under Cluster Director) and `resize_request` (flex-start), kept on `parts`."""

    cloud = "gcp"
    parts_class = GcpTrainingParts
    parts: GcpTrainingParts

    network: FromParts[TrainingNetwork] = FromParts("vpcs")
    storage: FromParts[TrainingStorage] = FromParts("store")
    nodes_account: FromParts[gcp.serviceaccount.Account | None] = FromParts("nodes_account")
    resize_request: FromParts[gcp.compute.ResizeRequest | None] = FromParts("resize_request")
