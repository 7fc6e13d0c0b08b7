"""What the planner is handed for AWS stacks in tests: the registered cloud's catalog and list prices."""

from __future__ import annotations

from accelstack.clouds import registry
from accelstack.clouds.base import InstanceType
from accelstack.planner.hardware import instance
from accelstack.planner.pricing import PriceBook

AWS = registry.get("aws")
AWS_CATALOG = AWS.catalog


def aws_book() -> PriceBook:
    """AWS's dated price table, no overrides."""
    return PriceBook.from_prices(AWS.prices)


def aws_itype(name: str) -> InstanceType:
    """An AWS instance type by name (ValueError naming the known ones)."""
    return instance(AWS_CATALOG, name)
