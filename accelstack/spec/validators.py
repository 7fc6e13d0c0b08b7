"""Rule validators, ParallelCluster style: one small function per rule, each yielding Problems.

A validator receives the parsed StackSpec and yields `Problem(path, message, level)`. ERRORs are
what the cloud API would reject at create time (or what would lose data); WARNINGs are legal but
unwise. Add a rule by decorating it with `@rule`; `run_validators` runs them all in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from accelstack.spec.models import StackSpec
from accelstack.spec.problems import Level, Problem

Validator = Callable[[StackSpec], Iterator[Problem]]
RULES: list[Validator] = []

SUPPORTED_CLOUDS = ("aws",)


def rule(func: Validator) -> Validator:
    RULES.append(func)
    return func


def run_validators(spec: StackSpec) -> list[Problem]:
    return [problem for validator in RULES for problem in validator(spec)]


@rule
def cloud_has_components(spec: StackSpec) -> Iterator[Problem]:
    """Only clouds with components can be built; the others are accepted by the schema for planning."""
    if spec.cloud not in SUPPORTED_CLOUDS:
        yield Problem("cloud", f"{spec.cloud!r} has no components yet; supported: {', '.join(SUPPORTED_CLOUDS)}")


@rule
def spot_needs_checkpoints(spec: StackSpec) -> Iterator[Problem]:
    """Interruptible capacity loses work unless jobs can restart from a checkpoint."""
    if spec.training and spec.training.nodes.capacity == "spot" and spec.training.storage.checkpoints is None:
        yield Problem(
            "training.storage.checkpoints",
            "spot capacity requires a checkpoint location (set training.storage.checkpoints.uri)",
        )


@rule
def stack_account_is_on_its_side(spec: StackSpec) -> Iterator[Problem]:
    """The stack's account must be one of its workload's accounts in `separation`."""
    side = spec.separation.training_accounts if spec.workload == "training" else spec.separation.serving_accounts
    if spec.account.id not in side:
        yield Problem(
            "account.id",
            f"{spec.account.id} is not one of separation.{spec.workload}Accounts ({', '.join(side)})",
        )


@rule
def region_allowed(spec: StackSpec) -> Iterator[Problem]:
    allowed = spec.separation.allowed_regions
    if allowed and spec.account.region not in allowed:
        yield Problem("account.region", f"{spec.account.region!r} is not allowed; allowed: {', '.join(allowed)}")


# Cloud-specific rules register themselves on import.
from accelstack.spec import aws_rules  # noqa: E402,F401
