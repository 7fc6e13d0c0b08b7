"""`accelstack policy --file EXPORT --stack-file LANDING` (issue 29): a CI job judges an export of its landing stack
with the stack file (and the workload stack files it lists) checked out beside it, anywhere, or with no
--stack-file when the project's stacks/ has it. The packs get the context `policy STACK` gives them (the landing
plan's quota needs and guardrails), so the verdicts are the same, and a violation planted in the export is caught."""

from __future__ import annotations

import copy
import json
import re
import shutil
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.engine.pack_context import landing_context
from accelstack.engine.policy_runner import policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack
from accelstack.examples import LANDING_EXAMPLES, example_file, example_files
from accelstack.policies import concepts
from tests.landing.export_lookup import resources

REPO = Path(__file__).resolve().parents[2]
STACKS = REPO / "stacks"
Doc = dict[str, Any]


@cache
def previewed(name: str) -> PreviewResult:
    return preview_stack(example_file(name, STACKS), [], REPO)


def run(*args: str) -> tuple[int, Any, str]:
    result = CliRunner().invoke(app, ["policy", *args, "--json", "--project-dir", str(REPO)])
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else None, result.stderr


def checkout(tmp_path: Path, name: str) -> Path:
    """The landing stack file and the workload stack files it may list, copied outside the project (a CI job's
    checkout): --stack-file reads the workload stacks beside the landing stack's file."""
    ci = tmp_path / "ci"
    ci.mkdir()
    for path in [*example_files(STACKS), example_file(name, STACKS)]:
        shutil.copy(path, ci / path.name)
    return ci / example_file(name, STACKS).name


def lines(document: Any) -> list[tuple[str, str, str, str]]:
    return sorted(
        (stack["stack"], v["policy"], v["urn"], v["message"]) for stack in document["stacks"] for v in stack["verdicts"]
    )


def quota_requests(doc: Doc) -> list[dict[str, Any]]:
    return [r for r in resources(doc) if concepts.concept_of(r["type"]) == "quota-request"]


def quadrupled(props: dict[str, Any]) -> None:
    """Every GPU count a quota request asks for, times four (AWS value, GCP preferredValue, OCI `set ... to N`)."""
    if isinstance(props.get("value"), int | float):
        props["value"] = props["value"] * 4
    config = props.get("quotaConfig")
    if isinstance(config, dict) and str(config.get("preferredValue", "")).isdigit():
        config["preferredValue"] = str(int(config["preferredValue"]) * 4)
    if isinstance(props.get("statements"), list):
        props["statements"] = [
            re.sub(r" to (\d+) ", lambda m: f" to {int(m[1]) * 4} ", t) if t.startswith("set ") else t
            for t in props["statements"]
        ]


def quota_raised(doc: Doc) -> tuple[str, set[str]]:
    """Every quota request's GPU count times four; the URNs of those that asked for any (OCI's serving quota policy
    only zeroes)."""
    raised = set()
    for request in quota_requests(doc):
        before = json.dumps(request, sort_keys=True)
        for side in ("inputs", "outputs"):
            if isinstance(request.get(side), dict):
                quadrupled(request[side])
        if json.dumps(request, sort_keys=True) != before:
            raised.add(request["urn"])
    return "landing-quota-caps", raised


def serving_sizes_unguarded(doc: Doc) -> tuple[str, set[str]]:
    """Azure's landing stack requests no quota: its serving group's VM size assignment removed instead."""
    assignment = next(r for r in resources(doc) if r["urn"].endswith("::azure-landing-serving-vm-skus"))
    resources(doc).remove(assignment)
    group = next(r for r in resources(doc) if r["urn"].endswith("::azure-landing-serving"))
    return "landing-guardrails", {group["urn"]}


# A violation to plant in each cloud's landing export: (the rule that must catch it, the URNs it must name). A new
# landing cloud fails test_a_planted_violation_is_caught until it names one here.
PLANTED: dict[str, Callable[[Doc], tuple[str, set[str]]]] = {
    "aws": quota_raised,
    "gcp": quota_raised,
    "oci": quota_raised,
    "azure": serving_sizes_unguarded,
}


@pytest.mark.parametrize("name", LANDING_EXAMPLES)
def test_file_and_stack_file_judge_a_landing_export_as_policy_stack_does(tmp_path: Path, name: str) -> None:
    export = tmp_path / "export.json"
    export.write_text(json.dumps(previewed(name).export))
    code, by_file, err = run("--file", str(export), "--stack-file", str(checkout(tmp_path, name)))
    stack_code, by_stack, _ = run(name)
    assert (code, by_file is not None) == (stack_code, True), err
    assert by_file["ok"] == by_stack["ok"] and lines(by_file) == lines(by_stack)
    # Without the landing plan the quota and guardrail rules would have nothing to hold the stack to.
    assert not [line for line in lines(by_file) if "accelstack preview fills it" in line[3]]
    # An export named for a landing stack of the project finds its stack file (and plan) in stacks/ likewise.
    code, by_name, err = run("--file", str(export))
    assert code == stack_code and lines(by_name) == lines(by_stack), err


@pytest.mark.parametrize("name", LANDING_EXAMPLES)
def test_a_planted_violation_is_caught(tmp_path: Path, name: str) -> None:
    result = previewed(name)
    doc = copy.deepcopy(result.export)
    rule, urns = PLANTED[result.spec.cloud](doc)
    assert urns, f"{name}: nothing to plant the violation in"
    export = tmp_path / "export.json"
    export.write_text(json.dumps(doc))
    code, by_file, err = run("--file", str(export), "--stack-file", str(checkout(tmp_path, name)))
    assert code == 1, err
    caught = {
        v["urn"] for s in by_file["stacks"] for v in s["verdicts"] if v["policy"] == rule and v["level"] == "mandatory"
    }
    assert urns <= caught, lines(by_file)
    # The same verdicts `policy STACK` would give the same export (its context is the preview's plan's).
    expected = policy_verdicts(doc, result.spec, context=landing_context(result.spec, result.landing_plan))
    assert lines(by_file) == sorted((name, v.policy, v.urn, v.message) for v in expected)


def test_a_landing_stack_file_without_its_workload_stacks_beside_it_is_exit_2(tmp_path: Path) -> None:
    name = next(n for n in LANDING_EXAMPLES if previewed(n).landing_plan.needs)
    export = tmp_path / "export.json"
    export.write_text(json.dumps(previewed(name).export))
    alone = tmp_path / "alone" / example_file(name, STACKS).name
    alone.parent.mkdir()
    shutil.copy(example_file(name, STACKS), alone)
    code, _, err = run("--file", str(export), "--stack-file", str(alone))
    assert code == 2 and f"--stack-file {alone}: organization." in err and ".stacks.0" in err, err
