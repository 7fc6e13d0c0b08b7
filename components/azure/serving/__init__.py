"""The Azure serving service: an Application Gateway WAF_v2 (HTTPS only, a rate limit per client address) in
front of replicas in a private subnet, a Service Bus admission queue the replicas drain with peek-lock, and a
Flexible scale set that scales on the queue's active messages per instance, with a standby pool of
deallocated, pre-initialised replicas. Without a queue (admission.kind replica) each replica's admission proxy
admits what the gateway sends, and the scale set scales on the gateway's requests per healthy replica; a fixed
fleet has no autoscale setting.

One module per concern, each building its resources as children of `ServingService`: `network`, `queue`,
`identity`, `edge`, `replicas`, `scaling`, `user_data`; `placement` is where they go (resource group, tags,
parent). Each step takes the typed results of the steps it needs. Every derived number comes from the planner
(`args.plan`).
"""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure_native
import pulumi_random as random

from accelstack.clouds.base import Feature
from accelstack.components.azure.admin import admin_public_key
from accelstack.components.azure.provider import account_of, resource_group, stack_tags
from accelstack.components.azure.serving.edge import access_logs, application_gateway, waf_policy
from accelstack.components.azure.serving.identity import ServingIdentities
from accelstack.components.azure.serving.network import ServingNetwork
from accelstack.components.azure.serving.placement import Placement
from accelstack.components.azure.serving.queue import AdmissionQueue as ServiceBusQueue
from accelstack.components.azure.serving.queue import dead_letter_path
from accelstack.components.azure.serving.replicas import replica_group, standby_pool
from accelstack.components.azure.serving.scaling import scaling
from accelstack.components.azure.serving.user_data import GATEWAY_CLIENT_HOP
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

__all__ = ["ServingService"]


class AzureServingParts(ServingParts):
    """Azure's serving parts: a resource group and VNet, a Service Bus namespace and queues, the replicas' and
    gateway's identities, an Application Gateway WAF_v2, a Flexible scale set with a standby pool, and autoscale
    on active messages per instance. Each step takes the typed results of the steps it needs."""

    def __init__(self, ctx: ServingContext):
        super().__init__(ctx)
        spec = ctx.spec
        self.account = account_of(spec)
        self.standby: azure_native.standbypool.StandbyVirtualMachinePool | None = None
        self.queue: ServiceBusQueue | None = None  # None with admission on the replicas

    def network(self) -> ReplicaNetwork:
        ctx = self.ctx
        self.resource_group = resource_group(ctx.spec, ctx.child)
        # Fixed (provider.resource_group): the gateway's ids use it.
        self.placement = Placement(
            self.resource_group, f"{ctx.spec.stack}-rg", self.account.subscription_id, stack_tags(ctx.spec), ctx.child
        )
        self.vnet = ServingNetwork(f"{ctx.name}-net", ctx.serving, self.placement)
        return ReplicaNetwork([self.vnet.replicas_subnet.id])

    def admission_queue(self, network: ReplicaNetwork) -> AdmissionQueue:
        ctx = self.ctx
        self.queue = ServiceBusQueue(f"{ctx.name}-queue", ctx.serving.admission, ctx.plan, self.placement)
        requests = self.queue.requests.id
        return AdmissionQueue(
            requests, self.queue.responses.id, requests.apply(lambda i: dead_letter_path(i)), self.queue
        )

    def replica_admission(self) -> ReplicaAdmission:
        return ReplicaAdmission.planned(self.ctx.serving, self.ctx.plan, client_hop=GATEWAY_CLIENT_HOP)

    @implements(Feature.CROSS_ACCOUNT_ARTIFACTS)
    def identity(self, network: ReplicaNetwork, queue: AdmissionQueue | None) -> None:
        ctx = self.ctx
        self.identities = ServingIdentities(
            f"{ctx.name}-id",
            ctx.serving,
            ctx.plan,
            self.queue,
            self.placement,
            standby_pool_principal_id=self.account.standby_pool_principal_id,
        )

    def serving_identity(self) -> ServingIdentity:
        replicas = self.identities.replicas
        return ServingIdentity(
            "azure", subject=replicas.principal_id, client_id=replicas.client_id, tenant_id=self.account.tenant_id
        )

    @implements(Feature.WAF_RATE_LIMIT)
    def edge(self, network: ReplicaNetwork) -> pulumi.Resource | None:
        """The gateway (its backend pool, which the scale set joins) before the replicas; its WAF policy."""
        ctx = self.ctx
        self.web_acl = waf_policy(ctx.name, ctx.serving.admission, self.placement)
        self.edge_out = application_gateway(
            ctx.name,
            ctx.serving,
            ctx.plan,
            network=self.vnet,
            identities=self.identities,
            waf=self.web_acl,
            placement=self.placement,
        )
        self.gateway = self.edge_out.gateway
        self.access_logs = access_logs(ctx.name, ctx.serving.load_balancer, self.gateway, self.placement)
        return self.web_acl

    def replica_group(self, network: ReplicaNetwork, admission: Admission) -> ReplicaGroup:
        ctx = self.ctx
        randomness = random.Provider(f"{ctx.name}-replicas-random", opts=ctx.child)
        admin_key = admin_public_key(
            f"{ctx.name}-replicas", pulumi.ResourceOptions(parent=ctx.parent, provider=randomness)
        )
        self.group = replica_group(
            ctx.name,
            ctx.serving,
            ctx.plan,
            admin_key=admin_key,
            digest=ctx.digest,
            network=self.vnet,
            queue=self.queue,
            identities=self.identities,
            gateway=self.gateway,
            placement=self.placement,
            admission=admission if isinstance(admission, ReplicaAdmission) else None,
            reader=self.artifact_reader,
            copies=self.artifact_copies,
        )
        return ReplicaGroup(self.group, self.group.name)

    def endpoint(self, group: ReplicaGroup) -> pulumi.Input[str]:
        return self.edge_out.endpoint

    @implements(Feature.WARM_POOL)
    def warm_capacity(self, group: ReplicaGroup) -> None:
        """A standby pool of deallocated, pre-initialised VMs beside the scale set (None when the plan sizes 0)."""
        self.standby = standby_pool(self.ctx.name, self.ctx.plan, self.group, self.identities, self.placement)

    def scaling(self, group: ReplicaGroup, queue: AdmissionQueue) -> pulumi.Resource:
        ctx = self.ctx
        assert self.queue is not None, "queue-depth scaling reads the admission queue"
        return scaling(
            ctx.name,
            ctx.serving.replicas,
            ctx.plan,
            group=self.group,
            namespace=self.queue.namespace,
            placement=self.placement,
        )

    def load_scaling(self, group: ReplicaGroup) -> pulumi.Resource:
        ctx = self.ctx
        return scaling(
            ctx.name, ctx.serving.replicas, ctx.plan, group=self.group, gateway=self.gateway, placement=self.placement
        )


class ServingService(ServingRecipe):
    """The Azure serving service: the serving recipe over `AzureServingParts`. Its `queue` is the admission
    queue component (`namespace`, `requests`, `responses`). Beside the recipe's attributes: `resource_group`,
    `network`, `identities`, `gateway`, `standby_pool` (None when the planner sizes it 0) and `access_logs` (None
    without serving.loadBalancer.accessLogs), kept on `parts`."""

    cloud = "azure"
    parts_class = AzureServingParts
    parts: AzureServingParts

    resource_group: FromParts[azure_native.resources.ResourceGroup] = FromParts("resource_group")
    network: FromParts[ServingNetwork] = FromParts("vnet")
    identities: FromParts[ServingIdentities] = FromParts("identities")
    gateway: FromParts[azure_native.network.ApplicationGateway] = FromParts("gateway")
    standby_pool: FromParts[azure_native.standbypool.StandbyVirtualMachinePool | None] = FromParts("standby")
    access_logs: FromParts[azure_native.storage.StorageAccount | None] = FromParts("access_logs")
