"""The v3 export of a fixture capture: what `pulumi stack import` and policy packs rely on."""

from __future__ import annotations

import json

import pytest

from accelstack.engine.capture import SECRET_SIG, SIG_KEY, capture, config_for_pulumi
from accelstack.engine.export import REDACTED, deployment_v3, integrity_problems, redact
from accelstack.spec.loader import read_stack_file

SECRET = "s3cr3t-fixture-token"


@pytest.fixture(scope="module")
def document(fixture_project, monkeypatch_module):
    monkeypatch_module.syspath_prepend(str(fixture_project))
    monkeypatch_module.chdir(fixture_project)
    config = config_for_pulumi(read_stack_file(fixture_project / "stacks" / "Pulumi.alpha.yaml"))
    captured = capture(fixture_project / "__main__.py", config, stack="alpha", preview=True)
    return deployment_v3(captured)


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def resources(document):
    return document["deployment"]["resources"]


def test_document_shape(document):
    assert document["version"] == 3
    manifest = document["deployment"]["manifest"]
    assert {"time", "magic", "version"} <= manifest.keys()
    assert manifest["plugins"] == [{"name": "aws", "path": "", "type": "resource", "version": "7.51.1"}]


def test_stack_first_without_parent(document):
    stack = resources(document)[0]
    assert stack["type"] == "pulumi:pulumi:Stack"
    assert stack["urn"] == "urn:pulumi:alpha::accelstack::pulumi:pulumi:Stack::accelstack-alpha"
    assert "parent" not in stack and "provider" not in stack
    assert stack["outputs"]["checkpointBucket"] == "checkpoints"


def test_every_custom_resource_uses_the_explicit_provider(document):
    [provider] = [r for r in resources(document) if r["type"] == "pulumi:providers:aws"]
    assert provider["custom"] is True and provider["inputs"]["region"] == "us-east-1"
    reference = f"{provider['urn']}::{provider['id']}"
    managed = [r for r in resources(document) if r["custom"] and not r["type"].startswith("pulumi:providers:")]
    assert len(managed) == 4
    assert all(r["provider"] == reference for r in managed)
    assert all("provider" not in r for r in resources(document) if not r["custom"])


def test_urns_unique_and_graph_consistent(document):
    urns = [r["urn"] for r in resources(document)]
    assert len(urns) == len(set(urns))
    assert integrity_problems(document) == []


def test_components_have_no_id_custom_resources_do(document):
    for entry in resources(document):
        assert ("id" in entry) == entry["custom"]


def test_protect_and_retain_on_delete_are_kept(document):
    bucket = next(r for r in resources(document) if r["type"] == "aws:s3/bucket:Bucket")
    assert bucket["protect"] is True and bucket["retainOnDelete"] is True
    versioning = next(r for r in resources(document) if r["type"] == "aws:s3/bucketVersioning:BucketVersioning")
    assert "retainOnDelete" not in versioning
    assert versioning["dependencies"] == [bucket["urn"]]
    assert versioning["propertyDependencies"] == {"bucket": [bucket["urn"]]}


def test_secrets_never_in_clear(document):
    text = json.dumps(document)
    assert SECRET not in text
    parameter = next(r for r in resources(document) if r["type"] == "aws:ssm/parameter:Parameter")
    assert parameter["inputs"]["value"] == {SIG_KEY: SECRET_SIG, "ciphertext": REDACTED}
    assert resources(document)[0]["outputs"]["token"] == {SIG_KEY: SECRET_SIG, "ciphertext": REDACTED}


def test_redact_reaches_nested_values():
    value = {
        "a": [{"b": {SIG_KEY: SECRET_SIG, "value": "wire-secret"}}],
        "c": {SIG_KEY: SECRET_SIG, "plaintext": '"state-secret"'},
        "d": "plain",
    }
    text = json.dumps(redact(value))
    assert "wire-secret" not in text and "state-secret" not in text and '"plain"' in text
    assert redact(value)["a"][0]["b"]["ciphertext"] == REDACTED


def test_integrity_check_catches_what_import_would_reject(document):
    broken = json.loads(json.dumps(document))
    entries = broken["deployment"]["resources"]
    entries[2]["parent"] = "urn:pulumi:alpha::accelstack::fixture:x:Gone::gone"
    entries.append(dict(entries[1]))
    custom = next(r for r in entries if r.get("provider"))
    custom["provider"] = custom["provider"].rsplit("::", 1)[0] + "::other-id"
    problems = integrity_problems(broken)
    assert any("parent" in p for p in problems)
    assert any("duplicate URN" in p for p in problems)
    assert any("provider reference id" in p for p in problems)


def test_resource_order_does_not_depend_on_registration_order():
    """The program registers asynchronously, so the capture's order varies between runs; the export
    must not (two exports of one stack diff cleanly), and must stay import-valid."""
    import random

    from accelstack.engine.capture import Capture, Registration

    def reg(urn, parent="", provider="", deps=(), type_="test:index:Thing"):
        return Registration(urn, type_, urn.rsplit("::", 1)[-1], True, parent, provider, list(deps), {}, False,
                            False, False, [], [], {}, {}, "id")  # fmt: skip

    stack = reg("urn:s::p::pulumi:pulumi:Stack::p-s", type_="pulumi:pulumi:Stack")
    provider = reg("urn:s::p::pulumi:providers:aws::aws", parent=stack.urn, type_="pulumi:providers:aws")
    items = [stack, provider] + [
        reg(f"urn:s::p::test:index:Thing::t{i}", parent=stack.urn, provider=f"{provider.urn}::id",
            deps=[f"urn:s::p::test:index:Thing::t{i - 1}"] if i % 3 else [])
        for i in range(12)
    ]  # fmt: skip
    orders = set()
    for seed in range(5):
        shuffled = items[:]
        random.Random(seed).shuffle(shuffled)
        doc = deployment_v3(Capture("p", "s", True, shuffled, {}))
        assert integrity_problems(doc) == []
        orders.add(tuple(r["urn"] for r in resources(doc)))
    assert len(orders) == 1
