"""The serving recipe: one sequence, every cloud, in two topologies (serving.admission.kind). queue: the
replicas drain a managed admission queue and scale on its backlog per replica. replica: the load balancer sends
straight to the replicas, each admitting requests itself (the admission proxy: bounded in-flight and waiting
requests, TTL, per-client limits), and the group scales on the load balancer's requests per replica. Either
group may instead be a fixed fleet (serving.replicas.scaling fixed: no scaling part at all).

The sequence: the replicas' network, their admission (the queue, or the replicas' own), their identity, the
edge's guards (firewall, per-client rate limit, health check), the replica group, the load balancer in front
of it, warm capacity for the cold start, scaling, and the stack's outputs, written here once from the parts'
neutral values.

A cloud's `ServingService` is this recipe with its parts (`parts_class`) and its type token; the resource
names and parents are the parts', so a stack built before the recipe keeps its URNs. Every number the parts
need is on the plan (`ctx.plan`): they derive nothing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pulumi

from accelstack.components.base import ServingServiceArgs
from accelstack.components.handoff import FederatedReader, ServingIdentity, declare_reader
from accelstack.components.handoff.copies import declare_copies
from accelstack.components.recipes.parts import RecipeContext
from accelstack.components.replica import admission_proxy_environment
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.copies import artifact_copies
from accelstack.spec.handoff import artifact_handoff
from accelstack.spec.models import ServingSpec, ServingStack


@dataclass(frozen=True)
class ServingContext(RecipeContext[ServingServiceArgs]):
    """One service being built (its args: the spec, the plan, the digest)."""

    @property
    def spec(self) -> ServingStack:
        return self.args.spec

    @property
    def serving(self) -> ServingSpec:
        return self.args.spec.serving

    @property
    def plan(self) -> ServingPlan:
        return self.args.plan


@dataclass(frozen=True)
class ReplicaNetwork:
    """Where the replicas live: their (private) subnets, and the stable public addresses their NAT reaches the
    internet from where the network has them (None: not reserved, or not this stack's)."""

    subnets: pulumi.Input[Sequence[pulumi.Input[str]]]
    egress_addresses: pulumi.Input[Sequence[pulumi.Input[str]]] | None = None


@dataclass(frozen=True)
class AdmissionQueue:
    """The queue in front of the replicas: where requests wait, where responses go, where poison messages land.
    `resource` is the one the replicas drain and the group scales on."""

    requests: pulumi.Input[str]
    responses: pulumi.Input[str]
    dead_letters: pulumi.Input[str]
    resource: pulumi.Resource


@dataclass(frozen=True)
class ReplicaAdmission:
    """Admission on the replicas themselves: the admission proxy's environment (what
    `components.replica.admission_proxy.Config.from_env` reads), which the replica's boot installs."""

    environment: Mapping[str, str]

    @classmethod
    def planned(cls, serving: ServingSpec, plan: ServingPlan, *, client_hop: int) -> ReplicaAdmission:
        """From the plan, behind a load balancer that writes the client's address `client_hop` entries from the
        right of X-Forwarded-For."""
        return cls(admission_proxy_environment(serving, plan, client_hop=client_hop))

    @classmethod
    def where_asked(cls, serving: ServingSpec, plan: ServingPlan, *, client_hop: int) -> ReplicaAdmission | None:
        """`planned` where the spec asks for admission on the replicas (serving.admission.kind replica); None with a
        queue."""
        return cls.planned(serving, plan, client_hop=client_hop) if serving.admission.kind == "replica" else None


Admission = AdmissionQueue | ReplicaAdmission


@dataclass(frozen=True)
class ReplicaGroup:
    """The replicas as built: the group (its warm or standby capacity included where the cloud keeps it there)."""

    resource: pulumi.Resource
    name: pulumi.Input[str]


class ServingParts(ABC):
    """A cloud's serving parts, made for one service. The recipe calls them in the order they are declared,
    once each. A part may keep what it built for a later one; it returns only the neutral values above."""

    artifact_reader: FederatedReader | None = None  # weights on another cloud: the reader declared there
    artifact_copies: Sequence[pulumi.Resource] = ()  # weights copied into this stack's store: the group waits

    def __init__(self, ctx: ServingContext):
        self.ctx = ctx

    @abstractmethod
    def network(self) -> ReplicaNetwork:
        """The replicas' network: private subnets, with a way out for images and weights, none in."""

    def admission_queue(self, network: ReplicaNetwork) -> AdmissionQueue:
        """The request, response and dead-letter queues, encrypted, sized by the plan (retention, visibility).
        A cloud without a managed queue leaves this out (and has no ADMISSION_QUEUE feature)."""
        raise NotImplementedError(f"{type(self).__name__} has no admission queue")

    def replica_admission(self) -> ReplicaAdmission:
        """Admission on the replicas (`ReplicaAdmission.planned`, with where the cloud's load balancer writes the
        client's address). A cloud whose replicas cannot admit requests leaves this out."""
        raise NotImplementedError(f"{type(self).__name__} has no admission on the replicas")

    @abstractmethod
    def identity(self, network: ReplicaNetwork, queue: AdmissionQueue | None) -> None:
        """What the replicas run as: read the model prefix, and with a queue drain the request queue and answer on
        the response one."""

    def serving_identity(self) -> ServingIdentity:
        """The replicas' identity as another cloud's trust names it (after `identity`), for weights on another
        cloud (accelstack.spec.handoff). A cloud whose replicas have no platform identity leaves this out."""
        raise NotImplementedError(f"{type(self).__name__} cannot read another cloud's artifacts")

    def copy_destination(self) -> tuple[str, pulumi.Input[str] | None]:
        """Where a copy writes in this stack's own store (components/handoff/copy.py ArtifactCopy): the endpoint (the
        AWS Region, the Vultr Object Storage host; "" where the URI says it all) and the secret key JSON a store
        without ambient deployer credentials is written with (Vultr's); None where the deployer's own serve."""
        return "", None

    @abstractmethod
    def edge(self, network: ReplicaNetwork) -> pulumi.Resource | None:
        """The edge's guards: the load balancer's firewall, the per-client rate limit (returned: the WAF policy
        or security policy; None where the cloud has none), health checks. A cloud whose group attaches to its
        load balancer (a target group, a backend pool) builds the load balancer here."""

    @abstractmethod
    def replica_group(self, network: ReplicaNetwork, admission: Admission) -> ReplicaGroup:
        """The replica group: the plan's minimum and maximum (one size with scaling fixed), its health checks and
        grace, the boot: the queue worker for a queue, the admission proxy in front of the server otherwise."""

    @abstractmethod
    def endpoint(self, group: ReplicaGroup) -> pulumi.Input[str]:
        """The load balancer in front of the group (built in `edge` where the group attaches to it): its HTTPS
        endpoint URL."""

    def warm_capacity(self, group: ReplicaGroup) -> None:
        """Pre-initialised capacity for the cold start, where the cloud keeps it outside the group (a standby
        pool); the plan sizes it. Nothing by default: the group holds it."""
        return None

    def scaling(self, group: ReplicaGroup, queue: AdmissionQueue) -> pulumi.Resource:
        """Scale the group on the queue's backlog per instance (the plan's target, never CPU)."""
        raise NotImplementedError(f"{type(self).__name__} has no queue-depth scaling")

    def load_scaling(self, group: ReplicaGroup) -> pulumi.Resource:
        """Without a queue: scale the group on the load balancer's requests per replica (the plan's
        `requests_per_replica_minute_target`, never CPU)."""
        raise NotImplementedError(f"{type(self).__name__} has no load-balancer scaling")

    def monitoring(self, queue: AdmissionQueue) -> None:
        """Alarms on the queue (age of the oldest request, dead letters), where the cloud keeps them apart."""
        return None


class ServingRecipe(pulumi.ComponentResource):
    """A serving service on any cloud; `outputs` holds what the stack exports (accelstack.outputs' contract).

    What a test can assert on, on every cloud: `queue` (the admission queue's resource; None with admission on
    the replicas), `web_acl` (the per-client rate limit; None without one), `group` (the replica group),
    `scaling_policy` (None for a fixed fleet), `plan` (every derived number) and `parts` (the cloud's own
    resources)."""

    cloud: ClassVar[str]  # the registry name: the type token is accelstack:<cloud>:ServingService
    parts_class: ClassVar[type[ServingParts]]

    def __init__(self, name: str, args: ServingServiceArgs, opts: pulumi.ResourceOptions | None = None):
        """`name` prefixes every resource of the service and is its stack tag; `opts.provider` is the (pinned)
        provider the service deploys with."""
        args = args.named(name)
        super().__init__(f"accelstack:{self.cloud}:ServingService", name, None, opts)
        self.spec, self.serving, self.plan, self.digest = args.spec, args.spec.serving, args.plan, args.digest
        parts = self.parts = self.parts_class(ServingContext(name, args, self))

        queued, autoscaled = self.serving.admission.kind == "queue", self.serving.replicas.scaling == "backlog"
        self.replica_network = parts.network()
        self.admission = parts.admission_queue(self.replica_network) if queued else None
        self.queue = self.admission.resource if self.admission else None
        parts.identity(self.replica_network, self.admission)
        # Weights on another cloud: the reader there, trusting this service's replicas (before their group boots).
        self.handoff = artifact_handoff(self.spec)
        if self.handoff is not None:
            parts.artifact_reader = declare_reader(name, self.handoff, parts.serving_identity(), self)
        # Weights copied from another cloud into this stack's own store at `up` (the replica group waits for them).
        if artifact_copies(self.spec):
            parts.artifact_copies = declare_copies(name, self.spec, self, *parts.copy_destination())
        self.web_acl = parts.edge(self.replica_network)
        admission = self.admission or parts.replica_admission()
        self.replicas = parts.replica_group(self.replica_network, admission)
        self.group = self.replicas.resource
        endpoint = parts.endpoint(self.replicas)
        parts.warm_capacity(self.replicas)
        self.scaling_policy: pulumi.Resource | None = None
        if autoscaled:
            self.scaling_policy = (
                parts.scaling(self.replicas, self.admission) if self.admission else parts.load_scaling(self.replicas)
            )
        if self.admission:
            parts.monitoring(self.admission)

        self.outputs = self.serving_outputs(endpoint)
        self.register_outputs(self.outputs)

    def serving_outputs(self, endpoint: pulumi.Input[str]) -> dict[str, pulumi.Input[Any]]:
        """The serving output contract (accelstack.outputs), from the parts' neutral values and the plan only."""
        plan = self.plan
        queue = self.admission
        return {
            "endpoint": endpoint,
            **(
                {
                    "requestQueue": queue.requests,
                    "responseQueue": queue.responses,
                    "deadLetterQueue": queue.dead_letters,
                }
                if queue
                else {}
            ),
            "replicaGroup": self.replicas.name,
            "replicaSubnets": self.replica_network.subnets,
            **(
                {"egressAddresses": self.replica_network.egress_addresses or []}
                if self.handoff is not None and self.handoff.admitted_by_address
                else {}
            ),
            "coldStartSeconds": plan.cold_start_seconds,
            "warmPoolSize": plan.warm_pool_size,
            **({"backlogPerInstanceTarget": plan.backlog_per_instance_target} if self.scaling_policy else {}),
            "configDigest": self.digest,
        }
