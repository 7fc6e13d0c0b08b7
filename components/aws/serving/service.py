"""The AWS serving service: the serving recipe over AWS's parts (the package docstring says what each module builds)."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from accelstack.clouds.aws import catalog as tables
from accelstack.clouds.base import Feature
from accelstack.components.aws.network import ServingNetwork
from accelstack.components.aws.provider import group_stack_tags
from accelstack.components.aws.serving.edge import load_balancer, security_groups, waf
from accelstack.components.aws.serving.hook import replica_group_name
from accelstack.components.aws.serving.identity import kms_key, replica_role
from accelstack.components.aws.serving.queue import alarms, queues
from accelstack.components.aws.serving.replicas import replica_group
from accelstack.components.aws.serving.scaling import load_scaling, scaling
from accelstack.components.aws.serving.user_data import (
    ALB_CLIENT_HOP,
)
from accelstack.components.handoff import ServingIdentity
from accelstack.components.recipes.implements import implements
from accelstack.components.recipes.parts import FromParts
from accelstack.components.recipes.serving import (
    Admission,
    AdmissionQueue,
    ReplicaAdmission,
    ReplicaGroup,
    ReplicaNetwork,
    ServingContext,
    ServingParts,
    ServingRecipe,
)


class AwsServingParts(ServingParts):
    """AWS's serving parts: a VPC, SQS queues under the stack key, the replica role, the ALB with its security
    groups and WAF rate limit, one Auto Scaling group (warm pool included) and target tracking on backlog per
    instance. The helper modules build with this object as `svc`: its attributes are what they share."""

    # Set by identity.replica_role; the group and the launch hook wait for them.
    replica_role_policies: list[pulumi.Resource]
    replica_role: aws.iam.Role  # set by identity.replica_role; a reader on another cloud trusts it
    # Set by replicas.replica_group.
    launch_template: aws.ec2.LaunchTemplate
    # Set by edge.load_balancer: what forwards to the target group.
    https_listener: aws.lb.Listener
    # By role (requests, responses, dead-letters); None with admission on the replicas.
    queues: dict[str, aws.sqs.Queue] | None = None

    def __init__(self, ctx: ServingContext):
        super().__init__(ctx)
        spec = ctx.spec
        self.parent = ctx.parent
        self.child = ctx.child
        self.spec, self.serving, self.plan = spec, ctx.serving, ctx.plan
        self.region = spec.account.region
        self.account_id = spec.account.account_id
        self.partition = tables.REGIONS.get(self.region, "aws")
        self.tags = group_stack_tags(spec, ctx.digest)

    def network(self) -> ReplicaNetwork:
        name = self.ctx.name
        self.vpc = ServingNetwork(
            f"{name}-net",
            self.serving.network,
            self.region,
            opts=self.child,
            instance_type=self.serving.replicas.instance_type,
        )
        self.key = kms_key(self, name)
        return ReplicaNetwork(self.vpc.private_subnet_ids, self.vpc.nat_addresses)

    def admission_queue(self, network: ReplicaNetwork) -> AdmissionQueue:
        self.queues = queues(self, self.ctx.name)
        requests = self.queues["requests"]  # the admission queue replicas drain and the group scales on
        return AdmissionQueue(requests.url, self.queues["responses"].url, self.queues["dead-letters"].url, requests)

    def replica_admission(self) -> ReplicaAdmission:
        return ReplicaAdmission.planned(self.serving, self.plan, client_hop=ALB_CLIENT_HOP)

    @implements(Feature.CROSS_ACCOUNT_ARTIFACTS)
    def identity(self, network: ReplicaNetwork, queue: AdmissionQueue | None) -> None:
        name = self.ctx.name
        self.profile = replica_role(self, name, replica_group_name(name))

    def copy_destination(self) -> tuple[str, pulumi.Input[str] | None]:
        """The copy writes S3 with the deployer's credentials, in the stack's Region (the destination bucket's)."""
        return self.region, None

    def serving_identity(self) -> ServingIdentity:
        role = self.replica_role
        return ServingIdentity("aws", subject=role.arn, role_name=role.name, account_id=self.account_id)

    @implements(Feature.WAF_RATE_LIMIT)
    def edge(self, network: ReplicaNetwork) -> pulumi.Resource | None:
        """The ALB (and its target group, which the group attaches to) before the group; WAF on it."""
        name = self.ctx.name
        self.alb_sg, self.replica_sg = security_groups(self, name)
        self.load_balancer, self.target_group = load_balancer(self, name)
        self.web_acl = waf(self, name)
        return self.web_acl

    @implements(Feature.WARM_POOL)
    def replica_group(self, network: ReplicaNetwork, admission: Admission) -> ReplicaGroup:
        on_replicas = admission if isinstance(admission, ReplicaAdmission) else None
        self.group = replica_group(self, self.ctx.name, self.profile, on_replicas)
        return ReplicaGroup(self.group, self.group.name)

    def endpoint(self, group: ReplicaGroup) -> pulumi.Input[str]:
        return self.load_balancer.dns_name.apply(lambda dns: f"https://{dns}")

    def scaling(self, group: ReplicaGroup, queue: AdmissionQueue) -> pulumi.Resource:
        return scaling(self, self.ctx.name)

    def load_scaling(self, group: ReplicaGroup) -> pulumi.Resource:
        return load_scaling(self, self.ctx.name)

    def monitoring(self, queue: AdmissionQueue) -> None:
        alarms(self, self.ctx.name)


class ServingService(ServingRecipe):
    """The AWS serving service: the serving recipe over `AwsServingParts`. Beside the recipe's attributes:
    `network`, `key`, `queues` (by role: requests, responses, dead-letters), `alb_sg`, `replica_sg`,
    `load_balancer`, `target_group`, `launch_template`, kept on `parts`."""

    cloud = "aws"
    parts_class = AwsServingParts
    parts: AwsServingParts

    network: FromParts[ServingNetwork] = FromParts("vpc")
    key: FromParts[aws.kms.Key] = FromParts("key")
    queues: FromParts[dict[str, aws.sqs.Queue] | None] = FromParts("queues")
    alb_sg: FromParts[aws.ec2.SecurityGroup] = FromParts("alb_sg")
    replica_sg: FromParts[aws.ec2.SecurityGroup] = FromParts("replica_sg")
    load_balancer: FromParts[aws.lb.LoadBalancer] = FromParts("load_balancer")
    target_group: FromParts[aws.lb.TargetGroup] = FromParts("target_group")
    launch_template: FromParts[aws.ec2.LaunchTemplate] = FromParts("launch_template")
