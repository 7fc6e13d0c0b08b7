"""Training job and serving costs from the price book.

Training: wall hours = failure-free compute hours x (1 + checkpoint/rework overhead); cost = nodes x
hourly price (spot discounted) x wall hours, plus Lustre and object storage for the duration. Compute hours can
come from tokens: FLOPs ~ 6 x parameters x tokens (Kaplan et al. 2020), at a model FLOPs utilization
(MFU) of 40% by default (Llama 3 report, section 3.3: 38-43% BF16 MFU on H100).
Serving: replica-hours from a 24-hour traffic profile, x price, per month and over a lifetime.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from accelstack.clouds.base import InstanceType
from accelstack.planner.architectures import Architecture
from accelstack.planner.hardware import device
from accelstack.planner.pricing import PriceBook

HOURS_PER_MONTH = 730.0
DAYS_PER_MONTH = HOURS_PER_MONTH / 24
DEFAULT_MFU = 0.40
# Fraction of peak load per hour of the day (business-hours service, quiet nights); an assumption.
DEFAULT_DAILY_PROFILE: tuple[float, ...] = (
    0.25, 0.2, 0.2, 0.2, 0.2, 0.25, 0.35, 0.5, 0.7, 0.85, 0.95, 1.0,
    1.0, 1.0, 0.95, 0.9, 0.85, 0.75, 0.65, 0.55, 0.45, 0.4, 0.35, 0.3,
)  # fmt: skip


def training_compute_hours(
    arch: Architecture,
    tokens: float,
    itype: InstanceType,
    nodes: int,
    mfu: float = DEFAULT_MFU,
    *,
    flops_per_param_token: float = 6,
) -> float:
    """Failure-free hours to train `tokens` tokens: 6 N D / (nodes x accelerators x peak x MFU)
    (LoRA: 4 N D, see `accelstack.planner.advisor`)."""
    return compute_hours(arch.compute_params, tokens, itype, nodes, mfu, flops_per_param_token=flops_per_param_token)


def compute_hours(
    params: float,
    tokens: float,
    itype: InstanceType,
    nodes: int,
    mfu: float = DEFAULT_MFU,
    *,
    flops_per_param_token: float = 6,
) -> float:
    """`training_compute_hours` for a parameter count (a spec may give parametersBillion, not an architecture)."""
    dev = device(itype)
    if not dev.peak_tflops:
        raise ValueError(f"no peak TFLOPS known for {dev.accelerator}")
    if nodes < 1 or not 0 < mfu <= 1 or tokens < 0:
        raise ValueError("need nodes >= 1, 0 < mfu <= 1, tokens >= 0")
    flops = flops_per_param_token * params * tokens
    return flops / (nodes * dev.count * dev.peak_tflops * 1e12 * mfu) / 3600


@dataclass(frozen=True)
class TrainingCost:
    instance_type: str
    nodes: int
    capacity: str
    compute_hours: float
    overhead_fraction: float
    wall_hours: float
    gpu_hours: float
    hourly_per_node: float
    compute_usd: float
    lustre_usd: float
    s3_usd: float  # object storage on any cloud; the name is the `cost --json` key (s3Usd) reports keep
    total_usd: float
    price_source: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def training_cost(
    itype: InstanceType,
    nodes: int,
    compute_hours: float,
    *,
    prices: PriceBook,
    capacity: str = "on-demand",
    overhead_fraction: float = 0.0,
    lustre_monthly_usd: float = 0.0,
    object_storage_gb: float = 0.0,
) -> TrainingCost:
    if nodes < 1 or compute_hours < 0 or overhead_fraction < 0:
        raise ValueError("need nodes >= 1, compute hours >= 0, overhead >= 0")
    dev = device(itype)
    hourly = prices.hourly(itype.name, capacity)
    wall = compute_hours * (1 + overhead_fraction)
    compute = nodes * hourly * wall
    months = wall / HOURS_PER_MONTH
    lustre = lustre_monthly_usd * months
    stored = object_storage_gb * prices.object_gb_month * months
    return TrainingCost(
        itype.name,
        nodes,
        capacity,
        round(compute_hours, 2),
        round(overhead_fraction, 4),
        round(wall, 2),
        round(wall * nodes * dev.count, 1),
        round(hourly, 4),
        round(compute, 2),
        round(lustre, 2),
        round(stored, 2),
        round(compute + lustre + stored, 2),
        prices.source(),
    )


def replicas_by_hour(profile: Sequence[float], replicas_min: int, replicas_max: int) -> list[int]:
    """Replicas per hour: ceil(max x fraction of peak), clamped to [min, max]."""
    if len(profile) != 24:
        raise ValueError(f"a daily profile has 24 hourly values, got {len(profile)}")
    if any(f < 0 for f in profile):
        raise ValueError("profile fractions must be >= 0")
    if replicas_min > replicas_max:
        raise ValueError("min replicas must not exceed max")
    return [min(replicas_max, max(replicas_min, math.ceil(replicas_max * f - 1e-9))) for f in profile]


@dataclass(frozen=True)
class ServingCost:
    instance_type: str
    capacity: str
    replicas_by_hour: list[int]
    replica_hours_per_day: int
    hourly_per_replica: float
    compute_monthly_usd: float  # replica-hours x price
    volume_monthly_usd: float  # one replica's root volume (storage + provisioned IOPS/throughput) per month
    running_volumes_monthly_usd: float  # root volumes of the running replicas (average over the profile)
    warm_pool: int
    warm_pool_monthly_usd: float  # the stopped warm-pool instances' volumes (stopped instances bill only their disks)
    monthly_usd: float  # all of the above
    lifetime_months: float
    lifetime_usd: float
    price_source: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def serving_cost(
    instance_type: str,
    replicas_min: int,
    replicas_max: int,
    *,
    prices: PriceBook,
    profile: Sequence[float] = DEFAULT_DAILY_PROFILE,
    capacity: str = "on-demand",
    lifetime_months: float = 24.0,
    root_volume_gib: int = 0,
    root_volume_iops: int = 0,
    root_volume_mibps: int = 0,
    warm_pool: int = 0,
) -> ServingCost:
    hourly = prices.hourly(instance_type, capacity)
    by_hour = replicas_by_hour(profile, replicas_min, replicas_max)
    per_day = sum(by_hour)
    compute = per_day * DAYS_PER_MONTH * hourly
    volume = (
        prices.block_volume_monthly(root_volume_gib, root_volume_iops, root_volume_mibps) if root_volume_gib else 0.0
    )
    running = per_day / 24 * volume  # average replicas running x one volume's month
    pool = warm_pool * volume
    monthly = compute + running + pool
    return ServingCost(
        instance_type,
        capacity,
        by_hour,
        per_day,
        round(hourly, 4),
        round(compute, 2),
        round(volume, 2),
        round(running, 2),
        warm_pool,
        round(pool, 2),
        round(monthly, 2),
        lifetime_months,
        round(monthly * lifetime_months, 2),
        prices.source(),
    )
