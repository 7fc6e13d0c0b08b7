"""What the planner is handed for AWS stacks in tests: the registered cloud's catalog and list prices."""

from __future__ import annotations

from accelstack.clouds import registry
from accelstack.clouds.base import InstanceType
from accelstack.planner.hardware import instance
from accelstack.planner.pricing import PriceBook
from accelstack.planner.scaling_rules import ScalingRules

AWS = registry.get("aws")
AWS_CATALOG = AWS.catalog
AWS_RULES = AWS.serving_scaling  # the scaling rules AWS's serving components deploy


def rules_for(kind: str) -> ScalingRules | None:
    """The scaling rules of the cloud that deploys autoscaler `kind` (a what-if runs another cloud's on AWS)."""
    return next(
        (
            c.serving_scaling
            for c in registry.clouds().values()
            if c.serving_scaling and kind in c.serving_scaling.builders
        ),
        None,
    )


def aws_book() -> PriceBook:
    """AWS's dated price table, no overrides."""
    return PriceBook.from_prices(AWS.prices)


def aws_itype(name: str) -> InstanceType:
    """An AWS instance type by name (ValueError naming the known ones)."""
    return instance(AWS_CATALOG, name)
