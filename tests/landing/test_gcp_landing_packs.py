"""The packs on the GCP landing stack's own export: no verdict as built; each careless edit of it is caught by the
rule that owns it (mandatory, naming the folder it left unguarded or the resource it touched)."""

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
LANDING_FILE = REPO / "stacks" / "Pulumi.gcp-landing.yaml"
FOLDER = "gcp:organizations/folder:Folder"
POLICY = "gcp:orgpolicy/policy:Policy"
CONSTRAINT = "gcp:orgpolicy/customConstraint:CustomConstraint"
PREFERENCE = "gcp:cloudquota/sQuotaPreference:SQuotaPreference"
PROJECT = "gcp:organizations/project:Project"
Doc = dict[str, Any]


@cache
def previewed() -> PreviewResult:
    return preview_stack(LANDING_FILE, [], REPO)


def context() -> dict[str, Any]:
    result = previewed()
    return landing_context(result.spec, result.landing_plan)


def verdicts(doc: Doc, ctx: dict[str, Any] | None = None) -> list[Verdict]:
    return policy_verdicts(doc, None, context=context() if ctx is None else ctx)


def folder_urn(doc: Doc, side: str) -> str:
    return str(entry(doc, f"gcp-landing-{side}", FOLDER)["urn"])


def remove_locations_policy(doc: Doc) -> str:
    resources(doc).remove(entry(doc, "gcp-landing-serving-gcp-resourceLocations", POLICY))
    return folder_urn(doc, "serving")


def move(policy: str, to_side: str, from_side: str) -> Callable[[Doc], str]:
    """Set a policy on the wrong folder: its parent (and name, and the engine's dependency) name the other folder."""

    def apply(doc: Doc) -> str:
        target = entry(doc, f"gcp-landing-{to_side}", FOLDER)
        moved = entry(doc, policy, POLICY)
        folder = target["outputs"]["name"]
        for props in sides(moved):
            props["parent"] = folder
            props["name"] = f"{folder}/policies/{props['name'].rsplit('/policies/', 1)[1]}"
        moved["propertyDependencies"]["parent"] = [target["urn"]]
        return folder_urn(doc, from_side)

    return apply


def widen_locations(doc: Doc) -> str:
    policy = entry(doc, "gcp-landing-training-gcp-resourceLocations", POLICY)
    for props in sides(policy):
        props["spec"]["rules"][0]["values"]["allowedValues"].append("in:asia-east1-locations")
    return folder_urn(doc, "training")


def multi_region_locations(doc: Doc) -> str:
    policy = entry(doc, "gcp-landing-serving-gcp-resourceLocations", POLICY)
    for props in sides(policy):
        props["spec"]["rules"][0]["values"]["allowedValues"] = ["in:us-locations"]
    return folder_urn(doc, "serving")


def allow_all_domains(doc: Doc) -> str:
    policy = entry(doc, "gcp-landing-training-iam-allowedPolicyMemberDomains", POLICY)
    for props in sides(policy):
        props["spec"]["rules"] = [{"allowAll": "TRUE"}]
    return folder_urn(doc, "training")


def narrow_machine_constraint(doc: Doc) -> str:
    constraint = entry(doc, "gcp-landing-serving-machines", CONSTRAINT)
    for props in sides(constraint):
        props["condition"] = "resource.machineType.endsWith('/machineTypes/a4-highgpu-8g')"
    return folder_urn(doc, "serving")


def raise_preference(doc: Doc) -> str:
    preference = next(r for r in resources(doc) if r["type"] == PREFERENCE and "training" in r["urn"])
    for props in sides(preference):
        props["quotaConfig"]["preferredValue"] = str(int(props["quotaConfig"]["preferredValue"]) + 8)
    return str(preference["urn"])


def unlimited_preference(doc: Doc) -> str:
    preference = next(r for r in resources(doc) if r["type"] == PREFERENCE and "serving" in r["urn"])
    for props in sides(preference):
        props["quotaConfig"]["preferredValue"] = "-1"
    return str(preference["urn"])


def unprotect_project(doc: Doc) -> str:
    project = entry(doc, "gcp-landing-training-project", PROJECT)
    assert project["protect"]
    project["protect"] = False
    return str(project["urn"])


def project_in_the_other_folder(doc: Doc) -> str:
    target = entry(doc, "gcp-landing-training", FOLDER)
    project = entry(doc, "gcp-landing-serving-project", PROJECT)
    for props in sides(project):
        props["folderId"] = target["outputs"]["folderId"]
    project["propertyDependencies"]["folderId"] = [target["urn"]]
    return folder_urn(doc, "serving")


def preference_on_the_other_project(doc: Doc) -> str:
    preference = next(r for r in resources(doc) if r["type"] == PREFERENCE and "serving" in r["urn"])
    for props in sides(preference):
        props["parent"] = "projects/acme-train"
    return str(preference["urn"])


def members_constraint(side: str, change: Callable[[dict[str, Any]], None]) -> Callable[[Doc], str]:
    """Edit the side's constraint refusing grants to the other side's principals (issue 32)."""

    def apply(doc: Doc) -> str:
        other = "serving" if side == "training" else "training"
        for props in sides(entry(doc, f"gcp-landing-{side}-no-{other}-members", CONSTRAINT)):
            change(props)
        return folder_urn(doc, side)

    return apply


def remove_members_policy(doc: Doc) -> str:
    resources(doc).remove(entry(doc, "gcp-landing-serving-custom-accelstackServingNoTrainingMembers", POLICY))
    return folder_urn(doc, "serving")


def _widen_exception(props: dict[str, Any]) -> None:
    props["condition"] = props["condition"].replace("'roles/storage.objectViewer'", "'roles/storage.admin'")


MUTATIONS: dict[str, tuple[Callable[[Doc], str], str]] = {
    "serving's member denial no longer enforced": (remove_members_policy, "landing-guardrails"),
    "training's member denial only audits (ALLOW)": (
        members_constraint("training", lambda p: p.__setitem__("actionType", "ALLOW")),
        "landing-guardrails",
    ),
    "serving's member denial only on CREATE (a policy update grants)": (
        members_constraint("serving", lambda p: p.__setitem__("methodTypes", ["CREATE"])),
        "landing-guardrails",
    ),
    "serving's member denial names another project": (
        members_constraint("serving", lambda p: p.__setitem__("condition", p["condition"].replace("acme-train", "x1"))),
        "landing-guardrails",
    ),
    "training's member denial leaves out an admin role": (
        members_constraint("training", _widen_exception),
        "landing-guardrails",
    ),
    "serving's member denial limited to one role": (
        members_constraint(
            "serving",
            lambda p: p.__setitem__(
                "condition",
                p["condition"].replace(
                    "exists(binding, ", "exists(binding, RoleNameMatches(binding.role, ['roles/owner']) && "
                ),
            ),
        ),
        "landing-guardrails",
    ),
    "locations policy removed from serving": (remove_locations_policy, "landing-guardrails"),
    "serving's locations policy set on the training folder": (
        move("gcp-landing-serving-gcp-resourceLocations", "training", "serving"),
        "landing-guardrails",
    ),
    "serving's machine-type policy set on the training folder": (
        move("gcp-landing-serving-custom-accelstackServingNoTrainingMachines", "training", "serving"),
        "landing-guardrails",
    ),
    "locations policy allows a region beyond allowedRegions": (widen_locations, "landing-guardrails"),
    "locations policy allows a multi-region group": (multi_region_locations, "landing-guardrails"),
    "domain restriction allows all": (allow_all_domains, "landing-guardrails"),
    "machine-type constraint misses the training machine types": (narrow_machine_constraint, "landing-guardrails"),
    "quota preference past the planner's need": (raise_preference, "landing-quota-caps"),
    "quota preference unlimited": (unlimited_preference, "landing-quota-caps"),
    "serving's project placed in the training folder": (project_in_the_other_folder, "landing-guardrails"),
    "a quota preference set on the other side's project": (preference_on_the_other_project, "landing-quota-caps"),
    "a project left unprotected": (unprotect_project, "protect-stateful"),
}


def test_the_gcp_landing_stack_as_built_gets_no_verdict() -> None:
    assert verdicts(previewed().export) == []


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_each_mutation_is_caught(mutation: str) -> None:
    apply, policy = MUTATIONS[mutation]
    doc = copy.deepcopy(previewed().export)
    urn = apply(doc)
    caught = [v for v in verdicts(doc) if v.policy == policy and v.mandatory]
    assert caught, f"{mutation}: {policy} said nothing"
    assert urn in {v.urn for v in caught}, f"{mutation}: {[v.line() for v in caught]}"


def test_a_quota_preference_with_no_need_planned_is_refused() -> None:
    ctx = context()
    ctx["quotaNeeds"] = [n for n in ctx["quotaNeeds"] if n["side"] != "training"]
    caught = [v for v in verdicts(previewed().export, ctx) if v.policy == "landing-quota-caps"]
    assert len(caught) == 1 and "training" in caught[0].urn


def test_a_workload_stack_may_not_make_a_folder() -> None:
    training = preview_stack(example_file("gcp-training", REPO / "stacks"), [], REPO)
    doc = copy.deepcopy(training.export)
    provider = next(r["provider"] for r in resources(doc) if r["type"].startswith("gcp:"))
    urn = "urn:pulumi:gcp-training::accelstack::gcp:organizations/folder:Folder::sneaky"
    props = {"displayName": "sneaky", "parent": "organizations/1"}
    resources(doc).append(
        {
            "urn": urn,
            "custom": True,
            "id": "folders/1",
            "type": FOLDER,
            "inputs": props,
            "outputs": {**props, "name": "folders/1"},
            "parent": resources(doc)[0]["urn"],
            "provider": provider,
            "dependencies": [],
            "propertyDependencies": {},
        }
    )
    caught = [v for v in policy_verdicts(doc, training.spec) if v.policy == "workload-resource-kinds"]
    assert urn in {v.urn for v in caught}
