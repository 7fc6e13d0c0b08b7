"""The packs on Vultr's kinds (policies/vultr), through both packs on the vultr-serving export, named by its path as
its component tests name it. Each misconfiguration draws its rule's mandatory verdict; legitimate changes none."""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from accelstack.engine.policy_runner import Verdict, policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack

REPO = Path(__file__).resolve().parents[2]
STACK_FILE = REPO / "stacks" / "Pulumi.vultr-serving.yaml"
Doc = dict[str, Any]
RULE = "vultr:index/firewallRule:FirewallRule"
INSTANCE = "vultr:index/instance:Instance"
LB = "vultr:index/loadBalancer:LoadBalancer"


@cache
def previewed() -> PreviewResult:
    return preview_stack(STACK_FILE, [], REPO)


def verdicts(change: Callable[[Doc], None]) -> list[Verdict]:
    result = previewed()
    doc = copy.deepcopy(result.export)
    change(doc)
    return [v for v in policy_verdicts(doc, result.spec) if v.mandatory]


def set_input(kind: str, name_end: str, key: str, value: Any) -> Callable[[Doc], None]:
    def change(doc: Doc) -> None:
        for found in doc["deployment"]["resources"]:
            if found["type"] == kind and found["urn"].endswith(name_end):
                for block in ("inputs", "outputs"):
                    props = found.setdefault(block, {})
                    if value is None:
                        props.pop(key, None)
                    else:
                        props[key] = copy.deepcopy(value)

    return change


def both(*changes: Callable[[Doc], None]) -> Callable[[Doc], None]:
    def change(doc: Doc) -> None:
        for one in changes:
            one(doc)

    return change


def test_the_vultr_example_passes_both_packs() -> None:
    assert [v.line() for v in verdicts(lambda doc: None)] == []


MISCONFIGURATIONS: list[tuple[str, Callable[[Doc], None], set[str]]] = [
    (
        "replicas open to the internet",
        both(
            set_input(RULE, "-lb-to-replicas", "subnet", "0.0.0.0"), set_input(RULE, "-lb-to-replicas", "subnetSize", 0)
        ),
        {"no-internet-ingress", "internet-reaches-only-the-front-door"},
    ),
    (
        "replicas open to Cloudflare's ranges",
        set_input(RULE, "-lb-to-replicas", "source", "cloudflare"),
        {"no-internet-ingress", "internet-reaches-only-the-front-door"},
    ),
    (
        "a rule admitting a load balancer of another stack",
        set_input(RULE, "-lb-to-replicas", "source", "some-load-balancer-id"),
        {"internet-reaches-only-the-front-door"},
    ),
    (
        "a replica outside the firewall group",
        set_input(INSTANCE, "-replica-0", "firewallGroupId", None),
        {"internet-reaches-only-the-front-door"},
    ),
    (
        "plain HTTP without a redirect",
        both(
            set_input(LB, "-lb", "sslRedirect", False),
            set_input(
                LB,
                "-lb",
                "forwardingRules",
                [{"frontendPort": 80, "frontendProtocol": "http", "backendPort": 8000, "backendProtocol": "http"}],
            ),
        ),
        {"https-listeners"},
    ),
    (
        "a private key in user data",
        set_input(INSTANCE, "-replica-1", "userData", "#!/bin/sh\ncat > k <<E\n-----BEGIN RSA PRIVATE KEY-----\nE\n"),
        {"no-secrets-in-user-data"},
    ),
    (
        "a presigned URL valid for over a day in user data",
        set_input(
            INSTANCE,
            "-replica-1",
            "userData",
            "#cloud-config\nwrite_files:\n- path: /etc/accelstack/weights-key.url\n  content: https://ewr1.vultrobjects.com"
            "/acme-models/keys/k.env?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=86401&X-Amz-SignedHeaders=host"
            "&X-Amz-Signature=0123abcd\n",
        ),
        {"no-secrets-in-user-data"},
    ),
    (
        "a replica tagged as training",
        set_input(INSTANCE, "-replica-0", "tags", ["accelstack:workload=training"]),
        {"workload-tags"},
    ),
    ("a replica in another region", set_input(INSTANCE, "-replica-0", "region", "sjc"), {"allowed-regions"}),
]


def _no_api_key(doc: Doc) -> None:
    provider = next(r for r in doc["deployment"]["resources"] if r["type"] == "pulumi:providers:vultr")
    for block in ("inputs", "outputs"):
        provider.get(block, {}).pop("apiKey", None)


MISCONFIGURATIONS.append(("a provider without its key", _no_api_key, {"provider-account"}))


@pytest.mark.parametrize(("what", "change", "policies"), MISCONFIGURATIONS, ids=[m[0] for m in MISCONFIGURATIONS])
def test_a_misconfiguration_is_refused(what: str, change: Callable[[Doc], None], policies: set[str]) -> None:
    found = {v.policy for v in verdicts(change)}
    assert policies <= found, (what, found)


def _own_load_balancer_as_source(doc: Doc) -> None:
    """The rule admits the stack's load balancer by its id, as a program wires it (`source=lb.id`)."""
    resources = doc["deployment"]["resources"]
    balancer = next(r for r in resources if r["type"] == LB)
    rule = next(r for r in resources if r["type"] == RULE and r["urn"].endswith("-lb-to-replicas"))
    for block in ("inputs", "outputs"):
        rule[block]["source"] = balancer["id"]
    rule.setdefault("propertyDependencies", {})["source"] = [balancer["urn"]]


LEGITIMATE: list[tuple[str, Callable[[Doc], None]]] = [
    ("the load balancer as the rule's source", _own_load_balancer_as_source),
    ("a team tag", set_input(INSTANCE, "-replica-0", "tags", ["accelstack:workload=serving", "team=ml-platform"])),
    ("another plan", set_input(INSTANCE, "-replica-1", "plan", "vcg-a100-12c-120g-80vram")),
    (
        "a presigned URL that expires within the day",
        set_input(
            INSTANCE,
            "-replica-1",
            "userData",
            "#cloud-config\nwrite_files:\n- path: /etc/accelstack/weights-key.url\n  content: https://ewr1.vultrobjects.com"
            "/acme-models/keys/k.env?X-Amz-Expires=86400&X-Amz-Signature=0123abcd\n",
        ),
    ),
]


@pytest.mark.parametrize(("what", "change"), LEGITIMATE, ids=[m[0] for m in LEGITIMATE])
def test_a_legitimate_change_draws_no_verdict(what: str, change: Callable[[Doc], None]) -> None:
    assert [v.line() for v in verdicts(change)] == [], what
