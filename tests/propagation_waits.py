"""Reading grant propagation waits (components/propagation.py) in a capture: the waits a resource depends on, the
grants behind them, and how long each lasts. Shared by the cloud component tests and the conformance suite."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from accelstack.engine.capture import Registration

SLEEP = "time:index/sleep:Sleep"
DURATION = re.compile(r"^(\d+)(s|m|h)$")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}


class Captured(Protocol):
    """A capture or a preview: what the program registered."""

    @property
    def resources(self) -> Sequence[Registration]: ...


def waits_of(cap: Captured, resource: Registration) -> list[Registration]:
    """The propagation waits `resource` depends on directly."""
    by_urn = {r.urn: r for r in cap.resources}
    return [by_urn[u] for u in resource.dependencies if u in by_urn and by_urn[u].type == SLEEP]


def granted(cap: Captured, resource: Registration) -> list[Registration]:
    """The grants `resource` waits for through its propagation waits."""
    by_urn = {r.urn: r for r in cap.resources}
    return [by_urn[u] for wait in waits_of(cap, resource) for u in wait.dependencies if u in by_urn]


def wait_seconds(wait: Registration) -> int:
    """A wait's createDuration in seconds ("600s", "7m")."""
    match = DURATION.match(str(wait.inputs.get("createDuration", "")))
    assert match, f"{wait.name}: createDuration {wait.inputs.get('createDuration')!r} is no duration"
    return int(match.group(1)) * UNIT_SECONDS[match.group(2)]
