"""The Google Cloud serving service: a global external Application Load Balancer (HTTPS only, Cloud
Armor throttle per client IP) -> replicas in a private subnet, a Pub/Sub admission subscription the
replicas pull, and a regional instance group that scales on undelivered messages per replica, with a
standby pool of stopped, pre-pulled replicas. Without a queue (admission.kind replica) each replica's admission
proxy admits what the load balancer sends (RATE balancing), and the autoscaler holds the load-balancing
utilization; a fixed fleet has no autoscaler.

One module per concern, each building its resources as children of `ServingService`: `network`,
`queue`, `identity`, `edge`, `replicas`, `scaling`, `user_data`. Sizing comes from the planner
(`args.plan`).
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from accelstack.clouds.base import Feature
from accelstack.components.gcp.apis import project_apis
from accelstack.components.gcp.provider import account_of
from accelstack.components.gcp.serving.edge import firewall, health_check, load_balancer, security_policy
from accelstack.components.gcp.serving.identity import kms_key, replica_account, stack_key
from accelstack.components.gcp.serving.network import egress_address_count, serving_network
from accelstack.components.gcp.serving.queue import AdmissionQueues, queues
from accelstack.components.gcp.serving.replicas import REGIONAL_GROUP_ZONES, replica_group
from accelstack.components.gcp.serving.scaling import scaling
from accelstack.components.gcp.serving.user_data import LOAD_BALANCER_CLIENT_HOP
from accelstack.components.gcp.storage import created_agent
from accelstack.components.handoff import ServingIdentity
from accelstack.components.propagation import PropagationWaits
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
from accelstack.spec.handoff import artifact_handoff

__all__ = ["ServingService"]


class GcpServingParts(ServingParts):
    """Google Cloud's serving parts: a VPC and private subnet, Pub/Sub topics and subscriptions under a Cloud KMS
    key, the replicas' service account, the firewall, Cloud Armor and a health check, a regional instance group
    (standby pool included), the global load balancer in front of it, and an autoscaler on undelivered messages."""

    def __init__(self, ctx: ServingContext):
        super().__init__(ctx)
        account = account_of(ctx.spec)
        self.region, self.project_id = account.region, account.project_id
        self.project_number = project_apis(ctx.spec.stack).project_number(ctx.parent)
        self.pubsub: AdmissionQueues | None = None  # None with admission on the replicas
        self.queues: dict[str, pulumi.Resource] | None = None

    def network(self) -> ReplicaNetwork:
        ctx = self.ctx
        handoff = artifact_handoff(ctx.spec)
        static = (
            egress_address_count(ctx.serving, REGIONAL_GROUP_ZONES)
            if handoff is not None and handoff.admitted_by_address
            else 0
        )
        net = serving_network(ctx.name, ctx.serving, self.region, ctx.child, static_egress=static)
        self.vpc, self.subnet = net.network, net.subnet
        return ReplicaNetwork([self.subnet.id], net.egress_addresses)

    def admission_queue(self, network: ReplicaNetwork) -> AdmissionQueue:
        ctx = self.ctx
        pubsub_agent = created_agent(ctx.name, self.project_id, "pubsub", ctx.child)
        queue_key = kms_key(ctx.name, self.region, pubsub_agent, ctx.child, PropagationWaits(ctx.name, ctx.parent))
        self.key = queue_key.key
        self.pubsub = pubsub = queues(ctx.name, ctx.serving.admission, ctx.plan, queue_key, pubsub_agent, ctx.child)
        self.queues = pubsub.by_role()
        request = pubsub.request_subscription  # what the replicas pull and the autoscaler reads
        return AdmissionQueue(request.id, pubsub.responses.id, pubsub.dead_letters.id, request)

    def replica_admission(self) -> ReplicaAdmission:
        return ReplicaAdmission.planned(self.ctx.serving, self.ctx.plan, client_hop=LOAD_BALANCER_CLIENT_HOP)

    @implements(Feature.CROSS_ACCOUNT_ARTIFACTS)
    def identity(self, network: ReplicaNetwork, queue: AdmissionQueue | None) -> None:
        if queue is None:  # kept in both topologies: a key ring cannot be deleted (identity.stack_key)
            self.key = stack_key(self.ctx.name, self.region, self.ctx.child)
        self.replica_identity = replica_account(self.ctx.name, self.ctx.serving, self.pubsub, self.ctx.child)
        self.replica_account = self.replica_identity.account

    def serving_identity(self) -> ServingIdentity:
        return ServingIdentity("gcp", subject=self.replica_account.unique_id)

    @implements(Feature.WAF_RATE_LIMIT)
    def edge(self, network: ReplicaNetwork) -> pulumi.Resource | None:
        ctx = self.ctx
        self.firewall = firewall(ctx.name, self.vpc, ctx.serving.load_balancer, ctx.child)
        self.web_acl = security_policy(ctx.name, ctx.serving.admission, ctx.child)
        self.health_check = health_check(ctx.name, ctx.serving.load_balancer, ctx.plan, ctx.child)
        return self.web_acl

    @implements(Feature.WARM_POOL)
    def replica_group(self, network: ReplicaNetwork, admission: Admission) -> ReplicaGroup:
        ctx = self.ctx
        self.group = replica_group(
            ctx.name,
            ctx.serving,
            ctx.plan,
            project_id=self.project_id,
            region=self.region,
            subnet=self.subnet,
            queues=self.pubsub,
            identity=self.replica_identity,
            health=self.health_check,
            opts=ctx.child,
            admission=admission if isinstance(admission, ReplicaAdmission) else None,
            reader=self.artifact_reader,
            copies=self.artifact_copies,
        )
        return ReplicaGroup(self.group, self.group.name)

    def endpoint(self, group: ReplicaGroup) -> pulumi.Input[str]:
        """The backend service takes the group: the load balancer comes after it."""
        ctx = self.ctx
        edge = load_balancer(
            ctx.name, ctx.serving.load_balancer, ctx.plan, self.health_check, self.web_acl, self.group, ctx.child,
            admission_on_replicas=self.pubsub is None,
        )  # fmt: skip
        self.address, self.backend = edge.address, edge.backend
        return self.address.address.apply(lambda ip: f"https://{ip}")

    def scaling(self, group: ReplicaGroup, queue: AdmissionQueue) -> pulumi.Resource:
        assert self.pubsub is not None, "queue-depth scaling reads the request subscription"
        return self._autoscaler(self.pubsub.request_subscription)

    def load_scaling(self, group: ReplicaGroup) -> pulumi.Resource:
        # Load-balancing utilization is the serving capacity of the backend that names the group: the autoscaler
        # waits for it rather than racing it.
        return self._autoscaler(None, after=[self.backend])

    def _autoscaler(
        self, request_subscription: gcp.pubsub.Subscription | None, after: list[pulumi.Resource] | None = None
    ) -> pulumi.Resource:
        ctx = self.ctx
        return scaling(
            ctx.name,
            ctx.serving.replicas,
            ctx.plan,
            region=self.region,
            group=self.group,
            request_subscription=request_subscription,
            opts=pulumi.ResourceOptions.merge(ctx.child, pulumi.ResourceOptions(depends_on=after or [])),
        )


class ServingService(ServingRecipe):
    """The Google Cloud serving service: the serving recipe over `GcpServingParts`. Its `queue` is the request
    subscription. Beside the recipe's attributes: `network`, `subnet`, `queues` (by role), `backend`, `address`
    and `replica_account`, kept on `parts`."""

    cloud = "gcp"
    parts_class = GcpServingParts
    parts: GcpServingParts

    network: FromParts[gcp.compute.Network] = FromParts("vpc")
    subnet: FromParts[gcp.compute.Subnetwork] = FromParts("subnet")
    queues: FromParts[dict[str, pulumi.Resource] | None] = FromParts("queues")
    backend: FromParts[gcp.compute.BackendService] = FromParts("backend")
    address: FromParts[gcp.compute.GlobalAddress] = FromParts("address")
    replica_account: FromParts[gcp.serviceaccount.Account] = FromParts("replica_account")
