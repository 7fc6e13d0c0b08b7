"""The interface every cloud implements."""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod

from accelstack.spec import StackSpec
from accelstack.spec.models import ServingStack, TrainingStack


def config_digest(spec: StackSpec) -> str:
    """Short digest of the validated spec: tagged on every resource to tie it to the config that made it."""
    canonical = json.dumps(spec.model_dump(mode="json", by_alias=True), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


class CloudStack(ABC):
    def __init__(self, spec: StackSpec):
        self.spec = spec
        self.digest = config_digest(spec)

    def build(self) -> None:
        if isinstance(self.spec, TrainingStack):
            self.build_training(self.spec)
        else:
            self.build_serving(self.spec)

    @abstractmethod
    def build_training(self, spec: TrainingStack) -> None: ...

    @abstractmethod
    def build_serving(self, spec: ServingStack) -> None: ...
