"""OCI names a landing stack and the workload stacks it lists would both create in the tenancy (pure): registered
for cloud oci in `accelstack.spec.landing.LANDING_LISTED_STACK_CHECKS`, run when the listed stacks are read
(`accelstack.spec.landing.workload_specs`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from accelstack.clouds.oci.names import iam_name
from accelstack.spec.problems import Problem

if TYPE_CHECKING:
    from accelstack.spec.landing import LandingStack


def listed_stack_problems(landing: LandingStack, workloads: Mapping[str, Any]) -> list[Problem]:
    """A training stack not wired to the landing stack (no `landing:`) makes its nodes' dynamic group,
    `<stack>-nodes`, and the landing stack makes `<compartment name>-nodes` for each side (components/oci/landing.py
    `nodes_group_name`); dynamic group names are unique in the tenancy (CreateDynamicGroup; pulumi_oci
    identity/dynamic_group.py), so a compartment named as such a stack fails the second create."""
    from accelstack.spec.landing import SIDES

    problems = []
    for side in SIDES:
        compartment = landing.side(side).account.name
        for index, name in enumerate(landing.side(side).stacks):
            spec = workloads.get(name)
            if spec is None or spec.cloud != "oci" or spec.landing is not None:
                continue  # a wired stack uses the landing stack's group and makes none
            if iam_name(name, "nodes") == iam_name(compartment, "nodes"):
                problems.append(
                    Problem(
                        f"organization.{side}.stacks.{index}",
                        f"{name} is not wired to this landing stack (no landing: in its file), so it makes the "
                        f"dynamic group {iam_name(name, 'nodes')!r}, the name this stack gives the {side} "
                        f"compartment's nodes group (organization.{side}.account.name {compartment!r}); dynamic group "
                        "names are unique in the tenancy; allowed: wire the stack (landing: {stack: "
                        "<org>/<project>/<this stack>}) or name the compartment otherwise",
                    )
                )
    return problems
