"""Large exports (issue 29, `policy --file` on 20,000 resources): the shortcuts that make them fast answer as the
slow paths they replace.

- The shared servicer (accelstack/engine/shared_servicer.py) reports exactly what pulumi-policy's own servicer
  reports, verdict for verdict and in order, on every shipped stack's export, with violations planted, and with
  the values the reference indexes read unknown (so the packs' stack policies take pulumi-policy's "can't run
  during preview" path).
- policies/links.py answers each question as the `refers_to` expression it stands for, on references by property
  dependency, by id / name / ARN, by sub-resource block and by list, unknown values included (same answer, or the
  same exception).
- A large export made of copies of a shipped stack (tests/bench/large_export.py) reports exactly the violations
  planted in it: in each copy, what the small export with the same edit reports. Times: tests/bench.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

from accelstack.engine.capture import UNKNOWN
from accelstack.engine.pack_context import landing_context
from accelstack.engine.policy_runner import context_from_spec, policy_verdicts, run_packs
from accelstack.engine.preview import planned_landing
from accelstack.policies import links
from accelstack.policies.common import refers_to
from accelstack.spec.landing import is_landing
from accelstack.spec.loader import load_stack, read_stack_file
from tests.bench.large_export import PLANTS, copies_for, golden, plant, replicate

REPO = Path(__file__).resolve().parents[2]
GOLDENS = sorted(path.stem for path in (REPO / "tests" / "golden").glob("*.json"))
TRAINING = sorted(PLANTS)
# Properties the stack policies follow from one resource to another (a bucket's configuration, a VPC's flow log,
# a storage account's services): unknown, they send the reference index to its slow path and the policies to
# pulumi-policy's advisory diagnostic.
REFERENCES = (
    "bucket",
    "vpcId",
    "securityGroupId",
    "accountName",
    "resourceUri",
    "target",
    "securityPolicy",
    "compartmentId",
    "firewallGroupId",  # Vultr: the group a replica and its rules share (policies/vultr/reachability.py)
)
# Goldens whose unknown references draw no preview diagnostic, and why (exact: a diagnostic turns the entry red).
NO_PREVIEW_PATH = {
    **{
        f"{cloud}-landing": (
            "a landing stack's organization kinds carry none of REFERENCES (no bucket, VPC, security group or "
            "storage account to follow): no stack policy reads an unknown reference there"
        )
        for cloud in ("aws", "azure", "gcp", "oci")
    },
    "vultr-serving": (
        "the Vultr packs compare firewallGroupId values with plain reads (policies/vultr/reachability.py), which "
        "take the unknown sentinel as a value: no pulumi-policy unknown-checking path is reached"
    ),
}


def spec_of(stack: str) -> Any:
    return load_stack(REPO / "stacks" / f"Pulumi.{stack}.yaml", [])


def lines(verdicts: list[Any]) -> list[str]:
    return [v.line() for v in verdicts]


def with_unknown_references(document: dict[str, Any]) -> dict[str, Any]:
    """The export as a preview may have it: the references above unknown, their property dependencies gone."""
    changed = copy.deepcopy(document)
    for resource in changed["deployment"]["resources"]:
        for side in ("inputs", "outputs"):
            props = resource.get(side) or {}
            for key in REFERENCES:
                if key in props:
                    props[key] = UNKNOWN
        for key in REFERENCES:
            (resource.get("propertyDependencies") or {}).pop(key, None)
    return changed


def planted_golden(stack: str) -> dict[str, Any]:
    document = golden(stack)
    plant(document, stack, [0])
    return document


def context_of(stack: str) -> dict[str, Any]:
    """The packs' context as `accelstack policy` gives it: a landing stack's from its plan."""
    path = REPO / "stacks" / f"Pulumi.{stack}.yaml"
    if is_landing(read_stack_file(path)):
        landing, plan = planned_landing(read_stack_file(path), stack, REPO / "stacks")
        return landing_context(landing, plan)
    return context_from_spec(spec_of(stack))


@pytest.mark.parametrize("stack", GOLDENS)
def test_the_shared_servicer_reports_what_pulumi_policys_servicer_reports(stack: str) -> None:
    context = context_of(stack)
    documents = {"as shipped": golden(stack), "references unknown": with_unknown_references(golden(stack))}
    if stack in PLANTS:
        documents["planted"] = planted_golden(stack)
    for what, document in documents.items():
        stock = lines(run_packs(document, context=context, stock=True))
        assert lines(run_packs(document, context=context)) == stock, what
    # The unknown references reach pulumi-policy's preview path, so that path is compared too, not only silence.
    unknown = lines(run_packs(documents["references unknown"], context=context))
    if stack in NO_PREVIEW_PATH:
        assert not any("during preview" in line for line in unknown), NO_PREVIEW_PATH[stack]
        return
    assert any("during preview" in line for line in unknown), unknown


@pytest.mark.parametrize("stack", TRAINING)
def test_a_large_export_reports_exactly_the_planted_violations(stack: str) -> None:
    spec = spec_of(stack)
    small = lines(policy_verdicts(planted_golden(stack), spec))
    assert {item.policy for item in PLANTS[stack]} <= {line.split()[0].split("/")[1] for line in small}
    large = replicate(golden(stack), stack, 600)
    last = copies_for(stack, 600) - 1
    planted_in = [0, last // 2, last]
    plant(large, stack, planted_in)
    found = lines(policy_verdicts(large, spec))
    # What the small export reports, once per planted copy (names renamed as the copy renames them).
    expected = [
        line.replace(f"{stack}-", f"{stack}-r{index}-") if index else line for index in planted_in for line in small
    ]
    assert sorted(found) == sorted(expected)
    assert len(large["deployment"]["resources"]) >= 600


# --- policies/links.py against the expressions it stands for ------------------------------------------------


class Resource:
    """What the packs read of a pulumi-policy resource: type, URN, props (the unknown-checking view), property
    dependencies (resources)."""

    def __init__(self, urn: str, props: dict[str, Any]) -> None:
        self.urn, self.resource_type = urn, "test:index:Thing"
        self.props = unknown_checking_proxy(props)
        self.property_dependencies: dict[str, list[Resource]] = {}


def population(seed: int) -> tuple[list[Resource], list[Resource]]:
    """Referrers and targets whose ids, names and references overlap: a plain value, a list of them, a `{"id"}`
    block, a list of blocks, a property dependency; some values unknown, some duplicated across targets."""
    rng = random.Random(seed)

    def name() -> str:  # now and then a value unknown during preview
        return UNKNOWN if rng.random() < 0.03 else f"n{rng.randrange(6)}"

    targets = []
    for i in range(8):
        props = {k: name() for k in ("id", "name", "arn") if rng.random() < 0.8}
        targets.append(Resource(f"urn:target{i}", props))
    referrers = []
    for i in range(10):
        shape = rng.randrange(5)
        value: Any = name()
        if shape == 1:
            value = [name(), name()]
        elif shape == 2:
            value = {"id": name()}
        elif shape == 3:
            value = [{"id": name()}, name()]
        props = {"ref": value} if shape != 4 else {}
        referrer = Resource(f"urn:referrer{i}", props)
        if rng.random() < 0.3:
            referrer.property_dependencies["ref"] = [rng.choice(targets)]
        referrers.append(referrer)
    return referrers, targets


def outcome(function: Any) -> Any:
    try:
        result = function()
        return ("value", [r.urn for r in result] if isinstance(result, list) else result)
    except UnknownValueError as error:
        return ("unknown", error.message)


@pytest.mark.parametrize("seed", range(40))
def test_the_reference_index_answers_as_refers_to(seed: int) -> None:
    referrers, targets = population(seed)
    links._indexes.clear()
    for keys in (("id",), ("id", "name", "arn")):
        for target in targets:
            expected = outcome(lambda: [r for r in referrers if refers_to(r, "ref", target, keys=keys)])  # noqa: B023
            assert outcome(lambda: links.referrers_of(target, referrers, "ref", keys)) == expected  # noqa: B023
            assert outcome(lambda: list(links.each_referrer(target, referrers, "ref", keys))) == expected  # noqa: B023
            expected_any = outcome(lambda: any(refers_to(r, "ref", target, keys=keys) for r in referrers))  # noqa: B023
            assert outcome(lambda: links.any_referrer(target, referrers, "ref", keys)) == expected_any  # noqa: B023
        for referrer in referrers:
            expected = outcome(lambda: [t for t in targets if refers_to(referrer, "ref", t, keys=keys)])  # noqa: B023
            assert outcome(lambda: links.targets_of(referrer, "ref", targets, keys)) == expected  # noqa: B023
            assert outcome(lambda: list(links.each_target(referrer, "ref", targets, keys))) == expected  # noqa: B023
            expected_any = outcome(lambda: any(refers_to(referrer, "ref", t, keys=keys) for t in targets))  # noqa: B023
            assert outcome(lambda: links.refers_to_any(referrer, "ref", targets, keys)) == expected_any  # noqa: B023
            for target in targets:
                pair = outcome(lambda: refers_to(referrer, "ref", target, keys=keys))  # noqa: B023
                assert outcome(lambda: links.refers_to_in(referrer, "ref", target, targets, keys)) == pair  # noqa: B023


def test_the_generator_keeps_every_copy_distinct() -> None:
    for stack in TRAINING:
        large = replicate(golden(stack), stack, 400)
        urns = [r["urn"] for r in large["deployment"]["resources"]]
        assert len(urns) == len(set(urns)) >= 400
        text = json.dumps(large)
        assert f"{stack}-r1-" in text and f"{stack}-r2-" in text
