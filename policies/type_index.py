"""Which resource types a resource policy reads, learnt from the policy itself: no second list to keep in step.

A resource policy's check is run once per resource type (and stack context) on probes: resources of that type
whose every read of a property, an option, the provider or a link is recorded. A check that reads nothing of the
probes and reports nothing chose its path by the type and the context alone, so it does the same for every resource
of that type under that context: it reads nothing and reports nothing. The name and URN are free to read (readers
take them up front, for their messages); a check that chose by the name alone would report on, or read more of,
one of the two probes, named plainly and after every store the packs pick by name (checkpoint, artifact, model,
dataset, log). The runner then skips it for those resources (accelstack.engine.shared_servicer), which is where a
large export's time went: some 35 policies, each asking five vendors' readers, on every resource. Any read, any finding, and any error counts as
reading: the check runs on every resource of the type, as before. Unknown kinds are probed like any other: a check
that reads them (known-resource-kinds, which fails them closed) runs on them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

# Two names: a plain one, and one every name pattern of the packs' config defaults matches.
PROBE_NAMES = ("type-probe", "checkpoint-artifact-model-dataset-log")


class _RecordedProps(Mapping[str, Any]):
    """Properties with no values whose every read is recorded (get, [], in, iteration, size)."""

    def __init__(self, reads: list[str]) -> None:
        self._reads = reads

    def __getitem__(self, key: str) -> Any:
        self._reads.append(f"props[{key!r}]")
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        self._reads.append(f"props.get({key!r})")
        return default

    def __contains__(self, key: object) -> bool:
        self._reads.append(f"props has {key!r}")
        return False

    def __iter__(self) -> Iterator[str]:
        self._reads.append("props iterated")
        return iter(())

    def __len__(self) -> int:
        self._reads.append("props sized")
        return 0


class Probe:
    """A resource of one type: its type, name and URN are free to read; reading anything else is recorded."""

    def __init__(self, resource_type: str, name: str) -> None:
        self.reads: list[str] = []
        self.resource_type = resource_type
        self.name = name
        self.urn = f"urn:pulumi:probe::probe::{resource_type}::{name}"

    @property
    def props(self) -> Mapping[str, Any]:
        # Taking the mapping is no read (readers unpack it up front); what is read from it is.
        return _RecordedProps(self.reads)

    def __getattr__(self, name: str) -> Any:  # opts, provider, parent, dependencies, get_config, ...
        self.__dict__["reads"].append(name)
        raise AttributeError(f"{name} read on a type probe")


def reads_of(check: Callable[[Any, Any], Iterable[str]], resource_type: str, context: Any) -> list[str]:
    """What `check` read of a probe of `resource_type` under `context`, or reported on it (empty: it skips every
    resource of that type under that context)."""
    seen: list[str] = []
    for name in PROBE_NAMES:
        probe = Probe(resource_type, name)
        try:
            found = [f"reported {message!r}" for message in check(probe, context)]
        except Exception as error:  # noqa: BLE001  # any check, on a probe: failing counts as reading
            found = [f"raised {type(error).__name__}: {error}"]
        seen += probe.reads + found
    return seen
