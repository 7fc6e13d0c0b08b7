"""The training stack's checkpoint numbers from its spec: how big a checkpoint is, how fast it is
written, how often to write it (Daly), and whether the configured Lustre file system writes one in
time (and whether a cheaper tier would). Pure (no Pulumi): `components.aws.training` exports the
interval, `accelstack cost` prices the overhead, and `accelstack preview` shows where it came from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from accelstack.planner import checkpoint as ck
from accelstack.planner import lustre as lustre_sizing
from accelstack.planner.hardware import GIB, device
from accelstack.planner.pricing import PriceBook, default_book
from accelstack.spec.models import TrainingSpec

# A training spec names no model, so a checkpoint is assumed to be a quarter of the cluster's
# accelerator memory (sharded weights + optimizer state rarely exceed it); every report says so.
ASSUMED_STATE_FRACTION_OF_HBM = 0.25
# Checkpoints not on Lustre go to S3 (or node-local disk) at this rate per node (parallel multipart
# uploads; an assumption, stated wherever it is used).
S3_WRITE_MBPS_PER_NODE = 1000.0
# A synchronous save stalls every GPU: aim to write one within 5 minutes (`accelstack size lustre`'s
# default target too).
CHECKPOINT_WRITE_TARGET_SECONDS = 300.0


@dataclass(frozen=True)
class CheckpointWrite:
    """One checkpoint: its size, where it goes and how fast, each with the basis it rests on."""

    state_bytes: float
    state_basis: str
    write_mbps: float
    write_basis: str
    via: str  # "lustre" | "s3" | "local"

    @property
    def seconds(self) -> float:
        return self.state_bytes / (self.write_mbps * 1e6)


@dataclass(frozen=True)
class LustreCheck:
    """Does the configured file system write a checkpoint within the target, and at what cost?"""

    deployment_type: str
    capacity_gib: int
    throughput_per_tib: int | None
    throughput_mbps: float
    write_seconds: float
    target_seconds: float
    monthly_usd: float | None  # None: no price known for this tier
    assumed_dataset_gib: float  # what the configured capacity holds besides the retained checkpoints
    cheapest: lustre_sizing.LustreOption  # cheapest same-type option holding the same data within the target

    @property
    def meets_target(self) -> bool:
        return self.write_seconds <= self.target_seconds

    @property
    def cheaper_option(self) -> lustre_sizing.LustreOption | None:
        """The cheapest option meeting the target, when it costs less than the configured one (or that has no price)."""
        if self.monthly_usd is None or self.cheapest.monthly_usd < self.monthly_usd - 0.005:
            return self.cheapest
        return None


@dataclass(frozen=True)
class TrainingPlan:
    write: CheckpointWrite
    checkpoint: ck.CheckpointPlan  # Young/Daly interval, job MTBF, expected overhead (rounded for reports)
    mtbf_seconds: float
    interval_seconds: int  # Daly's optimum, whole seconds
    lustre: LustreCheck | None


def checkpoint_write(training: TrainingSpec) -> CheckpointWrite:
    nodes = training.nodes
    dev = device(nodes.instance_type)
    hbm_gib = nodes.count * dev.count * dev.nominal_gib
    state = hbm_gib * GIB * ASSUMED_STATE_FRACTION_OF_HBM
    state_basis = (
        f"{ASSUMED_STATE_FRACTION_OF_HBM:.0%} of cluster HBM ({nodes.count} x {dev.count} x {dev.nominal_gib:g} GiB "
        f"{dev.accelerator})"
    )
    lustre = training.storage.lustre
    checkpoints = training.storage.checkpoints
    on_lustre = lustre is not None and (
        checkpoints is None or f"{checkpoints.path.rstrip('/')}/".startswith(f"{lustre.mount_path.rstrip('/')}/")
    )
    if on_lustre:
        assert lustre is not None
        per_tib = lustre.throughput_per_tib or lustre_sizing.SCRATCH_BASELINE_MBPS_PER_TIB
        mbps = lustre.capacity_gib / 1024 * per_tib
        basis = f"Lustre {lustre.deployment_type} {lustre.capacity_gib} GiB x {per_tib} MB/s/TiB"
        return CheckpointWrite(state, state_basis, mbps, basis, "lustre")
    mbps = nodes.count * S3_WRITE_MBPS_PER_NODE
    where, via = ("S3", "s3") if checkpoints is not None else ("node-local disk", "local")
    basis = f"{where} at an assumed {S3_WRITE_MBPS_PER_NODE:g} MB/s per node x {nodes.count}"
    return CheckpointWrite(state, state_basis, mbps, basis, via)


def lustre_check(
    training: TrainingSpec,
    write: CheckpointWrite,
    *,
    target_seconds: float = CHECKPOINT_WRITE_TARGET_SECONDS,
    prices: PriceBook | None = None,
) -> LustreCheck | None:
    lustre = training.storage.lustre
    if lustre is None:
        return None
    prices = prices or default_book()
    per_tib = lustre.throughput_per_tib or lustre_sizing.SCRATCH_BASELINE_MBPS_PER_TIB
    throughput = lustre.capacity_gib / 1024 * per_tib
    checkpoint_gib = write.state_bytes / GIB
    # The spec has no dataset size: assume the configured capacity was chosen to hold the dataset,
    # the retained checkpoints and the planner's headroom, so a suggestion holds the same data.
    dataset_gib = max(
        0.0,
        lustre.capacity_gib / (1 + lustre_sizing.DEFAULT_HEADROOM)
        - checkpoint_gib * lustre_sizing.DEFAULT_RETAINED_CHECKPOINTS,
    )
    try:
        monthly: float | None = round(lustre.capacity_gib * prices.lustre(lustre.deployment_type, lustre.throughput_per_tib), 2)
    except ValueError:
        monthly = None
    best = lustre_sizing.size(
        dataset_gib, checkpoint_gib, target_seconds, deployment_types=(lustre.deployment_type,), prices=prices
    ).best
    return LustreCheck(
        lustre.deployment_type,
        lustre.capacity_gib,
        lustre.throughput_per_tib,
        round(throughput, 1),
        round(checkpoint_gib * GIB / 1e6 / throughput, 1),
        target_seconds,
        monthly,
        round(dataset_gib, 1),
        best,
    )


def plan_training(training: TrainingSpec, *, prices: PriceBook | None = None) -> TrainingPlan:
    """Checkpoint interval (Daly 2006) for the stack's nodes, capacity and storage, and the Lustre check."""
    write = checkpoint_write(training)
    nodes = training.nodes
    plan = ck.plan(write.state_bytes, write.write_mbps, nodes.count, nodes.capacity)
    mtbf = ck.job_mtbf_hours(nodes.count, nodes.capacity) * 3600
    interval = ck.daly_interval(write.seconds, mtbf)
    return TrainingPlan(
        write=write,
        checkpoint=plan,
        mtbf_seconds=mtbf,
        interval_seconds=max(1, math.floor(interval)),
        lustre=lustre_check(training, write, prices=prices),
    )
