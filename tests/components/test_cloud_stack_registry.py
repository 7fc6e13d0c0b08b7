"""The program finds a cloud's components through its registered description, never an `if cloud == ...`:
a cloud registered with another components module is built by that module's `CLOUD_STACK`."""

from __future__ import annotations

import dataclasses
import sys
import types
from pathlib import Path
from typing import ClassVar

import pytest

from accelstack.clouds import registry
from accelstack.components import cloud_stack
from accelstack.components.aws import AwsStack
from accelstack.components.base import CloudStack
from accelstack.spec.loader import load_stack

STACKS = Path(__file__).resolve().parents[2] / "stacks"


class RecordingStack(CloudStack):
    built: ClassVar[list[str]] = []

    def build_training(self, spec):
        self.built.append(f"training {spec.stack}")

    def build_serving(self, spec):
        self.built.append(f"serving {spec.stack}")

    def replica_artifacts(self, args):
        return {"boot.sh": f"# {args.spec.stack}"}


@pytest.fixture
def spec():
    return load_stack(STACKS / "Pulumi.aws-training.yaml")


def test_the_registered_components_module_builds_the_stack(spec, monkeypatch):
    module = types.ModuleType("fake_cloud_components")
    module.CLOUD_STACK = RecordingStack  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    with registry.registered(dataclasses.replace(registry.get("aws"), components=module.__name__)):
        stack = cloud_stack(spec)
        stack.build()
    assert isinstance(stack, RecordingStack) and RecordingStack.built == ["training aws-training"]
    assert isinstance(cloud_stack(spec), AwsStack)  # the real registration again, once the block ends


def test_a_described_cloud_has_no_stack_to_build(spec):
    described = dataclasses.replace(registry.get("aws"), components=None)
    with (
        registry.registered(described),
        pytest.raises(NotImplementedError, match="'aws' has no training components yet"),
    ):
        cloud_stack(spec)
