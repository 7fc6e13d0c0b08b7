"""Helpers for spec tests: the shipped training stack as raw config, and dotted-path edits of it."""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any

from accelstack.spec import parse_spec, spec_warnings
from accelstack.spec.loader import read_stack_file
from accelstack.spec.problems import Problem, SpecError

ROOT = Path(__file__).resolve().parents[2]
TRAINING_STACK = ROOT / "stacks" / "Pulumi.aws-training.yaml"
DELETE = object()  # edit value meaning "remove this key"


def training_raw() -> dict[str, Any]:
    return read_stack_file(TRAINING_STACK)


def edited(raw: dict[str, Any], edits: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of `raw` with each dotted path (list items by index) set, or removed for DELETE."""
    result = copy.deepcopy(raw)
    for path, value in edits.items():
        keys = path.split(".")
        node: Any = result
        for key, below in itertools.pairwise(keys):
            child: Any = [] if below.isdigit() else {}  # a missing block: a list where the next key is an index
            if isinstance(node, list):
                while len(node) <= int(key):
                    node.append(child)
                node = node[int(key)]
            else:
                node = node.setdefault(key, child)
        last: Any = int(keys[-1]) if isinstance(node, list) else keys[-1]
        if isinstance(node, list) and value is not DELETE:
            node.extend([None] * (last + 1 - len(node)))
        if value is DELETE:
            del node[last]
        else:
            node[last] = copy.deepcopy(value)
    return result


def all_problems(raw: dict[str, Any]) -> list[Problem]:
    """Errors if the config is rejected, else its warnings."""
    try:
        spec = parse_spec(raw, "test")
    except SpecError as exc:
        return exc.problems
    return spec_warnings(spec)
