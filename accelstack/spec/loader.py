"""Config -> StackSpec: from a stack file, Pulumi config values, and `--set` overrides.

Every failure becomes a `SpecError` listing `Problem`s with config paths; nothing here raises
anything else for bad input, so callers never show a traceback for a user's mistake.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from accelstack.spec.models import StackSpec
from accelstack.spec.problems import Level, Problem, SpecError

NAMESPACE = "accelstack"
TOP_KEYS = ("cloud", "workload", "account", "separation", "training", "serving")


def stack_name_of(path: Path) -> str:
    """`stacks/Pulumi.aws-training.yaml` -> `aws-training`."""
    name = path.name
    if name.startswith("Pulumi.") and name.endswith((".yaml", ".yml")):
        return name[len("Pulumi.") :].rsplit(".", 1)[0]
    return path.stem


def read_stack_file(path: Path) -> dict[str, Any]:
    """The `accelstack:*` keys of a Pulumi stack file, namespace stripped."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SpecError([Problem(str(path), f"cannot read stack file: {exc.strerror}")]) from None
    except UnicodeDecodeError as exc:
        raise SpecError([Problem(str(path), f"not UTF-8 text (byte {exc.start})")]) from None
    except RecursionError:
        raise SpecError([Problem(str(path), "not valid YAML: nested too deeply")]) from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        raise SpecError([Problem(str(path), f"not valid YAML{line}: {getattr(exc, 'problem', exc)}")]) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("config", {}), dict):
        raise SpecError([Problem(str(path), "a stack file is a mapping with a `config:` mapping")])
    raw: dict[str, Any] = {}
    problems = []
    for key, value in (doc.get("config") or {}).items():
        namespace, _, name = str(key).partition(":")
        if namespace != NAMESPACE:
            continue  # provider and pulumi keys belong to Pulumi
        if name not in TOP_KEYS:
            problems.append(Problem(f"{NAMESPACE}:{name}", f"unknown key; allowed: {', '.join(TOP_KEYS)}"))
            continue
        raw[name] = value
    if problems:
        raise SpecError(problems)
    return raw


def parse_override(text: str) -> tuple[str, Any]:
    """`training.nodes.count=64` -> ("training.nodes.count", 64); the value is read as YAML."""
    path, sep, value = text.partition("=")
    if not sep or not path.strip():
        raise SpecError([Problem("--set", f"expected path=value, got {text!r}")])
    try:
        parsed = yaml.safe_load(value) if value.strip() else ""
    except yaml.YAMLError:
        parsed = value
    return path.strip(), parsed


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `--set` overrides; a numeric key indexes a list (`training.scheduler.partitions.0.maxTime`)."""
    result = copy.deepcopy(raw)
    for text in overrides:
        path, value = parse_override(text)
        keys = path.split(".")
        node: Any = result
        for depth, key in enumerate(keys):
            where = ".".join(keys[: depth + 1])
            last = depth == len(keys) - 1
            if isinstance(node, list):
                if not key.isdigit() or int(key) >= len(node):
                    raise SpecError([Problem(where, f"is not an index of this list; allowed: 0 to {len(node) - 1}")])
                index: Any = int(key)
            elif isinstance(node, dict):
                index = key
                if not last and node.get(key) is None:
                    node[key] = {}
            else:
                parent = ".".join(keys[:depth])
                raise SpecError([Problem(parent, "is not a mapping or list; cannot --set below it")])
            if last:
                node[index] = value
            else:
                node = node[index]
    return result


def _path(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "accelstack"


def problems_from_validation(exc: ValidationError) -> list[Problem]:
    problems = []
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown key"
        elif error["type"] == "missing":
            message = "required"
        expected = (error.get("ctx") or {}).get("expected")
        if expected and str(expected) not in message:
            message += f"; allowed: {expected}"
        problems.append(Problem(_path(loc), message))
    return problems


def parse_spec(raw: dict[str, Any], stack: str = "dev", *, strict_warnings: bool = False) -> StackSpec:
    """Validate raw config (namespace stripped) into a StackSpec, then run the rule validators.

    Raises SpecError with every ERROR-level problem (and WARNINGs too with `strict_warnings`);
    `spec_warnings(spec)` lists the WARNINGs, which are not raised.
    """
    from accelstack.spec.validators import run_validators  # tables import models; avoid a cycle

    data = {key: _decode(value) for key, value in raw.items()}
    data.setdefault("stack", stack)
    try:
        spec = StackSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(problems_from_validation(exc)) from None
    problems = run_validators(spec)
    errors = [p for p in problems if p.level is Level.ERROR or strict_warnings]
    if errors:
        raise SpecError(errors)
    return spec


def spec_warnings(spec: StackSpec) -> list[Problem]:
    from accelstack.spec.validators import run_validators

    return [p for p in run_validators(spec) if p.level is Level.WARNING]


def _decode(value: Any) -> Any:
    """Pulumi hands structured config to programs as JSON strings."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def load_stack(path: Path, overrides: list[str] | None = None) -> StackSpec:
    raw = apply_overrides(read_stack_file(path), overrides or [])
    return parse_spec(raw, stack_name_of(path))
