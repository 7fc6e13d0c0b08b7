"""Numbers and switches as written (issue 29, hostile-input round): an integer field refuses "120" (quoted text)
and 120.0 / 1e2, a number field refuses quoted text but takes 120, a switch takes only true or false, on every
stack type (training, serving, landing), from a stack file and from `--set`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest

from accelstack.examples import example_file
from accelstack.spec import models
from accelstack.spec.landing import LandingStack, parse_landing
from accelstack.spec.loader import load_stack, read_stack_file
from accelstack.spec.problems import SpecError
from accelstack.spec.yaml_input import load_yaml
from tests.spec.spec_helpers import all_problems, edited

KINDS = (bool, int, float)


def scalar_fields(model: type[models.Model], prefix: str) -> list[tuple[str, type, Any]]:
    """(config path, kind, default) of every bool/int/float field reachable from `model` (lists: item 0)."""
    found = []
    for name, field in model.model_fields.items():
        path = f"{prefix}.{field.alias or name}"
        args = set(get_args(field.annotation)) | {field.annotation}
        kinds = [kind for kind in KINDS if kind in args]
        if kinds:
            found.append((path, kinds[0], field.default))
        in_list = list in {getattr(a, "__origin__", None) for a in args}
        for arg in args | {a for x in args for a in get_args(x)}:
            if isinstance(arg, type) and issubclass(arg, models.Model) and arg is not model:
                found += scalar_fields(arg, f"{path}.0" if in_list else path)
    return found


def raw_of(name: str) -> dict[str, Any]:
    return read_stack_file(example_file(name))


def landing_problems(raw: dict[str, Any]) -> list[str]:
    try:
        parse_landing(raw, "test")
    except SpecError as error:
        return [str(problem) for problem in error.problems]
    return []


WORKLOAD_FIELDS = [("aws-training", *f) for f in scalar_fields(models.TrainingSpec, "training")] + [
    ("aws-serving", *f) for f in scalar_fields(models.ServingSpec, "serving")
]
LANDING_FIELDS = [("aws-landing", *f) for f in scalar_fields(LandingStack, "accelstack")]


def test_the_walk_finds_every_kind():
    paths = {(path, kind) for _, path, kind, _ in WORKLOAD_FIELDS}
    assert ("training.nodes.count", int) in paths
    assert ("serving.load.requestsPerSecond", float) in paths
    assert ("training.storage.checkpoints.create", bool) in paths
    assert any(path.endswith("monthlyBudgetUsd") for _, path, _, _ in LANDING_FIELDS)


def refused_at(raw: dict[str, Any], path: str, value: Any, *needles: str) -> None:
    problems = [str(p) for p in all_problems(edited(raw, {path: value})) if p.path == path]
    assert problems, f"{path}={value!r} passed"
    for needle in needles:
        assert any(needle in problem for problem in problems), problems


INT_FIELDS = [(name, path) for name, path, kind, _ in WORKLOAD_FIELDS if kind is int]
FLOAT_FIELDS = [(name, path, default) for name, path, kind, default in WORKLOAD_FIELDS if kind is float]
BOOL_FIELDS = [(name, path) for name, path, kind, _ in WORKLOAD_FIELDS if kind is bool]


@pytest.mark.parametrize(("name", "path"), INT_FIELDS)
def test_an_integer_field_refuses_quoted_digits_and_fractions(name: str, path: str) -> None:
    raw = raw_of(name)
    refused_at(raw, path, "120", "'120' is text (quoted)", "a whole number without quotes, e.g. 120")
    refused_at(raw, path, 120.0, "120.0 is a decimal number", "e.g. 120")
    refused_at(raw, path, True, "true is true/false")


@pytest.mark.parametrize(("name", "path", "default"), FLOAT_FIELDS)
def test_a_number_field_refuses_quoted_text_and_takes_a_whole_number(name: str, path: str, default: Any) -> None:
    raw = raw_of(name)
    refused_at(raw, path, "2.5", "'2.5' is text (quoted)", "a number without quotes, e.g. 2.5")
    refused_at(raw, path, True, "true is true/false")
    if isinstance(default, float) and default.is_integer():
        assert not [p for p in all_problems(edited(raw, {path: int(default)})) if p.path == path]


@pytest.mark.parametrize(("name", "path"), BOOL_FIELDS)
@pytest.mark.parametrize("value", ["yes", "true", "on", 1, 0])
def test_a_switch_takes_only_true_or_false(name: str, path: str, value: Any) -> None:
    refused_at(raw_of(name), path, value, "allowed: true or false")


def test_the_shipped_values_stay_valid_and_integers_stay_integers() -> None:
    spec = load_stack(example_file("aws-training"))
    assert type(spec.training.nodes.count) is int
    serving = load_stack(example_file("aws-serving"))
    assert type(serving.serving.slo.target_seconds) is float  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("written", "expected"), [("2e12", 2e12), ("1e-3", 1e-3), ("1.5e+3", 1500.0), ('"2e12"', "2e12"), ("0x10", 16)]
)
def test_exponents_read_as_pulumis_yaml_reads_them(written: str, expected: Any) -> None:
    """YAML 1.2 (Pulumi) reads 2e12 as a number; PyYAML's 1.1 wanted a dot and gave text a number field refused."""
    value = load_yaml(f"v: {written}", "test")["v"]
    assert value == expected and isinstance(value, type(expected))


@pytest.mark.parametrize("word", ["yes", "no", "on", "off", "Yes", "OFF"])
def test_yaml_11_only_booleans_are_refused_where_pulumi_reads_text(word: str) -> None:
    with pytest.raises(SpecError) as raised:
        load_yaml(f"create: {word}", "test")
    assert "Pulumi's (YAML 1.2) as the text" in str(raised.value) and "true or false" in str(raised.value)


def test_a_training_tokens_exponent_validates() -> None:
    raw = edited(raw_of("aws-training"), {"training.model.trainingTokens": load_yaml("2e11", "t")})
    assert not [p for p in all_problems(raw) if p.path == "training.model.trainingTokens"]


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ('training.nodes.count="4"', "'4' is text (quoted); allowed: a whole number without quotes, e.g. 4"),
        ("training.nodes.count=4.0", "4.0 is a decimal number, not a whole number"),
        ("training.nodes.count=1e2", "100.0 is a decimal number"),
        ("training.storage.checkpoints.create=1", "1 is a number; allowed: true or false"),
        ('training.storage.checkpoints.create="true"', "'true' is text (quoted); allowed: true or false"),
    ],
)
def test_set_values_are_as_strict_as_the_file(override: str, message: str) -> None:
    with pytest.raises(SpecError) as raised:
        load_stack(example_file("aws-training"), [override])
    assert any(message in str(p) and f"(from --set {override})" in str(p) for p in raised.value.problems)


def test_landing_budgets_refuse_quoted_amounts() -> None:
    raw = raw_of("aws-landing")
    problems = landing_problems(edited(raw, {"organization.training.monthlyBudgetUsd": "5000"}))
    assert any("monthlyBudgetUsd: '5000' is text (quoted)" in p for p in problems), problems


@pytest.mark.parametrize("name", ["aws-landing", "azure-landing", "gcp-landing", "oci-landing"])
def test_landing_budgets_have_an_upper_bound_with_its_reason(name: str) -> None:
    raw = raw_of(name)
    problems = landing_problems(edited(raw, {"organization.serving.monthlyBudgetUsd": 2_000_000_000}))
    assert any(
        p.startswith("organization.serving.monthlyBudgetUsd: 2,000,000,000 USD a month is above 1,000,000,000")
        and "the budget APIs state none" in p
        for p in problems
    ), problems
    assert not landing_problems(edited(raw, {"organization.serving.monthlyBudgetUsd": 1_000_000_000}))


def test_the_shipped_landing_stacks_still_validate(tmp_path: Path) -> None:
    for name in ("aws-landing", "azure-landing", "gcp-landing", "oci-landing"):
        assert not landing_problems(raw_of(name)), name


@pytest.mark.parametrize(
    ("annotation", "value", "expected"),
    [
        (int | None, None, None),
        (int | None, "7", "'7' is text (quoted)"),
        (str | int, "7", None),  # the text option takes text
        (float | None, 3, None),  # a whole number is a fine number
        (list[int], [1, "2"], "item 1: '2' is text (quoted)"),
        (dict[str, float], {"a": "1.5"}, "a: '1.5' is text (quoted)"),
        (bool, "yes", "allowed: true or false"),
        (int, 1e30, "is a decimal number, not a whole number; allowed: a whole number in digits"),
        (int, "sixteen", None),  # pydantic's own message: "'sixteen' is not a whole number"
    ],
)
def test_the_kind_check_walks_optionals_unions_and_containers(
    annotation: Any, value: Any, expected: str | None
) -> None:
    from accelstack.spec.scalar_kinds import kind_problem

    problem = kind_problem(annotation, value)
    assert problem is None if expected is None else (problem is not None and expected in problem), problem
