"""What the runner and the packs' shared helpers do to be fast on a large export answers as the plain code would.

- `of_type` on a large list asked again and again (the one list the stack policies share) answers from an index by
  type, in the list's order: the same lists as the filter it stands for, also when other lists are asked in between
  and when the list grew since.
- The cyclic collector paused for a run (`collector_paused`) is back as it was after it, also when the run fails.
"""

from __future__ import annotations

import gc
import random
from dataclasses import dataclass

import pytest

from accelstack.engine.policy_runner import collector_paused
from accelstack.policies.common import of_type


@dataclass
class Resource:
    resource_type: str


def filtered(resources: list[Resource], *types: str) -> list[Resource]:
    return [r for r in resources if r.resource_type in types]


def test_of_type_answers_as_the_filter_it_stands_for() -> None:
    rng = random.Random(29)
    kinds = [f"aws:s3/bucket:Kind{i}" for i in range(40)]
    shared = [Resource(rng.choice(kinds)) for _ in range(5_000)]
    for round_ in range(300):
        asked = shared if round_ % 4 else [r for r in shared if rng.random() < 0.5]  # a derived list now and then
        if round_ % 50 == 49:
            shared.append(Resource(rng.choice(kinds)))  # the list grew: its index is rebuilt
        types = tuple(rng.sample([*kinds, "absent:kind:Kind"], rng.randint(1, 4)))
        if round_ % 7 == 0:
            types += types[:1]  # a type named twice: each resource once
        found = of_type(asked, *types)
        assert found == filtered(asked, *types)
        assert all(a is b for a, b in zip(found, filtered(asked, *types), strict=True))


def test_of_type_on_small_lists_and_other_iterables() -> None:
    resources = [Resource("a"), Resource("b"), Resource("a")]
    assert of_type(resources, "a") == [resources[0], resources[2]]
    assert of_type(tuple(resources), "b", "a") == resources
    assert of_type(iter(resources), "c") == []


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_back_as_it_was(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        with collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
        with pytest.raises(RuntimeError), collector_paused():
            raise RuntimeError("a run that fails")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
