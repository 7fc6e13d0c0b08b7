"""Issue 31, the copy handoff on the serving stacks' own exports: every copy pair of the conformance suite (OCI ->
AWS/Azure/GCP/Vultr, Azure -> AWS/GCP/Vultr: tests/conformance/test_cross_cloud_copy.py) gets no verdict once its
values are known (the mocks resolving every output) and no mandatory one in preview, and each mutation of the copy or
its PAR, in the spelling the stack's own program writes it, is caught by a mandatory verdict on what it touched (the
hand-built shapes: test_artifact_copy_pack.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

pytest.importorskip("accelstack.spec.copies", reason="the copy spec (serving.model.copyFrom) is not on this branch")

from accelstack.engine.capture import capture, config_for_pulumi
from accelstack.engine.export import deployment_v3
from accelstack.engine.policy_runner import Verdict, policy_verdicts
from accelstack.spec.loader import parse_spec
from tests.conformance.test_cross_cloud_copy import PAIRS, copy_capture, copy_config
from tests.stack_edits import MAIN

Doc = dict[str, Any]
COPY = "pulumi-python:dynamic/handoff:ArtifactCopy"
PAR = "oci:ObjectStorage/preauthrequest:Preauthrequest"


@cache
def known(source: str, serving: str) -> tuple[Doc, Any]:
    return deployment_v3(copy_capture(source, serving)), parse_spec(copy_config(source, serving), f"{serving}-serving")


@pytest.mark.parametrize(("source", "serving"), PAIRS)
def test_pair_has_no_verdict_once_known_and_no_mandatory_one_in_preview(source: str, serving: str) -> None:
    doc, spec = known(source, serving)
    assert [v.line() for v in policy_verdicts(doc, spec)] == []
    raw = copy_config(source, serving)
    preview = capture(MAIN, config_for_pulumi(raw), stack=f"{serving}-serving", preview=True)
    assert [v.line() for v in policy_verdicts(deployment_v3(preview), spec) if v.mandatory] == []


def only(doc: Doc, type_token: str) -> Doc:
    [found] = [r for r in doc["deployment"]["resources"] if r["type"] == type_token]
    return found


def put(type_token: str, **values: Any) -> Callable[[Doc], str]:
    def mutate(doc: Doc) -> str:
        entry = only(doc, type_token)
        for block in ("inputs", "outputs"):
            entry.get(block, {}).update(values)
        return str(entry["urn"])

    return mutate


def unlink(type_token: str, key: str) -> Callable[[Doc], str]:
    def mutate(doc: Doc) -> str:
        entry = only(doc, type_token)
        entry["propertyDependencies"].pop(key)
        return str(entry["urn"])

    return mutate


MUTATIONS: dict[str, list[tuple[str, Callable[[Doc], str]]]] = {
    "oci": [
        ("par-writes", put(PAR, accessType="AnyObjectReadWrite")),
        ("par-bucket-wide", put(PAR, objectName="")),
        ("par-a-day", put(PAR, timeExpires="2026-12-06T12:00:00Z")),
        ("par-from-no-clock", unlink(PAR, "timeExpires")),
        ("url-from-no-par", unlink(COPY, "source_url")),
        ("source-another-prefix", put(COPY, source="oci://acme-train-checkpoints@acmetenancy/models/")),
    ],
    "azure": [
        ("sas-url", put(COPY, source_url="https://acmetrainckpts.blob.core.windows.net/checkpoints?sig=x")),
        ("source-another-account", put(COPY, source="https://other.blob.core.windows.net/checkpoints/models/x/")),
    ],
    "any": [
        ("destination-bucket-root", lambda doc: put(COPY, destination=_root(doc))(doc)),
        ("destination-another-cloud", put(COPY, destination_cloud="oci")),
        ("copy-from-no-clock", unlink(COPY, "clock")),
        ("extra-prop", put(COPY, overwrite=True)),
    ],
}


def _root(doc: Doc) -> str:
    destination = str(only(doc, COPY)["inputs"]["destination"])
    scheme, _, rest = destination.partition("://")
    parts = rest.split("/")
    keep = 2 if destination.startswith("https://") else 1  # Azure: the account host and the container
    return f"{scheme}://{'/'.join(parts[:keep])}/"


def caught(verdicts: list[Verdict], urn: str) -> bool:
    return any(v.mandatory and (v.urn == urn or urn.rsplit("::", 1)[-1] in v.message) for v in verdicts)


@pytest.mark.parametrize(("source", "serving"), PAIRS)
def test_every_copy_mutation_is_caught(source: str, serving: str) -> None:
    base, spec = known(source, serving)
    survivors = []
    for name, mutate in MUTATIONS[source] + MUTATIONS["any"]:
        doc = copy.deepcopy(base)
        urn = mutate(doc)
        verdicts = policy_verdicts(doc, spec)
        if not caught(verdicts, urn):
            survivors.append(f"{name}: {[v.line() for v in verdicts]}")
    training = copy.deepcopy(base)
    verdicts = policy_verdicts(training, spec, context={**_context(spec), "workload": "training"})
    if not caught(verdicts, only(training, COPY)["urn"]):
        survivors.append("copy in a training stack")
    assert not survivors, "\n".join(survivors)


def _context(spec: Any) -> dict[str, Any]:
    from accelstack.engine.pack_context import context_from_spec

    return context_from_spec(spec)
