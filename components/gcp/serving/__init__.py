"""The Google Cloud serving service: a global external Application Load Balancer (HTTPS only, Cloud
Armor throttle per client IP) -> replicas in a private subnet, a Pub/Sub admission subscription the
replicas pull, and a regional instance group that scales on undelivered messages per replica, with a
standby pool of stopped, pre-pulled replicas.

One module per concern, each building its resources as children of `ServingService`: `network`,
`queue`, `identity`, `edge`, `replicas`, `scaling`, `user_data`. Sizing comes from the planner
(`args.plan`).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from accelstack.components.base import ServingServiceArgs
from accelstack.components.gcp.provider import account_of
from accelstack.components.gcp.serving.edge import firewall, health_check, load_balancer, security_policy
from accelstack.components.gcp.serving.identity import kms_key, replica_account
from accelstack.components.gcp.serving.network import serving_network
from accelstack.components.gcp.serving.queue import queues
from accelstack.components.gcp.serving.replicas import replica_group
from accelstack.components.gcp.serving.scaling import scaling

__all__ = ["ServingService"]


class ServingService(pulumi.ComponentResource):
    """What a test can assert on: `network`, `subnet`, `queues` (by role) and `queue` (the request
    subscription), `web_acl` (the Cloud Armor policy), `backend`, `address`, `replica_account`, `group`
    (the regional instance group manager, standby pool included), `scaling_policy` (the autoscaler)
    and `plan`."""

    def __init__(self, name: str, args: ServingServiceArgs, opts: pulumi.ResourceOptions | None = None):
        args = args.named(name)
        super().__init__("accelstack:gcp:ServingService", name, None, opts)
        spec = args.spec
        account = account_of(spec)
        self.spec, self.serving, self.plan = spec, spec.serving, args.plan
        self.region, self.project_id = account.region, account.project_id
        self.child = child = pulumi.ResourceOptions(parent=self)
        self.project_number = gcp.organizations.get_project_output(
            project_id=self.project_id, opts=pulumi.InvokeOutputOptions(parent=self)
        ).number
        serving, plan, region = self.serving, self.plan, self.region

        # Each step takes what the steps before it made; the order is also the resources' registration order.
        net = serving_network(name, serving, region, child)
        self.network, self.subnet = net.network, net.subnet
        queue_key = kms_key(name, region, self.project_number, child)
        self.key = queue_key.key
        pubsub = queues(name, serving.admission, plan, queue_key, self.project_number, child)
        self.queues = pubsub.by_role()
        self.queue = pubsub.request_subscription
        identity = replica_account(name, serving, pubsub, child)
        self.replica_account = identity.account
        self.firewall = firewall(name, self.network, serving.load_balancer, child)
        self.web_acl = security_policy(name, serving.admission, child)
        self.health_check = health_check(name, serving.load_balancer, plan, child)
        self.group = replica_group(
            name,
            serving,
            plan,
            project_id=self.project_id,
            region=region,
            subnet=self.subnet,
            queues=pubsub,
            identity=identity,
            health=self.health_check,
            opts=child,
        )
        edge = load_balancer(name, serving.load_balancer, plan, self.health_check, self.web_acl, self.group, child)
        self.address, self.backend = edge.address, edge.backend
        self.scaling_policy = scaling(
            name,
            serving.replicas,
            plan,
            region=region,
            group=self.group,
            request_subscription=pubsub.request_subscription,
            opts=child,
        )

        self.outputs: dict[str, pulumi.Input[Any]] = {
            "endpoint": self.address.address.apply(lambda ip: f"https://{ip}"),
            "requestQueue": pubsub.request_subscription.id,
            "responseQueue": pubsub.responses.id,
            "deadLetterQueue": pubsub.dead_letters.id,
            "replicaGroup": self.group.name,
            "replicaSubnets": [self.subnet.id],
            "coldStartSeconds": self.plan.cold_start_seconds,
            "warmPoolSize": self.plan.warm_pool_size,
            "backlogPerInstanceTarget": self.plan.backlog_per_instance_target,
            "configDigest": args.digest,
        }
        self.register_outputs(self.outputs)
