"""What a cloud's training parts hand the recipe, and the parts themselves (`TrainingParts`).

Every value here is neutral and typed: the recipe builds the nodes' boot, their ordering and the stack's
outputs from these alone, so one neutral key behaves one way on every cloud. A cloud keeps its own resources
(and anything its node group needs from its network or identity) on its parts object.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, overload

import pulumi

from accelstack.components.base import SchedulerResult, TrainingClusterArgs
from accelstack.components.slurm import LUSTRE_MOUNT_OPTIONS
from accelstack.planner.training_plan import TrainingPlan
from accelstack.spec.models import TrainingStack

if TYPE_CHECKING:
    from accelstack.components.recipes.slurm import SlurmRecipe

T = TypeVar("T")


class FromParts(Generic[T]):
    """A cloud's own resource, as an attribute of its component read from the component's parts (`parts`): the
    names users' tests assert on (`cluster.storage`, `service.queues`) stay where they were before the recipes.
    `network: FromParts[TrainingNetwork] = FromParts("vpc")` reads `component.parts.vpc`. Declared as an
    annotation, not `FromParts[gcp.compute.Network]("vpc")`: an annotation is never evaluated, a subscript in the
    class body is, and it imported the provider's whole service module wherever the component module was imported
    (the spec rules import them to render boot data: tests/engine/test_engine_preview.py)."""

    def __init__(self, attribute: str):
        self.attribute = attribute

    @overload
    def __get__(self, component: None, owner: type[Any]) -> FromParts[T]: ...

    @overload
    def __get__(self, component: object, owner: type[Any] | None = None) -> T: ...

    def __get__(self, component: object, owner: type[Any] | None = None) -> FromParts[T] | T:
        if component is None:
            return self  # on the class: the descriptor, as a property would be
        value: T = getattr(getattr(component, "parts"), self.attribute)  # noqa: B009 - `parts` is the recipe's
        return value


# What a cloud's schedulers build from (its network, storage and identities, as that cloud names them).
Handles = TypeVar("Handles")


class _Args(Protocol):
    """What every workload's args carry beside its spec and plan."""

    @property
    def digest(self) -> str: ...


WorkloadArgs = TypeVar("WorkloadArgs", bound=_Args)


@dataclass(frozen=True)
class RecipeContext(Generic[WorkloadArgs]):
    """One component being built by a recipe: its name, its args and the component it builds in."""

    name: str
    args: WorkloadArgs
    parent: pulumi.Resource

    @property
    def digest(self) -> str:
        return self.args.digest

    @property
    def child(self) -> pulumi.ResourceOptions:
        """Options of a resource directly under the component (its URN's parent)."""
        return pulumi.ResourceOptions(parent=self.parent)


@dataclass(frozen=True)
class BuildContext(RecipeContext[TrainingClusterArgs]):
    """One training cluster being built (its args: the resolved spec, the plan, the digest)."""

    @property
    def spec(self) -> TrainingStack:
        return self.args.spec

    @property
    def plan(self) -> TrainingPlan:
        return self.args.plan


@dataclass(frozen=True)
class NodeNetwork:
    """Where the nodes live: the network, their subnet and the zone every node of the cluster shares."""

    network_id: pulumi.Input[str]
    subnet_id: pulumi.Input[str]
    zone: pulumi.Input[str]


@dataclass(frozen=True)
class NetworkStorage:
    """A parallel file system as the nodes mount it: Cluster Toolkit's `network_storage`, typed.

    The nodes mount `<address>@tcp:/<remote_mount>` at `local_mount` with `mount_options`; a node group waits for
    `resource` and everything in `ready` (an import from the object store) before its first node boots."""

    fs_type: Literal["lustre"]
    address: pulumi.Output[str]
    remote_mount: pulumi.Output[str]
    local_mount: str
    mount_options: str
    resource: pulumi.Resource
    ready: tuple[pulumi.Resource, ...] = ()

    @property
    def waits_for(self) -> list[pulumi.Resource]:
        return [self.resource, *self.ready]


def planned_network_storage(
    spec: TrainingStack,
    resource: pulumi.Resource | None,
    address: pulumi.Output[str] | None,
    remote_mount: pulumi.Output[str] | None,
    ready: tuple[pulumi.Resource, ...] = (),
) -> NetworkStorage | None:
    """The file system the plan asked for, as the nodes mount it (spec's mount path, the Lustre client options);
    None where the spec has none. A cloud that built one without its address is a bug, said here."""
    lustre = spec.training.storage.lustre
    if resource is None or lustre is None:
        return None
    if address is None or remote_mount is None:
        raise ValueError(f"{spec.cloud}: the file system was built without its address or mount name")
    return NetworkStorage("lustre", address, remote_mount, lustre.mount_path, LUSTRE_MOUNT_OPTIONS, resource, ready)


@dataclass(frozen=True)
class TrainingData:
    """The stack's stateful storage as the rest of the cluster sees it: object-store URIs, key, file system."""

    dataset_uri: pulumi.Input[str]
    checkpoint_uri: pulumi.Input[str] | None
    encryption_key: pulumi.Input[str]
    file_system: NetworkStorage | None


@dataclass
class NodeIdentity:
    """What the nodes run as, as the recipe sees it: the grants a node needs before it boots. A scheduler part
    appends its own (the munge key's); the node group and the head node wait for every one."""

    grants: list[pulumi.Resource] = field(default_factory=list)


@dataclass(frozen=True)
class NodeGroup:
    """The compute nodes as built: the group and its template (None where the cloud keeps both in one resource)."""

    group: pulumi.Resource
    group_name: pulumi.Input[str]
    template: pulumi.Resource | None = None


@dataclass(frozen=True)
class Placement:
    """What keeps the nodes close on the fabric (a cluster placement group, a workload policy, the scale set's
    single placement group), and the name the stack exports for it (None: not exported)."""

    resource: pulumi.Resource
    name: pulumi.Input[str] | None = None


class TrainingParts(ABC, Generic[Handles]):
    """A cloud's training parts, made for one cluster. The recipe calls them in this order, once each:
    `network`, `storage`, `node_identity`, the scheduler the spec names, then `node_group` when the scheduler
    leaves the nodes to the cluster. A part may keep what it built for a later part (an AWS security group for
    the launch template); it returns only the neutral values above.

    The schedulers a cloud offers follow from what its parts implement: Slurm from `slurm_cluster` (its Slurm
    recipe), the managed scheduler from `WithManagedScheduler`. A cloud cannot claim either without the code."""

    # The cloud's Slurm recipe (`accelstack.components.recipes.slurm`); None: no Slurm on this cloud.
    slurm_cluster: type[SlurmRecipe[Any]] | None = None

    def __init__(self, ctx: BuildContext):
        self.ctx = ctx

    @abstractmethod
    def network(self) -> NodeNetwork:
        """The nodes' network, subnet and zone (and any fabric networks the nodes' NICs need)."""

    @abstractmethod
    def storage(self, network: NodeNetwork) -> TrainingData:
        """The stack key, dataset and checkpoint stores, and the parallel file system (the plan's)."""

    @abstractmethod
    def node_identity(self, network: NodeNetwork, data: TrainingData) -> NodeIdentity:
        """What the nodes run as: read datasets, write (never delete) checkpoints, use the stack key."""

    @abstractmethod
    def scheduler_handles(self, network: NodeNetwork, data: TrainingData, identity: NodeIdentity) -> Handles:
        """What this cloud's schedulers build from (called only when the spec names a scheduler)."""

    @abstractmethod
    def node_group(
        self,
        network: NodeNetwork,
        data: TrainingData,
        identity: NodeIdentity,
        scheduler: SchedulerResult,
        user_data: pulumi.Input[str],
    ) -> NodeGroup:
        """The fixed-size compute node group, booting `user_data`. It waits at least for `identity.grants`; what
        else it waits for (the file system, `data.file_system.waits_for`; the scheduler's head) is the cloud's
        ordering: a node that retries its mount and its join may boot early."""

    @abstractmethod
    def fabric_interfaces_per_node(self) -> int:
        """The fabric NICs each node gets (EFA, InfiniBand ports, GPU NICs): 0 without a fabric."""

    def placement(self) -> Placement | None:
        """The nodes' placement once every part has run; None: the nodes need none (one node, a time-boxed block
        already placed close, or a managed scheduler that places its own)."""
        return None

    def plain_boot(self, cloud_config: str) -> str:
        """The nodes' cloud-config without a scheduler, as this cloud must finish it (Azure turns SSH passwords
        off); the recipe writes the body."""
        return cloud_config


class WithManagedScheduler(ABC, Generic[Handles]):
    """Training parts whose cloud runs the nodes under its own scheduler (AWS Batch, Azure Machine Learning,
    Cluster Director): `training.scheduler.kind: managed`."""

    @abstractmethod
    def managed_scheduler(self, handles: Handles) -> SchedulerResult:
        """The managed scheduler, usually running the nodes itself (`needs_compute_group=False`)."""
