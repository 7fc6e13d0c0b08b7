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
