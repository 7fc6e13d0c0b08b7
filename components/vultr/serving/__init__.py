"""The Vultr serving service, the direct topology only: a Vultr load balancer (HTTPS, HTTP health checks) in a VPC
straight to a fixed fleet of Cloud GPU instances, each running the admission proxy (bounded waiting queue with TTL,
the per-client rate limit, 429/503 on overload) in front of the inference server; a firewall group admits only the
load balancer's side. Vultr has no managed queue, instance group, autoscaler, warm pool or WAF (clouds/vultr).
"""

from __future__ import annotations

import ediri_vultr as vultr
import pulumi

from accelstack.clouds.vultr import catalog
from accelstack.components.handoff import ServingIdentity
from accelstack.components.handoff.per_replica import PerReplicaReader
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
from accelstack.components.vultr.provider import account_of, secret_value, stack_tags
from accelstack.components.vultr.serving.edge import firewall, load_balancer, vpc
from accelstack.components.vultr.serving.replicas import replica_fleet
from accelstack.components.vultr.serving.user_data import LOAD_BALANCER_CLIENT_HOP, replica_handoff
from accelstack.components.vultr.serving.weights_key import ReplicaClocks, ReplicaKeyUrls

__all__ = ["ServingService"]


class VultrServingParts(ServingParts):
    """Vultr's serving parts: a VPC, the replicas' firewall group, a fixed fleet of GPU instances, and the load
    balancer in front of them."""

    def __init__(self, ctx: ServingContext):
        super().__init__(ctx)
        self.region = account_of(ctx.spec).region
        self.instances: list[vultr.Instance] = []

    def network(self) -> ReplicaNetwork:
        self.vpc = vpc(self.ctx.name, self.ctx.serving, self.region, self.ctx.child)
        return ReplicaNetwork([self.vpc.id])

    def replica_admission(self) -> ReplicaAdmission:
        return ReplicaAdmission.planned(self.ctx.serving, self.ctx.plan, client_hop=LOAD_BALANCER_CLIENT_HOP)

    def identity(self, network: ReplicaNetwork, queue: AdmissionQueue | None) -> None:
        """No instance identity on Vultr: the weights are read with a read-only key, which each replica fetches
        through a presigned URL of its own (components/vultr/serving/weights_key.py)."""
        self.clocks: ReplicaClocks | None = None
        self.key_urls: ReplicaKeyUrls | None = None
        if replica_handoff(self.ctx.spec) is not None:
            # Weights on OCI or Google Cloud: no Vultr key; each replica's credential expires after the same clock.
            self.clocks = ReplicaClocks(self.ctx.name, self.ctx.parent)
            return None
        key = account_of(self.ctx.spec).weights_key
        if key is None:  # the spec rules refuse a serving stack without it (clouds/vultr/rules.py)
            raise ValueError("account.weightsKey: required on Vultr for serving")
        signer = secret_value(key.signer_secret, "the weights key signer")
        self.key_urls = ReplicaKeyUrls(self.ctx.name, key, self.region, signer, self.ctx.parent)
        return None

    def serving_identity(self) -> ServingIdentity:
        """Vultr replicas have no identity a training cloud could trust: the reader (OCI or Google Cloud, READERS)
        hands each replica a short-lived credential of its own instead, so this names no subject."""
        return ServingIdentity("vultr", subject="")

    def copy_destination(self) -> tuple[str, pulumi.Input[str] | None]:
        """The copy writes the region's Object Storage cluster with the account.weightsKey signer key (JSON
        {"accessKey", "secretKey"}), which must then be able to write the weights prefix (docs/deploy-vultr.md)."""
        key = account_of(self.ctx.spec).weights_key
        if key is None:  # the spec rules refuse a serving stack without it (clouds/vultr/rules.py)
            raise ValueError("account.weightsKey: required on Vultr for serving")
        host = catalog.OBJECT_STORAGE_HOSTS.get(self.region, catalog.DEFAULT_OBJECT_STORAGE_HOST)
        return host, secret_value(key.signer_secret, "the weights key signer")

    def edge(self, network: ReplicaNetwork) -> pulumi.Resource | None:
        self.firewall_group, self.firewall_rule = firewall(self.ctx.name, self.ctx.serving, self.ctx.child)
        return None  # no WAF: the per-client rate limit is the admission proxy's

    def replica_group(self, network: ReplicaNetwork, admission: Admission) -> ReplicaGroup:
        assert isinstance(admission, ReplicaAdmission), "Vultr has no queue: admission is on the replicas"
        ctx = self.ctx
        self.instances = replica_fleet(
            ctx.name,
            ctx.serving,
            ctx.plan,
            region=self.region,
            tags=stack_tags(ctx.spec),
            network=self.vpc,
            firewall_group=self.firewall_group,
            admission=admission,
            key_urls=self.key_urls,
            clocks=self.clocks,
            reader=self.artifact_reader if isinstance(self.artifact_reader, PerReplicaReader) else None,
            parent=ctx.parent,
            opts=pulumi.ResourceOptions.merge(
                ctx.child, pulumi.ResourceOptions(depends_on=[self.firewall_rule, *self.artifact_copies])
            ),
        )
        # The group is the fleet: its first replica stands for it where the recipe asks for one resource.
        return ReplicaGroup(self.instances[0], f"{ctx.name}-replica")

    def endpoint(self, group: ReplicaGroup) -> pulumi.Input[str]:
        ctx = self.ctx
        self.lb = load_balancer(
            ctx.name, ctx.serving, ctx.plan, region=self.region, network=self.vpc, instances=self.instances,
            opts=ctx.child,
        )  # fmt: skip
        return self.lb.ipv4.apply(lambda ip: f"https://{ip}")


class ServingService(ServingRecipe):
    """The Vultr serving service: the serving recipe over `VultrServingParts`. Beside the recipe's attributes:
    `vpc`, `instances`, `firewall_group` and `lb`, kept on `parts`."""

    cloud = "vultr"
    parts_class = VultrServingParts
    parts: VultrServingParts

    vpc: FromParts[vultr.Vpc] = FromParts("vpc")
    instances: FromParts[list[vultr.Instance]] = FromParts("instances")
    firewall_group: FromParts[vultr.FirewallGroup] = FromParts("firewall_group")
    lb: FromParts[vultr.LoadBalancer] = FromParts("lb")
