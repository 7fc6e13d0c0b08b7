"""The training cluster: network + storage + an EFA node group in one cluster placement group.

The node group is ONE auto scaling group of fixed size, so the resource graph is the same for 4
or 4000 nodes (no per-node resources); a scheduler (Slurm / AWS Batch, `accelstack.components.aws.scheduler`)
plugs in through `TrainingHandles` and may replace the group or its user data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pulumi
import pulumi_aws as aws

from accelstack.clouds.aws.catalog import ACCELERATED_INSTANCES
from accelstack.clouds.base import Feature
from accelstack.components.aws.batch import BatchScheduler
from accelstack.components.aws.boot_data import ec2_user_data_base64
from accelstack.components.aws.handles import EC2_ASSUME_ROLE_POLICY, SSM_MANAGED_POLICY, TrainingHandles
from accelstack.components.aws.images import ROOT_DEVICE
from accelstack.components.aws.network import TrainingNetwork
from accelstack.components.aws.provider import group_stack_tags, group_tags, launch_template_tag_specifications
from accelstack.components.aws.scheduler import SlurmCluster
from accelstack.components.aws.storage import TrainingStorage
from accelstack.components.base import SchedulerResult
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

# AWS Deep Learning Base OSS AMI (NVIDIA driver, CUDA, EFA installer, NCCL, Lustre client), resolved
# by EC2 at launch from the public SSM parameter, so the template never pins a stale AMI id. Ubuntu
# 24.04: its apt Slurm 23.11 matches the head node's and supports dynamic nodes (`slurmd -Z`; 22.04's
# 21.08 does not).
NODE_IMAGE = "resolve:ssm:/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-24.04/latest/ami-id"
ROOT_VOLUME_GIB = 512  # containers, CUDA caches and local scratch
# Hop limit 2: containers (enroot/Pyxis, Docker bridge) sit one hop further from IMDS than the host.
IMDS_HOP_LIMIT = 2


@dataclass(frozen=True)
class NetworkInterface:
    network_card_index: int
    device_index: int
    interface_type: str | None  # "efa", "efa-only", or None for a plain ENA interface


def efa_network_interfaces(instance_type: str, node_count: int = 2) -> list[NetworkInterface]:
    """Every EFA interface the instance type supports, one per network card.

    Several cards: the current EC2 guide's layout ("Maximize network bandwidth on Amazon EC2
    instances with multiple network cards", efa-acc-inst-types): a plain ENA primary interface at
    card 0 / device 0 (the node's one IP address), an "efa-only" interface at card 0 / device 1, and
    an "efa-only" interface at device 0 of every other card (no IP address, so thousands of nodes do
    not exhaust the subnet): 32 EFA devices on p5.48xlarge. One card: the classic single "efa"
    interface. One node: no EFA at all, since nothing talks to it over EFA (a plain interface).
    """
    itype = ACCELERATED_INSTANCES.get(instance_type)
    if itype is None:
        raise ValueError(
            f"training.nodes.instanceType: {instance_type!r} is not a supported accelerated instance type; "
            f"allowed: {', '.join(ACCELERATED_INSTANCES)}"
        )
    if itype.fabric_interfaces == 0 or node_count < 2:
        return [NetworkInterface(0, 0, None)]
    if itype.fabric_interfaces == 1:
        return [NetworkInterface(0, 0, "efa")]
    return [NetworkInterface(0, 0, None), NetworkInterface(0, 1, "efa-only")] + [
        NetworkInterface(card, 0, "efa-only") for card in range(1, itype.fabric_interfaces)
    ]


def needs_placement_group(node_count: int, capacity: str) -> bool:
    """A cluster placement group only constrains a single node, and on a Capacity Block it causes
    InsufficientInstanceCapacity inside the paid block: Capacity Block instances are already placed
    close together in an UltraCluster (EC2 API CapacityBlock), and ParallelCluster warns against the
    combination (PlacementGroupCapacityTypeValidator)."""
    return node_count > 1 and capacity != "capacity-block"


# EC2 Auto Scaling User Guide, "Use Capacity Blocks for machine learning workloads": scale the group
# to zero "more than 30 minutes before the Capacity Block reservation end time", or EC2 reclaims the
# instances and the group keeps replacing them. Launches before the block starts fail as well.
CAPACITY_BLOCK_SCALE_IN_LEAD = timedelta(minutes=40)
# A scheduled action must start in the future when it is created (PutScheduledUpdateGroupAction);
# closer than this to `now`, the program acts on the group's size directly instead.
SCHEDULE_MARGIN = timedelta(minutes=10)


@dataclass(frozen=True)
class CapacityBlockPlan:
    size_now: int  # the group's min and desired size as of this `up`
    scale_out_at: datetime | None  # the block's start, if still ahead
    scale_in_at: datetime | None  # the block's end less the lead, if still ahead


def capacity_block_plan(start: datetime, end: datetime, now: datetime, count: int) -> CapacityBlockPlan:
    """The group's size now, and the scheduled actions still ahead, for a Capacity Block [start, end).
    The same on every `up`: a scheduled action that already ran is not declared again, and the size
    the program sets is the one that action set."""
    scale_in = end - CAPACITY_BLOCK_SCALE_IN_LEAD
    if now >= scale_in - SCHEDULE_MARGIN:
        return CapacityBlockPlan(0, None, None)
    if now >= start - SCHEDULE_MARGIN:
        return CapacityBlockPlan(count, None, scale_in)
    return CapacityBlockPlan(0, start, scale_in)


def _utc(text: str) -> datetime:
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def schedule_time(moment: datetime) -> str:
    """aws_autoscaling_schedule start_time: "YYYY-MM-DDThh:mm:ssZ", UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def public_ip_setting(interface: NetworkInterface, interface_count: int) -> str | None:
    """`associate_public_ip_address` for one launch-template interface.

    EC2 rejects the parameter outright (true OR false) when an instance launches with more than one
    network interface ("InvalidParameterCombination: The associatePublicIPAddress parameter cannot
    be specified when launching with multiple network interfaces"), so multi-card EFA templates
    leave it unset and rely on the private subnet (no MapPublicIpOnLaunch). A single-interface
    template says "false" explicitly, which also overrides a public subnet's auto-assign.
    """
    if interface_count == 1 and interface.device_index == 0:
        return "false"
    return None


def instance_policy_document(
    dataset_bucket_arn: str, checkpoint_bucket_arn: str | None, kms_key_arn: str
) -> dict[str, Any]:
    """What nodes may do beyond SSM: read datasets, read/write (never delete) checkpoints, and use
    the stack key for them. Scoped to the stack's own bucket and key ARNs; no wildcard resources."""
    buckets = [dataset_bucket_arn] + ([checkpoint_bucket_arn] if checkpoint_bucket_arn else [])
    statements: list[dict[str, Any]] = [
        {
            "Sid": "ListStackBuckets",
            "Effect": "Allow",
            "Action": ["s3:ListBucket", "s3:GetBucketLocation"],
            "Resource": buckets,
        },
        {
            "Sid": "ReadDatasets",
            "Effect": "Allow",
            "Action": ["s3:GetObject"],
            "Resource": [f"{dataset_bucket_arn}/*"],
        },
    ]
    if checkpoint_bucket_arn:
        statements.append(
            {
                "Sid": "ReadWriteCheckpoints",
                "Effect": "Allow",
                "Action": [
                    "s3:GetObject",
                    "s3:PutObject",
                    "s3:AbortMultipartUpload",
                    "s3:ListMultipartUploadParts",
                ],
                "Resource": [f"{checkpoint_bucket_arn}/*"],
            }
        )
    statements.append(
        {
            "Sid": "UseStackKey",
            "Effect": "Allow",
            "Action": ["kms:Decrypt", "kms:GenerateDataKey", "kms:DescribeKey"],
            "Resource": [kms_key_arn],
        }
    )
    return {"Version": "2012-10-17", "Statement": statements}


def market_options(
    capacity: str, reservation_id: str | None
) -> tuple[
    aws.ec2.LaunchTemplateInstanceMarketOptionsArgs | None,
    aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs | None,
]:
    """Launch-template market settings for on-demand (none), spot, or an EC2 Capacity Block; on-demand
    with a reservation id targets that On-Demand Capacity Reservation (EC2 User Guide, "Use Capacity
    Reservations": a targeted launch goes into the named reservation, at on-demand prices)."""
    if capacity == "spot":
        return (
            aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(
                market_type="spot",
                spot_options=aws.ec2.LaunchTemplateInstanceMarketOptionsSpotOptionsArgs(
                    instance_interruption_behavior="terminate",
                    spot_instance_type="one-time",
                ),
            ),
            None,
        )
    if capacity == "capacity-block":
        if not reservation_id:
            raise ValueError("training.nodes.reservationId: required when training.nodes.capacity is capacity-block")
        return (
            aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type="capacity-block"),
            aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
                capacity_reservation_target=(
                    aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                        capacity_reservation_id=reservation_id
                    )
                ),
            ),
        )
    if reservation_id:
        return None, aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
            capacity_reservation_target=aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                capacity_reservation_id=reservation_id
            ),
        )
    return None, None


class AwsTrainingParts(TrainingParts[TrainingHandles], WithManagedScheduler[TrainingHandles]):
    """AWS's training parts: a VPC with one cluster subnet, S3 + KMS + FSx for Lustre, an EC2 role and instance
    profile, Slurm or AWS Batch, and ONE auto scaling group of EFA nodes in a cluster placement group."""

    slurm_cluster = SlurmCluster

    def __init__(self, ctx: BuildContext):
        super().__init__(ctx)
        nodes = ctx.spec.training.nodes
        self.interfaces = efa_network_interfaces(nodes.instance_type, nodes.count)  # fail before any resource
        self.markets = market_options(nodes.capacity, nodes.reservation_id)
        self.placement_group: aws.ec2.PlacementGroup | None = None
        self.node_role_policies: list[pulumi.Resource] = []

    def network(self) -> NodeNetwork:
        ctx = self.ctx
        training = ctx.spec.training
        self.vpc = TrainingNetwork(
            f"{ctx.name}-net", training.network, opts=ctx.child, instance_type=training.nodes.instance_type
        )
        return NodeNetwork(self.vpc.vpc_id, self.vpc.subnet_id, self.vpc.availability_zone)

    @implements(Feature.MANAGED_LUSTRE, Feature.OBJECT_LINKED_FS, Feature.CROSS_ACCOUNT_ARTIFACTS)
    def storage(self, network: NodeNetwork) -> TrainingData:
        ctx = self.ctx
        self.store = store = TrainingStorage(
            f"{ctx.name}-storage",
            ctx.spec,
            file_system=ctx.plan.file_system,
            subnet_id=self.vpc.subnet_id,
            security_group_id=self.vpc.security_group_id,
            security_group_rules=self.vpc.security_group_rules,
            opts=ctx.child,
        )
        file_system = planned_network_storage(
            ctx.spec, store.file_system, store.lustre_dns_name, store.lustre_mount_name
        )
        return TrainingData(store.dataset_bucket, store.checkpoint_bucket, store.kms_key_arn, file_system)

    def node_identity(self, network: NodeNetwork, data: TrainingData) -> NodeIdentity:
        ctx = self.ctx
        name, child, nodes = ctx.name, ctx.child, ctx.spec.training.nodes
        if needs_placement_group(nodes.count, nodes.capacity):
            self.placement_group = aws.ec2.PlacementGroup(
                f"{name}-nodes",
                strategy="cluster",  # one spine: lowest latency between EFA nodes
                opts=child,
            )
        self.role = aws.iam.Role(
            f"{name}-node",
            assume_role_policy=json.dumps(EC2_ASSUME_ROLE_POLICY),
            description=f"accelstack {name}: training nodes",
            opts=child,
        )
        node_ssm = aws.iam.RolePolicyAttachment(
            f"{name}-node-ssm", role=self.role.name, policy_arn=SSM_MANAGED_POLICY, opts=child
        )
        store = self.store
        checkpoint_arn = (
            store.checkpoint_bucket_arn if store.checkpoint_bucket_arn is not None else pulumi.Output.from_input("")
        )
        node_storage = aws.iam.RolePolicy(
            f"{name}-node-storage",
            role=self.role.id,
            policy=pulumi.Output.all(store.dataset_bucket_arn, checkpoint_arn, store.kms_key_arn).apply(
                lambda arns: json.dumps(instance_policy_document(arns[0], arns[1] or None, arns[2]))
            ),
            opts=child,
        )
        self.instance_profile = aws.iam.InstanceProfile(f"{name}-node", role=self.role.name, opts=child)
        return NodeIdentity([node_ssm, node_storage])

    def scheduler_handles(self, network: NodeNetwork, data: TrainingData, identity: NodeIdentity) -> TrainingHandles:
        ctx, store = self.ctx, self.store
        return TrainingHandles(
            vpc_id=self.vpc.vpc_id,
            subnet_id=self.vpc.subnet_id,
            availability_zone=self.vpc.availability_zone,
            cluster_security_group_id=self.vpc.security_group_id,
            placement_group_name=self.placement_group.name if self.placement_group else None,
            instance_role_name=self.role.name,
            instance_profile_arn=self.instance_profile.arn,
            kms_key_arn=store.kms_key_arn,
            dataset_bucket=store.dataset_bucket,
            checkpoint_bucket=store.checkpoint_bucket,
            lustre_dns_name=store.lustre_dns_name,
            lustre_mount_name=store.lustre_mount_name,
            make_launch_template=self.make_launch_template,
            checkpoint_interval_seconds=ctx.plan.interval_seconds,
            instance_role_policies=identity.grants,
        )

    def managed_scheduler(self, handles: TrainingHandles) -> SchedulerResult:
        """AWS Batch: a multi-node parallel compute environment on the EFA launch template."""
        return BatchScheduler(self.ctx.spec, self.ctx.digest, handles, self.ctx.child).result

    @implements(Feature.RDMA_FABRIC, Feature.SPOT, Feature.TIME_BOXED_RESERVATION, Feature.ON_DEMAND_RESERVATION)
    def node_group(
        self,
        network: NodeNetwork,
        data: TrainingData,
        identity: NodeIdentity,
        scheduler: SchedulerResult,
        user_data: pulumi.Input[str],
    ) -> NodeGroup:
        name = self.ctx.name
        template = self.make_launch_template(f"{name}-nodes", user_data)
        group = self._node_group(name, template, identity.grants)
        return NodeGroup(group, group.name, template)

    def placement(self) -> Placement | None:
        return Placement(self.placement_group, self.placement_group.name) if self.placement_group else None

    def fabric_interfaces_per_node(self) -> int:
        return sum(1 for interface in self.interfaces if interface.interface_type)

    def make_launch_template(
        self,
        name: str,
        user_data: pulumi.Input[str],
        image_id: str | None = NODE_IMAGE,
        root_device: str = ROOT_DEVICE,
    ) -> aws.ec2.LaunchTemplate:
        """An EFA launch template (every EFA interface, IMDSv2, encrypted gp3 root, no public IP) for
        raw `user_data`; shared with schedulers that launch nodes themselves. `image_id=None` leaves
        the image to the launcher (AWS Batch picks its own); `root_device` must be that image's root
        device name, or the "root" mapping becomes an extra volume and the real root is not ours."""
        spec = self.ctx.spec
        nodes = spec.training.nodes
        market, reservation = self.markets
        security_groups = [self.vpc.security_group_id]
        interfaces = [
            aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                network_card_index=interface.network_card_index,
                device_index=interface.device_index,
                interface_type=interface.interface_type,
                security_groups=security_groups,
                delete_on_termination="true",
                associate_public_ip_address=public_ip_setting(interface, len(self.interfaces)),
            )
            for interface in self.interfaces
        ]
        return aws.ec2.LaunchTemplate(
            name,
            image_id=image_id,
            instance_type=nodes.instance_type,
            ebs_optimized="true",
            iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(arn=self.instance_profile.arn),
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled",
                http_tokens="required",  # IMDSv2 only
                http_put_response_hop_limit=IMDS_HOP_LIMIT,
            ),
            block_device_mappings=[
                aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                    device_name=root_device,
                    ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                        volume_type="gp3",
                        volume_size=ROOT_VOLUME_GIB,
                        encrypted="true",
                        kms_key_id=self.store.kms_key_arn,
                        delete_on_termination="true",
                    ),
                )
            ],
            network_interfaces=interfaces,
            placement=(
                aws.ec2.LaunchTemplatePlacementArgs(group_name=self.placement_group.name)
                if self.placement_group is not None
                else None
            ),
            instance_market_options=market,
            capacity_reservation_specification=reservation,
            user_data=pulumi.Output.from_input(user_data).apply(ec2_user_data_base64),
            tag_specifications=launch_template_tag_specifications(spec, name),
            update_default_version=True,
            opts=self.ctx.child,
        )

    def _node_group(
        self, name: str, template: aws.ec2.LaunchTemplate, role_policies: list[pulumi.Resource]
    ) -> aws.autoscaling.Group:
        spec = self.ctx.spec
        nodes = spec.training.nodes
        block = self._capacity_block_plan(nodes.count) if nodes.capacity == "capacity-block" else None
        size = block.size_now if block is not None else nodes.count
        group = aws.autoscaling.Group(
            f"{name}-nodes",
            # Fixed size: a training job wants exactly `count` nodes; the group only replaces failed ones.
            # On a Capacity Block: zero outside the block (scheduled actions below move it).
            min_size=size,
            max_size=nodes.count,
            desired_capacity=size,
            vpc_zone_identifiers=[self.vpc.subnet_id],
            placement_group=self.placement_group.id if self.placement_group is not None else None,
            # A numbered version, not "$Latest" (the Capacity Blocks guide recommends a specific
            # version): `pulumi preview` shows the group moving to it, and only nodes launched
            # afterwards (replacements of failed ones) boot from it. Running nodes are left alone:
            # no instance refresh here, it would terminate nodes in the middle of a training job.
            launch_template=aws.autoscaling.GroupLaunchTemplateArgs(
                id=template.id, version=template.latest_version.apply(str)
            ),
            health_check_type="EC2",
            health_check_grace_period=600,
            # Spot: launch a replacement when EC2 signals elevated interruption risk.
            capacity_rebalance=nodes.capacity == "spot",
            # Large GPU fleets fill over minutes to hours; do not block the deployment on it.
            wait_for_capacity_timeout="0",
            tags=group_tags(group_stack_tags(spec, self.ctx.digest), f"{name}-node"),
            # The group launches nodes as soon as it exists: their role's policies first. A node retries its
            # Lustre mount and its join, so it does not wait for the file system or the head.
            opts=pulumi.ResourceOptions(parent=self.ctx.parent, depends_on=role_policies),
        )
        if block is not None:
            self._capacity_block_schedules(name, group, block, nodes.count)
        return group

    def _capacity_block_plan(self, count: int) -> CapacityBlockPlan:
        """The block's start and end from EC2 (the Capacity Block data source), not from the spec: AWS
        sets them at purchase and moves the end when the block is extended, so the next `up` follows."""
        nodes = self.ctx.spec.training.nodes
        parent = self.ctx.parent
        block = aws.ec2.get_capacity_block_reservation(
            id=nodes.reservation_id, opts=pulumi.InvokeOptions(parent=parent)
        )
        if not block.start_date or not block.end_date:
            raise ValueError(
                f"training.nodes.reservationId: {nodes.reservation_id} is not a Capacity Block with a start and end date"
            )
        plan = capacity_block_plan(_utc(block.start_date), _utc(block.end_date), datetime.now(UTC), count)
        if plan.scale_in_at is None:
            pulumi.log.warn(
                f"training.nodes.reservationId: Capacity Block {nodes.reservation_id} ends at {block.end_date}; "
                "the node group stays at zero",
                resource=parent,
            )
        return plan

    def _capacity_block_schedules(
        self, name: str, group: aws.autoscaling.Group, plan: CapacityBlockPlan, count: int
    ) -> None:
        actions = [("block-start", plan.scale_out_at, count), ("block-end", plan.scale_in_at, 0)]
        for label, moment, size in actions:
            if moment is None:
                continue
            aws.autoscaling.Schedule(
                f"{name}-nodes-{label}",
                scheduled_action_name=f"accelstack-{label}",
                autoscaling_group_name=group.name,
                start_time=schedule_time(moment),
                min_size=size,
                max_size=count,
                desired_capacity=size,
                # The action's name is unique in its group: a replacement frees it first.
                opts=pulumi.ResourceOptions(parent=self.ctx.parent, delete_before_replace=True),
            )


class TrainingCluster(TrainingRecipe):
    """The AWS training cluster: the training recipe over `AwsTrainingParts`. Beside the recipe's attributes,
    `network` (the VPC), `storage` (S3, KMS, FSx), `role` and `instance_profile`, all kept on `parts`."""

    cloud = "aws"
    parts_class = AwsTrainingParts
    parts: AwsTrainingParts

    network: FromParts[TrainingNetwork] = FromParts("vpc")
    storage: FromParts[TrainingStorage] = FromParts("store")
    role: FromParts[aws.iam.Role] = FromParts("role")
    instance_profile: FromParts[aws.iam.InstanceProfile] = FromParts("instance_profile")
