"""Where a feature is claimed: on the part method whose code builds it. `@implements(Feature.SPOT, ...)` marks
a cloud's part; `capabilities.implemented` reads the marks of the parts a cloud's recipes use, so a cloud's
feature set is the code it has, read next to that code (dstack's implemented-interface lists), and the
conformance suite holds the cloud's description to it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from accelstack.clouds.base import Feature

Method = TypeVar("Method", bound=Callable[..., Any])
MARK = "__accelstack_implements__"


def implements(*features: Feature) -> Callable[[Method], Method]:
    """Mark the part method that builds what `features` ask for (each is a `Feature`, refused otherwise)."""
    for feature in features:
        if not isinstance(feature, Feature):
            raise TypeError(f"@implements takes Feature members, not {feature!r}")

    def mark(method: Method) -> Method:
        setattr(method, MARK, frozenset(features) | getattr(method, MARK, frozenset()))
        return method

    return mark


def marked_features(parts: type[Any]) -> frozenset[Feature]:
    """The features the methods of `parts` (and of the classes it inherits) are marked with."""
    found: set[Feature] = set()
    for klass in parts.__mro__:
        for attribute in vars(klass).values():
            found |= getattr(attribute, MARK, frozenset())
    return frozenset(found)
