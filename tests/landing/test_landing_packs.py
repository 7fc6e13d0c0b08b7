"""The packs on a landing stack's own export: no verdict as built; each careless edit of it is caught by the rule
that owns it (mandatory, naming the resource the edit touched or the OU it left unguarded)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from accelstack.engine.pack_context import landing_context
from accelstack.engine.policy_runner import Verdict, policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack
from tests.landing.export_lookup import entry, resources, sides

REPO = Path(__file__).resolve().parents[2]
LANDING_FILE = REPO / "stacks" / "Pulumi.aws-landing.yaml"
OU = "aws:organizations/organizationalUnit:OrganizationalUnit"
SCP = "aws:organizations/policy:Policy"
ATTACHMENT = "aws:organizations/policyAttachment:PolicyAttachment"
QUOTA = "aws:servicequotas/serviceQuota:ServiceQuota"
Doc = dict[str, Any]


@cache
def previewed() -> PreviewResult:
    return preview_stack(LANDING_FILE, [], REPO)


def context() -> dict[str, Any]:
    result = previewed()
    return landing_context(result.spec, result.landing_plan)


def verdicts(doc: Doc, ctx: dict[str, Any] | None = None) -> list[Verdict]:
    return policy_verdicts(doc, None, context=context() if ctx is None else ctx)


def remove_region_scp(doc: Doc) -> str:
    for name, token in (
        ("aws-landing-region", SCP),
        ("aws-landing-region-training", ATTACHMENT),
        ("aws-landing-region-serving", ATTACHMENT),
    ):
        resources(doc).remove(entry(doc, name, token))
    return entry(doc, "aws-landing-serving", OU)["urn"]


def detach_region_scp_from_training(doc: Doc) -> str:
    resources(doc).remove(entry(doc, "aws-landing-region-training", ATTACHMENT))
    return entry(doc, "aws-landing-training", OU)["urn"]


def retarget(attachment: str, to_ou: str) -> Callable[[Doc], str]:
    """Attach a guardrail to the wrong OU: its targetId (and the engine's dependency) names the other OU."""

    def apply(doc: Doc) -> str:
        target = entry(doc, to_ou, OU)
        moved = entry(doc, attachment, ATTACHMENT)
        for props in sides(moved):
            props["targetId"] = target["id"]
        moved["propertyDependencies"]["targetId"] = [target["urn"]]
        return target["urn"]

    return apply


def raise_quota(doc: Doc) -> str:
    quota = entry(doc, "aws-landing-training-us-east-1-L-417A185B", QUOTA)
    for props in sides(quota):
        props["value"] = props["value"] * 2
    return quota["urn"]


def widen_regions(doc: Doc) -> str:
    policy = entry(doc, "aws-landing-region", SCP)
    for props in sides(policy):
        document = json.loads(props["content"])
        document["Statement"][0]["Condition"]["StringNotEquals"]["aws:RequestedRegion"].append("ap-east-1")
        props["content"] = json.dumps(document)
    return entry(doc, "aws-landing-training", OU)["urn"]


def drop_cloudtrail_deny(doc: Doc) -> str:
    policy = entry(doc, "aws-landing-serving-guardrails", SCP)
    for props in sides(policy):
        document = json.loads(props["content"])
        document["Statement"][0]["Action"].remove("cloudtrail:StopLogging")
        props["content"] = json.dumps(document)
    return entry(doc, "aws-landing-serving", OU)["urn"]


def unprotect_account(doc: Doc) -> str:
    account = entry(doc, "aws-landing-serving-account", "aws:organizations/account:Account")
    assert account["protect"]
    account["protect"] = False
    return account["urn"]


def not_an_scp(doc: Doc) -> str:
    policy = entry(doc, "aws-landing-training-guardrails", SCP)
    for props in sides(policy):
        props["type"] = "TAG_POLICY"
    return policy["urn"]


MUTATIONS: dict[str, tuple[Callable[[Doc], str], str]] = {
    "region SCP removed": (remove_region_scp, "landing-guardrails"),
    "region SCP detached from training": (detach_region_scp_from_training, "landing-guardrails"),
    "region SCP allows a Region beyond allowedRegions": (widen_regions, "landing-guardrails"),
    "serving guardrails attached to the training OU": (
        retarget("aws-landing-serving-guardrails-serving", "aws-landing-training"),
        "landing-guardrails",
    ),
    "training guardrails attached to the serving OU": (
        retarget("aws-landing-training-guardrails-training", "aws-landing-serving"),
        "landing-guardrails",
    ),
    "training's cross-side guardrail attached to the serving OU": (
        retarget("aws-landing-training-apart-training", "aws-landing-serving"),
        "landing-guardrails",
    ),
    "serving may stop CloudTrail": (drop_cloudtrail_deny, "landing-guardrails"),
    "a guardrail that is not an SCP": (not_an_scp, "landing-guardrails"),
    "quota cap raised past the planner's need": (raise_quota, "landing-quota-caps"),
    "a member account left unprotected": (unprotect_account, "protect-stateful"),
}


def test_the_landing_stack_as_built_gets_no_verdict() -> None:
    assert verdicts(previewed().export) == []


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_each_mutation_is_caught(mutation: str) -> None:
    apply, policy = MUTATIONS[mutation]
    doc = copy.deepcopy(previewed().export)
    urn = apply(doc)
    caught = [v for v in verdicts(doc) if v.policy == policy and v.mandatory]
    assert caught, f"{mutation}: {policy} said nothing"
    assert urn in {v.urn for v in caught}, f"{mutation}: {[v.line() for v in caught]}"


def test_a_quota_request_with_no_need_planned_is_refused() -> None:
    ctx = context()
    ctx["quotaNeeds"] = [n for n in ctx["quotaNeeds"] if n["quotaCode"] != "L-417A185B"]
    caught = [v for v in verdicts(previewed().export, ctx) if v.policy == "landing-quota-caps"]
    assert [v.urn.rsplit("::", 1)[1] for v in caught] == ["aws-landing-training-us-east-1-L-417A185B"]


def test_without_the_planned_needs_the_quota_rule_fails_closed() -> None:
    ctx = {k: v for k, v in context().items() if k != "quotaNeeds"}
    caught = {v.urn.rsplit("::", 1)[1] for v in verdicts(previewed().export, ctx) if v.policy == "landing-quota-caps"}
    assert len(caught) == 3


def test_a_workload_stack_may_not_make_organization_kinds() -> None:
    training = preview_stack(REPO / "stacks" / "Pulumi.aws-training.yaml", [], REPO)
    doc = copy.deepcopy(training.export)
    provider = next(r["provider"] for r in resources(doc) if r["type"].startswith("aws:"))
    urn = "urn:pulumi:aws-training::accelstack::aws:organizations/policy:Policy::sneaky"
    content = json.dumps({"Version": "2012-10-17", "Statement": []})
    resources(doc).append(
        {
            "urn": urn,
            "custom": True,
            "id": "sneaky-id",
            "type": SCP,
            "inputs": {"content": content, "type": "SERVICE_CONTROL_POLICY"},
            "outputs": {"content": content, "type": "SERVICE_CONTROL_POLICY", "id": "sneaky-id"},
            "parent": resources(doc)[0]["urn"],
            "provider": provider,
            "dependencies": [],
            "propertyDependencies": {},
        }
    )
    caught = [v for v in policy_verdicts(doc, training.spec) if v.policy == "workload-resource-kinds"]
    assert urn in {v.urn for v in caught}
