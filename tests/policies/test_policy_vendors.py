"""The packs reach every vendor through one list (policies/vendors.py): a vendor registered there, and
nowhere else, has its concept table read by the known-kinds rule and its readers run by the composites."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from accelstack.policies import concepts, vendors
from accelstack.policies.common import make_context, provider_facts
from accelstack.policies.guardrails import rules as guardrails
from accelstack.policies.separation import rules as separation
from accelstack.policies.vendor import GuardrailReaders, Vendor

REPO = Path(__file__).resolve().parents[2]
BUCKET = "acme:storage:Bucket"


def public_buckets(resource: Any) -> Iterable[str]:
    if resource.resource_type == BUCKET and resource.props.get("publicRead"):
        yield f"acme bucket {resource.name} is public"


ACME = Vendor(
    package="acme",
    concepts={"bucket": (BUCKET,)},
    pin_inputs={"acme": "tenancy"},
    guardrails=GuardrailReaders(public_storage=public_buckets),
)


def resource(kind: str, name: str = "data", **props: Any) -> Any:
    provider = SimpleNamespace(resource_type="pulumi:providers:acme", props={}, urn="p", name="acme")
    return SimpleNamespace(
        resource_type=kind,
        name=name,
        urn=f"urn:pulumi:s::p::{kind}::{name}",
        props=props,
        provider=provider,
        opts=SimpleNamespace(protect=True),
    )


def check(pack: Any, policy: str) -> Any:
    return next(p for p in pack.POLICIES if p.name == policy).check


def context(workload: str = "training") -> Any:
    return make_context({"workload": workload, "trainingAccounts": ["t1"], "servingAccounts": ["s1"]}, [])


@pytest.fixture
def acme(monkeypatch: pytest.MonkeyPatch) -> Vendor:
    monkeypatch.setattr(vendors, "VENDORS", (*vendors.VENDORS, ACME))
    return ACME


def test_an_unlisted_vendor_fails_closed() -> None:
    known_kinds = check(separation, "known-resource-kinds")
    assert list(known_kinds(resource(BUCKET), context())) == [
        f"{BUCKET} data: package acme is not known to the packs (it may act with ambient credentials)"
    ]
    assert list(check(guardrails, "no-public-buckets")(resource(BUCKET, publicRead=True), context())) == []


def test_a_listed_vendors_table_and_reader_are_used(acme: Vendor) -> None:
    assert concepts.concept_of(BUCKET) == "bucket" and concepts.cloud_of(BUCKET) == "acme"
    known_kinds = check(separation, "known-resource-kinds")
    assert list(known_kinds(resource(BUCKET), context())) == []
    # A kind missing from its table still fails closed.
    assert list(known_kinds(resource("acme:storage:Share"), context())) == [
        "acme:storage:Share data: a resource kind the packs do not know; add it to policies/concepts.py with its rules"
    ]
    no_public = check(guardrails, "no-public-buckets")
    assert list(no_public(resource(BUCKET, publicRead=True), context())) == ["acme bucket data is public"]
    assert list(no_public(resource(BUCKET), context())) == []
    # Its table's concepts reach the concept rules: an unprotected bucket is found.
    unprotected = resource(BUCKET)
    unprotected.opts.protect = False
    assert list(check(guardrails, "protect-stateful")(unprotected, context())) == [
        "bucket data is not protected (set protect=True)"
    ]


def test_a_listed_vendors_provider_must_pin_its_account(acme: Vendor) -> None:
    provider = resource("pulumi:providers:acme", name="acme")
    facts = provider_facts(provider.resource_type, {}, provider.urn, provider.name)
    ctx = make_context({"workload": "training", "trainingAccounts": ["t1"], "servingAccounts": ["s1"]}, [facts])
    assert list(check(separation, "provider-account")(provider, ctx)) == [
        "provider acme does not pin its account: set tenancy to the stack's account"
    ]


def test_the_rule_modules_name_no_vendor_module() -> None:
    """Vendors are reached through the list only: no rule module imports a vendor module or reads one."""
    names = {"aws", "azure", "gcp"}
    for path in (REPO / "policies" / "guardrails" / "rules.py", REPO / "policies" / "separation" / "rules.py"):
        tree = ast.parse(path.read_text())
        imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        used = {n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
        assert not (imported | used) & names, path.name


def test_every_vendor_is_listed_once_with_its_own_packages() -> None:
    packages = [p for vendor in vendors.VENDORS for p in vendor.packages]
    assert len(packages) == len(set(packages))
    assert {v.package for v in vendors.VENDORS} == {"aws", "azure-native", "gcp", "oci", "vultr"}
