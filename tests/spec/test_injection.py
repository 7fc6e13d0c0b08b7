"""Nothing a user writes reaches a boot script or config unescaped (issue 29, inputs 1).

Every string of each shipped stack's spec, found by walking the validated models (no hand list), takes each payload;
`validate` must refuse it at that key, or the node files `accelstack render` writes must still parse as they did and
hold the payload only as data. Every string field of every spec model, set or not, refuses a line break at its key.
"""

from __future__ import annotations

import copy
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ValidationError

from accelstack.components import cloud_stack
from accelstack.components.base import ServingServiceArgs, TrainingClusterArgs
from accelstack.components.node_syntax import shell_word, unit_environment_line, unit_word
from accelstack.components.slurm import DeployValues, nodes_for, render_all
from accelstack.examples import example_files
from accelstack.spec import models
from accelstack.spec.accounts import ACCOUNT_MODELS
from accelstack.spec.loader import load_stack, parse_spec
from accelstack.spec.models import ServingStack, StackSpec
from accelstack.spec.problems import SpecError

ROOT = Path(__file__).resolve().parents[2]
STACKS = example_files(ROOT / "stacks")
MARK = "injected"  # every payload carries it: where it lands in a node file, it must be data
PAYLOADS = {
    "yaml-key": f"x\nbootcmd: [touch /tmp/{MARK}]",
    "command-substitution": f"x$(touch${{IFS}}/tmp/{MARK})",
    "backticks": f"x`touch /tmp/{MARK}`",
    "semicolon": f"x;touch${{IFS}}/tmp/{MARK}",
    "quotes": f"x'\"{MARK}",
    "line-separator": f"x\u2028bootcmd: [{MARK}]",
    "next-line": f"x\u0085bootcmd: [{MARK}]",
    "nul": f"x\x00{MARK}",
    "carriage-return": f"x\rbootcmd: [{MARK}]",
    "systemd-specifiers": f"x%n$HOME{MARK}",
    "space": f"x {MARK}",
    "very-long": "x" * 5000 + MARK,
}


def strings_of(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """(config path, text) of every string in a validated spec, through its models' fields and lists."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from strings_of(item, f"{path}.{index}")
    elif isinstance(value, BaseModel):
        for name, field in type(value).model_fields.items():
            yield from strings_of(getattr(value, name), f"{path}.{field.alias or name}".lstrip("."))


def _set(raw: dict[str, Any], path: str, value: str) -> dict[str, Any]:
    result = copy.deepcopy(raw)
    keys = path.split(".")
    node: Any = result
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[int(keys[-1]) if isinstance(node, list) else keys[-1]] = value
    return result


def artifacts(spec: StackSpec) -> dict[str, str]:
    """What `accelstack render` writes for the stack (accelstack.commands.render)."""
    if isinstance(spec, ServingStack):
        return dict(cloud_stack(spec).replica_artifacts(ServingServiceArgs.of(spec)))
    args = TrainingClusterArgs.of(spec)
    values = DeployValues(checkpoint_interval_seconds=args.plan.interval_seconds)
    return render_all(args.spec, nodes_for(args.spec), values)


def _shape(document: Any) -> Any:
    """A cloud-config's structure: its keys, list lengths and written paths, not its text."""
    if isinstance(document, dict):
        return {key: _shape(value) for key, value in document.items() if key != "content"} | (
            {"path": document["path"]} if "path" in document else {}
        )
    if isinstance(document, list):
        return [_shape(item) for item in document]
    return type(document).__name__


def _outside_single_quotes(line: str) -> str:
    """The parts of a bash line outside single quotes (a payload there would be read as code)."""
    return re.sub(r"'[^']*'", "''", line)


def _scripts(files: dict[str, str]) -> Iterator[tuple[str, str]]:
    """(name, text) of every shell script: the .sh files and the scripts inside each cloud-config."""
    for name, text in files.items():
        if name.endswith(".sh"):
            yield name, text
        elif name.endswith(".yaml"):
            for entry in (yaml.safe_load(text) or {}).get("write_files", []):
                content = str(entry.get("content", ""))
                if content.startswith("#!/bin/bash"):
                    yield f"{name}:{entry['path']}", content


def assert_payload_is_data(files: dict[str, str], baseline: dict[str, str], payload: str) -> None:
    assert files.keys() == baseline.keys()
    for name, text in files.items():
        if name.endswith(".yaml"):
            assert _shape(yaml.safe_load(text)) == _shape(yaml.safe_load(baseline[name])), name
    for name, script in _scripts(files):
        checked = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True, check=False)
        assert checked.returncode == 0, (name, checked.stderr)
        for line in script.splitlines():
            if MARK in line and any(c in payload for c in "$`;'\" "):
                # Inside a quoted heredoc nothing expands; otherwise the payload must sit in single quotes.
                assert MARK not in _outside_single_quotes(line) or "<<'" in script, (name, line)
    for name, text in files.items():
        for line in text.splitlines():
            if MARK in line and re.match(r"\s*(Exec\w*|Description|Environment|RequiresMountsFor)=", line):
                assert not re.search(r"(?<!%)%(?!%)", line.replace("%%", "")), (name, line)  # specifiers doubled


@pytest.mark.parametrize("stack_file", STACKS, ids=lambda path: path.name.split(".")[1])
def test_every_string_key_refuses_or_quotes_every_payload(stack_file: Path) -> None:
    spec = load_stack(stack_file)
    raw = spec.model_dump(by_alias=True, mode="json")
    raw.pop("stack")
    baseline = artifacts(spec)
    keys = [(path, text) for path, text in strings_of(spec, "") if path not in ("stack", "cloud")]
    assert len(keys) >= 10  # the walk reaches the spec, not an empty model
    for path, text in keys:
        for name, payload in PAYLOADS.items():
            try:
                injected = parse_spec(_set(raw, path, text + payload), spec.stack)
            except SpecError as error:
                assert any(p.path == path or p.path.startswith(path + ".") for p in error.problems), (
                    path,
                    name,
                    [str(p) for p in error.problems],
                )
                continue
            assert_payload_is_data(artifacts(injected), baseline, payload)


def _spec_models() -> list[type[BaseModel]]:
    found = [
        value
        for value in vars(models).values()
        if isinstance(value, type) and issubclass(value, models.Model) and value is not models.Model
    ]
    return found + list(ACCOUNT_MODELS.values())


def _string_fields(model: type[BaseModel]) -> list[str]:
    def holds_text(annotation: Any) -> bool:
        return annotation is str or any(holds_text(arg) for arg in getattr(annotation, "__args__", ()))

    return [field.alias or name for name, field in model.model_fields.items() if holds_text(field.annotation)]


# What a stack's cloud would fill in (accelstack.spec.cloud_defaults), for a block validated on its own.
OUTSIDE_A_STACK = {
    "TrainingSpec": {"scheduler": {"headNode": {"instanceType": "m7i.2xlarge"}}},
    "ServingSpec": {"admission": {"maxReceiveCount": 3}},  # a stack's cloud fills it (accelstack.spec.cloud_defaults)
}


@pytest.mark.parametrize("model", _spec_models(), ids=lambda model: model.__name__)
def test_every_string_field_of_every_model_refuses_a_line_break(model: type[BaseModel]) -> None:
    """Set or not in a shipped stack, each string key (and each item of a list of strings) refuses a line break,
    at its own key: a key added later is guarded by the base model, unasked."""
    fields = {field.alias or name: field for name, field in model.model_fields.items()}
    for key in _string_fields(model):
        value: Any = ["ok", "a\nbootcmd: [x]"] if "list" in str(fields[key].annotation) else "a\nbootcmd: [x]"
        with pytest.raises(ValidationError) as caught:
            model.model_validate({**OUTSIDE_A_STACK.get(model.__name__, {}), key: value})
        locs = [error["loc"][:1] for error in caught.value.errors() if error["type"] != "missing"]
        assert (key,) in locs, (model.__name__, key, caught.value.errors())


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_node_quoting_keeps_a_value_data(payload: str) -> None:
    """bash itself reads shell_word's output back as the same one word; a control character is refused."""
    if re.search("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]", payload):
        with pytest.raises(ValueError):
            shell_word(payload)
        with pytest.raises(ValueError):
            unit_word(payload)
        with pytest.raises(ValueError):
            unit_environment_line("K", payload)
        return
    echoed = subprocess.run(
        ["bash", "-c", f"printf '%s' {shell_word(payload)}"], capture_output=True, text=True, check=True
    )
    assert echoed.stdout == payload
    word = unit_word(payload)
    assert "%" not in word.replace("%%", "") and "$" not in word.replace("$$", "")
    assert " " not in word or (word.startswith("'") and word.endswith("'"))
    # An EnvironmentFile= line: systemd's double quotes escape what bash's do (" \\ ` $), so bash reads it back.
    sourced = subprocess.run(
        ["bash", "-c", 'set -a; . /dev/stdin; printf %s "$K"'],
        input=unit_environment_line("K", payload),
        capture_output=True,
        text=True,
        check=True,
    )
    assert sourced.stdout == payload
