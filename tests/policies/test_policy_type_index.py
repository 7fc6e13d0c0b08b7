"""The index of resource policies by the types they read (policies/type_index.py, the shared servicer's `_plan_for`).

- A policy the index leaves out for a resource reads nothing of it and reports nothing: on every shipped stack's
  export, each skipped (policy, resource) pair is run anyway on the real resource, its every read recorded.
- The probe counts every kind of read: a property, an option, the provider, a finding, an error, a choice by name.
- Unknown kinds still fail closed, and unplaceable principals still fail, through the indexed runner as through
  pulumi-policy's own servicer.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from pulumi_policy.policy import ResourceValidationArgs

from accelstack.engine import policy_runner
from accelstack.engine.pack_context import context_from_spec
from accelstack.policies import type_index
from accelstack.policies.common import make_context, resource_policy
from accelstack.spec.loader import load_stack

REPO = Path(__file__).resolve().parents[2]
GOLDENS = sorted(path.stem for path in (REPO / "tests" / "golden").glob("*.json"))


class RecordingView(Mapping[str, Any]):
    """A real resource's properties, every read recorded."""

    def __init__(self, props: Mapping[str, Any], reads: list[str]) -> None:
        self._props, self._reads = props, reads

    def __getitem__(self, key: str) -> Any:
        self._reads.append(f"props[{key!r}]")
        return self._props[key]

    def get(self, key: str, default: Any = None) -> Any:
        self._reads.append(f"props.get({key!r})")
        return self._props.get(key, default)

    def __contains__(self, key: object) -> bool:
        self._reads.append(f"props has {key!r}")
        return key in self._props

    def __iter__(self) -> Iterator[str]:
        self._reads.append("props iterated")
        return iter(self._props)

    def __len__(self) -> int:
        self._reads.append("props sized")
        return len(self._props)


class RecordingResource:
    """A real resource (ResourceValidationArgs) whose type, name and URN are free, every other read recorded."""

    def __init__(self, args: Any, reads: list[str]) -> None:
        self._args, self._reads = args, reads
        self.resource_type, self.name, self.urn = args.resource_type, args.name, args.urn
        self.props = RecordingView(args.props, reads)

    def __getattr__(self, name: str) -> Any:
        self._reads.append(name)
        return getattr(self._args, name)


def spec_context(stack: str) -> dict[str, Any] | None:
    path = REPO / "stacks" / f"Pulumi.{stack}.yaml"
    if stack.endswith("-landing") or not path.exists():
        return None
    return context_from_spec(load_stack(path, []))


@pytest.mark.parametrize("stack", GOLDENS)
def test_a_policy_left_out_reads_nothing_of_the_real_resource(stack: str) -> None:
    resources = policy_runner.export_resources(json.loads((REPO / "tests" / "golden" / f"{stack}.json").read_text()))
    requests = policy_runner.analyze_requests(resources)
    skipped = 0
    for pack in policy_runner.default_packs():
        servicer = pack.servicer()
        servicer.Configure(policy_runner.configure_request(pack, None, spec_context(stack)), None)
        plan = servicer._resource_plan()
        for request in requests:
            provider = servicer._get_provider_resource(request)
            kept = {id(entry[0]) for entry in servicer._plan_for(request.type, provider)}
            for policy, level, config, _ in plan:
                if level is None or id(policy) in kept:
                    continue
                skipped += 1
                props = policy_runner.deserialize_properties(
                    policy_runner.json_format.MessageToDict(request.properties)
                )
                args = ResourceValidationArgs(
                    request.type,
                    props,
                    request.urn,
                    request.name,
                    servicer._get_resource_options(request),
                    provider,
                    config,
                    {},
                )
                facts = [] if provider is None else [policy_runner_facts(provider)]
                reads: list[str] = []
                found = list(policy.check(RecordingResource(args, reads), make_context(config, facts)))
                assert not reads and not found, f"{pack.name}/{policy.name} on {request.urn}: {reads + found}"
    assert skipped > 0  # the index leaves something out, or this test tests nothing


def policy_runner_facts(provider: Any) -> Any:
    from accelstack.policies.common import provider_facts

    return provider_facts(provider.resource_type, provider.props, provider.urn, provider.name)


def probe_check(body: Any) -> Any:
    def check(resource: Any, ctx: Any) -> Iterable[str]:
        yield from body(resource, ctx) or ()

    return check


BUCKET, SUBNET = "aws:s3/bucket:Bucket", "aws:ec2/subnet:Subnet"
CONTEXT = make_context({"workload": "training"}, [])


def reads_props(resource: Any, ctx: Any) -> Iterable[str]:
    if resource.resource_type == BUCKET and resource.props.get("acl") == "public-read":
        yield "public"


def reads_options(resource: Any, ctx: Any) -> Iterable[str]:
    if resource.resource_type == BUCKET and not resource.opts.protect:
        yield "unprotected"


def reads_provider(resource: Any, ctx: Any) -> Iterable[str]:
    if resource.provider is None:
        yield "no provider"


def reports_by_type(resource: Any, ctx: Any) -> Iterable[str]:
    if resource.resource_type == BUCKET:
        yield "buckets are refused"


def raises(resource: Any, ctx: Any) -> Iterable[str]:
    if resource.resource_type == BUCKET:
        raise ValueError("boom")
    return ()


def chooses_by_name(resource: Any, ctx: Any) -> Iterable[str]:
    if "checkpoint" in resource.name and resource.props.get("versioning") is None:
        yield "unversioned checkpoint store"


def by_context(resource: Any, ctx: Any) -> Iterable[str]:
    if ctx.workload == "serving" and resource.props.get("spot"):
        yield "spot"


@pytest.mark.parametrize(
    ("check", "read_on", "skipped_on"),
    [
        (reads_props, BUCKET, SUBNET),
        (reads_options, BUCKET, SUBNET),
        (reports_by_type, BUCKET, SUBNET),
        (raises, BUCKET, SUBNET),
        (reads_provider, SUBNET, None),
        (chooses_by_name, SUBNET, None),
        (by_context, None, SUBNET),
    ],
)
def test_the_probe_counts_every_kind_of_read(check: Any, read_on: str | None, skipped_on: str | None) -> None:
    policy = resource_policy("probe-me", "A rule under test.", check)
    if read_on is not None:
        assert type_index.reads_of(check, read_on, CONTEXT)
        assert not policy.skips(read_on, None, {})
    if skipped_on is not None:
        assert not type_index.reads_of(check, skipped_on, CONTEXT)
        assert policy.skips(skipped_on, None, {})


def test_a_serving_context_is_probed_as_its_own() -> None:
    serving = make_context({"workload": "serving"}, [])
    assert type_index.reads_of(by_context, SUBNET, serving)
    assert not type_index.reads_of(by_context, SUBNET, CONTEXT)


def with_extra(document: dict[str, Any], stack: str, extra: dict[str, Any]) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    resources = changed["deployment"]["resources"]
    provider = next(r for r in resources if r["type"].startswith("pulumi:providers:"))
    extra = {**extra, "provider": f"{provider['urn']}::{provider['id']}", "parent": resources[0]["urn"]}
    resources.append(extra)
    return changed


@pytest.mark.parametrize("stack", ["aws-training", "azure-training", "gcp-training"])
def test_unknown_kinds_fail_closed_through_the_index(stack: str) -> None:
    document = json.loads((REPO / "tests" / "golden" / f"{stack}.json").read_text())
    package = {"aws": "aws", "azure": "azure-native", "gcp": "gcp"}[stack.split("-")[0]]
    kind = f"{package}:brandnew/gadget:Gadget"
    urn = f"urn:pulumi:{stack}::accelstack::{kind}::{stack}-gadget"
    changed = with_extra(document, stack, {"urn": urn, "type": kind, "custom": True, "inputs": {}, "outputs": {}})
    context = spec_context(stack)
    indexed = policy_runner.run_packs(changed, context=context)
    stock = policy_runner.run_packs(changed, context=context, stock=True)
    assert [v.line() for v in indexed] == [v.line() for v in stock]
    assert any(v.policy == "known-resource-kinds" and v.urn == urn and v.mandatory for v in indexed)


def test_an_unplaceable_principal_still_fails_through_the_index() -> None:
    stack = "aws-training"
    document = json.loads((REPO / "tests" / "golden" / f"{stack}.json").read_text())
    kind = "aws:iam/role:Role"
    urn = f"urn:pulumi:{stack}::accelstack::{kind}::{stack}-stranger"
    trust = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": "somebody"}, "Action": "sts:AssumeRole"}],
    }
    inputs = {"assumeRolePolicy": json.dumps(trust), "tags": {"accelstack:workload": "training"}}
    changed = with_extra(document, stack, {"urn": urn, "type": kind, "custom": True, "inputs": inputs})
    context = spec_context(stack)
    indexed = policy_runner.run_packs(changed, context=context)
    stock = policy_runner.run_packs(changed, context=context, stock=True)
    assert [v.line() for v in indexed] == [v.line() for v in stock]
    assert any(v.policy == "cross-account-read-only" and v.urn == urn and v.mandatory for v in indexed), [
        v.line() for v in indexed if v.urn == urn
    ]


SECRET_SAMPLES = (
    "AKIA" + "ABCDEFGHIJKLMNOP",
    "x=ASIA" + "0123456789ABCDEF;",
    "aws_secret_access_key = " + "a" * 40,
    "AWS_SECRET_ACCESS_KEY: '" + "b/+=" * 10 + "'",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "token hf_" + "abcdefghij" * 3 + "abcd",
    "ghp_" + "a1" * 18,
    "gho_" + "Z9" * 18 + " and ghs_" + "q" * 36,
    "nothing to see",
)


@pytest.mark.parametrize("text", SECRET_SAMPLES)
def test_secret_literals_rule_out_only_texts_the_pattern_cannot_match(text: str) -> None:
    """The literal test before each secret pattern (policies/readers.py SECRET_SHAPES) finds what the pattern alone
    finds: every match holds one of its literals."""
    from accelstack.policies import readers

    for pattern, what, literals in readers.SECRET_SHAPES:
        for match in pattern.finditer(text):
            assert not literals or any(literal in match.group(0) for literal in literals), (what, match.group(0))
    alone = [what for pattern, what in readers.SECRET_PATTERNS if pattern.search(text)]
    assert [w for w in readers.secrets_in(text) if w in alone] == alone
    assert text == "nothing to see" or alone
