"""The replace-forcing table covers every resource type the shipped stacks register: a component that
starts registering a new type must say which of its inputs replace it, or `accelstack diff` would call
every change to it an update."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelstack.clouds import registry
from accelstack.engine.capture import capture, config_for_pulumi
from accelstack.engine.replacement import known_type
from accelstack.examples import example_files
from accelstack.spec.loader import read_stack_file

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("stack_file", example_files(REPO / "stacks"), ids=lambda p: p.stem)
def test_every_registered_custom_type_is_tabled(stack_file: Path) -> None:
    stack = stack_file.name[len("Pulumi.") : -len(".yaml")]
    captured = capture(REPO / "__main__.py", config_for_pulumi(read_stack_file(stack_file)), stack=stack)
    types = {r.type for r in captured.resources if r.custom}
    assert types, "nothing registered"
    assert sorted(t for t in types if not known_type(t)) == []


def test_every_aws_type_replaces_on_a_region_change() -> None:
    """Provider 6 / pulumi-aws 7 added a per-resource `region` argument; changing it recreates the resource."""
    rows = registry.get("aws").replace_rules.forcing
    missing = [t for t in rows if t.startswith("aws:") and "region" not in rows[t]]
    missing = [t for t in missing if not t.startswith("aws:iam/")]  # IAM is global: no region argument
    assert missing == []
