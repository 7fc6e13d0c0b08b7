"""Pulumi components, one folder per cloud, plus cloud-neutral generators (pure functions).

`build_stack(spec)` is the one entry the program calls; each cloud implements the same
`CloudStack` interface (SkyPilot-style: one class per cloud behind one interface). The cloud's registered
description names its components module (`Cloud.components`), which exposes its class as `CLOUD_STACK`.
"""

from __future__ import annotations

import importlib

import pulumi

from accelstack.clouds import registry
from accelstack.components.base import CloudStack
from accelstack.planner.landing_plan import LandingPlan
from accelstack.spec import StackSpec
from accelstack.spec.landing import LandingStack


def cloud_stack(spec: StackSpec) -> CloudStack:
    cloud = registry.get(spec.cloud)
    if cloud.components is None or not cloud.deploys(spec.workload):
        # the spec refuses this before a program runs; a direct caller gets it here
        raise NotImplementedError(
            f"cloud {spec.cloud!r} has no {spec.workload} components yet; deployable: {', '.join(registry.deployable())}"
        )
    stack_class: type[CloudStack] = importlib.import_module(cloud.components).CLOUD_STACK
    return stack_class(spec)


def build_landing(spec: LandingStack, plan: LandingPlan) -> pulumi.ComponentResource:
    """Build a landing stack (the accounts and guardrails the workload stacks land in), export what the workload
    stacks read through a stack reference, and return its recipe's component."""
    module = importlib.import_module(f"accelstack.components.{spec.cloud}.landing")  # the spec allows built clouds only
    component: pulumi.ComponentResource = module.build_landing(spec, plan)
    for key, value in getattr(component, "outputs", {}).items():
        pulumi.export(key, value)
    return component


def build_stack(spec: StackSpec) -> pulumi.ComponentResource:
    """Build `spec`'s stack (what the Pulumi program does) and return the workload's component: the
    cloud's training cluster or serving service, whose attributes a unit test can assert on."""
    return cloud_stack(spec).build()
