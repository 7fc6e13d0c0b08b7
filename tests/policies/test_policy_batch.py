"""The packs judge AWS Batch's job templates (the managed scheduler's variant of aws-training): a job definition
carries its containers' command and environment in clear (batch:DescribeJobDefinitions), and a privileged
container gets the whole host. Each risk is written the ways a job definition can hold it."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from accelstack.engine.policy_runner import policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack

REPO = Path(__file__).resolve().parents[2]
JOB_DEFINITION = "aws:batch/jobDefinition:JobDefinition"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@cache
def batch() -> PreviewResult:
    return preview_stack(REPO / "stacks" / "Pulumi.aws-training.yaml", ["training.scheduler.kind=managed"], REPO)


def _edited(edit: Any) -> tuple[dict[str, Any], str]:
    doc = copy.deepcopy(batch().export)
    (entry,) = [r for r in doc["deployment"]["resources"] if r["type"] == JOB_DEFINITION]
    for side in (entry[k] for k in ("inputs", "outputs") if k in entry):
        edit(side)
    return doc, entry["urn"]


def _node_container(side: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    nodes = json.loads(side["nodeProperties"])
    return nodes, nodes["nodeRangeProperties"][0]["container"]


def _with_env(side: dict[str, Any]) -> None:
    nodes, container = _node_container(side)
    container["environment"] = [{"name": "AWS_SECRET_ACCESS_KEY", "value": SECRET}]
    side["nodeProperties"] = json.dumps(nodes)


def _in_command(side: dict[str, Any]) -> None:
    nodes, container = _node_container(side)
    container["command"] = ["bash", "-c", f"export AWS_SECRET_ACCESS_KEY={SECRET}; train"]
    side["nodeProperties"] = json.dumps(nodes)


def _privileged(side: dict[str, Any]) -> None:
    nodes, container = _node_container(side)
    container["privileged"] = True
    side["nodeProperties"] = json.dumps(nodes)


def _privileged_single_container(side: dict[str, Any]) -> None:
    # A single-node job definition keeps its container in containerProperties, as an object this time.
    side["containerProperties"] = {"image": "ubuntu:24.04", "privileged": "true"}


@pytest.mark.parametrize(
    ("edit", "policy"),
    [
        (_with_env, "no-secrets-in-user-data"),
        (_in_command, "no-secrets-in-user-data"),
        (_privileged, "batch-not-privileged"),
        (_privileged_single_container, "batch-not-privileged"),
    ],
)
def test_a_careless_job_definition_is_caught(edit, policy):
    doc, urn = _edited(edit)
    verdicts = policy_verdicts(doc, batch().spec)
    assert any(v.mandatory and v.urn == urn and v.policy == policy for v in verdicts), [v.line() for v in verdicts]


def test_the_shipped_job_definition_passes_and_its_queue_and_template_are_known_kinds():
    assert [v.line() for v in policy_verdicts(batch().export, batch().spec)] == []
