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

from accelstack.clouds.gcp import catalog
from accelstack.components.base import TrainingClusterArgs
from accelstack.components.gcp.images import NODE_IMAGE, SHIELDED_VM
from accelstack.components.gcp.network import TrainingNetwork, training_network
from accelstack.components.gcp.provider import CLOUD_PLATFORM_SCOPE, account_of, resource_id
from accelstack.components.gcp.scheduler import LOGIN_METADATA, GcpTrainingHandles, build_scheduler
from accelstack.components.gcp.storage import OBJECT_CREATOR, OBJECT_VIEWER, TrainingStorage
from accelstack.components.node_environment import environment_cloud_config, node_environment

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


class TrainingCluster(pulumi.ComponentResource):
    """The training stack's main component; `outputs` holds what the stack exports.

    What a test can assert on: `network`, `storage`, `file_system` (Managed Lustre; None without it),
    `nodes_account`, `scheduler` (None without one), `launch_template` (the instance template), `group`
    (the instance group manager), `placement_group` (the workload policy; None when the group gets none)."""

    def __init__(self, name: str, args: TrainingClusterArgs, opts: pulumi.ResourceOptions | None = None):
        """`name` prefixes every resource of the cluster and is its `accelstack-stack` label; `opts.provider`
        is the (pinned) gcp provider the cluster deploys with."""
        args = args.named(name)
        super().__init__("accelstack:gcp:TrainingCluster", name, None, opts)
        spec = args.spec
        training = spec.training
        nodes = training.nodes
        self.spec, self.digest, self.plan = spec, args.digest, args.plan
        child = pulumi.ResourceOptions(parent=self)
        account = account_of(spec)
        self.checkpoint_interval_seconds = args.plan.interval_seconds
        project_number = gcp.organizations.get_project_output(
            project_id=account.project_id, opts=pulumi.InvokeOutputOptions(parent=self)
        ).number
        # Required by the GCP rules (zone letters differ per region: us-east1 has no -a).
        zone = training.network.availability_zone or f"{account.region}-b"

        # Cluster Director configures the GPU NICs itself and takes one network: no fabric VPCs for it.
        fabric = training.scheduler.kind != "managed"
        self.network: TrainingNetwork = training_network(name, spec, zone, child, fabric=fabric)
        self.storage = TrainingStorage(
            f"{name}-storage", spec, self.network, project_number, child, file_system=args.plan.file_system
        )
        storage = self.storage
        self.file_system = storage.file_system

        # The nodes' identity: read datasets, write (never delete) checkpoints, read the munge key (scheduler).
        # Cluster Director's VMs take no service account of ours: they run as the project's Compute Engine
        # default one (components/gcp/cluster_director.py), which then gets exactly these grants.
        managed = training.scheduler.kind == "managed"
        self.nodes_account: gcp.serviceaccount.Account | None = None
        if managed:
            member: pulumi.Input[str] = project_number.apply(
                lambda number: f"serviceAccount:{number}-compute@developer.gserviceaccount.com"
            )
        else:
            self.nodes_account = gcp.serviceaccount.Account(
                f"{name}-nodes",
                account_id=resource_id(name, "nodes", 30),
                display_name=f"{name} training nodes",
                opts=child,
            )
            member = self.nodes_account.member
        grants: list[pulumi.Resource] = [
            storage.grant(f"{name}-nodes-datasets", storage.dataset_bucket_name, OBJECT_VIEWER, member)
        ]
        if storage.checkpoint_bucket_name is not None:
            grants += [
                storage.grant(
                    f"{name}-nodes-checkpoints-{role.rsplit('.', 1)[1]}", storage.checkpoint_bucket_name, role, member
                )
                for role in (OBJECT_VIEWER, OBJECT_CREATOR)
            ]
        handles = GcpTrainingHandles(
            network=self.network,
            storage=storage,
            nodes_account=self.nodes_account,
            checkpoint_interval_seconds=self.checkpoint_interval_seconds,
            node_grants=grants,
        )
        result = build_scheduler(spec, handles, child)
        self.scheduler = result.component
        user_data = result.compute_user_data
        if user_data is None:
            user_data = environment_cloud_config(node_environment(spec, self.checkpoint_interval_seconds))

        self.placement_group: gcp.compute.ResourcePolicy | None = None
        self.launch_template: gcp.compute.InstanceTemplate | None = None
        self.group: gcp.compute.InstanceGroupManager | None = None
        self.resize_request: gcp.compute.ResizeRequest | None = None
        if result.needs_compute_group:
            if uses_workload_policy(nodes.instance_type, nodes.count, nodes.capacity, nodes.reservation_id):
                self.placement_group = gcp.compute.ResourcePolicy(
                    f"{name}-placement",
                    region=account.region,
                    # Best effort, no max distance: a distance the zone cannot meet fails the whole group.
                    workload_policy={"type": "HIGH_THROUGHPUT"},
                    opts=child,
                )
            self.launch_template = self._template(name, user_data)
            self.group = self._group(name, handles.node_grants)
            if nodes.capacity == "flex-start":
                self.resize_request = self._flex_start_request(name, self.group)

        self.outputs: dict[str, pulumi.Input[Any]] = {
            "configDigest": args.digest,
            "account": account.project_id,
            "region": account.region,
            "networkId": self.network.system.id,
            "subnetId": self.network.nodes_subnet.id,
            "zone": zone,
            "datasetBucket": f"gs://{storage.dataset_bucket_name}",
            "encryptionKey": storage.key.id,
            "fabricInterfacesPerNode": fabric_interfaces(nodes.instance_type),
            "checkpointIntervalSeconds": self.checkpoint_interval_seconds,
        }
        if self.group is not None:
            self.outputs["nodeGroup"] = self.group.name
        if storage.checkpoint_bucket_name is not None:
            self.outputs["checkpointBucket"] = f"gs://{storage.checkpoint_bucket_name}"
        if self.placement_group is not None:
            self.outputs["placementGroup"] = self.placement_group.id
        if storage.lustre_address is not None and storage.lustre_mount_name is not None:
            self.outputs["lustreAddress"] = storage.lustre_address
            self.outputs["lustreMountName"] = storage.lustre_mount_name
        self.outputs.update(result.outputs)
        self.register_outputs(self.outputs)

    def _template(self, name: str, user_data: pulumi.Input[str]) -> gcp.compute.InstanceTemplate:
        nodes = self.spec.training.nodes
        nodes_account = self.nodes_account
        assert nodes_account is not None  # a node group runs on the stack's own nodes account
        layout = catalog.nic_layout(nodes.instance_type)
        interfaces: list[dict[str, Any]] = [
            {"network": self.network.system.id, "subnetwork": self.network.nodes_subnet.id, "nic_type": "GVNIC"}
        ]
        interfaces += [
            {"network": vpc.id, "subnetwork": subnet.id, "nic_type": nic_type}
            for vpc, subnet, nic_type in self.network.fabric_nics
        ]  # no access_configs anywhere: no external IP
        return gcp.compute.InstanceTemplate(
            f"{name}-node",
            name_prefix=f"{name}-node-"[:37],
            region=self.spec.account.region,  # type: ignore[attr-defined]
            machine_type=nodes.instance_type,
            disks=[
                {
                    "boot": True,
                    "auto_delete": True,
                    "source_image": NODE_IMAGE,
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
            labels={"accelstack-config-digest": self.digest},
            # Templates are immutable: a change is a new template, created before the old one goes.
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _group(self, name: str, grants: list[pulumi.Resource]) -> gcp.compute.InstanceGroupManager:
        nodes = self.spec.training.nodes
        depends_on: list[pulumi.Resource] = list(grants)
        if self.file_system is not None:
            depends_on.append(self.file_system)  # the nodes mount it at first boot
        if self.storage.lustre_import is not None:
            depends_on.append(self.storage.lustre_import)  # and find the dataset there
        if self.scheduler is not None:
            depends_on.append(self.scheduler)  # and join slurmctld
        flex_start = nodes.capacity == "flex-start"
        template = self.launch_template
        assert template is not None  # built just before the group
        return gcp.compute.InstanceGroupManager(
            f"{name}-nodes",
            zone=self.network.zone,
            base_instance_name=f"{name}-node"[:54],
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
                parent=self, depends_on=depends_on, ignore_changes=["targetSize"] if flex_start else None
            ),
        )

    def _flex_start_request(self, name: str, group: gcp.compute.InstanceGroupManager) -> gcp.compute.ResizeRequest:
        """DWS flex-start: ask for every node at once, for maxRunHours; the VMs come together when Google can
        grant them and are deleted at the end. Every input of a resize request is immutable: a new run is a
        new request (`pulumi up --replace` on it)."""
        nodes = self.spec.training.nodes
        hours = nodes.max_run_hours or catalog.FLEX_START_MAX_HOURS
        return gcp.compute.ResizeRequest(
            f"{name}-flex-start",
            name=resource_id(name, "flex-start", 63),  # RFC 1035: a stack name may start with a digit
            instance_group_manager=group.name,
            zone=self.network.zone,
            resize_by=nodes.count,
            requested_run_duration={"seconds": str(hours * 3600)},
            description=f"accelstack {name}: {nodes.count} x {nodes.instance_type} for {hours} h",
            opts=pulumi.ResourceOptions(parent=self, delete_before_replace=True),
        )
