"""The Azure serving service: an Application Gateway WAF_v2 (HTTPS only, a rate limit per client address) in
front of replicas in a private subnet, a Service Bus admission queue the replicas drain with peek-lock, and a
Flexible scale set that scales on the queue's active messages per instance, with a standby pool of
deallocated, pre-initialised replicas.

One module per concern, each building its resources as children of `ServingService`: `network`, `queue`,
`identity`, `edge`, `replicas`, `scaling`, `user_data`; `placement` is where they go (resource group, tags,
parent). Each step takes the typed results of the steps it needs. Every derived number comes from the planner
(`args.plan`).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_random as random

from accelstack.components.azure.admin import admin_public_key
from accelstack.components.azure.provider import account_of, resource_group, stack_tags
from accelstack.components.azure.serving.edge import access_logs, application_gateway, waf_policy
from accelstack.components.azure.serving.identity import ServingIdentities
from accelstack.components.azure.serving.network import ServingNetwork
from accelstack.components.azure.serving.placement import Placement
from accelstack.components.azure.serving.queue import AdmissionQueue, dead_letter_path
from accelstack.components.azure.serving.replicas import replica_group, standby_pool
from accelstack.components.azure.serving.scaling import scaling
from accelstack.components.base import ServingServiceArgs

__all__ = ["ServingService"]


class ServingService(pulumi.ComponentResource):
    """What a test can assert on: `resource_group`, `network`, `queue` (the admission queue: `namespace`,
    `requests`, `responses`), `identities`, `web_acl` (the WAF policy), `gateway`, `group` (the replicas'
    scale set), `standby_pool` (None when the planner sizes it 0), `scaling_policy` (the autoscale setting),
    `access_logs` (the logs' storage account; None without serving.loadBalancer.accessLogs) and `plan`."""

    def __init__(self, name: str, args: ServingServiceArgs, opts: pulumi.ResourceOptions | None = None):
        args = args.named(name)
        super().__init__("accelstack:azure:ServingService", name, None, opts)
        spec = args.spec
        self.spec, self.serving, self.plan, self.digest = spec, spec.serving, args.plan, args.digest
        self.account = account_of(spec)
        self.subscription_id = self.account.subscription_id
        self.tags = stack_tags(spec)
        self.child = pulumi.ResourceOptions(parent=self)

        self.resource_group = resource_group(spec, self.child)
        self.resource_group_name = f"{spec.stack}-rg"  # fixed (provider.resource_group): gateway ids use it
        placement = Placement(
            self.resource_group, self.resource_group_name, self.subscription_id, self.tags, self.child
        )
        serving, plan = self.serving, self.plan

        # Each step takes what the steps before it made; the order is also the resources' registration order.
        self.network = ServingNetwork(f"{name}-net", serving, placement)
        self.queue = AdmissionQueue(f"{name}-queue", serving.admission, plan, placement)
        self.identities = ServingIdentities(
            f"{name}-id",
            serving,
            plan,
            self.queue,
            placement,
            standby_pool_principal_id=self.account.standby_pool_principal_id,
        )
        self.web_acl = waf_policy(name, serving.admission, placement)
        edge = application_gateway(
            name, serving, plan, network=self.network, identities=self.identities, waf=self.web_acl, placement=placement
        )
        self.gateway = edge.gateway
        self.access_logs = access_logs(name, serving.load_balancer, self.gateway, placement)
        randomness = random.Provider(f"{name}-replicas-random", opts=self.child)
        admin_key = admin_public_key(f"{name}-replicas", pulumi.ResourceOptions(parent=self, provider=randomness))
        self.group = replica_group(
            name,
            serving,
            plan,
            admin_key=admin_key,
            digest=self.digest,
            network=self.network,
            queue=self.queue,
            identities=self.identities,
            gateway=self.gateway,
            placement=placement,
        )
        self.standby_pool = standby_pool(name, plan, self.group, self.identities, placement)
        self.scaling_policy = scaling(
            name, serving.replicas, plan, group=self.group, namespace=self.queue.namespace, placement=placement
        )

        self.outputs: dict[str, pulumi.Input[Any]] = {
            "endpoint": edge.endpoint,
            "requestQueue": self.queue.requests.id,
            "responseQueue": self.queue.responses.id,
            "deadLetterQueue": self.queue.requests.id.apply(lambda i: dead_letter_path(i)),
            "replicaGroup": self.group.name,
            "replicaSubnets": [self.network.replicas_subnet.id],
            "coldStartSeconds": self.plan.cold_start_seconds,
            "warmPoolSize": self.plan.warm_pool_size,
            "backlogPerInstanceTarget": self.plan.backlog_per_instance_target,
            "configDigest": args.digest,
        }
        self.register_outputs(self.outputs)
