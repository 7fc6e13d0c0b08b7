"""Problems found in a stack's config: one per line, naming the config path."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class Level(StrEnum):
    ERROR = "error"  # the cloud API would reject it, or it would lose data: nothing is created
    WARNING = "warning"  # allowed, but probably not what a GPU fleet owner wants


@dataclass(frozen=True)
class Problem:
    path: str  # dotted config path without the `accelstack:` namespace, e.g. training.nodes.count
    message: str
    level: Level = Level.ERROR

    def __str__(self) -> str:
        tag = "" if self.level is Level.ERROR else "warning: "
        return f"{self.path}: {tag}{self.message}"


class SpecError(Exception):
    """The config cannot be built: carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def did_you_mean(value: object, choices: Iterable[str]) -> str:
    """` (did you mean 'p5.48xlarge'?)` for the closest choice (difflib, case-insensitive), or ''."""
    if not isinstance(value, str) or not value:
        return ""
    folded = {choice.lower(): choice for choice in choices}
    exact = folded.get(value.lower())
    if exact is not None and exact != value:
        return f" (did you mean {exact!r}?)"
    close = difflib.get_close_matches(value.lower(), list(folded), n=1, cutoff=0.75)
    return f" (did you mean {folded[close[0]]!r}?)" if close and folded[close[0]] != value else ""
