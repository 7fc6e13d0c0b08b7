"""Fuzzing the spec layer: whatever a user writes, they get a StackSpec or a SpecError naming
config paths, never a traceback."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spec_helpers import DELETE, edited, training_raw

from accelstack.spec import parse_spec, spec_warnings
from accelstack.spec.loader import apply_overrides, read_stack_file
from accelstack.spec.models import ServingStack, TrainingStack
from accelstack.spec.problems import SpecError

# ~200 examples keep the unit suite fast; ACCELSTACK_FUZZ_EXAMPLES=5000 for a longer hunt.
FUZZ = settings(
    max_examples=int(os.environ.get("ACCELSTACK_FUZZ_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

BASE = training_raw()


def _paths(node: Any, prefix: str = "") -> list[str]:
    """Every dotted path in the example config, leaves and containers alike."""
    found = [prefix] if prefix else []
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        found += _paths(child, f"{prefix}.{key}" if prefix else str(key))
    return found


PATHS = _paths(BASE)
# Keys that exist in the schema but not in the example, so fuzzing reaches them too.
EXTRA_PATHS = [
    "training.nodes.reservationId",
    "training.storage.lustre.mountPath",
    "training.network.vpcId",
    "training.network.subnetId",
    "serving",
    "stack",
    "training.scheduler.partitions.0.features",
    "training.unknownKey",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    # Plausible-looking values reach deeper into the rules than random text does.
    st.sampled_from(
        [
            "p5.48xlarge", "g5.xlarge", "SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "capacity-block", "spot",
            "s3://a", "s3://acme..x", "gs://x/y", "/fsx", "/", "", "10.0.0.0/28", "7-00:00:00", "99:99",
            "cr-0123456789abcdef0", "111111111111", "arn:aws:iam::111111111111:role/x", "{\"a\": 1}", "[1,",
            1200, 2400, 3600, 0, -1, 250,
        ]
    ),
)  # fmt: skip
json_like = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)


def _assert_spec_or_spec_error(raw: dict[str, Any]) -> None:
    try:
        spec = parse_spec(raw, "fuzz")
    except SpecError as exc:
        assert exc.problems, "a SpecError must carry at least one problem"
        for problem in exc.problems:
            assert isinstance(problem.path, str) and problem.path.strip(), problem
            assert isinstance(problem.message, str) and problem.message.strip(), problem
        return
    assert isinstance(spec, TrainingStack | ServingStack)
    for warning in spec_warnings(spec):
        assert warning.path and warning.message


@FUZZ
@given(
    edits=st.dictionaries(
        st.sampled_from(PATHS + EXTRA_PATHS),
        json_like | st.just(DELETE),
        min_size=1,
        max_size=3,
    )
)
def test_random_values_at_config_paths_give_spec_or_spec_error(edits):
    try:
        raw = edited(BASE, edits)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return  # an earlier edit removed or replaced this path's parent: nothing to test
    _assert_spec_or_spec_error(raw)


@FUZZ
@given(
    overrides=st.lists(
        st.builds(
            lambda path, value: f"{path}={value}",
            st.sampled_from(PATHS + EXTRA_PATHS) | st.text(max_size=20),
            st.text(max_size=20),
        ),
        max_size=3,
    )
)
def test_random_set_overrides_give_spec_or_spec_error(overrides):
    try:
        raw = apply_overrides(BASE, overrides)
    except SpecError as exc:
        assert all(p.path and p.message for p in exc.problems)
        return
    _assert_spec_or_spec_error(raw)


_TMP = Path(tempfile.mkdtemp(prefix="accelstack-spec-fuzz-"))
_STACK_FILE = _TMP / "Pulumi.fuzz.yaml"

yaml_text = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200),
    # Structured documents get past the YAML parser and exercise the `config:` handling.
    st.builds(
        lambda config: yaml.safe_dump({"config": config}, allow_unicode=True),
        st.dictionaries(
            st.sampled_from(["accelstack:cloud", "accelstack:training", "accelstack:bogus", "aws:region", "x"])
            | st.text(max_size=15),
            json_like,
            max_size=4,
        ),
    ),
    st.sampled_from(
        [
            "config: [1, 2]",
            "- a\n- b",
            "config:\n  ? [a, b]\n  : c",
            "&a [*a]",
            "[" * 5000,
            "\t:",
            "config:\n  accelstack:separation: &a {trainingAccounts: [*a], servingAccounts: *a}\n",
            "config:\n  accelstack:training: &a {nodes: *a}\n  accelstack:workload: training\n",
            "config:\n  accelstack:training: " + "[" * 300 + "]" * 300 + "\n",
            "config:\n  accelstack:training: {nodes: {count: 1e999}}\n",
        ]
    ),
)


@FUZZ
@given(text=yaml_text)
def test_random_yaml_stack_file_raises_only_spec_error(text):
    _STACK_FILE.write_text(text, encoding="utf-8")
    try:
        raw = read_stack_file(_STACK_FILE)
    except SpecError as exc:
        assert exc.problems and all(p.path and p.message for p in exc.problems)
        return
    assert isinstance(raw, dict)
    _assert_spec_or_spec_error(raw)


def test_stack_file_that_is_not_utf8_is_a_spec_error():
    _STACK_FILE.write_bytes(b"config:\n  accelstack:cloud: \xff\xfe\n")
    try:
        read_stack_file(_STACK_FILE)
    except SpecError as exc:
        assert exc.problems[0].path == str(_STACK_FILE)
    else:
        raise AssertionError("expected SpecError")
