"""What a cloud's parts implement, and so which workloads and features it may claim (dstack's implemented-interface
lists): a workload is a recipe class its `CloudStack` names; Slurm is a Slurm recipe on its training parts, the
managed scheduler is `WithManagedScheduler`, queue or replica admission and queue or load-balancer scaling
are implemented serving parts.
The conformance suite holds every deployable cloud's description to this, so a feature cannot be claimed
without the code that builds it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from accelstack.clouds.base import Cloud, Feature
from accelstack.components.recipes.implements import marked_features
from accelstack.components.recipes.parts import TrainingParts, WithManagedScheduler
from accelstack.components.recipes.serving import ServingParts, ServingRecipe
from accelstack.components.recipes.training import TrainingRecipe

# The features decided by which parts exist. The others are properties of a part's resources (spot markets,
# reservations, file systems, rate limits, warm pools, cross-account grants): the part method that builds each is
# marked `@implements(...)` (components/recipes/implements.py), and its marks are the cloud's.
FROM_PARTS = frozenset(
    {
        Feature.SLURM,
        Feature.MANAGED_SCHEDULER,
        Feature.ADMISSION_QUEUE,
        Feature.REPLICA_ADMISSION,
        Feature.QUEUE_DEPTH_SCALING,
        Feature.LOAD_BALANCER_SCALING,
    }
)


@dataclass(frozen=True)
class Implemented:
    workloads: frozenset[str]
    features: frozenset[Feature]


def load_class(reference: str | None) -> Any:
    """ "module:Class" -> the class; None -> None."""
    if reference is None:
        return None
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def _overrides(parts: type[Any], base: type[Any], method: str) -> bool:
    return getattr(parts, method) is not getattr(base, method) and method not in parts.__abstractmethods__


def implemented(cloud: Cloud) -> Implemented:
    """The workloads and features `cloud`'s components implement (nothing for a described cloud): FROM_PARTS from
    which parts exist, the rest from the marks on the part methods."""
    if cloud.components is None:
        return Implemented(frozenset(), frozenset())
    stack = importlib.import_module(cloud.components).CLOUD_STACK
    training, serving = load_class(stack.training_recipe), load_class(stack.serving_recipe)
    workloads: set[str] = set()
    features: set[Feature] = set()
    if training is not None:
        assert issubclass(training, TrainingRecipe), f"{cloud.name}: {training} is not a TrainingRecipe"
        workloads.add("training")
        parts: type[TrainingParts[Any]] = training.parts_class
        if parts.slurm_cluster is not None:
            features.add(Feature.SLURM)
            features |= marked_features(parts.slurm_cluster.parts_class)  # Slurm's own parts (accounting)
        if issubclass(parts, WithManagedScheduler):
            features.add(Feature.MANAGED_SCHEDULER)
        features |= marked_features(parts)
    if serving is not None:
        assert issubclass(serving, ServingRecipe), f"{cloud.name}: {serving} is not a ServingRecipe"
        workloads.add("serving")
        serving_parts = serving.parts_class
        if _overrides(serving_parts, ServingParts, "admission_queue"):
            features.add(Feature.ADMISSION_QUEUE)
        if _overrides(serving_parts, ServingParts, "replica_admission"):
            features.add(Feature.REPLICA_ADMISSION)
        if _overrides(serving_parts, ServingParts, "scaling"):
            features.add(Feature.QUEUE_DEPTH_SCALING)
        if _overrides(serving_parts, ServingParts, "load_scaling"):
            features.add(Feature.LOAD_BALANCER_SCALING)
        features |= marked_features(serving_parts)
    return Implemented(frozenset(workloads), frozenset(features))
