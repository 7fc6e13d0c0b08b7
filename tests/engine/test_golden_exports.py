"""The shipped stacks' exports are pinned: a refactoring that moves, renames or re-parents a resource
(a new URN: Pulumi would delete and recreate it) or changes an input shows up here as a diff.

A change that is meant to alter what is deployed regenerates them with `make golden` and the commit
explains the diff; resources that move under a new parent keep their URNs through `aliases`."""

from __future__ import annotations

import difflib
import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from accelstack.engine.capture import capture, config_for_pulumi
from accelstack.engine.export import deployment_v3
from accelstack.examples import example_files
from accelstack.spec.loader import read_stack_file

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
FIXED_TIME = datetime(2026, 1, 1, tzinfo=UTC)
STACK_FILES = example_files(REPO / "stacks", landing=True)


def stack_name(stack_file: Path) -> str:
    return stack_file.name[len("Pulumi.") : -len(".yaml")]


def export_text(stack_file: Path) -> str:
    stack = stack_name(stack_file)
    captured = capture(REPO / "__main__.py", config_for_pulumi(read_stack_file(stack_file)), stack=stack)
    document = deployment_v3(captured, time=FIXED_TIME)
    # Plugin versions are the installed SDKs'; pinned in pyproject, and not what a refactoring changes.
    document["deployment"]["manifest"].pop("plugins", None)
    return json.dumps(document, indent=1, sort_keys=True) + "\n"


@pytest.mark.parametrize("stack_file", STACK_FILES, ids=stack_name)
def test_export_matches_the_golden_file(stack_file: Path) -> None:
    golden = GOLDEN / f"{stack_name(stack_file)}.json"
    actual = export_text(stack_file)
    if os.environ.get("ACCELSTACK_UPDATE_GOLDEN") == "1":
        golden.write_text(actual)
    assert golden.exists(), f"no golden export for {stack_name(stack_file)}: run `make golden`"
    expected = golden.read_text()
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), str(golden), "now", n=2)
        )
        pytest.fail(f"the export of {stack_name(stack_file)} changed (review, then `make golden`):\n{diff[:6000]}")


def test_every_golden_file_belongs_to_a_shipped_stack() -> None:
    shipped = {stack_name(f) for f in STACK_FILES}
    assert {p.stem for p in GOLDEN.glob("*.json")} <= shipped
