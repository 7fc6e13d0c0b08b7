"""Which example stacks the conformance suite checks (every deployable cloud's `stacks/Pulumi.<cloud>-*.yaml`)
and their offline previews: one `accelstack preview` per stack per process (a subprocess each, as the
CLI runs it), and in-process captures of the same program and config for the resized variants."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from accelstack.clouds import registry
from accelstack.engine.capture import Capture, capture
from accelstack.engine.preview import PROGRAM, PreviewResult, preview_stack, stack_config
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
def preview(stack_file: Path) -> PreviewResult:
    return preview_stack(stack_file, [], REPO)


@cache
def resized(stack_file: Path, overrides: tuple[str, ...]) -> Capture:
    """The program's registrations for the stack with `--set` overrides, in this process (the config
    map `preview` passes its worker; the overrides are validated by the program's own spec check)."""
    _, config = stack_config(stack_file, list(overrides))
    return capture(REPO / PROGRAM, config, stack=stack_id(stack_file))
