"""Clouds as plug-ins: `base` says what a cloud is, `registry` finds them, one package per cloud describes it."""

from accelstack.clouds.base import Catalog, Cloud, Feature, InstanceType, ParallelFsTier, Prices
from accelstack.clouds.registry import clouds, get, names

__all__ = ["Catalog", "Cloud", "Feature", "InstanceType", "ParallelFsTier", "Prices", "clouds", "get", "names"]
