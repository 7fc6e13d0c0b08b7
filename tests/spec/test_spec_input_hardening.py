"""Inputs that pass a lenient parser and break later: YAML that means something else than it says,
numbers no resource can hold, strings of megabytes. Each is refused at the config path, before
anything is planned or created."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, get_args

import pytest
import yaml

from accelstack.spec import models
from accelstack.spec.loader import (
    apply_overrides,
    load_stack,
    parse_override,
    read_stack_file,
)
from accelstack.spec.problems import SpecError
from accelstack.spec.yaml_input import MAX_EXPANDED_NODES, load_yaml
from tests.spec.spec_helpers import TRAINING_STACK, all_problems, edited, training_raw

SERVING_STACK = TRAINING_STACK.parent / "Pulumi.aws-serving.yaml"


def problems_of(text: str, tmp_path: Path) -> list[str]:
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(text)
    with pytest.raises(SpecError) as raised:
        read_stack_file(path)
    return [str(p) for p in raised.value.problems]


STACK_HEAD = TRAINING_STACK.read_text()


# --- duplicate keys ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("config:\n  accelstack:cloud: aws\n  accelstack:cloud: gcp\n", "cloud"),
        (
            "config:\n  accelstack:training:\n    nodes: {instanceType: p5.48xlarge, count: 4, count: 64}\n",
            "training.nodes.count",
        ),
        (
            "config:\n  accelstack:training:\n    scheduler:\n      partitions:\n"
            "        - {name: gpu, default: true}\n        - name: debug\n          maxTime: '60'\n          maxTime: '90'\n",
            "training.scheduler.partitions.1.maxTime",
        ),
        ("config:\n  aws:region: us-east-1\n  aws:region: us-west-2\n", "aws:region"),
        ("config: {}\nconfig: {accelstack:cloud: aws}\n", "config"),
    ],
    ids=["top-level", "flow-mapping", "list-item", "provider-key", "document"],
)
def test_duplicate_keys_at_any_depth_are_refused_with_path_and_lines(text, path, tmp_path):
    [problem] = problems_of(text, tmp_path)
    assert problem.startswith(f"{path}: line ") and "duplicate key (first on line" in problem


def test_merge_keys_may_override_what_they_merge(tmp_path):
    path = tmp_path / "Pulumi.t.yaml"
    text = STACK_HEAD.replace(
        '        - {name: debug, maxTime: "01:00:00"}',
        '        - &p {name: debug, maxTime: "01:00:00"}\n        - {<<: *p, name: debug2}',
    )
    assert "debug2" in text
    path.write_text(text)
    partitions = read_stack_file(path)["training"]["scheduler"]["partitions"]
    assert partitions[2] == {"name": "debug2", "maxTime": "01:00:00"}


# --- aliases, size, depth, keys ------------------------------------------------------------------


def billion_laughs(levels: int) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, levels):
        refs = ", ".join([f"*a{level - 1}"] * 10)
        lines.append(f"a{level}: &a{level} [{refs}]")
    return "\n".join(lines) + f"\nconfig:\n  accelstack:cloud: *a{levels - 1}\n"


def test_alias_amplification_is_refused_before_it_is_expanded(tmp_path):
    started = time.perf_counter()
    problems = problems_of(billion_laughs(9), tmp_path)  # 10^9 values from 600 bytes
    assert time.perf_counter() - started < 30  # expanding it would take hours; this is a hang guard only
    assert len(problems) == 1 and "aliases expand to more than" in problems[0]


def test_aliases_below_the_limit_are_fine(tmp_path):
    # 10^4 values: a legitimate use of anchors would be far smaller still.
    assert MAX_EXPANDED_NODES > 10**4
    assert load_yaml(billion_laughs(4), "t")["a3"][0][0][0] == ["x"] * 10


def test_alias_cycles_are_refused(tmp_path):
    [problem] = problems_of("config: &c\n  accelstack:training: *c\n", tmp_path)
    assert "cycle" in problem


@pytest.mark.parametrize(
    ("key", "reads_as"), [("on", "a boolean"), ("yes", "a boolean"), ("1", "a number"), ("null", "null"), ("~", "null")]
)
def test_keys_yaml_reads_as_non_strings_are_refused(key, reads_as, tmp_path):
    [problem] = problems_of(f"config:\n  accelstack:training:\n    nodes:\n      {key}: 4\n", tmp_path)
    assert problem.startswith("training.nodes: line 4: ") and f"key {key!r} is not a string" in problem
    assert reads_as in problem


def test_a_megabyte_file_is_refused_before_parsing(tmp_path):
    text = STACK_HEAD + "# " + "x" * (1024 * 1024) + "\n"
    [problem] = problems_of(text, tmp_path)
    assert "larger than 1024 KiB" in problem


def test_a_long_scalar_names_its_path(tmp_path):
    text = STACK_HEAD.replace("uri: s3://acme-train-datasets", "uri: s3://acme-train-datasets/" + "k" * 20_000)
    [problem] = problems_of(text, tmp_path)
    assert problem.startswith("training.storage.datasets.uri: line ") and "20,025 characters" in problem


def test_a_long_string_below_the_yaml_limit_is_refused_by_the_schema():
    problems = all_problems(edited(training_raw(), {"training.nodes.instanceType": "p" * 5000}))
    assert [str(p) for p in problems if p.path == "training.nodes.instanceType"] == [
        "training.nodes.instanceType: 'pppppppppppppppppppppppppppppppppppppppppppppppppppppppp...: "
        "string should have at most 2048 characters"
    ]


def test_deep_nesting_is_refused(tmp_path):
    text = "config:\n  accelstack:training: " + "[" * 200 + "]" * 200 + "\n"
    [problem] = problems_of(text, tmp_path)
    assert "nested deeper than 64 levels" in problem or "nested too deeply" in problem


# --- --set values get the same treatment --------------------------------------------------------


def test_set_values_are_read_with_the_same_limits():
    with pytest.raises(SpecError) as raised:
        parse_override("training.nodes={count: 4, count: 64}")
    [problem] = raised.value.problems
    assert problem.path == "training.nodes.count" and "duplicate key" in str(problem)
    with pytest.raises(SpecError) as raised:
        load_stack(TRAINING_STACK, ["training.nodes={instanceType: p5.48xlarge, count: 4, count: 64}"])
    [line] = [str(p) for p in raised.value.problems]
    assert line.endswith("(from --set training.nodes={instanceType: p5.48xlarge, count: 4, count: 64})")
    bomb = "[" + ", ".join(["&a [x, x, x, x, x, x, x, x, x, x]"] + ["*a"] * 20) + "]"
    assert parse_override(f"x={bomb}")[1][1] == ["x"] * 10  # small alias use is fine
    with pytest.raises(SpecError):
        parse_override("x=" + billion_laughs(8).replace("\n", ", ").replace("a0:", "{a0:") + "}")


def test_set_text_that_is_not_yaml_stays_a_string():
    assert parse_override("training.scheduler.partitions.0.maxTime=[1, 2")[1] == "[1, 2"


def test_problems_a_set_caused_name_it(tmp_path):
    with pytest.raises(SpecError) as raised:
        load_stack(TRAINING_STACK, ["training.nodes.count=sixteen", "serving.x=1", "training.nodes.count=0"])
    lines = [str(p) for p in raised.value.problems]
    assert (
        "training.nodes.count: 0: input should be greater than or equal to 1 (from --set training.nodes.count=0)"
        in lines
    )
    # Problems from the file itself are not blamed on a --set.
    assert all("(from --set" in line for line in lines if line.startswith("training.nodes"))


# --- numbers -------------------------------------------------------------------------------------


def numeric_fields(model: type[models.Model], prefix: str) -> list[tuple[str, Any]]:
    """(config path, FieldInfo) of every int/float field reachable from `model` (lists: item 0)."""
    found = []
    for name, field in model.model_fields.items():
        path = f"{prefix}.{field.alias or name}"
        annotation = field.annotation
        args = set(get_args(annotation)) | {annotation}
        if args & {int, float}:
            found.append((path, field))
        in_list = list in {getattr(a, "__origin__", None) for a in args}  # list[X] or list[X] | None
        for arg in args | {a for x in args for a in get_args(x)}:
            if isinstance(arg, type) and issubclass(arg, models.Model):
                found += numeric_fields(arg, f"{path}.0" if in_list else path)
    return found


TRAINING_NUMBERS = numeric_fields(models.TrainingSpec, "training")
SERVING_NUMBERS = numeric_fields(models.ServingSpec, "serving")
# Bounded by a rule against the cloud's table instead of the schema (tiers and capacity steps).
BOUNDED_BY_RULES = {"training.storage.lustre.capacityGiB", "training.storage.lustre.throughputPerTiB"}


def base_for(path: str) -> dict[str, Any]:
    return training_raw() if path.startswith("training.") else read_stack_file(SERVING_STACK)


def test_every_numeric_field_is_found():
    paths = {path for path, _ in TRAINING_NUMBERS + SERVING_NUMBERS}
    assert {"training.nodes.count", "serving.admission.maxDepth", "serving.slo.targetSeconds"} <= paths
    assert len(paths) >= 20


@pytest.mark.parametrize("path", [p for p, _ in TRAINING_NUMBERS + SERVING_NUMBERS])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, True, "1e400", 10**400, -(10**400), -1], ids=str)
def test_every_numeric_field_refuses_non_numbers_and_absurd_values(path, value):
    if path in BOUNDED_BY_RULES and isinstance(value, int) and not isinstance(value, bool) and value > 0:
        pytest.skip("a cloud-table rule bounds it")
    problems = all_problems(edited(base_for(path), {path: value}))
    mine = [p for p in problems if p.path == path]
    assert mine, f"{path}={value!r} was not refused at its path: {[str(p) for p in problems]}"
    assert all("Traceback" not in p.message for p in mine)


@pytest.mark.parametrize("path", [p for p, f in TRAINING_NUMBERS + SERVING_NUMBERS if p not in BOUNDED_BY_RULES])
def test_every_numeric_field_has_both_bounds(path):
    field = dict(TRAINING_NUMBERS + SERVING_NUMBERS)[path]
    upper = [m for m in field.metadata if hasattr(m, "le") or hasattr(m, "lt")]
    lower = [m for m in field.metadata if hasattr(m, "ge") or hasattr(m, "gt")]
    assert upper, f"{path} has no upper bound: a typo like 1e9 passes validation"
    assert lower, f"{path} has no lower bound: a negative value passes validation"


def test_yaml_booleans_are_not_numbers():
    problems = all_problems(edited(training_raw(), {"training.nodes.count": True}))
    assert [str(p) for p in problems] == ["training.nodes.count: true is true/false, not a number"]


def test_problems_from_validation_echoes_what_was_written():
    raw = edited(training_raw(), {"training.nodes.count": "sixteen"})
    assert [str(p) for p in all_problems(raw)] == ["training.nodes.count: 'sixteen' is not a whole number"]


def test_unquoted_account_id_message_names_what_was_written(tmp_path):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(STACK_HEAD.replace('id: "111111111111"', "id: 011111111111"))
    with pytest.raises(SpecError) as raised:
        load_stack(path)
    [problem] = [str(p) for p in raised.value.problems if p.path == "account.id"]
    assert (
        problem
        == 'account.id: write 011111111111 quoted ("011111111111"): unquoted, YAML reads it as the number 1227133513'
    )


def test_written_ints_survive_overrides_and_copies():
    raw = apply_overrides({"training": {"a": load_yaml("[0x1F, 1_000]", "t")}}, ["training.b=0o17"])
    assert raw["training"]["a"] == [31, 1000] and raw["training"]["a"][0].written == "0x1F"
    assert yaml.safe_dump(int(raw["training"]["a"][1])) == "1000\n...\n"


def test_a_megabyte_set_value_is_one_short_line():
    with pytest.raises(SpecError) as raised:
        load_stack(TRAINING_STACK, ["training.nodes.instanceType=" + "p" * 1024 * 1024])
    [line] = [str(p) for p in raised.value.problems]
    assert line.startswith("training.nodes.instanceType: line 1: value is 1,048,576 characters")
    assert len(line) < 300
