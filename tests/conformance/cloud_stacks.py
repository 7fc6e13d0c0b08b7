"""Which example stacks the conformance suite checks (every deployable cloud's `stacks/Pulumi.<cloud>-*.yaml`)
and their offline previews, one per stack and config override per process."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from accelstack.clouds import registry
from accelstack.engine.preview import PreviewResult, preview_stack
from accelstack.spec.loader import stack_name_of

REPO = Path(__file__).resolve().parents[2]
STACKS = REPO / "stacks"


def example_stacks(cloud: str) -> list[Path]:
    return sorted(STACKS.glob(f"Pulumi.{cloud}-*.yaml"))


def cloud_stacks() -> list[tuple[str, Path]]:
    """(cloud, stack file) for every deployable cloud's example stacks."""
    return [(cloud, path) for cloud in registry.deployable() for path in example_stacks(cloud)]


def stack_id(path: Path) -> str:
    return stack_name_of(path)


@cache
def preview(stack_file: Path, overrides: tuple[str, ...] = ()) -> PreviewResult:
    return preview_stack(stack_file, list(overrides), REPO)
