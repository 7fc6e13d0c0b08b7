"""The grant propagation wait (components/propagation.py) and pulumiverse-time's replace rows: what makes a wait run
again (a new grant: its triggers), and what does not (a new duration, as terraform-provider-time updates it)."""

from __future__ import annotations

import pytest

from accelstack.components.propagation import PropagationWaits, sleep_duration
from accelstack.engine.replacement import replacing_changes

SLEEP = "time:index/sleep:Sleep"


def test_a_wait_lasts_a_positive_duration_in_seconds() -> None:
    assert sleep_duration(420) == "420s"
    with pytest.raises(ValueError, match="positive"):
        sleep_duration(0)


def test_no_grants_no_wait_and_only_grants_are_waited_for() -> None:
    waits = PropagationWaits("stack", parent=None)  # type: ignore[arg-type]
    assert waits.after("nothing", [], 300) == []
    with pytest.raises(TypeError, match="custom resources"):
        waits.after("odd", [object()], 300)  # type: ignore[list-item]


def test_a_new_grant_replaces_the_wait_a_new_duration_does_not() -> None:
    old = {"createDuration": "300s", "triggers": {"grant-0": "/roleAssignments/a"}}
    assert replacing_changes(SLEEP, old, {**old, "triggers": {"grant-0": "/roleAssignments/b"}}, []) == ["triggers"]
    assert replacing_changes(SLEEP, old, {**old, "triggers": {**old["triggers"], "grant-1": "/x"}}, []) == ["triggers"]
    assert replacing_changes(SLEEP, old, {**old, "createDuration": "600s"}, []) == []
    assert replacing_changes("pulumi:providers:time", {}, {}, []) == []
