"""Parallel file system (Lustre) sizing: the cheapest (deployment type, capacity, throughput tier) that
holds the dataset plus retained checkpoints and writes one checkpoint within a target time.

Deployment types, capacity steps and throughput tiers come from the cloud's catalog
(`Catalog.parallel_fs`, one `ParallelFsTier` per deployment type), prices from its price book.
Aggregate throughput is capacity (TiB) x per-unit throughput: the tier you choose, or the type's fixed
baseline when it has no choice.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from accelstack.clouds.base import Catalog, ParallelFsTier
from accelstack.planner.pricing import PriceBook

DEFAULT_HEADROOM = 0.2  # free space so staging and the next checkpoint never fill the file system
DEFAULT_RETAINED_CHECKPOINTS = 2  # the latest and the one being written


@dataclass(frozen=True)
class LustreOption:
    deployment_type: str
    capacity_gib: int
    throughput_per_tib: int | None
    throughput_mbps: float
    checkpoint_write_seconds: float
    monthly_usd: float | None  # None: no price recorded for this tier (sized, not ranked by cost)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class LustrePlan:
    needed_capacity_gib: float
    needed_throughput_mbps: float
    best: LustreOption
    alternatives: tuple[LustreOption, ...]
    price_source: str

    def as_dict(self) -> dict[str, object]:
        return {
            "needed_capacity_gib": round(self.needed_capacity_gib, 1),
            "needed_throughput_mbps": round(self.needed_throughput_mbps, 1),
            "best": self.best.as_dict(),
            "alternatives": [a.as_dict() for a in self.alternatives],
            "price_source": self.price_source,
        }


def next_allowed_capacity(dtype: ParallelFsTier, gib: float) -> int:
    """Smallest capacity >= gib that this deployment type accepts (`ParallelFsTier.capacity_allowed`);
    it may exceed `max_gib`, which the caller checks."""
    for step in sorted(dtype.first_steps_gib):
        if step >= gib:
            return step
    increment = dtype.increment_gib
    return max(increment, math.ceil(max(gib, dtype.min_gib) / increment) * increment)


def per_tib_throughput(dtype: ParallelFsTier, tier: int | None) -> int:
    """MB/s per TiB of `dtype` at `tier`: the tier itself, or the type's fixed baseline when it has none."""
    if tier:
        return tier
    if dtype.baseline_throughput_per_tib is None:
        raise ValueError(f"{dtype.name}: no throughput tier given and no baseline throughput known")
    return dtype.baseline_throughput_per_tib


def deployment_type(catalog: Catalog, name: str) -> ParallelFsTier:
    """The catalog's parallel file system deployment type, or ValueError naming the ones it has."""
    try:
        return catalog.parallel_fs[name]
    except KeyError:
        raise ValueError(f"unknown deployment type {name!r}; allowed: {', '.join(catalog.parallel_fs)}") from None


def _tiers(dtype: ParallelFsTier) -> tuple[int | None, ...]:
    return dtype.throughput_per_tib or (None,)


def size(
    dataset_gib: float,
    checkpoint_gib: float,
    write_target_seconds: float,
    *,
    catalog: Catalog,
    prices: PriceBook,
    deployment_types: tuple[str, ...],
    headroom: float = DEFAULT_HEADROOM,
    retained_checkpoints: int = DEFAULT_RETAINED_CHECKPOINTS,
    allow_unpriced: bool = False,
) -> LustrePlan:
    """The cheapest option by the price book. With `allow_unpriced`, tiers without a price are still sized
    when no tier has one (monthly_usd None), ranked smallest capacity first, then lowest tier: a cloud whose
    file system price is not recorded still gets its size, said to be unpriced, rather than nothing."""
    if dataset_gib < 0 or checkpoint_gib < 0 or write_target_seconds <= 0:
        raise ValueError("dataset and checkpoint sizes must be >= 0 and the write target > 0")
    known = catalog.parallel_fs
    unknown = [d for d in deployment_types if d not in known]
    if unknown:
        raise ValueError(f"unknown deployment type(s) {', '.join(unknown)}; allowed: {', '.join(known)}")
    need_gib = (dataset_gib + checkpoint_gib * retained_checkpoints) * (1 + headroom)
    need_mbps = checkpoint_gib * 2**30 / 1e6 / write_target_seconds
    options: list[LustreOption] = []
    unpriced: list[LustreOption] = []
    for name in deployment_types:
        dtype = known[name]
        for tier in _tiers(dtype):
            try:
                per_tib = per_tib_throughput(dtype, tier)
            except ValueError:
                continue  # no throughput known for this tier: it cannot be sized
            gib_for_throughput = need_mbps / per_tib * 1024
            capacity = next_allowed_capacity(dtype, max(need_gib, gib_for_throughput, 1))
            if dtype.max_gib is not None and capacity > dtype.max_gib:
                continue  # this tier cannot grow big enough
            throughput = capacity / 1024 * per_tib
            write_seconds = round(checkpoint_gib * 2**30 / 1e6 / throughput, 1)
            try:
                monthly: float | None = round(capacity * prices.lustre(name, tier), 2)
            except ValueError:
                monthly = None  # no price for this tier: sized, but it cannot be ranked by cost
            option = LustreOption(name, capacity, tier, round(throughput, 1), write_seconds, monthly)
            (options if monthly is not None else unpriced).append(option)
    if options:
        options.sort(key=lambda o: (o.monthly_usd, -o.throughput_mbps))
        return LustrePlan(need_gib, need_mbps, options[0], tuple(options[1:]), prices.source())
    if not allow_unpriced or not unpriced:
        raise ValueError(f"no priced throughput tier for {', '.join(deployment_types)}")
    unpriced.sort(key=lambda o: (o.capacity_gib, o.throughput_per_tib or 0))
    source = f"{prices.source()}: no price recorded for {', '.join(deployment_types)} (smallest size, then lowest tier)"
    return LustrePlan(need_gib, need_mbps, unpriced[0], tuple(unpriced[1:]), source)
