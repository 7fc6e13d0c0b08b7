"""Problems found in a stack's config: one per line, naming the config path."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Level(str, Enum):
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
