"""The packs on the Azure landing stack's own export: no verdict as built; each careless edit of it is caught by
landing-guardrails (mandatory, naming the management group it left unguarded)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from accelstack.engine.pack_context import landing_context
from accelstack.engine.policy_runner import Verdict, policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack
from accelstack.examples import example_file
from tests.landing.export_lookup import entry, resources, sides

REPO = Path(__file__).resolve().parents[2]
LANDING_FILE = REPO / "stacks" / "Pulumi.azure-landing.yaml"
GROUP = "azure-native:management:ManagementGroup"
ASSIGNMENT = "azure-native:authorization:PolicyAssignment"
ALIAS = "azure-native:subscription:Alias"
Doc = dict[str, Any]


@cache
def previewed() -> PreviewResult:
    return preview_stack(LANDING_FILE, [], REPO)


def verdicts(doc: Doc) -> list[Verdict]:
    result = previewed()
    return policy_verdicts(doc, None, context=landing_context(result.spec, result.landing_plan))


def group_urn(doc: Doc, side: str) -> str:
    return str(entry(doc, f"azure-landing-{side}", GROUP)["urn"])


def remove(assignment: str, side: str) -> Callable[[Doc], str]:
    def apply(doc: Doc) -> str:
        resources(doc).remove(entry(doc, assignment, ASSIGNMENT))
        return group_urn(doc, side)

    return apply


def move(assignment: str, to_side: str, from_side: str) -> Callable[[Doc], str]:
    """Assign at the wrong management group: its scope (and the engine's dependency) name the other group."""

    def apply(doc: Doc) -> str:
        target = entry(doc, f"azure-landing-{to_side}", GROUP)
        moved = entry(doc, assignment, ASSIGNMENT)
        for props in sides(moved):
            props["scope"] = target["outputs"]["id"]
        moved["propertyDependencies"]["scope"] = [target["urn"]]
        return group_urn(doc, from_side)

    return apply


def edit(assignment: str, side: str, change: Callable[[dict[str, Any]], None]) -> Callable[[Doc], str]:
    def apply(doc: Doc) -> str:
        for props in sides(entry(doc, assignment, ASSIGNMENT)):
            change(props)
        return group_urn(doc, side)

    return apply


def do_not_enforce(props: dict[str, Any]) -> None:
    props["enforcementMode"] = "DoNotEnforce"


def widen_locations(props: dict[str, Any]) -> None:
    props["parameters"]["listOfAllowedLocations"]["value"].append("japaneast")


def allow_a_training_size(props: dict[str, Any]) -> None:
    props["parameters"]["listOfAllowedSKUs"]["value"].append("Standard_ND96isr_H100_v5")


def exempt_a_scope(props: dict[str, Any]) -> None:
    props["notScopes"] = ["/subscriptions/00000000-0000-0000-0000-000000000000"]


def subscription_in_the_other_group(doc: Doc) -> str:
    target = entry(doc, "azure-landing-training", GROUP)
    alias = entry(doc, "azure-landing-serving-subscription", ALIAS)
    for props in sides(alias):
        props["properties"]["additionalProperties"]["managementGroupId"] = target["outputs"]["id"]
    alias["propertyDependencies"]["properties"] = [target["urn"]]
    return group_urn(doc, "serving")


DEFINITION = "azure-native:authorization:PolicyDefinitionAtManagementGroup"


def deny_definition(change: Callable[[dict[str, Any]], None]) -> Callable[[Doc], str]:
    """Edit the custom definition denying role assignments to listed principals (issue 32): both groups lean on it."""

    def apply(doc: Doc) -> str:
        for props in sides(entry(doc, "azure-landing-deny-principals", DEFINITION)):
            change(props)
        return group_urn(doc, "training")

    return apply


def drop_a_denied_principal(props: dict[str, Any]) -> None:
    props["parameters"]["deniedPrincipalIds"]["value"].pop()


def audit_only(props: dict[str, Any]) -> None:
    props["policyRule"]["then"]["effect"] = "audit"


def only_owner_assignments(props: dict[str, Any]) -> None:
    props["policyRule"]["if"]["allOf"].append(
        {
            "field": "Microsoft.Authorization/roleAssignments/roleDefinitionId",
            "like": "*8e3af657-a8ff-443c-a75c-2fe8c4bcb635",
        }
    )


def indexed_mode(props: dict[str, Any]) -> None:
    props["mode"] = "Indexed"


MUTATIONS: dict[str, Callable[[Doc], str]] = {
    "training's deny of serving's principals removed": remove("azure-landing-training-no-serving-ids", "training"),
    "serving's deny of training's principals not enforced": edit(
        "azure-landing-serving-no-training-ids", "serving", do_not_enforce
    ),
    "serving's deny leaves out a training principal": edit(
        "azure-landing-serving-no-training-ids", "serving", drop_a_denied_principal
    ),
    "training's deny moved to the serving group": move("azure-landing-training-no-serving-ids", "serving", "training"),
    "the principal deny only audits": deny_definition(audit_only),
    "the principal deny narrowed to Owner assignments": deny_definition(only_owner_assignments),
    "the principal deny in Indexed mode (skips role assignments)": deny_definition(indexed_mode),
    "locations assignment removed from serving": remove("azure-landing-serving-locations", "serving"),
    "VM size assignment removed from serving": remove("azure-landing-serving-vm-skus", "serving"),
    "serving's locations assignment at the training group": move(
        "azure-landing-serving-locations", "training", "serving"
    ),
    "serving's VM size assignment at the training group": move("azure-landing-serving-vm-skus", "training", "serving"),
    "locations assignment not enforced": edit("azure-landing-training-locations", "training", do_not_enforce),
    "VM size assignment not enforced": edit("azure-landing-serving-vm-skus", "serving", do_not_enforce),
    "locations widened past allowedRegions": edit("azure-landing-training-locations", "training", widen_locations),
    "serving allowed a training size": edit("azure-landing-serving-vm-skus", "serving", allow_a_training_size),
    "locations assignment exempts a scope": edit("azure-landing-serving-locations", "serving", exempt_a_scope),
    "serving's subscription created in the training group": subscription_in_the_other_group,
}


def test_the_azure_landing_stack_as_built_gets_no_verdict() -> None:
    assert verdicts(previewed().export) == []


def test_serving_is_denied_exactly_the_planned_training_sizes() -> None:
    doc = previewed().export
    allowed = set(
        entry(doc, "azure-landing-serving-vm-skus", ASSIGNMENT)["inputs"]["parameters"]["listOfAllowedSKUs"]["value"]
    )
    training = set(previewed().landing_plan.training_families)
    assert training and not allowed & training
    assert allowed, "serving keeps the sizes its own stacks run"


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_each_mutation_is_caught(mutation: str) -> None:
    doc = copy.deepcopy(previewed().export)
    urn = MUTATIONS[mutation](doc)
    caught = [v for v in verdicts(doc) if v.policy == "landing-guardrails" and v.mandatory]
    assert urn in {v.urn for v in caught}, f"{mutation}: {[v.line() for v in caught]}"


def test_a_workload_stack_may_not_make_a_management_group() -> None:
    training = preview_stack(example_file("azure-training", REPO / "stacks"), [], REPO)
    doc = copy.deepcopy(training.export)
    provider = next(r["provider"] for r in resources(doc) if r["type"].startswith("azure-native:"))
    urn = "urn:pulumi:azure-training::accelstack::azure-native:management:ManagementGroup::sneaky"
    props = {"displayName": "sneaky", "groupId": "sneaky"}
    resources(doc).append(
        {
            "urn": urn,
            "custom": True,
            "id": "/providers/Microsoft.Management/managementGroups/sneaky",
            "type": GROUP,
            "inputs": props,
            "outputs": {**props, "id": "/providers/Microsoft.Management/managementGroups/sneaky"},
            "parent": resources(doc)[0]["urn"],
            "provider": provider,
            "dependencies": [],
            "propertyDependencies": {},
        }
    )
    caught = [v for v in policy_verdicts(doc, training.spec) if v.policy == "workload-resource-kinds"]
    assert urn in {v.urn for v in caught}
