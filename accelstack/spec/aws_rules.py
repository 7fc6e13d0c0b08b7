"""AWS rules: what EC2, FSx, S3 and ELB would reject at create time, checked before anything exists."""

from __future__ import annotations

from collections.abc import Iterator

from accelstack.spec.models import StackSpec
from accelstack.spec.problems import Problem
from accelstack.spec.tables import aws as tables
from accelstack.spec.validators import rule


@rule
def training_instance_known(spec: StackSpec) -> Iterator[Problem]:
    if spec.cloud != "aws" or spec.training is None:
        return
    itype = spec.training.nodes.instance_type
    if itype not in tables.ACCELERATED_INSTANCES:
        yield Problem(
            "training.nodes.instanceType",
            f"{itype!r} is not a supported accelerated instance type; allowed: {', '.join(tables.ACCELERATED_INSTANCES)}",
        )
