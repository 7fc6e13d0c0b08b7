"""The clouds accelstack knows, found through the `accelstack.clouds` entry-point group (no `if cloud == ...`).

A cloud package declares `[project.entry-points."accelstack.clouds"] <name> = "<module>:<Cloud value>"`;
accelstack's own clouds are declared the same way in its pyproject.toml, so a third-party cloud is a peer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import cache
from importlib.metadata import EntryPoint, EntryPoints, entry_points

from accelstack.clouds.base import Cloud

GROUP = "accelstack.clouds"
_extra: dict[str, Cloud] = {}


@cache
def _installed_entry_points() -> EntryPoints:
    # One read of every installed distribution's entry points (~5 ms each time, and a preview needs two groups).
    # Python 3.11 returns them grouped (SelectableGroups); `select` reads the same on every version.
    return entry_points()  # type: ignore[return-value]


def plugins(group: str) -> list[EntryPoint]:
    """The installed entry points of `group`, by name."""
    return sorted(_installed_entry_points().select(group=group), key=lambda e: e.name)


@cache
def _discovered() -> dict[str, Cloud]:
    found: dict[str, Cloud] = {}
    for entry in plugins(GROUP):
        cloud = entry.load()
        if not isinstance(cloud, Cloud) or cloud.name != entry.name:
            raise TypeError(f"entry point {GROUP}:{entry.name} must be a Cloud named {entry.name!r}, got {cloud!r}")
        found[entry.name] = cloud
    return found


def clouds() -> dict[str, Cloud]:
    """Every registered cloud by name, in name order."""
    return dict(sorted({**_discovered(), **_extra}.items()))


def names() -> tuple[str, ...]:
    return tuple(clouds())


def deployable() -> tuple[str, ...]:
    """Clouds whose Pulumi components exist (the others have catalogs and prices only)."""
    return tuple(name for name, cloud in clouds().items() if cloud.deployable)


def get(name: str) -> Cloud:
    """The cloud called `name`, or ValueError listing the registered ones."""
    try:
        return clouds()[name]
    except KeyError:
        raise ValueError(f"unknown cloud {name!r}; registered: {', '.join(names())}") from None


@contextlib.contextmanager
def registered(cloud: Cloud) -> Iterator[Cloud]:
    """Register `cloud` for the duration of a block (tests, or a program that builds its own description)."""
    previous = _extra.get(cloud.name)
    _extra[cloud.name] = cloud
    try:
        yield cloud
    finally:
        if previous is None:
            _extra.pop(cloud.name, None)
        else:
            _extra[cloud.name] = previous
