"""The OCI training cluster: a private VCN, Object Storage + Vault + File Storage with Lustre, the nodes' instance
principal, Slurm, and ONE cluster network (one instance pool) of bare-metal GPU nodes in one availability domain.

The instance configuration launches each node from the OCI HPC team's GPU image for its shape's vendor (the NVIDIA
driver or ROCm, DOCA OFED; imported by the stack, components/oci/images.py), with the Oracle Cloud Agent's "Compute
HPC RDMA Authentication" and "Compute HPC RDMA Auto-Configuration" plugins enabled: they authenticate and address the
RoCE NICs of the cluster network (oracle-quickstart/oci-hpc cluster-network-configuration.tf). A cluster network holds exactly one instance pool (its API model), placed in one
availability domain. Capacity: on-demand, or a ComputeCapacityReservation (capacity_reservation_id); preemptible
capacity is not offered for cluster networks, which the description refuses at `validate`.
"""

from __future__ import annotations

import base64

import pulumi
import pulumi_oci as oci

from accelstack.clouds.base import Feature
from accelstack.clouds.oci import catalog, names
from accelstack.clouds.oci.quotas import FIRST_DOMAIN, domain_name
from accelstack.components.base import SchedulerResult
from accelstack.components.oci.images import NodeImageChoice, node_image
from accelstack.components.oci.network import TrainingNetwork, training_network
from accelstack.components.oci.provider import account_of, landed_nodes_group, stack_tags
from accelstack.components.oci.scheduler import OciTrainingHandles, SlurmCluster
from accelstack.components.oci.storage import TrainingStorage, training_storage
from accelstack.components.recipes.implements import implements
from accelstack.components.recipes.parts import (
    BuildContext,
    FromParts,
    NodeGroup,
    NodeIdentity,
    NodeNetwork,
    TrainingData,
    TrainingParts,
    planned_network_storage,
)
from accelstack.components.recipes.training import TrainingRecipe

NODE_BOOT_GB = 512  # containers and CUDA caches; scratch is the shapes' local NVMe
RDMA_PLUGINS = ("Compute HPC RDMA Authentication", "Compute HPC RDMA Auto-Configuration")


def agent_config() -> dict[str, object]:
    """The Oracle Cloud Agent with the RDMA plugins on (the others at the image's defaults)."""
    return {
        "is_management_disabled": False,
        "is_monitoring_disabled": False,
        "plugins_configs": [{"name": plugin, "desired_state": "ENABLED"} for plugin in RDMA_PLUGINS],
    }


class OciTrainingParts(TrainingParts[OciTrainingHandles]):
    """OCI's training parts: a private VCN, Object Storage, Vault and Lustre, a dynamic group with its policy, Slurm,
    and one cluster network of bare-metal GPU nodes."""

    slurm_cluster = SlurmCluster

    def __init__(self, ctx: BuildContext):
        super().__init__(ctx)
        account = account_of(ctx.spec)
        self.tenancy_id, self.compartment_id = account.tenancy_ocid, account.compartment_ocid
        # Without the config digest: a digest on every resource would update all of them on every config edit; the
        # cluster network alone carries it (as the other clouds' node groups do).
        self.tags = stack_tags(ctx.spec)
        # The landing stack caps the GPU quota in this same domain (accelstack.planner.landing_plan.zone_drawn).
        number = ctx.spec.training.network.availability_zone or FIRST_DOMAIN
        domains = oci.identity.get_availability_domains_output(
            compartment_id=self.tenancy_id, opts=pulumi.InvokeOptions(parent=ctx.parent)
        )
        self.availability_domain: pulumi.Output[str] = domains.availability_domains.apply(
            lambda found: domain_name([domain.name for domain in found], number)
        )
        self.cluster_network: oci.core.ClusterNetwork | None = None
        self.instance_configuration: oci.core.InstanceConfiguration | None = None
        self.node_image: NodeImageChoice | None = None

    def network(self) -> NodeNetwork:
        ctx = self.ctx
        self.vcn = training_network(ctx.name, ctx.spec, self.compartment_id, self.tags, ctx.child)
        return NodeNetwork(self.vcn.vcn.id, self.vcn.subnet.id, self.availability_domain)

    @implements(Feature.MANAGED_LUSTRE, Feature.OBJECT_LINKED_FS)
    def storage(self, network: NodeNetwork) -> TrainingData:
        ctx = self.ctx
        self.store = store = training_storage(
            ctx.name,
            ctx.spec,
            ctx.plan.file_system,
            self.vcn,
            self.availability_domain,
            self.compartment_id,
            self.tags,
            ctx.child,
        )
        address = mount = None
        if store.file_system is not None:
            address = store.file_system.management_service_address
            mount = store.file_system.file_system_name
        file_system = planned_network_storage(
            ctx.spec, store.file_system, address, mount, (store.link,) if store.link is not None else ()
        )
        checkpoints = ctx.spec.training.storage.checkpoints
        return TrainingData(
            ctx.spec.training.storage.datasets.uri,
            checkpoints.uri if checkpoints is not None else None,
            store.key.id,
            file_system,
        )

    def node_identity(self, network: NodeNetwork, data: TrainingData) -> NodeIdentity:
        """The instance principal: a dynamic group of the stack compartment's instances (the compartment is the
        stack's alone: separation by compartment) and a policy letting it read datasets and create, never delete
        or overwrite, checkpoints. Dynamic groups live in the tenancy (the root compartment): a stack wired to its
        landing stack uses the one the landing stack made for its side (`<side>NodesGroupName`,
        components/oci/landing.py), so its deployer needs no tenancy grant; an unwired stack makes its own, and its
        deployer then needs `manage dynamic-groups in tenancy` from a tenancy administrator."""
        ctx, store = self.ctx, self.store
        made: list[pulumi.Resource] = []
        self.dynamic_group: oci.identity.DynamicGroup | None = None
        self.nodes_group_name: pulumi.Output[str]
        if ctx.spec.landing is not None:
            self.nodes_group_name = landed_nodes_group(ctx.spec, ctx.parent)
        else:
            name = names.iam_name(ctx.name, "nodes")
            self.dynamic_group = oci.identity.DynamicGroup(
                f"{ctx.name}-nodes",
                compartment_id=self.tenancy_id,
                name=name,
                description=f"accelstack {ctx.name}: the training cluster's instances",
                matching_rule=f"ALL {{instance.compartment.id = '{self.compartment_id}'}}",
                freeform_tags=self.tags,
                opts=ctx.child,
            )
            self.nodes_group_name = pulumi.Output.from_input(name)
            made.append(self.dynamic_group)
        compartment, datasets, checkpoints = (
            self.compartment_id,
            store.dataset_bucket_name,
            store.checkpoint_bucket_name,
        )

        def grants(group_name: str, key: str) -> list[str]:
            group = f"dynamic-group {group_name}"
            where = f"in compartment id {compartment} where target.bucket.name = "
            statements = [f"allow {group} to read objects {where}'{datasets}'"]
            statements.append(f"allow {group} to read buckets {where}'{datasets}'")
            if checkpoints is not None:
                # OBJECT_CREATE without OBJECT_OVERWRITE or OBJECT_DELETE: new checkpoints only.
                statements.append(
                    f"allow {group} to manage objects in compartment id {compartment} where all "
                    f"{{target.bucket.name = '{checkpoints}', any {{request.permission = "
                    "'OBJECT_CREATE', request.permission = 'OBJECT_INSPECT', request.permission = 'OBJECT_READ'}}"
                )
                statements.append(f"allow {group} to read buckets {where}'{checkpoints}'")
            statements.append(
                f"allow {group} to use keys in compartment id {compartment} where target.key.id = '{key}'"
            )
            return statements

        self.nodes_policy = oci.identity.Policy(
            f"{ctx.name}-nodes",
            compartment_id=self.compartment_id,
            name=names.iam_name(ctx.name, "nodes"),
            description=f"accelstack {ctx.name}: what the training nodes read and write",
            statements=pulumi.Output.all(self.nodes_group_name, store.key.id).apply(
                lambda found: grants(str(found[0]), str(found[1]))
            ),
            freeform_tags=self.tags,
            # CreatePolicy refuses a statement naming a dynamic group that does not exist yet.
            opts=pulumi.ResourceOptions(parent=ctx.parent, depends_on=made),
        )
        return NodeIdentity([*made, self.nodes_policy])

    def scheduler_handles(self, network: NodeNetwork, data: TrainingData, identity: NodeIdentity) -> OciTrainingHandles:
        return OciTrainingHandles(
            network=self.vcn,
            storage=self.store,
            availability_domain=self.availability_domain,
            compartment_id=self.compartment_id,
            tags=self.tags,
            nodes_group_name=self.nodes_group_name,
            node_grants=identity.grants,
        )

    @implements(Feature.RDMA_FABRIC, Feature.ON_DEMAND_RESERVATION)
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
        depends_on: list[pulumi.Resource] = list(identity.grants)
        if data.file_system is not None:
            depends_on += data.file_system.waits_for
        if scheduler.component is not None:
            depends_on.append(scheduler.component)
        instance = catalog.ACCELERATED_INSTANCES[nodes.instance_type]
        self.node_image = chosen = node_image(
            name, self.compartment_id, nodes.instance_type, instance.vendor, self.tags, ctx.parent, nodes.image_id
        )
        launch: dict[str, object] = {
            "compartment_id": self.compartment_id,
            "shape": nodes.instance_type,
            "availability_domain": self.availability_domain,
            "create_vnic_details": {
                "subnet_id": self.vcn.subnet.id,
                "assign_public_ip": False,
                "nsg_ids": [self.vcn.nodes_nsg.id],
            },
            "source_details": {
                "source_type": "image",
                "image_id": chosen.image_id,
                "boot_volume_size_in_gbs": str(NODE_BOOT_GB),
            },
            "agent_config": agent_config(),
            "metadata": {"user_data": pulumi.Output.from_input(user_data).apply(_base64)},
            # Without the config digest: launch details replace the configuration, and a tag should not.
            "freeform_tags": stack_tags(ctx.spec),
        }
        if nodes.reservation_id is not None:
            launch["capacity_reservation_id"] = nodes.reservation_id
        self.instance_configuration = oci.core.InstanceConfiguration(
            f"{name}-node",
            compartment_id=self.compartment_id,
            display_name=f"{name}-node",
            instance_details={"instance_type": "compute", "launch_details": launch},
            freeform_tags=self.tags,
            # The pool launches from it only once the image is imported and lists the shape.
            opts=pulumi.ResourceOptions(parent=ctx.parent, depends_on=list(chosen.waits_for)),
        )
        self.cluster_network = oci.core.ClusterNetwork(
            f"{name}-nodes",
            compartment_id=self.compartment_id,
            display_name=f"{name}-nodes",
            # One instance pool per cluster network, at the spec's count; a new configuration rolls onto it in place.
            instance_pools=[
                {
                    "instance_configuration_id": self.instance_configuration.id,
                    "size": nodes.count,
                    "display_name": f"{name}-nodes",
                }
            ],
            placement_configuration={
                "availability_domain": self.availability_domain,
                "primary_subnet_id": self.vcn.subnet.id,
            },
            freeform_tags=stack_tags(ctx.spec, ctx.digest),
            opts=pulumi.ResourceOptions(parent=ctx.parent, depends_on=depends_on),
        )
        return NodeGroup(self.cluster_network, self.cluster_network.id, self.instance_configuration)

    def fabric_interfaces_per_node(self) -> int:
        instance = catalog.ACCELERATED_INSTANCES.get(self.ctx.spec.training.nodes.instance_type)
        return instance.fabric_interfaces if instance is not None else 0


def _base64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class TrainingCluster(TrainingRecipe):
    """The OCI training cluster: the training recipe over `OciTrainingParts`; `network` (the VCN and its NSGs),
    `storage` (buckets, Vault, Lustre) and `cluster_network` are kept on `parts`."""

    cloud = "oci"
    parts_class = OciTrainingParts
    parts: OciTrainingParts

    network: FromParts[TrainingNetwork] = FromParts("vcn")
    storage: FromParts[TrainingStorage] = FromParts("store")
    cluster_network: FromParts[oci.core.ClusterNetwork | None] = FromParts("cluster_network")
