"""policies/guardrails/observability.py on the shipped stacks' own exports: each rule catches the
edits a careless pull request would make (and the other spellings of the same risk), and lets the
legitimate variants through. Mirrors the Checkov ids each rule names; `make scan` runs Checkov itself."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from accelstack.engine.policy_runner import Verdict, policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack

REPO = Path(__file__).resolve().parents[2]
TRAINING, SERVING = "aws-training", "aws-serving"
VPC = "aws:ec2/vpc:Vpc"
FLOW_LOG = "aws:ec2/flowLog:FlowLog"
DEFAULT_SG = "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"
BUCKET = "aws:s3/bucket:Bucket"
BUCKET_LOGGING = "aws:s3/bucketLogging:BucketLogging"
WEB_ACL = "aws:wafv2/webAcl:WebAcl"
WAF_LOGGING = "aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration"
LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
INSTANCE = "aws:ec2/instance:Instance"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"

Doc = dict[str, Any]


@cache
def previewed(stack: str) -> PreviewResult:
    return preview_stack(REPO / "stacks" / f"Pulumi.{stack}.yaml", [], REPO)


def entry(doc: Doc, name: str, type_token: str) -> dict[str, Any]:
    matches = [r for r in doc["deployment"]["resources"] if r["type"] == type_token and r["urn"].endswith(f"::{name}")]
    assert len(matches) == 1, f"{type_token} {name}: {len(matches)} resources"
    return matches[0]


def edit(name: str, type_token: str, change: Callable[[dict[str, Any]], None]) -> Callable[[Doc], str]:
    """Change inputs and outputs alike (what Analyze and AnalyzeStack see); the verdict names it."""

    def apply(doc: Doc) -> str:
        resource = entry(doc, name, type_token)
        for side in ("inputs", "outputs"):
            change(resource[side])
        return resource["urn"]

    return apply


def drop(name: str, type_token: str, *, named: tuple[str, str]) -> Callable[[Doc], str]:
    def apply(doc: Doc) -> str:
        doc["deployment"]["resources"].remove(entry(doc, name, type_token))
        return entry(doc, *named)["urn"]

    return apply


def repoint(
    name: str, type_token: str, prop: str, target: tuple[str, str], attribute: str = "id"
) -> Callable[[Doc], str]:
    """Point `prop` at another resource, as the program would (value and property dependency)."""

    def apply(doc: Doc) -> str:
        resource = entry(doc, name, type_token)
        other = entry(doc, *target)
        value = other["id"] if attribute == "id" else other["outputs"][attribute]
        for side in ("inputs", "outputs"):
            resource[side][prop] = value
        resource["propertyDependencies"][prop] = [other["urn"]]
        return resource["urn"]

    return apply


def add_rule_to(group: tuple[str, str]) -> Callable[[Doc], str]:
    """A separate ingress rule on the default group: reopens it without touching the group itself."""

    def apply(doc: Doc) -> str:
        target = entry(doc, *group)
        template = next(r for r in doc["deployment"]["resources"] if r["type"] == INGRESS)
        rule = copy.deepcopy(template)
        rule["urn"] = template["urn"].rpartition("::")[0] + "::reopen-default"
        rule["id"] = "reopen-default-id"
        for side in ("inputs", "outputs"):
            rule[side].update({"securityGroupId": target["id"], "ipProtocol": "-1", "cidrIpv4": "10.0.0.0/8"})
            rule[side].pop("referencedSecurityGroupId", None)
        rule["propertyDependencies"] = {"securityGroupId": [target["urn"]]}
        rule["dependencies"] = [target["urn"]]
        doc["deployment"]["resources"].append(rule)
        return rule["urn"]

    return apply


def known_bad_rule(props: dict[str, Any]) -> dict[str, Any]:
    [rule] = [r for r in props["rules"] if "managedRuleGroupStatement" in r["statement"]]
    return rule


@dataclass(frozen=True)
class Mutation:
    id: str
    stack: str
    apply: Callable[[Doc], str]
    policy: str


MUTATIONS = [
    Mutation(
        "flow log dropped",
        TRAINING,
        drop("aws-training-net-flow-logs", FLOW_LOG, named=("aws-training-net-vpc", VPC)),
        "vpc-flow-logs",
    ),
    Mutation(
        "flow log on another VPC id",
        SERVING,
        lambda doc: (
            edit("aws-serving-net-flow-logs", FLOW_LOG, lambda p: p.__setitem__("vpcId", "vpc-0other"))(doc),
            entry(doc, "aws-serving-net-flow-logs", FLOW_LOG)["propertyDependencies"].pop("vpcId"),
            entry(doc, "aws-serving-net-vpc", VPC)["urn"],
        )[-1],
        "vpc-flow-logs",
    ),
    Mutation(
        "default group not adopted",
        TRAINING,
        drop("aws-training-net-default", DEFAULT_SG, named=("aws-training-net-vpc", VPC)),
        "default-security-group-closed",
    ),
    Mutation(
        "default group keeps a self rule",
        TRAINING,
        edit(
            "aws-training-net-default",
            DEFAULT_SG,
            lambda p: p.__setitem__("ingress", [{"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True}]),
        ),
        "default-security-group-closed",
    ),
    Mutation(
        "default group keeps all egress",
        SERVING,
        edit(
            "aws-serving-net-default",
            DEFAULT_SG,
            lambda p: p.__setitem__(
                "egress", [{"protocol": "-1", "fromPort": 0, "toPort": 0, "cidrBlocks": ["0.0.0.0/0"]}]
            ),
        ),
        "default-security-group-closed",
    ),
    Mutation(
        "separate rule reopens the default group",
        SERVING,
        add_rule_to(("aws-serving-net-default", DEFAULT_SG)),
        "default-security-group-closed",
    ),
    Mutation(
        "datasets access logging dropped",
        TRAINING,
        drop(
            "aws-training-storage-datasets-access-logging",
            BUCKET_LOGGING,
            named=("aws-training-storage-datasets", BUCKET),
        ),
        "bucket-access-logging",
    ),
    Mutation(
        "checkpoints log into themselves",
        TRAINING,
        repoint(
            "aws-training-storage-checkpoints-access-logging",
            BUCKET_LOGGING,
            "targetBucket",
            ("aws-training-storage-checkpoints", BUCKET),
            attribute="bucket",
        ),
        "bucket-access-logging",
    ),
    Mutation(
        "known bad inputs dropped",
        SERVING,
        edit("aws-serving-edge", WEB_ACL, lambda p: p["rules"].remove(known_bad_rule(p))),
        "waf-known-bad-inputs",
    ),
    Mutation(
        "known bad inputs only counted",
        SERVING,
        edit("aws-serving-edge", WEB_ACL, lambda p: known_bad_rule(p).__setitem__("overrideAction", {"count": {}})),
        "waf-known-bad-inputs",
    ),
    Mutation(
        "Log4j rules overridden to count",
        SERVING,
        edit(
            "aws-serving-edge",
            WEB_ACL,
            lambda p: known_bad_rule(p)["statement"]["managedRuleGroupStatement"].__setitem__(
                "ruleActionOverrides", [{"name": "Log4JRCE_BODY", "actionToUse": {"count": {}}}]
            ),
        ),
        "waf-known-bad-inputs",
    ),
    Mutation(
        "WAF logging dropped",
        SERVING,
        drop("aws-serving-waf-logs", WAF_LOGGING, named=("aws-serving-edge", WEB_ACL)),
        "waf-logging",
    ),
    Mutation(
        "Authorization header logged",
        SERVING,
        edit(
            "aws-serving-waf-logs",
            WAF_LOGGING,
            lambda p: p.__setitem__(
                "redactedFields", [f for f in p["redactedFields"] if f["singleHeader"]["name"] != "authorization"]
            ),
        ),
        "waf-logging",
    ),
    Mutation(
        "WAF log group without the aws-waf-logs- name",
        SERVING,
        edit("aws-serving-waf-logs", LOG_GROUP, lambda p: p.__setitem__("name", "serving-waf")),
        "waf-logging",
    ),
    Mutation(
        "head monitoring off",
        TRAINING,
        edit("aws-training-head", INSTANCE, lambda p: p.__setitem__("monitoring", False)),
        "instance-detailed-monitoring",
    ),
    Mutation(
        "head monitoring unset",
        TRAINING,
        edit("aws-training-head", INSTANCE, lambda p: p.pop("monitoring")),
        "instance-detailed-monitoring",
    ),
    Mutation(
        "log group kept a month",
        SERVING,
        edit("aws-serving-waf-logs", LOG_GROUP, lambda p: p.__setitem__("retentionInDays", 30)),
        "log-group-retention-and-key",
    ),
    # Accepted connections (what an exfiltration makes) would go unrecorded.
    Mutation(
        "only rejected flows logged",
        TRAINING,
        edit("aws-training-net-flow-logs", FLOW_LOG, lambda p: p.__setitem__("trafficType", "REJECT")),
        "vpc-flow-logs",
    ),
    Mutation(
        "log group without retention",
        SERVING,
        edit("aws-serving-waf-logs", LOG_GROUP, lambda p: p.pop("retentionInDays")),
        "log-group-retention-and-key",
    ),
    Mutation(
        "log group without key",
        SERVING,
        edit("aws-serving-waf-logs", LOG_GROUP, lambda p: p.pop("kmsKeyId")),
        "log-group-retention-and-key",
    ),
]

# Legitimate variants: what a reviewer should let through.
LEGITIMATE = [
    Mutation(
        "header redacted in capitals",
        SERVING,
        edit(
            "aws-serving-waf-logs",
            WAF_LOGGING,
            lambda p: p.__setitem__("redactedFields", [{"singleHeader": {"name": "Authorization"}}]),
        ),
        "waf-logging",
    ),
    Mutation(
        "logs never expire",
        SERVING,
        edit("aws-serving-waf-logs", LOG_GROUP, lambda p: p.__setitem__("retentionInDays", 0)),
        "log-group-retention-and-key",
    ),
    Mutation(
        "logs kept ten years",
        SERVING,
        edit("aws-serving-waf-logs", LOG_GROUP, lambda p: p.__setitem__("retentionInDays", 3653)),
        "log-group-retention-and-key",
    ),
    Mutation(
        "another Log4j-unrelated rule counted",
        SERVING,
        edit(
            "aws-serving-edge",
            WEB_ACL,
            lambda p: known_bad_rule(p)["statement"]["managedRuleGroupStatement"].__setitem__(
                "ruleActionOverrides", [{"name": "Host_localhost_HEADER", "actionToUse": {"count": {}}}]
            ),
        ),
        "waf-known-bad-inputs",
    ),
]


def _caught(verdicts: list[Verdict], urn: str, policy: str) -> bool:
    return any(v.mandatory and v.urn == urn and v.policy == policy for v in verdicts)


@pytest.mark.parametrize("stack", [TRAINING, SERVING])
def test_every_mutation_is_caught_by_its_rule(stack: str) -> None:
    result = previewed(stack)
    survivors = []
    for mutation in [m for m in MUTATIONS if m.stack == stack]:
        doc = copy.deepcopy(result.export)
        urn = mutation.apply(doc)
        assert doc != result.export, f"{mutation.id} changed nothing"
        verdicts = policy_verdicts(doc, result.spec)
        if not _caught(verdicts, urn, mutation.policy):
            survivors.append(f"{mutation.id}: expected {mutation.policy} on {urn}; got {[v.line() for v in verdicts]}")
    assert not survivors, "\n".join(survivors)


@pytest.mark.parametrize("variant", LEGITIMATE, ids=[m.id for m in LEGITIMATE])
def test_legitimate_variants_pass(variant: Mutation) -> None:
    result = previewed(variant.stack)
    doc = copy.deepcopy(result.export)
    variant.apply(doc)
    assert doc != result.export
    assert [v.line() for v in policy_verdicts(doc, result.spec)] == []


def test_every_observability_rule_has_a_mutation() -> None:
    from accelstack.policies.guardrails.observability import POLICIES

    assert {p.name for p in POLICIES} == {m.policy for m in MUTATIONS}
