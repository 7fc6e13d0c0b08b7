"""The interface every cloud implements, and the typed arguments its components take.

The data flow is one way: config -> validated spec -> plan (every derived number, once) -> components.
`TrainingClusterArgs` / `ServingServiceArgs` carry a workload's own slice of the spec and its plan; a cloud's
`TrainingCluster(name, args, opts)` / `ServingService(name, args, opts)` builds from nothing else, so a user's
own Pulumi program can build one (`TrainingClusterArgs.from_config({...}, "my-cluster")`, validated by the
same rules as a stack file) as pulumi-eks users build `Cluster(name, args)`.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi

from accelstack import outputs
from accelstack.clouds import registry
from accelstack.planner.pricing import PriceBook
from accelstack.planner.serving_plan import ServingPlan, plan_serving
from accelstack.planner.training_plan import TrainingPlan, plan_training
from accelstack.spec import SpecError, StackSpec, parse_spec
from accelstack.spec.models import ServingStack, TrainingStack
from accelstack.spec.problems import Problem


def config_digest(spec: StackSpec) -> str:
    """Short digest of the validated spec: tagged on every resource to tie it to the config that made it."""
    canonical = json.dumps(_digested(spec), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


# Keys added after stacks were deployed (path in the dumped spec -> their default): at that default they leave
# the digest as it was, so upgrading accelstack does not retag every deployed resource.
KEYS_ADDED_LATER: dict[tuple[str, ...], Any] = {
    ("account", "standbyPoolPrincipalId"): None,
    ("account", "projectNumber"): None,  # GCP: the project's other name, for the packs
    ("training", "nodes", "maxRunHours"): None,  # flex-start's run time
    ("training", "nodes", "imageId"): None,  # a node image of the user's (oci)
    ("training", "artifactReaderSubnets"): [],
    ("training", "artifactReaderAddresses"): [],
    ("training", "scheduler", "accounting"): "none",  # slurmdbd and its database
    ("training", "scheduler", "containers"): "pyxis",  # pyxis and enroot on Slurm
    ("serving", "admission", "kind"): "queue",  # the serving topology
    ("serving", "replicas", "scaling"): "backlog",
    ("training", "storage", "lustre", "importTrigger"): None,  # a re-import on demand
    ("serving", "load", "inputLengths"): None,  # token-length distributions of the stated load
    ("serving", "load", "outputLengths"): None,
    ("serving", "artifactPrefix"): "models/",  # the prefix the training stack publishes under
    ("serving", "artifactRegion"): None,  # the training store's region, for a cross-cloud handoff
    ("serving", "artifactTenancy"): None,  # OCI weights: the training tenancy
    ("serving", "artifactUrlLifetimeMinutes"): None,  # OCI weights on Vultr: each replica's PAR lifetime
    ("serving", "artifactDeployer"): None,  # AWS weights on Vultr: the principal the reader role trusts
    ("serving", "model", "copyFrom"): None,  # weights copied from another cloud (each adapter's: _digested)
    ("landing",): None,  # the landing stack the account came from (accelstack.spec.landing_ref)
}


# Keys whose neutral default moved into a cloud's catalog (path in the dumped spec -> the neutral default it had):
# where the stack's cloud has no default of its own (None), the digest reads the old value, so moving the default
# does not retag stacks deployed before.
KEYS_MOVED_TO_CATALOG: dict[tuple[str, ...], Any] = {
    ("serving", "replicas", "imageId"): (
        "resolve:ssm:/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"
    ),
}


def _block_of(data: dict[str, Any], path: tuple[str, ...]) -> tuple[dict[str, Any], str]:
    """The mapping holding `path`'s last key in the dumped spec (an empty one where a parent is missing), and the key."""
    *parents, key = path
    for parent in parents:
        data = data.get(parent) or {}
    return data, key


def _restore_moved_default(data: dict[str, Any], path: tuple[str, ...], old_default: Any) -> None:
    block, key = _block_of(data, path)
    if key in block and block[key] is None:
        block[key] = old_default


def _drop_at_default(data: dict[str, Any], path: tuple[str, ...], default: Any) -> None:
    block, key = _block_of(data, path)
    if key in block and block[key] == default:
        del block[key]


def _digested(spec: StackSpec) -> dict[str, Any]:
    """The spec as the digest has always read it, so a refactoring of the models does not retag every deployed
    resource: both workload blocks (the other one null), the file system's tier and the HTTPS certificate under
    their first names, without keys added since when they are at their default, and with a default that moved to a
    cloud's catalog read as it was where the cloud has none."""
    data = spec.model_dump(mode="json", by_alias=True)
    for path, default in KEYS_ADDED_LATER.items():
        _drop_at_default(data, path, default)
    for adapter in ((data.get("serving") or {}).get("model") or {}).get("adapters") or []:
        _drop_at_default(adapter, ("copyFrom",), None)  # added later, as the weights' copyFrom
    scheduler = (data.get("training") or {}).get("scheduler") or {}
    if scheduler.get("kind") != "slurm" and scheduler.get("containers") == "none":
        del scheduler["containers"]  # the only value a scheduler other than Slurm takes (accelstack.spec.scheduler)
    for path, old_default in KEYS_MOVED_TO_CATALOG.items():
        _restore_moved_default(data, path, old_default)
    data.setdefault("training", None)
    data.setdefault("serving", None)
    lustre = data["training"]["storage"].get("lustre") if data["training"] else None
    if lustre is not None:
        lustre["deploymentType"] = lustre.pop("tier")
    if data["serving"] is not None:
        load_balancer = data["serving"]["loadBalancer"]
        load_balancer["certificateArn"] = load_balancer.pop("certificate")
    return data


@dataclass
class SchedulerResult:
    """What a cloud's scheduler gives back to its training cluster (its Slurm recipe or its managed scheduler)."""

    # Raw cloud-init text for the compute nodes (None: no scheduler, or one that writes none).
    compute_user_data: pulumi.Input[str] | None = None
    # False when the scheduler runs the compute fleet itself (AWS Batch): no node group then.
    needs_compute_group: bool = True
    outputs: dict[str, pulumi.Input[Any]] = field(default_factory=dict)
    # The scheduler's own component (SlurmCluster, BatchScheduler): what a test asserts on.
    component: pulumi.ComponentResource | None = None


@dataclass(frozen=True)
class TrainingClusterArgs:
    """What a training cluster is built from: the training stack's spec (account, separation, training block),
    its plan, and the digest tagged on its node groups."""

    spec: TrainingStack  # resolved: its training block is the plan's (every value the planner derives, filled)
    plan: TrainingPlan
    digest: str
    stated: TrainingStack | None = None  # the spec as the stack file states it (None: `spec` is)

    @classmethod
    def of(cls, spec: TrainingStack) -> TrainingClusterArgs:
        """Plan `spec` on its cloud's catalog and prices (the planner runs here, once, not in a component), and
        hand the components the resolved spec: the Lustre capacity and tier the planner derived are filled in,
        so no component re-plans or meets an omitted value. The digest stays the stack file's: a new price table
        that moves a derived size does not retag the deployed resources."""
        cloud = registry.get(spec.cloud)
        plan = plan_training(spec.training, catalog=cloud.catalog, prices=PriceBook.from_prices(cloud.prices))
        return cls(spec.model_copy(update={"training": plan.training}), plan, config_digest(spec), spec)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], name: str) -> TrainingClusterArgs:
        """Args from a stack file's `accelstack:*` keys as a mapping (namespace stripped: cloud, workload,
        account, separation, training), checked by every rule a stack file is: SpecError naming each path."""
        spec = parse_spec(dict(config), name)
        if not isinstance(spec, TrainingStack):
            raise SpecError([Problem("workload", f"{spec.workload!r}: a TrainingCluster needs workload: training")])
        return cls.of(spec)

    def named(self, name: str) -> TrainingClusterArgs:
        """The same cluster under another name (the name prefixes every resource and is the stack tag)."""
        stated = self.stated or self.spec
        return self if name == self.spec.stack else TrainingClusterArgs.of(stated.model_copy(update={"stack": name}))


@dataclass(frozen=True)
class ServingServiceArgs:
    """What a serving service is built from: the serving stack's spec and its plan (cold start, warm pool,
    backlog target), and the digest tagged on its replica group."""

    spec: ServingStack
    plan: ServingPlan
    digest: str

    @classmethod
    def of(cls, spec: ServingStack) -> ServingServiceArgs:
        cloud = registry.get(spec.cloud)
        # With the cloud's scaling rules: the plan carries the rule the components emit and the simulator replays.
        return cls(spec, plan_serving(spec.serving, cloud.catalog, cloud.serving_scaling), config_digest(spec))

    @classmethod
    def from_config(cls, config: Mapping[str, Any], name: str) -> ServingServiceArgs:
        """As `TrainingClusterArgs.from_config`, for workload: serving."""
        spec = parse_spec(dict(config), name)
        if not isinstance(spec, ServingStack):
            raise SpecError([Problem("workload", f"{spec.workload!r}: a ServingService needs workload: serving")])
        return cls.of(spec)

    def named(self, name: str) -> ServingServiceArgs:
        return self if name == self.spec.stack else ServingServiceArgs.of(self.spec.model_copy(update={"stack": name}))


class CloudStack(ABC):
    # Output names this cloud's stacks exported before the contract was neutral (old -> new, a subset of
    # accelstack.outputs.LEGACY_NAMES), exported beside the new ones for the deprecation period.
    legacy_output_names: Mapping[str, str] = {}
    # "module:Class" of the cloud's TrainingRecipe / ServingRecipe (None: it builds no such workload). The cloud's
    # workloads and the features its parts implement follow from them (accelstack.components.recipes.capabilities).
    training_recipe: str | None = None
    serving_recipe: str | None = None

    def __init__(self, spec: StackSpec):
        self.spec = spec
        self.digest = config_digest(spec)

    def build(self) -> pulumi.ComponentResource:
        """Build the stack's workload, export its outputs contract (the one place stacks export), and return
        its component (what a unit test asserts on)."""
        if isinstance(self.spec, TrainingStack):
            component: pulumi.ComponentResource = self.build_training(self.spec)
        else:
            component = self.build_serving(self.spec)
        exported: Mapping[str, Any] = getattr(component, "outputs", {})
        for key, value in outputs.with_legacy_names(exported, self.legacy_output_names).items():
            pulumi.export(key, value)
        return component

    @abstractmethod
    def build_training(self, spec: TrainingStack) -> pulumi.ComponentResource: ...

    @abstractmethod
    def build_serving(self, spec: ServingStack) -> pulumi.ComponentResource: ...

    @abstractmethod
    def replica_artifacts(self, args: ServingServiceArgs) -> dict[str, str]:
        """The files a serving replica boots with, by name, as `accelstack render` writes them, from the plan the
        service deploys (pure: no resources; values only known at deploy time stay placeholders)."""
