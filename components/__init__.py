"""Pulumi components, one folder per cloud, plus cloud-neutral generators (pure functions).

`build_stack(spec)` is the one entry the program calls; each cloud implements the same
`CloudStack` interface (SkyPilot-style: one class per cloud behind one interface).
"""

from __future__ import annotations

import pulumi

from accelstack.components.base import CloudStack
from accelstack.spec import StackSpec


def cloud_stack(spec: StackSpec) -> CloudStack:
    if spec.cloud == "aws":
        from accelstack.components.aws import AwsStack

        return AwsStack(spec)
    raise NotImplementedError(f"cloud {spec.cloud!r} has no components yet")


def build_stack(spec: StackSpec) -> pulumi.ComponentResource:
    """Build `spec`'s stack (what the Pulumi program does) and return the workload's component: the
    cloud's training cluster or serving service, whose attributes a unit test can assert on."""
    return cloud_stack(spec).build()
