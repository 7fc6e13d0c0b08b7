"""accelstack/engine/struct_decode.py builds what pulumi-policy's `unknown_checking_proxy` builds: on every request of
every shipped stack's export (inputs and outputs), and an unknown value raises with the same path."""

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

from accelstack.engine import policy_runner, struct_decode

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
