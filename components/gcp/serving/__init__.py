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

    health_check: gcp.compute.HealthCheck
    key_grant: pulumi.Resource
    replica_grants: list[pulumi.Resource]

    def __init__(self, name: str, args: ServingServiceArgs, opts: pulumi.ResourceOptions | None = None):
        args = args.named(name)
        super().__init__("accelstack:gcp:ServingService", name, None, opts)
        spec = args.spec
        account = account_of(spec)
        self.spec, self.serving, self.plan = spec, spec.serving, args.plan
        self.region, self.project_id = account.region, account.project_id
        self.child = pulumi.ResourceOptions(parent=self)
        self.project_number = gcp.organizations.get_project_output(
            project_id=self.project_id, opts=pulumi.InvokeOutputOptions(parent=self)
        ).number

        self.network, self.subnet = serving_network(self, name)
        self.key = kms_key(self, name)
        self.queues = queues(self, name)
        self.queue = self.queues["request-subscription"]
        self.replica_account = replica_account(self, name)
        self.firewall = firewall(self, name)
        self.web_acl = security_policy(self, name)
        # The group's auto-healing needs the health check; the backend needs the group.
        self.health_check = health_check(self, name)
        self.group = replica_group(self, name)
        self.address, self.backend = load_balancer(self, name)
        self.scaling_policy = scaling(self, name)

        self.outputs: dict[str, pulumi.Input[Any]] = {
            "endpoint": self.address.address.apply(lambda ip: f"https://{ip}"),
            "requestQueue": self.queues["request-subscription"].id,
            "responseQueue": self.queues["responses"].id,
            "deadLetterQueue": self.queues["dead-letters"].id,
            "replicaGroup": self.group.name,
            "replicaSubnets": [self.subnet.id],
            "coldStartSeconds": self.plan.cold_start_seconds,
            "warmPoolSize": self.plan.warm_pool_size,
            "backlogPerInstanceTarget": self.plan.backlog_per_instance_target,
            "configDigest": args.digest,
        }
        self.register_outputs(self.outputs)
