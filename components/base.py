"""The interface every cloud implements."""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod

import pulumi

from accelstack.spec import StackSpec


def config_digest(spec: StackSpec) -> str:
    """Short digest of the validated spec: tagged on every resource to tie it to the config that made it."""
    canonical = json.dumps(spec.model_dump(mode="json", by_alias=True), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


class CloudStack(ABC):
    def __init__(self, spec: StackSpec):
        self.spec = spec
        self.digest = config_digest(spec)

    def build(self) -> pulumi.ComponentResource:
        """Build the stack's workload and return its component (what a unit test asserts on)."""
        if self.spec.workload == "training":
            return self.build_training()
        return self.build_serving()

    @abstractmethod
    def build_training(self) -> pulumi.ComponentResource: ...

    @abstractmethod
    def build_serving(self) -> pulumi.ComponentResource: ...
