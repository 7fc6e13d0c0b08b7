"""`--set` overrides: dotted paths into mappings and, by index, into lists."""

import pytest

from accelstack.spec import SpecError
from accelstack.spec.loader import apply_overrides

RAW = {"training": {"nodes": {"count": 4}, "scheduler": {"partitions": [{"name": "gpu"}, {"name": "debug"}]}}}


def test_sets_a_nested_value_and_reads_it_as_yaml() -> None:
    result = apply_overrides(RAW, ["training.nodes.count=64", "training.nodes.capacity=spot"])
    assert result["training"]["nodes"] == {"count": 64, "capacity": "spot"}
    assert RAW["training"]["nodes"] == {"count": 4}  # the input is not mutated


def test_creates_missing_mappings() -> None:
    assert apply_overrides({}, ["training.storage.lustre=null"]) == {"training": {"storage": {"lustre": None}}}


def test_indexes_lists() -> None:
    result = apply_overrides(RAW, ["training.scheduler.partitions.1.maxTime=01:00:00"])
    assert result["training"]["scheduler"]["partitions"][1] == {"name": "debug", "maxTime": "01:00:00"}


@pytest.mark.parametrize(
    ("override", "path", "message"),
    [
        ("training.scheduler.partitions.2.name=x", "training.scheduler.partitions.2", "allowed: 0 to 1"),
        ("training.scheduler.partitions.first.name=x", "training.scheduler.partitions.first", "not an index"),
        ("training.nodes.count.x=1", "training.nodes.count", "cannot --set below it"),
        ("training.nodes.count", "--set", "expected path=value"),
    ],
)
def test_bad_paths_name_the_path(override: str, path: str, message: str) -> None:
    with pytest.raises(SpecError) as raised:
        apply_overrides(RAW, [override])
    [problem] = raised.value.problems
    assert problem.path == path and message in problem.message


@pytest.mark.parametrize("path", ["training.model.preset", "serving.model.preset"])
def test_empty_model_preset_is_a_config_error_not_a_crash(path: str) -> None:
    """Found by the fuzzer: an empty preset reached the planner and crashed it."""
    from pathlib import Path

    from accelstack.spec import load_stack

    stack = "aws-training" if path.startswith("training") else "aws-serving"
    stack_file = Path(__file__).resolve().parents[2] / "stacks" / f"Pulumi.{stack}.yaml"
    with pytest.raises(SpecError) as raised:
        load_stack(stack_file, [f"{path}="])
    assert [p.path for p in raised.value.problems] == [path]


@pytest.mark.parametrize(
    ("override", "path", "needles"),
    [
        (
            "azure-native:location=westus3",
            "azure-native:location",
            ["Pulumi provider config, not an accelstack key", "pulumi config set azure-native:location VALUE"],
        ),
        ("aws:region=us-west-2", "aws:region", ["Pulumi provider config"]),
        ("stack=other", "stack", ["unknown key; allowed: cloud, workload, account"]),
        ("trainng.nodes.count=2", "trainng", ["did you mean 'training'"]),
    ],
)
def test_set_starts_at_a_documented_accelstack_key(override: str, path: str, needles: list[str]) -> None:
    """Friction 25: `--set azure-native:location=...` listed an undocumented `stack` among the allowed keys."""
    with pytest.raises(SpecError) as raised:
        apply_overrides(RAW, [override])
    [problem] = raised.value.problems
    assert problem.path == path and all(needle in problem.message for needle in needles), problem
    assert "stack," not in problem.message


def test_set_takes_the_namespace_as_the_stack_file_spells_it() -> None:
    assert apply_overrides(RAW, ["accelstack:training.nodes.count=8"])["training"]["nodes"]["count"] == 8
