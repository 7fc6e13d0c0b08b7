"""`common.refers_to` over a list, answered from an index built once per list instead of once per pair.

A stack check that asks, for each bucket, which of the stack's encryption configurations refers to it is
O(buckets x configurations) through `refers_to`: minutes on a 20,000-resource export. Here the list is indexed once
(by the URNs of its property dependencies and by the ids, names and ARNs its property holds, or the other way round)
and each question is a dictionary lookup. The answers are `refers_to`'s, in the list's order:

    referrers_of(target, referrers, prop, keys)  == [r for r in referrers if refers_to(r, prop, target, keys=keys)]
    each_referrer(target, referrers, prop, keys) == (r for r in referrers if refers_to(r, prop, target, keys=keys))
    any_referrer(target, referrers, prop, keys)  == any(refers_to(r, prop, target, keys=keys) for r in referrers)
    targets_of(referrer, prop, targets, keys)    == [t for t in targets if refers_to(referrer, prop, t, keys=keys)]
    each_target(referrer, prop, targets, keys)   == (t for t in targets if refers_to(referrer, prop, t, keys=keys))
    refers_to_in(referrer, prop, target, targets, keys) == refers_to(referrer, prop, target, keys=keys), target in targets
    refers_to_any(referrer, prop, targets, keys) == any(refers_to(referrer, prop, t, keys=keys) for t in targets)

Where a value is unknown during preview (pulumi-policy raises on reading it) or cannot be a dictionary key, the
question is answered by the expression on the right instead, so that what raises, and where, is what `refers_to`
would raise. An index is keyed by the identity of its list and holds that list (its id stays its own): the lists
are the ones a check builds once (`of_type`) and does not change afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pulumi_policy.proxy import UnknownValueError

from . import concepts
from .common import as_list, refers_to

KEYS = ("id", "bucket", "arn", "name")
# What cannot be indexed faithfully: a value unknown during preview, or one that is no dictionary key.
_NOT_INDEXED = (UnknownValueError, TypeError)


def _values(resource: Any, prop: str) -> set[Any] | None:
    """refers_to's side of the referrer: the ids its `prop` holds (None when it holds nothing)."""
    value = resource.props.get(prop)
    if value is None:
        return None
    items = [v.get("id") if hasattr(v, "get") else v for v in as_list(value)]
    return {v for v in items if isinstance(v, (str, int, float))}


def _dependency_urns(resource: Any, prop: str) -> list[Any]:
    deps = getattr(resource, "property_dependencies", None) or {}
    return [getattr(d, "urn", None) for d in deps.get(prop, [])]


def _candidates(target: Any, keys: Sequence[str]) -> set[Any]:
    """refers_to's side of the target: the ids, names and ARNs a reference to it may hold."""
    return {target.props.get(k) for k in keys} - {None, ""}


class _ReferrerIndex:
    """Positions of `referrers` by the URNs their `prop` depends on and by the values it holds."""

    def __init__(self, referrers: Sequence[Any], prop: str) -> None:
        self.by_dependency: dict[Any, set[int]] = {}
        self.by_value: dict[Any, set[int]] = {}
        for position, referrer in enumerate(referrers):
            for urn in _dependency_urns(referrer, prop):
                self.by_dependency.setdefault(urn, set()).add(position)
            for value in _values(referrer, prop) or ():
                self.by_value.setdefault(value, set()).add(position)

    def positions(self, target: Any, keys: Sequence[str]) -> set[int]:
        found = set(self.by_dependency.get(target.urn, ()))
        for candidate in _candidates(target, keys) if self.by_value else ():
            found |= self.by_value.get(candidate, set())
        return found


class _TargetIndex:
    """Positions of `targets` by their URN and by the values a reference to each may hold."""

    def __init__(self, targets: Sequence[Any], keys: Sequence[str]) -> None:
        self.by_urn: dict[Any, set[int]] = {}
        self.by_candidate: dict[Any, set[int]] = {}
        self.position = {id(target): position for position, target in enumerate(targets)}
        for position, target in enumerate(targets):
            self.by_urn.setdefault(target.urn, set()).add(position)
            for candidate in _candidates(target, keys):
                self.by_candidate.setdefault(candidate, set()).add(position)

    def positions(self, referrer: Any, prop: str) -> set[int]:
        found: set[int] = set()
        for urn in _dependency_urns(referrer, prop):
            found |= self.by_urn.get(urn, set())
        for value in _values(referrer, prop) or ():
            found |= self.by_candidate.get(value, set())
        return found


# (kind, id of the list, prop or keys) -> (the list, its index or None when it could not be built).
_indexes: dict[tuple[str, int, Any], tuple[Sequence[Any], Any]] = {}
_MAX_INDEXES = 64


def _index(kind: str, items: Sequence[Any], detail: Any, build: Callable[[], Any]) -> Any:
    key = (kind, id(items), detail)
    held = _indexes.get(key)
    if held is not None and held[0] is items:
        return held[1]
    try:
        index = build()
    except _NOT_INDEXED:
        index = None
    if len(_indexes) >= _MAX_INDEXES:
        _indexes.clear()
    _indexes[key] = (items, index)
    return index


def _referrer_positions(target: Any, referrers: Sequence[Any], prop: str, keys: Sequence[str]) -> set[int] | None:
    index = _index("referrers", referrers, prop, lambda: _ReferrerIndex(referrers, prop))
    if index is None:
        return None
    try:
        return index.positions(target, keys)
    except _NOT_INDEXED:
        return None


def _target_positions(referrer: Any, prop: str, targets: Sequence[Any], keys: Sequence[str]) -> set[int] | None:
    index = _index("targets", targets, tuple(keys), lambda: _TargetIndex(targets, keys))
    if index is None:
        return None
    try:
        return index.positions(referrer, prop)
    except _NOT_INDEXED:
        return None


def referred_positions(referrer: Any, prop: str, targets: Sequence[Any], keys: Sequence[str] = KEYS) -> set[int] | None:
    """The positions in `targets` of those `referrer.prop` refers to, or None where the index cannot answer (a value
    unknown during preview: judge each pair with `refers_to`). For a loop over pairs in its own order: ask once per
    referrer, not once per pair."""
    return _target_positions(referrer, prop, targets, keys)


def referrers_of(target: Any, referrers: Sequence[Any], prop: str, keys: Sequence[str] = KEYS) -> list[Any]:
    """The resources of `referrers` whose `prop` refers to `target`, in their order."""
    found = _referrer_positions(target, referrers, prop, keys)
    if found is None:
        return [r for r in referrers if refers_to(r, prop, target, keys=keys)]
    return [referrers[position] for position in sorted(found)]


def each_referrer(target: Any, referrers: Sequence[Any], prop: str, keys: Sequence[str] = KEYS) -> Iterator[Any]:
    """`referrers_of`, one at a time: where the index cannot answer, each is judged only when it is reached (a check
    that yields as it goes reports what it found before a value unknown during preview stops it, as before)."""
    found = _referrer_positions(target, referrers, prop, keys)
    if found is None:
        yield from (r for r in referrers if refers_to(r, prop, target, keys=keys))
        return
    for position in sorted(found):
        yield referrers[position]


def any_referrer(target: Any, referrers: Sequence[Any], prop: str, keys: Sequence[str] = KEYS) -> bool:
    """Whether any of `referrers` refers to `target` through `prop`."""
    found = _referrer_positions(target, referrers, prop, keys)
    if found is None:
        return any(refers_to(r, prop, target, keys=keys) for r in referrers)
    return bool(found)


def targets_of(referrer: Any, prop: str, targets: Sequence[Any], keys: Sequence[str] = KEYS) -> list[Any]:
    """The resources of `targets` that `referrer.prop` refers to, in their order."""
    found = _target_positions(referrer, prop, targets, keys)
    if found is None:
        return [t for t in targets if refers_to(referrer, prop, t, keys=keys)]
    return [targets[position] for position in sorted(found)]


def each_target(referrer: Any, prop: str, targets: Sequence[Any], keys: Sequence[str] = KEYS) -> Iterator[Any]:
    """`targets_of`, one at a time (where the index cannot answer, as `each_referrer`)."""
    found = _target_positions(referrer, prop, targets, keys)
    if found is None:
        yield from (t for t in targets if refers_to(referrer, prop, t, keys=keys))
        return
    for position in sorted(found):
        yield targets[position]


def refers_to_any(referrer: Any, prop: str, targets: Sequence[Any], keys: Sequence[str] = KEYS) -> bool:
    """Whether `referrer.prop` refers to any of `targets`."""
    found = _target_positions(referrer, prop, targets, keys)
    if found is None:
        return any(refers_to(referrer, prop, t, keys=keys) for t in targets)
    return bool(found)


def refers_to_in(referrer: Any, prop: str, target: Any, targets: Sequence[Any], keys: Sequence[str] = KEYS) -> bool:
    """`refers_to(referrer, prop, target)` for one `target` of `targets`, answered from the index of `targets` (for a
    loop over pairs that must judge them in its own order)."""
    found = _target_positions(referrer, prop, targets, keys)
    index = _indexes.get(("targets", id(targets), tuple(keys)), (None, None))[1]
    position = index.position.get(id(target)) if index is not None else None
    if found is None or position is None:
        return refers_to(referrer, prop, target, keys=keys)
    return position in found


_of_type: dict[tuple[int, tuple[str, ...]], tuple[Sequence[Any], tuple[Any, ...]]] = {}


def of_type_once(resources: Sequence[Any], *types: str) -> tuple[Any, ...]:
    """`common.of_type` for a reader called once per resource of the same list: the stack is scanned once per list
    and kinds, not once per resource."""
    key = (id(resources), types)
    held = _of_type.get(key)
    if held is not None and held[0] is resources:
        return held[1]
    found = tuple(r for r in resources if r.resource_type in types)
    if len(_of_type) >= _MAX_INDEXES:
        _of_type.clear()
    _of_type[key] = (resources, found)
    return found


_of_kind: dict[tuple[int, tuple[str, ...]], tuple[Sequence[Any], tuple[Any, ...]]] = {}


def of_kind_once(resources: Sequence[Any], *kinds: str) -> tuple[Any, ...]:
    """`of_type_once` by canonical kind (`concepts.canonical`: azure-native's API-version modules are their default
    module's kind), for a reader that asks once per resource of the same list."""
    key = (id(resources), kinds)
    held = _of_kind.get(key)
    if held is not None and held[0] is resources:
        return held[1]
    found = tuple(r for r in resources if concepts.canonical(r.resource_type) in kinds)
    if len(_of_kind) >= _MAX_INDEXES:
        _of_kind.clear()
    _of_kind[key] = (resources, found)
    return found
