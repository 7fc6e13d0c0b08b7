"""The packs on the OCI landing stack's own export: no verdict as built; each careless edit of it is caught,
mandatory, by the rule that owns it (landing-guardrails naming the compartment left unguarded, landing-quota-caps
naming the quota policy)."""

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
LANDING_FILE = REPO / "stacks" / "Pulumi.oci-landing.yaml"
COMPARTMENT = "oci:Identity/compartment:Compartment"
QUOTA = "oci:Limits/quota:Quota"
POLICY = "oci:Identity/policy:Policy"
DYNAMIC_GROUP = "oci:Identity/dynamicGroup:DynamicGroup"
Doc = dict[str, Any]
Mutation = Callable[[Doc], tuple[str, str]]  # edits the export; (rule that must catch it, urn it must name)


@cache
def previewed() -> PreviewResult:
    return preview_stack(LANDING_FILE, [], REPO)


def verdicts(doc: Doc) -> list[Verdict]:
    result = previewed()
    return policy_verdicts(doc, None, context=landing_context(result.spec, result.landing_plan))


def compartment(doc: Doc, side: str) -> dict[str, Any]:
    return entry(doc, f"oci-landing-{side}", COMPARTMENT)


def statements(change: Callable[[list[str]], list[str]], name: str, token: str) -> Callable[[Doc], None]:
    def apply(doc: Doc) -> None:
        for props in sides(entry(doc, name, token)):
            props["statements"] = change(list(props["statements"]))

    return apply


def guardrail(side: str, edit: Callable[[Doc], None]) -> Mutation:
    def apply(doc: Doc) -> tuple[str, str]:
        edit(doc)
        return "landing-guardrails", str(compartment(doc, side)["urn"])

    return apply


def raise_the_cap(texts: list[str]) -> list[str]:
    return [t.replace(" to 16 ", " to 64 ") if t.startswith("set ") else t for t in texts]


def cap_raised(doc: Doc) -> tuple[str, str]:
    statements(raise_the_cap, "oci-landing-training-quota", QUOTA)(doc)
    return "landing-quota-caps", str(entry(doc, "oci-landing-training-quota", QUOTA)["urn"])


def cap_edit(change: Callable[[str], str]) -> Mutation:
    """The training side's per-domain GPU cap rewritten by `change`."""

    def apply(doc: Doc) -> tuple[str, str]:
        statements(
            lambda ts: [change(t) if t.startswith("set ") else t for t in ts], "oci-landing-training-quota", QUOTA
        )(doc)
        return "landing-quota-caps", str(entry(doc, "oci-landing-training-quota", QUOTA)["urn"])

    return apply


def region_wide(text: str) -> str:
    """The cap on every domain of the region (each gets 16: up to 48 in a three-domain region)."""
    return text.replace("request.ad = 'Uocm:US-ASHBURN-AD-1'", "request.region = 'us-ashburn-1'")


def other_domain(text: str) -> str:
    return text.replace("US-ASHBURN-AD-1", "US-ASHBURN-AD-2")


def training_quota(change: Callable[[list[str]], list[str]]) -> Mutation:
    """The training side's quota statements rewritten by `change`: landing-quota-caps names the quota policy."""

    def apply(doc: Doc) -> tuple[str, str]:
        statements(change, "oci-landing-training-quota", QUOTA)(doc)
        return "landing-quota-caps", str(entry(doc, "oci-landing-training-quota", QUOTA)["urn"])

    return apply


def is_domain_zero(text: str, domain: str) -> bool:
    return text.startswith("zero ") and f"request.ad = 'Uocm:US-ASHBURN-AD-{domain}'" in text


def without_domain_zero(domain: str) -> Callable[[list[str]], list[str]]:
    return lambda texts: [t for t in texts if not is_domain_zero(t, domain)]


def without_any_domain_zero(texts: list[str]) -> list[str]:
    return [t for t in texts if "request.ad" not in t or t.startswith("set ")]


def domain_zero_in_serving(texts: list[str]) -> list[str]:
    """The AD-3 zero written for the serving compartment instead of training's."""
    return [
        t.replace("compartment acme-train ", "compartment acme-serve ") if is_domain_zero(t, "3") else t for t in texts
    ]


def domain_zero_on_the_cap(texts: list[str]) -> list[str]:
    """The AD-2 zero moved onto the capped domain: AD-2 keeps the service limit, AD-1 has two statements."""
    return [t.replace("US-ASHBURN-AD-2", "US-ASHBURN-AD-1") if is_domain_zero(t, "2") else t for t in texts]


def region_zero_under_the_cap(texts: list[str]) -> list[str]:
    """The other design: a region-wide zero before the per-domain cap, which Oracle documents no order for."""
    cap = next(t for t in texts if t.startswith("set "))
    zero = "zero compute-core quotas gpu-h100-count in compartment acme-train where request.region = 'us-ashburn-1'"
    return [zero if t == cap else t for t in without_any_domain_zero(texts)] + [cap]


def without_serving_zero(texts: list[str]) -> list[str]:
    return [t for t in texts if "gpu-h100-count" not in t]


def without_frankfurt(texts: list[str]) -> list[str]:
    return [t for t in texts if "eu-frankfurt-1" not in t]


def serving_in_training(doc: Doc) -> None:
    """The serving deploy group granted in the training compartment."""
    training = compartment(doc, "training")["outputs"]["id"]
    serving = compartment(doc, "serving")["outputs"]["id"]
    statements(lambda ts: [t.replace(serving, training) for t in ts], "oci-landing-serving-deploy", POLICY)(doc)


def serving_cluster_networks(texts: list[str]) -> list[str]:
    return [*texts, texts[0].replace("manage instance-family", "manage cluster-networks")]


def unprotected(doc: Doc) -> None:
    compartment(doc, "training")["protect"] = False


def deletable(doc: Doc) -> None:
    for props in sides(compartment(doc, "serving")):
        props["enableDelete"] = True


def nodes_group_matching(side: str, other: str) -> Callable[[Doc], None]:
    """The side's nodes dynamic group widened to the other side's instances."""

    def apply(doc: Doc) -> None:
        theirs = compartment(doc, other)["outputs"]["id"]
        for props in sides(entry(doc, f"oci-landing-{side}-nodes", DYNAMIC_GROUP)):
            props["matchingRule"] = f"ANY {{instance.compartment.id = '{theirs}'}}"

    return apply


def nodes_group_removed(doc: Doc) -> None:
    resources(doc).remove(entry(doc, "oci-landing-training-nodes", DYNAMIC_GROUP))


def training_deployers_write_dynamic_groups(texts: list[str]) -> list[str]:
    return [*texts, texts[0].replace("manage instance-family", "manage dynamic-groups")]


def quota_removed(side: str) -> Callable[[Doc], None]:
    return lambda doc: resources(doc).remove(entry(doc, f"oci-landing-{side}-quota", QUOTA))


MUTATIONS: dict[str, Mutation] = {
    "quota cap raised past the planner's need": cap_raised,
    "per-domain cap widened to every domain of the region": cap_edit(region_wide),
    "per-domain cap moved to a domain the cluster network is not in": cap_edit(other_domain),
    "per-domain cap's zero in AD-2 removed": training_quota(without_domain_zero("2")),
    "per-domain cap's zero in AD-3 written for the serving compartment": training_quota(domain_zero_in_serving),
    "per-domain cap with no zero in the region's other domains": training_quota(without_any_domain_zero),
    "per-domain cap's AD-2 zero moved onto the capped domain": training_quota(domain_zero_on_the_cap),
    "region-wide zero under the per-domain cap instead of per-domain zeros": training_quota(region_zero_under_the_cap),
    "serving compartment's zero for the training shapes removed": guardrail(
        "serving", statements(without_serving_zero, "oci-landing-serving-quota", QUOTA)
    ),
    "a region outside allowedRegions no longer zeroed": guardrail(
        "training", statements(without_frankfurt, "oci-landing-training-quota", QUOTA)
    ),
    "training's quota policy removed": guardrail("training", quota_removed("training")),
    "serving's deploy group granted in the training compartment": guardrail("serving", serving_in_training),
    "serving's deploy group granted cluster networks": guardrail(
        "serving", statements(serving_cluster_networks, "oci-landing-serving-deploy", POLICY)
    ),
    "training compartment unprotected": guardrail("training", unprotected),
    "training nodes group matching the serving compartment": guardrail(
        "training", nodes_group_matching("training", "serving")
    ),
    "serving nodes group matching the training compartment": guardrail(
        "serving", nodes_group_matching("serving", "training")
    ),
    "training nodes group removed": guardrail("training", nodes_group_removed),
    "training deploy group granted dynamic-groups": guardrail(
        "training", statements(training_deployers_write_dynamic_groups, "oci-landing-training-deploy", POLICY)
    ),
    "serving compartment deletable on destroy": guardrail("serving", deletable),
}


def test_the_oci_landing_stack_as_built_gets_no_verdict() -> None:
    assert verdicts(previewed().export) == []


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_each_mutation_is_caught(mutation: str) -> None:
    doc = copy.deepcopy(previewed().export)
    rule, urn = MUTATIONS[mutation](doc)
    caught = [v for v in verdicts(doc) if v.policy == rule and v.mandatory]
    assert urn in {v.urn for v in caught}, f"{mutation}: {[v.line() for v in caught]}"


def test_the_quota_statements_in_any_order_get_no_verdict() -> None:
    """No statement overlaps another, so their order proves nothing and changes nothing."""
    doc = copy.deepcopy(previewed().export)
    statements(lambda ts: list(reversed(ts)), "oci-landing-training-quota", QUOTA)(doc)
    assert verdicts(doc) == []


def test_a_region_the_config_lists_no_domains_for_fails_closed() -> None:
    result = previewed()
    context = landing_context(result.spec, result.landing_plan)
    context["availabilityDomains"] = {r: d for r, d in context["availabilityDomains"].items() if r != "us-ashburn-1"}
    caught = [v for v in policy_verdicts(result.export, None, context=context) if v.policy == "landing-quota-caps"]
    urn = entry(result.export, "oci-landing-training-quota", QUOTA)["urn"]
    assert [v.urn for v in caught] and {v.urn for v in caught} == {urn}
    assert all(v.mandatory and "us-ashburn-1" in v.message for v in caught), [v.line() for v in caught]


def test_a_grant_to_anyone_else_is_caught() -> None:
    doc = copy.deepcopy(previewed().export)
    statements(lambda ts: [*ts, "allow any-user to read objects in tenancy"], "oci-landing-training-deploy", POLICY)(
        doc
    )
    urn = entry(doc, "oci-landing-training-deploy", POLICY)["urn"]
    caught = [v for v in verdicts(doc) if v.policy == "landing-guardrails" and v.mandatory]
    assert urn in {v.urn for v in caught}


def test_a_workload_stack_may_not_make_a_compartment() -> None:
    training = preview_stack(example_file("oci-training", REPO / "stacks"), [], REPO)
    doc = copy.deepcopy(training.export)
    provider = next(r["provider"] for r in resources(doc) if r["type"].startswith("oci:"))
    urn = "urn:pulumi:oci-training::accelstack::oci:Identity/compartment:Compartment::sneaky"
    props = {"name": "sneaky", "compartmentId": "ocid1.tenancy.oc1..aaaaaaaaacmetenancy", "description": "x"}
    resources(doc).append(
        {
            "urn": urn,
            "custom": True,
            "id": "ocid1.compartment.oc1..sneaky",
            "type": COMPARTMENT,
            "inputs": props,
            "outputs": {**props, "id": "ocid1.compartment.oc1..sneaky"},
            "parent": resources(doc)[0]["urn"],
            "provider": provider,
            "dependencies": [],
            "propertyDependencies": {},
        }
    )
    caught = [v for v in policy_verdicts(doc, training.spec) if v.policy == "workload-resource-kinds"]
    assert urn in {v.urn for v in caught}


TRAINING = "ocid1.compartment.oc1..aaaaaaaaacmetrain"
SERVING = "ocid1.compartment.oc1..aaaaaaaaacmeserve"


def wired_training(stacks: Path) -> PreviewResult:
    """oci-training wired to oci-landing: its nodes' policies name the landing stack's dynamic group."""
    text = example_file("oci-training", REPO / "stacks").read_text()
    wired = text.replace(
        "  accelstack:workload: training\n",
        "  accelstack:workload: training\n  accelstack:landing: {stack: acme/accelstack/oci-landing}\n",
    )
    assert wired != text
    path = stacks / "Pulumi.oci-training.yaml"
    path.write_text(wired)
    return preview_stack(path, [], REPO)


@pytest.fixture(scope="module")
def wired(tmp_path_factory: pytest.TempPathFactory) -> PreviewResult:
    return wired_training(tmp_path_factory.mktemp("stacks"))


def added_dynamic_group(doc: Doc, rule: str) -> str:
    provider = next(r["provider"] for r in resources(doc) if r["type"].startswith("oci:"))
    urn = "urn:pulumi:oci-training::accelstack::oci:Identity/dynamicGroup:DynamicGroup::sneaky-nodes"
    props = {
        "name": "sneaky-nodes",
        "compartmentId": TENANCY,
        "description": "x",
        "matchingRule": rule,
        # Tagged with the stack's side like its own resources (workload-tags): only the matching rule is at stake.
        "freeformTags": {"accelstack-workload": "training", "accelstack-stack": "oci-training"},
    }
    resources(doc).append(
        {
            "urn": urn,
            "custom": True,
            "id": "ocid1.dynamicgroup.oc1..sneaky",
            "type": DYNAMIC_GROUP,
            "inputs": props,
            "outputs": {**props, "id": "ocid1.dynamicgroup.oc1..sneaky"},
            "parent": resources(doc)[0]["urn"],
            "provider": provider,
            "dependencies": [],
            "propertyDependencies": {},
        }
    )
    return urn


TENANCY = "ocid1.tenancy.oc1..aaaaaaaaacmetenancy"


def test_a_wired_training_stack_makes_no_dynamic_group_and_gets_no_verdict(wired: PreviewResult) -> None:
    doc = wired.export
    assert not [r for r in resources(doc) if r["type"] == DYNAMIC_GROUP]
    references = [r for r in resources(doc) if r["type"] == "pulumi:pulumi:StackReference"]
    assert references and all(r.get("external") for r in references)
    assert [v.line() for v in policy_verdicts(doc, wired.spec)] == []


def test_a_workload_dynamic_group_matching_the_other_sides_compartment_fails(wired: PreviewResult) -> None:
    doc = copy.deepcopy(wired.export)
    urn = added_dynamic_group(doc, f"ALL {{instance.compartment.id = '{SERVING}'}}")
    caught = [v for v in policy_verdicts(doc, wired.spec) if v.mandatory and v.policy.startswith("cross-account")]
    assert urn in {v.urn for v in caught}
    # The same group matching its own side's instances is no crossing.
    own = copy.deepcopy(wired.export)
    mine = added_dynamic_group(own, f"ALL {{instance.compartment.id = '{TRAINING}'}}")
    assert mine not in {v.urn for v in policy_verdicts(own, wired.spec) if v.mandatory}


def test_a_landed_group_of_the_other_side_is_placed_there(wired: PreviewResult) -> None:
    """The group the nodes' policies name is the landing stack's serving group: its grants cross sides."""
    doc = copy.deepcopy(wired.export)
    for reference in (r for r in resources(doc) if r["type"] == "pulumi:pulumi:StackReference"):
        outputs = reference["outputs"]["outputs"]
        group = outputs["trainingNodesGroupName"]
        outputs.update(trainingNodesGroupName="acme-train-nodes", servingNodesGroupName=group, servingAccountId=SERVING)
    nodes = entry(doc, "oci-training-nodes", POLICY)["urn"]
    caught = [v for v in policy_verdicts(doc, wired.spec) if v.mandatory and v.policy.startswith("cross-account")]
    assert nodes in {v.urn for v in caught}
