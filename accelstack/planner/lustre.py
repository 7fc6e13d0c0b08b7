"""FSx for Lustre sizing: the cheapest (deployment type, capacity, throughput tier) that holds the
dataset plus retained checkpoints and writes one checkpoint within a target time.

Capacity steps come from `accelstack.clouds.aws.catalog.LUSTRE_DEPLOYMENT_TYPES`; aggregate throughput
is capacity (TiB) x per-unit throughput (FSx for Lustre User Guide "Performance": PERSISTENT tiers
are the PerUnitStorageThroughput you choose; SCRATCH_2 has a 200 MB/s/TiB baseline).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from accelstack.clouds.aws.catalog import LUSTRE_DEPLOYMENT_TYPES, LustreDeploymentType
from accelstack.planner.pricing import PriceBook, default_book

SCRATCH_BASELINE_MBPS_PER_TIB = 200
DEFAULT_HEADROOM = 0.2  # free space so staging and the next checkpoint never fill the file system
DEFAULT_RETAINED_CHECKPOINTS = 2  # the latest and the one being written


@dataclass(frozen=True)
class LustreOption:
    deployment_type: str
    capacity_gib: int
    throughput_per_tib: int | None
    throughput_mbps: float
    checkpoint_write_seconds: float
    monthly_usd: float

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


def next_allowed_capacity(dtype: LustreDeploymentType, gib: float) -> int:
    """Smallest StorageCapacity >= gib that FSx accepts for this deployment type."""
    for step in sorted(dtype.first_steps_gib):
        if step >= gib:
            return step
    return max(dtype.increment_gib, math.ceil(gib / dtype.increment_gib) * dtype.increment_gib)


def _tiers(dtype: LustreDeploymentType) -> tuple[int | None, ...]:
    return dtype.throughput_tiers or (None,)


def size(
    dataset_gib: float,
    checkpoint_gib: float,
    write_target_seconds: float,
    *,
    deployment_types: tuple[str, ...] = ("PERSISTENT_2",),
    headroom: float = DEFAULT_HEADROOM,
    retained_checkpoints: int = DEFAULT_RETAINED_CHECKPOINTS,
    prices: PriceBook | None = None,
) -> LustrePlan:
    if dataset_gib < 0 or checkpoint_gib < 0 or write_target_seconds <= 0:
        raise ValueError("dataset and checkpoint sizes must be >= 0 and the write target > 0")
    unknown = [d for d in deployment_types if d not in LUSTRE_DEPLOYMENT_TYPES]
    if unknown:
        raise ValueError(
            f"unknown deployment type(s) {', '.join(unknown)}; allowed: {', '.join(LUSTRE_DEPLOYMENT_TYPES)}"
        )
    prices = prices or default_book()
    need_gib = (dataset_gib + checkpoint_gib * retained_checkpoints) * (1 + headroom)
    need_mbps = checkpoint_gib * 2**30 / 1e6 / write_target_seconds
    options: list[LustreOption] = []
    for name in deployment_types:
        dtype = LUSTRE_DEPLOYMENT_TYPES[name]
        for tier in _tiers(dtype):
            try:
                gb_month = prices.lustre(name, tier)
            except ValueError:
                continue  # no price known for this tier: it cannot be ranked
            per_tib = tier or SCRATCH_BASELINE_MBPS_PER_TIB
            gib_for_throughput = need_mbps / per_tib * 1024
            capacity = next_allowed_capacity(dtype, max(need_gib, gib_for_throughput, 1))
            throughput = capacity / 1024 * per_tib
            options.append(
                LustreOption(
                    name,
                    capacity,
                    tier,
                    round(throughput, 1),
                    round(checkpoint_gib * 2**30 / 1e6 / throughput, 1),
                    round(capacity * gb_month, 2),
                )
            )
    if not options:
        raise ValueError(f"no priced throughput tier for {', '.join(deployment_types)}")
    options.sort(key=lambda o: (o.monthly_usd, -o.throughput_mbps))
    return LustrePlan(need_gib, need_mbps, options[0], tuple(options[1:]), prices.source())
