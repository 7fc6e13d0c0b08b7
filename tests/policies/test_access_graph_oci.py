"""OCI's edges of the access graph (policies/oci/access.py) and its other readers, through both packs on the shipped
oci-training export: IAM statements are parsed (policies/oci/statements.py) into who, what and where, and what the
pack cannot parse or place fails closed with what it could not place. Legitimate changes draw no verdict."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from accelstack.engine.policy_runner import Verdict, policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack
from accelstack.policies.access import ADMIN, ANY, BECOME, OBJECTS, READ, SERVICE, WRITE, Placement, Stack
from accelstack.policies.oci.access import statement_edges
from accelstack.policies.oci.statements import matching_compartments, parse

REPO = Path(__file__).resolve().parents[2]
STACK = "oci-training"
TRAIN = "ocid1.compartment.oc1..aaaaaaaaacmetrain"
SERVE = "ocid1.compartment.oc1..aaaaaaaaacmeserve"
POLICY = "oci:Identity/policy:Policy"
Doc = dict[str, Any]


@cache
def previewed() -> PreviewResult:
    return preview_stack(REPO / "stacks" / f"Pulumi.{STACK}.yaml", [], REPO)


def verdicts(change: Callable[[Doc], None]) -> list[Verdict]:
    result = previewed()
    doc = copy.deepcopy(result.export)
    change(doc)
    return [v for v in policy_verdicts(doc, result.spec) if v.mandatory]


def resource(doc: Doc, kind: str, name_end: str) -> Doc:
    return next(r for r in doc["deployment"]["resources"] if r["type"] == kind and r["urn"].endswith(name_end))


def set_input(kind: str, name_end: str, key: str, value: Any) -> Callable[[Doc], None]:
    def change(doc: Doc) -> None:
        found = resource(doc, kind, name_end)
        for block in ("inputs", "outputs"):
            found.setdefault(block, {})[key] = copy.deepcopy(value)

    return change


def add_statement(text: str, policy: str = "::oci-training-nodes") -> Callable[[Doc], None]:
    def change(doc: Doc) -> None:
        found = resource(doc, POLICY, policy)
        for block in ("inputs", "outputs"):
            found[block]["statements"] = [*found[block]["statements"], text]

    return change


def test_the_shipped_stack_passes_both_packs() -> None:
    assert verdicts(lambda doc: None) == []


def test_statements_parse_into_subject_verb_type_place_and_condition() -> None:
    statement = parse(
        f"allow dynamic-group nodes to manage objects in compartment id {TRAIN} where all "
        "{target.bucket.name = 'ckpt', any {request.permission = 'OBJECT_CREATE', request.permission = 'OBJECT_READ'}}"
    )
    assert statement.unparsed == ""
    assert [(s.kind, s.name) for s in statement.subjects] == [("dynamic-group", "nodes")]
    assert (statement.verb, statement.what, statement.scope, statement.scope_by_id) == (
        "manage",
        "objects",
        TRAIN,
        True,
    )
    assert statement.condition.equal("target.bucket.name") == ("ckpt",)
    assert statement.condition.equal("request.permission") == ("OBJECT_CREATE", "OBJECT_READ")
    assert parse("allow group A, group B to read buckets in tenancy").subjects[1].name == "B"
    assert "endorse" in parse("endorse group X to read objects in tenancy T").unparsed
    assert "verb" in parse(f"allow group X to own objects in compartment id {TRAIN}").unparsed
    assert "condition" in parse(f"allow group X to read objects in compartment id {TRAIN} where a <= 'b'").unparsed
    assert matching_compartments(f"ALL {{instance.compartment.id = '{TRAIN}'}}") == ((TRAIN,), "")
    assert matching_compartments("ANY {instance.id = 'ocid1.instance.oc1..x'}")[1] != ""


def test_edges_place_each_end_and_narrow_by_the_conditions() -> None:
    doc = previewed().export
    stack = Stack.of([])  # no dynamic group: a dynamic-group subject cannot be placed
    place = Placement(frozenset({TRAIN}), {}, stack)
    [edge] = statement_edges(
        f"allow service lustrefs to read objects in compartment id {TRAIN} where target.bucket.name = 'd'",
        place,
        "u",
        "p",
    )
    assert (edge.source.account, edge.access, edge.target.account, edge.target.kind) == (SERVICE, READ, TRAIN, OBJECTS)
    [edge] = statement_edges(
        f"allow any-user to manage objects in compartment id {TRAIN} where all {{target.bucket.name = 'c', "
        "any {request.permission = 'OBJECT_CREATE'}}",
        place,
        "u",
        "p",
    )
    assert (edge.source.account, edge.access) == (ANY, WRITE)
    [edge] = statement_edges("allow group Admins to manage policies in tenancy", place, "u", "p")
    assert edge.access == BECOME and edge.target.account == ANY and edge.source.account is None
    [edge] = statement_edges("allow service x to use keys in compartment Training", place, "u", "p")
    assert edge.target.account is None and "by name" in edge.target.unplaced
    [edge] = statement_edges("allow dynamic-group ghosts to read buckets in tenancy", place, "u", "p")
    assert edge.source.account is None and "ghosts" in edge.source.unplaced
    [edge] = statement_edges("define tenancy Other as ocid1.tenancy.oc1..other", place, "u", "p")
    assert edge.access == ADMIN and edge.source.unplaced
    assert doc  # the shipped export is the graph's other input (below)


# (what, change, words the verdict must carry): each crosses the separation or cannot be placed.
CROSSINGS: list[tuple[str, Callable[[Doc], None], str]] = [
    (
        "grant in the serving compartment",
        add_statement(f"allow dynamic-group oci-training-nodes to manage objects in compartment id {SERVE}"),
        SERVE,
    ),
    (
        "write the other side's buckets",
        add_statement(f"allow dynamic-group oci-training-nodes to use buckets in compartment id {SERVE}"),
        SERVE,
    ),
    (
        "every user reads the datasets",
        add_statement(f"allow any-user to read objects in compartment id {TRAIN}"),
        "every account",
    ),
    (
        "tenancy-wide grant",
        add_statement("allow dynamic-group oci-training-nodes to read objects in tenancy"),
        "every account",
    ),
    (
        "a group the pack cannot place",
        add_statement(f"allow group Operators to read objects in compartment id {TRAIN}"),
        "cannot place",
    ),
    (
        "a compartment by name",
        add_statement("allow dynamic-group oci-training-nodes to read objects in compartment Serving"),
        "by name",
    ),
    (
        "a cross-tenancy endorse",
        add_statement("endorse dynamic-group oci-training-nodes to read objects in any-tenancy"),
        "endorse",
    ),
    ("an unparsed statement", add_statement("allow everyone everything"), "fail closed"),
    (
        "the dynamic group spans the serving compartment",
        set_input(
            "oci:Identity/dynamicGroup:DynamicGroup",
            "::oci-training-nodes",
            "matchingRule",
            f"ANY {{instance.compartment.id = '{TRAIN}', instance.compartment.id = '{SERVE}'}}",
        ),
        "span",
    ),
    (
        "the dynamic group admits by instance id",
        set_input(
            "oci:Identity/dynamicGroup:DynamicGroup",
            "::oci-training-nodes",
            "matchingRule",
            "ANY {instance.id = 'ocid1.instance.oc1..x'}",
        ),
        "matching rule",
    ),
]


@pytest.mark.parametrize(("what", "change", "words"), CROSSINGS, ids=[c[0] for c in CROSSINGS])
def test_a_crossing_or_unplaceable_grant_is_refused(what: str, change: Callable[[Doc], None], words: str) -> None:
    found = [v for v in verdicts(change) if v.policy.startswith("cross-account-read-only")]
    assert found, what
    assert any(words in v.message for v in found), [v.message for v in found]


# Other readers: (what, change, policy that must refuse it).
MISCONFIGURATIONS: list[tuple[str, Callable[[Doc], None], str]] = [
    (
        "public bucket",
        set_input("oci:ObjectStorage/bucket:Bucket", "-datasets", "accessType", "ObjectRead"),
        "no-public-buckets",
    ),
    (
        "checkpoints unversioned",
        set_input("oci:ObjectStorage/bucket:Bucket", "-checkpoints", "versioning", "Disabled"),
        "bucket-versioning",
    ),
    (
        "bucket without the stack key",
        set_input("oci:ObjectStorage/bucket:Bucket", "-datasets", "kmsKeyId", ""),
        "bucket-encryption",
    ),
    (
        "head with a public IP",
        set_input("oci:Core/instance:Instance", "-head", "createVnicDetails", {"assignPublicIp": "true"}),
        "no-public-ip-on-nodes",
    ),
    (
        "subnet allows public IPs",
        set_input("oci:Core/subnet:Subnet", "-nodes", "prohibitPublicIpOnVnic", False),
        "nodes-in-private-subnets",
    ),
    (
        "security list open to the internet",
        set_input(
            "oci:Core/securityList:SecurityList",
            "-nodes",
            "ingressSecurityRules",
            [{"protocol": "6", "source": "0.0.0.0/0"}],
        ),
        "no-internet-ingress",
    ),
    (
        "NSG rule open to the internet",
        set_input(
            "oci:Core/networkSecurityGroupSecurityRule:NetworkSecurityGroupSecurityRule",
            "-nodes-from-vcn",
            "source",
            "0.0.0.0/0",
        ),
        "no-internet-ingress",
    ),
    (
        "resource in the serving compartment",
        set_input("oci:Kms/vault:Vault", "-vault", "compartmentId", SERVE),
        "pinned-project",
    ),
    (
        "manage all-resources",
        add_statement(f"allow dynamic-group oci-training-nodes to manage all-resources in compartment id {TRAIN}"),
        "iam-least-privilege",
    ),
    ("provider without a tenancy", lambda doc: _provider(doc).pop("tenancyOcid"), "provider-account"),
    (
        "tagged as serving",
        set_input("oci:Core/vcn:Vcn", "-vcn", "freeformTags", {"accelstack-workload": "serving"}),
        "workload-tags",
    ),
]


def _provider(doc: Doc) -> Doc:
    found = next(r for r in doc["deployment"]["resources"] if r["type"] == "pulumi:providers:oci")
    found["outputs"] = found.setdefault("outputs", {})
    return found["inputs"]


@pytest.mark.parametrize(("what", "change", "policy"), MISCONFIGURATIONS, ids=[m[0] for m in MISCONFIGURATIONS])
def test_a_misconfiguration_is_refused(what: str, change: Callable[[Doc], None], policy: str) -> None:
    found = verdicts(change)
    assert policy in {v.policy for v in found}, (what, [v.line() for v in found])


LEGITIMATE: list[tuple[str, Callable[[Doc], None]]] = [
    (
        "a narrower node grant",
        add_statement(
            f"allow dynamic-group oci-training-nodes to read buckets in compartment id {TRAIN} where target.bucket.name = 'acme-train-datasets'"
        ),
    ),
    (
        "more Lustre capacity",
        set_input(
            "oci:Lustre/fileStorageLustreFileSystem:FileStorageLustreFileSystem", "-lustre", "capacityInGbs", 41600
        ),
    ),
    ("another display name", set_input("oci:Core/vcn:Vcn", "-vcn", "displayName", "renamed")),
    (
        "a VCN-only NSG rule",
        set_input(
            "oci:Core/networkSecurityGroupSecurityRule:NetworkSecurityGroupSecurityRule",
            "-nodes-from-vcn",
            "source",
            "10.60.1.0/24",
        ),
    ),
]


@pytest.mark.parametrize(("what", "change"), LEGITIMATE, ids=[m[0] for m in LEGITIMATE])
def test_a_legitimate_change_draws_no_verdict(what: str, change: Callable[[Doc], None]) -> None:
    assert [json.dumps(v.line()) for v in verdicts(change)] == [], what
