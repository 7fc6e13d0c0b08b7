"""The AWS serving service: ALB (HTTPS only, WAF rate limit per client) -> replicas in private
subnets, an SQS admission queue the replicas drain, and an Auto Scaling group that scales on
backlog per instance with a warm pool of stopped, pre-pulled replicas.

One module per concern, each building its resources as children of `ServingService` (so their URNs
are those of the single-module component they came from): `edge` (security groups, ALB, WAF, logs),
`queue` (SQS queues and their alarms), `identity` (KMS key, replica role), `replicas` (launch
template, group, warm pool, launch hook), `scaling` (policies), `user_data` (the boot script).

Sizing (cold start, warm pool, health-check timing, backlog target) is pure and lives in the planner
(`accelstack.planner.serving_plan.ServingPlan`), so it can be tested and reported without Pulumi.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws

from accelstack.clouds.aws import catalog as tables
from accelstack.components.aws.network import ServingNetwork
from accelstack.components.aws.provider import group_stack_tags
from accelstack.components.aws.serving.edge import elb_log_delivery_statements, load_balancer, security_groups, waf
from accelstack.components.aws.serving.hook import READY_HOOK
from accelstack.components.aws.serving.identity import kms_key
from accelstack.components.aws.serving.queue import alarms, queues
from accelstack.components.aws.serving.replicas import replica_group
from accelstack.components.aws.serving.scaling import scaling
from accelstack.components.aws.serving.user_data import (
    USER_DATA_LIMIT_BYTES,
    replica_user_data,
    user_data_size_problem,
    worker_environment,
)
from accelstack.components.base import ServingServiceArgs

__all__ = [
    "READY_HOOK",
    "USER_DATA_LIMIT_BYTES",
    "ServingService",
    "elb_log_delivery_statements",
    "replica_user_data",
    "user_data_size_problem",
    "worker_environment",
]


class ServingService(pulumi.ComponentResource):
    """The serving stack's component.

    What a test can assert on: `network`, `key`, `queues` (by role: requests, responses, dead-letters)
    and `queue` (the request queue), `alb_sg`, `replica_sg`, `load_balancer`, `target_group`,
    `web_acl`, `launch_template`, `group` (the replicas' auto scaling group, warm pool included),
    `scaling_policy` (target tracking on backlog per instance) and `plan` (every derived number)."""

    # Set by identity.replica_role; the group and the launch hook wait for them.
    replica_role_policies: list[pulumi.Resource]
    # Set by replicas.replica_group.
    launch_template: aws.ec2.LaunchTemplate

    def __init__(self, name: str, args: ServingServiceArgs, opts: pulumi.ResourceOptions | None = None):
        """`name` prefixes every resource of the service and is its `accelstack:stack` tag; `opts.provider`
        is the (pinned) AWS provider the service deploys with."""
        args = args.named(name)
        super().__init__("accelstack:aws:ServingService", name, None, opts)
        spec = args.spec
        self.spec, self.serving, self.plan = spec, spec.serving, args.plan
        self.region = spec.account.region
        self.account_id = spec.account.account_id
        self.partition = tables.REGIONS.get(self.region, "aws")
        self.tags = group_stack_tags(spec, args.digest)
        self.child = pulumi.ResourceOptions(parent=self)

        # The order is the registration order of the resources (and so of the stack export).
        self.network = ServingNetwork(
            f"{name}-net",
            self.serving.network,
            self.region,
            opts=self.child,
            instance_type=self.serving.replicas.instance_type,
        )
        self.key = kms_key(self, name)
        self.queues = queues(self, name)
        self.queue = self.queues["requests"]  # the admission queue replicas drain and the group scales on
        self.alb_sg, self.replica_sg = security_groups(self, name)
        self.load_balancer, self.target_group = load_balancer(self, name)
        self.web_acl = waf(self, name)
        self.group = replica_group(self, name)
        self.scaling_policy = scaling(self, name)
        alarms(self, name)

        endpoint = self.load_balancer.dns_name.apply(lambda dns: f"https://{dns}")
        self.outputs: dict[str, pulumi.Input[Any]] = {
            "endpoint": endpoint,
            "requestQueue": self.queues["requests"].url,
            "responseQueue": self.queues["responses"].url,
            "deadLetterQueue": self.queues["dead-letters"].url,
            "replicaGroup": self.group.name,
            "replicaSubnets": self.network.private_subnet_ids,
            "coldStartSeconds": self.plan.cold_start_seconds,
            "warmPoolSize": self.plan.warm_pool_size,
            "backlogPerInstanceTarget": self.plan.backlog_per_instance_target,
            "configDigest": args.digest,
        }
        self.register_outputs(self.outputs)
