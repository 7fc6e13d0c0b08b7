"""What a landing stack does whatever the cloud (conformance-style, over every cloud with landing parts): one
group, account and budget per side, the quota requests the planner sized and no others, the outputs the workload
stacks read, no verdict from the packs, and the region guardrail's removal caught."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from accelstack.engine.pack_context import landing_context
from accelstack.engine.policy_runner import policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack
from accelstack.policies import concepts
from accelstack.spec.landing import QUOTA_BY_HAND, SIDES, LandingStack
from accelstack.spec.landing_ref import LANDING_CLOUDS

REPO = Path(__file__).resolve().parents[2]
# The region guardrail of each cloud's example, by what removing it takes out of the export.
REGION_GUARDRAIL = {
    "aws": ("aws-landing-region", "aws-landing-region-training", "aws-landing-region-serving"),
    "gcp": ("gcp-landing-training-gcp-resourceLocations",),
    "azure": ("azure-landing-training-locations",),
    # OCI's region guardrail is statements of each compartment's quota policy: removing the policy removes it.
    "oci": ("oci-landing-training-quota",),
}
# Where one quota policy per side holds the planner's caps as `set` statements (OCI), beside its zero statements.
CAPS_AS_STATEMENTS = {"oci"}


@cache
def previewed(cloud: str) -> PreviewResult:
    return preview_stack(REPO / "stacks" / f"Pulumi.{cloud}-landing.yaml", [], REPO)


def of_concept(result: PreviewResult, concept: str) -> list[Any]:
    return [r for r in result.resources if concepts.concept_of(r.type) == concept]


def test_every_landing_cloud_is_covered() -> None:
    assert set(LANDING_CLOUDS) == set(REGION_GUARDRAIL)


@pytest.mark.parametrize("cloud", LANDING_CLOUDS)
def test_one_group_account_and_budget_per_side(cloud: str) -> None:
    result = previewed(cloud)
    for concept in ("org-unit", "member-account", "budget"):
        assert len(of_concept(result, concept)) == len(SIDES), concept


@pytest.mark.parametrize("cloud", LANDING_CLOUDS)
def test_quota_requests_are_the_planners_needs(cloud: str) -> None:
    result = previewed(cloud)
    assert result.landing_plan is not None
    # Where the provider cannot request quota the needs are a manual step, and nothing pretends to request them.
    made = 0 if cloud in QUOTA_BY_HAND else len(result.landing_plan.needs)
    assert requested(result) == made
    assert result.landing_plan.needs
    # Every side with workload stacks listed needs quota (OCI serving is not built: its compartment lists none).
    assert {n.side for n in result.landing_plan.needs} == listed_sides(result)


def requested(result: PreviewResult) -> int:
    """How many quota requests (or caps) the stack makes: its quota-request resources, or their `set` statements."""
    made = of_concept(result, "quota-request")
    if result.spec.cloud not in CAPS_AS_STATEMENTS:
        return len(made)
    return sum(1 for r in made for text in r.outputs["statements"] if text.startswith("set "))


def listed_sides(result: PreviewResult) -> set[str]:
    assert isinstance(result.spec, LandingStack)
    return {side for side in SIDES if result.spec.side(side).stacks}


@pytest.mark.parametrize("cloud", LANDING_CLOUDS)
def test_outputs_the_workload_stacks_read(cloud: str) -> None:
    outputs = previewed(cloud).stack_outputs
    for side in SIDES:
        assert outputs[f"{side}AccountId"], side
        assert outputs[f"{side}GroupId"], side
    assert {q["side"] for q in outputs["quotaRequests"]} == listed_sides(previewed(cloud))


@pytest.mark.parametrize("cloud", LANDING_CLOUDS)
def test_the_packs_pass_it_and_catch_the_region_guardrail_removed(cloud: str) -> None:
    result = previewed(cloud)
    context = landing_context(result.spec, result.landing_plan)
    assert policy_verdicts(result.export, None, context=context) == []
    doc = copy.deepcopy(result.export)
    names = REGION_GUARDRAIL[cloud]
    resources = doc["deployment"]["resources"]
    doc["deployment"]["resources"] = [r for r in resources if r["urn"].rsplit("::", 1)[1] not in names]
    assert len(doc["deployment"]["resources"]) == len(resources) - len(names)
    caught = [v for v in policy_verdicts(doc, None, context=context) if v.policy == "landing-guardrails"]
    assert caught and all(v.mandatory for v in caught)
