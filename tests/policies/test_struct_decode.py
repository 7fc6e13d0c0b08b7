"""accelstack/engine/struct_decode.py builds what pulumi-policy's `unknown_checking_proxy` builds: on every request of
every shipped stack's export (inputs and outputs), and an unknown value raises with the same path. What it decodes
straight from an export (`decoded`, no protobuf Struct built) is what pulumi-policy's servicer decodes from the
requests the runner built before (types, key order, secrets, assets, and the errors, raised at the same point), on
every shipped export and on planted 20,000-resource exports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import (
    UNKNOWN_STRING_VALUE,
    UnknownValueError,
    _DictProxy,
    _ListProxy,
    unknown_checking_proxy,
)

from accelstack.engine import analyzer_requests, policy_runner, struct_decode
from tests.bench.large_export import PLANTS, copies_for, plant, replicate
from tests.bench.large_export import golden as golden_export

REPO = Path(__file__).resolve().parents[2]
GOLDENS = sorted((REPO / "tests" / "golden").glob("*.json"))


def shape(proxy: Any) -> Any:
    """A proxy tree as (class, path, children) all the way down; leaves as their repr."""
    for kind, name in ((_DictProxy, "_DictProxy"), (_ListProxy, "_ListProxy")):
        if type(proxy) is kind:
            target = getattr(proxy, f"{name}__target")
            items = target.items() if isinstance(target, dict) else enumerate(target)
            return (name, getattr(proxy, f"{name}__props_acc"), [(k, shape(v)) for k, v in items])
    return repr(proxy)


@pytest.mark.parametrize("golden", GOLDENS, ids=lambda p: p.stem)
def test_same_proxies_as_pulumi_policy_on_every_request(golden: Path) -> None:
    resources = policy_runner.export_resources(json.loads(golden.read_text()))
    messages = [r.properties for r in policy_runner.analyze_requests(resources)]
    messages += [r.properties for r in policy_runner.analyze_stack_request(resources).resources]
    for message in messages:
        props = deserialize_properties(json_format.MessageToDict(message))
        assert shape(struct_decode.checking_proxy(props)) == shape(unknown_checking_proxy(props))


def test_an_unknown_raises_with_the_same_path() -> None:
    props = {"a": [{"b": UNKNOWN_STRING_VALUE}]}
    with pytest.raises(UnknownValueError) as theirs:
        _ = unknown_checking_proxy(props)["a"][0]["b"]
    with pytest.raises(UnknownValueError) as ours:
        _ = struct_decode.checking_proxy(props)["a"][0]["b"]
    assert ours.value.message == theirs.value.message == "string value at .a.0.b can't be known during preview"


# --- the properties the shared servicer is handed, read from the export (struct_decode.decoded) -----------------


def exact(value: Any) -> Any:
    """A value with its types and every object's key order made comparable (1 == 1.0 and dict equality ignore them)."""
    if isinstance(value, dict):
        return ("dict", [(key, exact(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("list", [exact(item) for item in value])
    if hasattr(value, "__dict__"):  # pulumi's assets and archives: by their fields
        return (type(value).__name__, exact(vars(value)))
    return (type(value).__name__, repr(value))


def what_the_servicer_decodes(resources: list[dict[str, Any]]) -> list[Any]:
    """pulumi-policy's decoding of every request the runner used to build: inputs, then final states."""
    messages = [r.properties for r in analyzer_requests.analyze_requests(resources)]
    messages += [r.properties for r in analyzer_requests.analyze_stack_request(resources).resources]
    return [exact(deserialize_properties(json_format.MessageToDict(message))) for message in messages]


def decoded_directly(resources: list[dict[str, Any]]) -> list[Any]:
    inputs, finals = analyzer_requests.decoded_properties(resources)
    return [exact(decoded.value()) for decoded in inputs + finals]


@pytest.mark.parametrize("golden", GOLDENS, ids=lambda p: p.stem)
def test_decoded_properties_are_what_the_servicer_decodes(golden: Path) -> None:
    resources = policy_runner.export_resources(json.loads(golden.read_text()))
    assert decoded_directly(resources) == what_the_servicer_decodes(resources)


@pytest.mark.parametrize("stack", sorted(PLANTS))
def test_decoded_properties_on_a_planted_20000_resource_export(stack: str) -> None:
    document = replicate(golden_export(stack), stack, 20_000)
    plant(document, stack, [0, copies_for(stack, 20_000) - 1])
    resources = policy_runner.export_resources(document)
    assert len(resources) >= 20_000
    assert decoded_directly(resources) == what_the_servicer_decodes(resources)


SECRET = "1b47061264138c4ac30d75fd1eb44270"
SIG = "4dabf18193072939515e22adb298388d"


@pytest.mark.parametrize(
    "inputs",
    [
        {"port": 22, "ratio": 0.5, "on": True, "none": None, "big": 2**60 + 1, "neg": -0.0, "text": "é"},
        {"z": 1, "a": {"y": [1, {"x": "2", "b": []}], "c": {}}, "m": "", **{f"k{i}": i for i in range(40)}},
        {"password": {SIG: SECRET, "plaintext": '{"user": "u", "ports": [1, 2]}'}},
        {"password": {SIG: SECRET, "ciphertext": "AAAA"}},
        {"code": {SIG: "c44067f5952c0a294b673a41bacd8c17", "text": "echo hi"}},
        {SIG: SECRET, "plaintext": '{"a": 1}'},
        {"x": [{"y": {SIG: SECRET, "value": {"z": {SIG: SECRET, "plaintext": "[1]"}}}}]},
        {
            "archive": {
                SIG: "0def7320c3a5731c473e5ecbe6d01bc7",
                "assets": {"a": {SIG: "c44067f5952c0a294b673a41bacd8c17", "path": "p"}},
            }
        },
    ],
    ids=["scalars", "nesting", "secret", "ciphertext", "asset", "secret-inputs", "secret-in-secret", "archive"],
)
def test_decoded_values_of_every_kind(inputs: dict[str, Any]) -> None:
    resources = [{"urn": "urn:pulumi:s::p::aws:s3/bucket:Bucket::b", "type": "aws:s3/bucket:Bucket", "inputs": inputs}]
    assert repr(decoded_directly(resources)) == repr(what_the_servicer_decodes(resources))


def test_a_property_pulumi_policy_cannot_deserialize_fails_where_the_servicer_fails() -> None:
    """An unknown signature: the servicer raises while decoding, before the first policy; the decoding raises then."""
    resources = [
        {
            "urn": "urn:pulumi:s::p::aws:s3/bucket:Bucket::b",
            "type": "aws:s3/bucket:Bucket",
            "inputs": {"x": {SIG: "nope"}},
        }
    ]
    inputs, _ = analyzer_requests.decoded_properties(resources)  # nothing raised yet
    (message,) = [r.properties for r in analyzer_requests.analyze_requests(resources)]
    with pytest.raises(AssertionError) as theirs:
        deserialize_properties(json_format.MessageToDict(message))
    with pytest.raises(AssertionError) as ours:
        inputs[0].value()
    assert str(ours.value) == str(theirs.value) == "Unrecognized signature 'nope' when unmarshaling resource property"


@pytest.mark.parametrize(
    "value", ["lone \ud800 surrogate", float("nan"), float("inf"), 10**400, ("a", "tuple")], ids=repr
)
def test_a_value_protobuf_refuses_fails_as_building_the_requests_did(value: Any) -> None:
    resources = [
        {"urn": "urn:pulumi:s::p::aws:s3/bucket:Bucket::b", "type": "aws:s3/bucket:Bucket", "inputs": {"x": [value]}}
    ]

    def outcome(build: Any) -> Any:
        try:
            return ("ok", build(resources))
        except Exception as error:  # noqa: BLE001  # the error is what is compared
            return (type(error).__name__, str(error))

    ours = outcome(decoded_directly)
    assert ours == outcome(what_the_servicer_decodes)
