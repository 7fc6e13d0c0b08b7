"""The interface every cloud implements."""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

import pulumi

from accelstack import outputs
from accelstack.spec import StackSpec
from accelstack.spec.models import ServingStack, TrainingStack


def config_digest(spec: StackSpec) -> str:
    """Short digest of the validated spec: tagged on every resource to tie it to the config that made it."""
    canonical = json.dumps(_digested(spec), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def _digested(spec: StackSpec) -> dict[str, Any]:
    """The spec as the digest has always read it, so a refactoring of the models does not retag every deployed
    resource: both workload blocks (the other one null), the file system's tier and the HTTPS certificate under
    their first names."""
    data = spec.model_dump(mode="json", by_alias=True)
    data.setdefault("training", None)
    data.setdefault("serving", None)
    lustre = data["training"]["storage"].get("lustre") if data["training"] else None
    if lustre is not None:
        lustre["deploymentType"] = lustre.pop("tier")
    if data["serving"] is not None:
        load_balancer = data["serving"]["loadBalancer"]
        load_balancer["certificateArn"] = load_balancer.pop("certificate")
    return data


class CloudStack(ABC):
    # Output names this cloud's stacks exported before the contract was neutral (old -> new, a subset of
    # accelstack.outputs.LEGACY_NAMES), exported beside the new ones for the deprecation period.
    legacy_output_names: Mapping[str, str] = {}

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
    def replica_artifacts(self, spec: ServingStack) -> dict[str, str]:
        """The files a serving replica boots with, by name, as `accelstack render` writes them (pure: no
        resources; values only known at deploy time stay placeholders)."""
