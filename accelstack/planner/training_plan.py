"""The training stack's checkpoint numbers from its spec: how big a checkpoint is, how fast it is
written, how often to write it (Daly), and whether the configured Lustre file system holds the data
and writes a checkpoint in time (and whether a cheaper option would). Pure (no Pulumi):
`accelstack.components.aws.training` exports the interval, `accelstack cost` prices the overhead, `accelstack
validate` reports the Lustre check (`accelstack.spec.validators`), and `accelstack preview` shows
where every number came from.

Checkpoint size, from first principles, when `training.model` names the model:

- Full fine-tuning or pre-training with Adam in mixed precision. ZeRO (Rajbhandari, Rasley, Ruwase,
  He, "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", SC20, arXiv:1910.02054,
  section 3.1) counts the model states as 2 bytes/param of fp16 parameters + 2 of fp16 gradients +
  K = 12 of optimizer state (fp32 parameter copy 4, momentum 4, variance 4): 16 bytes/param. A
  checkpoint holds all of that except the gradients, 14 bytes/param: gradients are zeroed and
  recomputed from the weights and the next batch at every step, so a restart never needs them, and
  the savers people use write only module + optimizer state (DeepSpeed `save_checkpoint`, Megatron-LM
  distributed checkpoints, PyTorch DCP `get_state_dict(model, optimizer)`). The 16-bit weights could
  be rederived from the fp32 master copy, but those savers write both, so both are counted.
- LoRA: the frozen base weights are not saved (they are reloaded from the model's source); only the
  adapter matrices (rank r on the q/k/v/o/gate/up/down projections of every layer) and their own
  mixed-precision Adam state, at the same 14 bytes per adapter parameter
  (`accelstack.planner.checkpoint.training_state_bytes`, which `accelstack size checkpoint` uses too).

With no model, a checkpoint is assumed to be a quarter of the cluster's accelerator memory, and every
report says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from accelstack.clouds.base import Catalog
from accelstack.planner import checkpoint as ck
from accelstack.planner import cost as costs
from accelstack.planner import lustre as lustre_sizing
from accelstack.planner.architectures import get_preset
from accelstack.planner.hardware import GIB, device, instance
from accelstack.planner.pricing import PriceBook
from accelstack.spec.models import TrainingSpec
from accelstack.spec.validators import path_within

# ZeRO section 3.1: mixed-precision Adam's model states, bytes per parameter.
MIXED_PRECISION_ADAM_BYTES_PER_PARAM: dict[str, int] = {
    "16-bit weights": 2,
    "16-bit gradients": 2,
    "fp32 master weights": 4,
    "Adam momentum (fp32)": 4,
    "Adam variance (fp32)": 4,
}
# What a resumable checkpoint keeps: everything but the gradients (see the module docstring).
CHECKPOINTED_STATE = ("16-bit weights", "fp32 master weights", "Adam momentum (fp32)", "Adam variance (fp32)")
CHECKPOINT_BYTES_PER_PARAM = sum(MIXED_PRECISION_ADAM_BYTES_PER_PARAM[k] for k in CHECKPOINTED_STATE)
assert CHECKPOINT_BYTES_PER_PARAM == ck.FULL_STATE_BYTES_PER_PARAM  # one number for `size checkpoint` and stacks
ZERO_SOURCE = "Rajbhandari et al. 2020 (ZeRO) s3.1"

# No model in the spec: a checkpoint is assumed to be a quarter of the cluster's accelerator memory
# (sharded weights + optimizer state rarely exceed it); every report says so.
ASSUMED_STATE_FRACTION_OF_HBM = 0.25
MAKE_EXACT = "set training.model to make this exact"
# Checkpoints not on Lustre go to object storage (or node-local disk) at this rate per node (parallel multipart
# uploads; an assumption, stated wherever it is used).
S3_WRITE_MBPS_PER_NODE = 1000.0
# A synchronous save stalls every GPU: aim to write one within 5 minutes (`accelstack size lustre`'s
# default target too); `training.storage.checkpoints.writeTargetSeconds` overrides it.
CHECKPOINT_WRITE_TARGET_SECONDS = 300.0


@dataclass(frozen=True)
class CheckpointState:
    """The size of one checkpoint and what it rests on; `assumed` when the spec names no model."""

    bytes: float
    basis: str
    assumed: bool


@dataclass(frozen=True)
class CheckpointWrite:
    """One checkpoint: its size, where it goes and how fast, each with the basis it rests on."""

    state_bytes: float
    state_basis: str
    write_mbps: float
    write_basis: str
    via: str  # "lustre" | "s3" (the cloud's object storage) | "local"
    state_assumed: bool = False

    @property
    def seconds(self) -> float:
        return self.state_bytes / (self.write_mbps * 1e6)


@dataclass(frozen=True)
class TierOption:
    """One throughput tier at the configured capacity."""

    throughput_per_tib: int
    throughput_mbps: float
    write_seconds: float
    monthly_usd: float | None  # None: no price known for this tier


@dataclass(frozen=True)
class LustreCheck:
    """Does the configured file system hold the data and write a checkpoint within the target, and at what cost?"""

    deployment_type: str
    capacity_gib: int
    throughput_per_tib: int | None
    throughput_mbps: float
    write_seconds: float
    target_seconds: float
    target_basis: str
    monthly_usd: float | None  # None: no price known for this tier
    dataset_gib: float  # given (training.storage.datasets.sizeGiB), or assumed to fill the capacity
    dataset_assumed: bool
    checkpoint_gib: float
    checkpoint_assumed: bool
    retained_checkpoints: int  # checkpoints kept on Lustre (0 when they are written elsewhere)
    # What the stated sizes need, with headroom; None when neither the dataset nor the checkpoint size is known.
    required_gib: float | None
    minimum_capacity_gib: int | None  # smallest valid step holding `required_gib`
    faster_tier: TierOption | None  # lowest tier at this capacity that meets the target
    cheapest: lustre_sizing.LustreOption | None  # cheapest same-type option holding the same data within the target
    max_capacity_gib: int | None = None  # the deployment type's largest file system (None: no limit known)

    @property
    def meets_target(self) -> bool:
        return self.write_seconds <= self.target_seconds

    def smallest_holding(self) -> str:
        """Where the stated data fits in this deployment type: its smallest valid size, or that none holds it."""
        if self.minimum_capacity_gib is None:
            return ""
        if self.max_capacity_gib is not None and self.minimum_capacity_gib > self.max_capacity_gib:
            return (
                f"no single {self.deployment_type} file system holds it (max {self.max_capacity_gib} GiB); "
                "choose a tier with larger file systems or keep less of the dataset on it"
            )
        return f"the smallest valid {self.deployment_type} size is {self.minimum_capacity_gib} GiB"

    @property
    def holds_data(self) -> bool:
        return self.required_gib is None or self.capacity_gib >= self.required_gib

    @property
    def cheaper_option(self) -> lustre_sizing.LustreOption | None:
        """The cheapest option meeting the target, when it costs less than the configured one (or that has no price)."""
        if self.cheapest is None or self.cheapest.monthly_usd is None:
            return None
        if self.monthly_usd is None or self.cheapest.monthly_usd < self.monthly_usd - 0.005:
            return self.cheapest
        return None


@dataclass(frozen=True)
class PlannedFileSystem:
    """The shared file system as it is built: every value resolved (stated, the cloud's default filled by the spec,
    or derived by the planner), so no component re-derives one or meets an omitted value."""

    tier: str  # the catalog's ParallelFsTier name (FSx deployment type, AMLFS SKU, Managed Lustre tier...)
    capacity_gib: int
    throughput_per_tib: int | None  # None: the tier fixes its throughput (scratch, Filestore)
    mount_path: str
    import_path: str
    protocol: str  # "lustre" or "nfs" (ParallelFsTier.protocol)


@dataclass(frozen=True)
class TrainingPlan:
    write: CheckpointWrite
    checkpoint: ck.CheckpointPlan  # Young/Daly interval, job MTBF, expected overhead (rounded for reports)
    mtbf_seconds: float
    interval_seconds: int  # Daly's optimum, whole seconds
    lustre: LustreCheck | None
    # The training block the components build: the stack's, with the planner's Lustre capacity and tier filled in.
    training: TrainingSpec
    file_system: PlannedFileSystem | None  # None: no shared file system


def checkpoint_state(training: TrainingSpec, catalog: Catalog) -> CheckpointState:
    """Checkpoint size from `training.model` (exact), else the HBM assumption. ValueError: unknown preset/instance."""
    model = training.model
    if model is not None and model.checkpoint_gib is not None:
        return CheckpointState(
            model.checkpoint_gib * GIB, f"training.model.checkpointGiB {model.checkpoint_gib:g} GiB", False
        )
    if model is not None:
        arch = get_preset(model.preset) if model.preset else None
        name = arch.name if arch else f"{model.parameters_billion:g} B-parameter model"
        if model.method == "lora":
            assert arch is not None  # the spec requires a preset for LoRA
            state = ck.training_state_bytes(arch, "lora", model.lora_rank)
            adapter_params = state / ck.FULL_STATE_BYTES_PER_PARAM
            basis = (
                f"{name} LoRA rank {model.lora_rank}: {adapter_params / 1e6:.1f} M adapter params (q/k/v/o/gate/up/down x "
                f"{arch.layers} layers) x {ck.FULL_STATE_BYTES_PER_PARAM} B/param (adapter + its Adam state; base weights not saved)"
            )
            return CheckpointState(state, basis, False)
        params = arch.params if arch else (model.parameters_billion or 0) * 1e9
        parts = " + ".join(f"{k} {MIXED_PRECISION_ADAM_BYTES_PER_PARAM[k]}" for k in CHECKPOINTED_STATE)
        basis = (
            f"{name} full: {params / 1e9:g} B params x {CHECKPOINT_BYTES_PER_PARAM} B/param ({parts}; "
            f"{ZERO_SOURCE} less gradients)"
        )
        return CheckpointState(params * CHECKPOINT_BYTES_PER_PARAM, basis, False)
    nodes = training.nodes
    dev = device(instance(catalog, nodes.instance_type))
    hbm_gib = nodes.count * dev.count * dev.nominal_gib
    basis = (
        f"assumed: {ASSUMED_STATE_FRACTION_OF_HBM:.0%} of cluster HBM ({nodes.count} x {dev.count} x "
        f"{dev.nominal_gib:g} GiB {dev.accelerator}); {MAKE_EXACT}"
    )
    return CheckpointState(hbm_gib * GIB * ASSUMED_STATE_FRACTION_OF_HBM, basis, True)


# Lustre capacity when neither capacityGiB nor datasets.sizeGiB is stated: the fixed default of
# earlier releases, so a stack that states nothing keeps the file system it was deployed with.
UNSIZED_DATASET_CAPACITY_GIB = 4800


@dataclass(frozen=True)
class LustreSetting:
    """The file system the stack gets: stated values as given, omitted ones derived (and how)."""

    deployment_type: str
    capacity_gib: int
    throughput_per_tib: int | None
    capacity_derived: bool
    tier_derived: bool
    basis: str  # the formula behind the derived values ("" when both are stated)

    @property
    def derived(self) -> bool:
        return self.capacity_derived or self.tier_derived


def _checkpoints_on_lustre(training: TrainingSpec) -> bool:
    lustre, checkpoints = training.storage.lustre, training.storage.checkpoints
    return lustre is not None and (checkpoints is None or path_within(checkpoints.path, lustre.mount_path))


def lustre_setting(training: TrainingSpec, catalog: Catalog, prices: PriceBook) -> LustreSetting | None:
    """Capacity and tier for `training.storage.lustre`, deriving the omitted ones; None without Lustre
    or for a deployment type the catalog does not know (a spec rule reports that).

    Derived from what Lustre must hold: (dataset + retained checkpoints) x (1 + headroom), and the
    throughput that writes one checkpoint within the write target; the cheapest valid (capacity, tier)
    by the cloud's list prices (`accelstack.planner.lustre.size`, as `accelstack size lustre` prints):
    `prices.list_prices()`, never a `--prices` override, so `cost` and `pulumi up` agree on what is built.
    A stated value is kept as it is (the spec rules validate it). ValueError: unknown instance/preset.
    """
    lustre = training.storage.lustre
    dtype = catalog.parallel_fs.get(lustre.tier or "") if lustre is not None else None
    if lustre is None or dtype is None:
        return None
    capacity, tier = lustre.capacity_gib, lustre.throughput_per_tib
    if not dtype.throughput_per_tib:
        tier = None  # a fixed baseline throughput (a stated tier is a spec error)
    derive_capacity = capacity is None
    derive_tier = tier is None and bool(dtype.throughput_per_tib)
    if not (derive_capacity or derive_tier):
        return LustreSetting(dtype.name, capacity, tier, False, False, "")  # type: ignore[arg-type]
    state = checkpoint_state(training, catalog)
    checkpoint_gib = state.bytes / GIB
    retained = lustre_sizing.DEFAULT_RETAINED_CHECKPOINTS if _checkpoints_on_lustre(training) else 0
    target, target_basis = write_target(training)
    headroom = lustre_sizing.DEFAULT_HEADROOM
    need_mbps = checkpoint_gib * GIB / 1e6 / target if retained else 0.0
    stated_dataset = training.storage.datasets.size_gib
    notes = []
    if stated_dataset is not None:
        dataset_gib = float(stated_dataset)
        data = f"dataset {dataset_gib:g} GiB"
    elif capacity is not None:
        dataset_gib = max(0.0, capacity / (1 + headroom) - checkpoint_gib * retained)
        data = f"dataset assumed to fill the stated {capacity} GiB"
    else:
        # Nothing says how big the data is: keep the earlier fixed size, grown if the checkpoints need more.
        dataset_gib = max(0.0, UNSIZED_DATASET_CAPACITY_GIB / (1 + headroom) - checkpoint_gib * retained)
        data = f"dataset size not stated: room for {dataset_gib:.0f} GiB ({UNSIZED_DATASET_CAPACITY_GIB} GiB in all)"
        notes.append("set training.storage.datasets.sizeGiB to size it for the data")
    checkpoints = (
        f" + {retained} checkpoints x {checkpoint_gib:.1f} GiB{' (assumed)' if state.assumed else ''}"
        if retained
        else ""
    )
    need_gib = (dataset_gib + checkpoint_gib * retained) * (1 + headroom)
    holds = f"({data}{checkpoints}) x {1 + headroom:g} headroom = {need_gib:.0f} GiB"
    writes = f"{checkpoint_gib:.1f} GiB checkpoint within {target:g} s ({target_basis}) = {need_mbps:.0f} MB/s"
    if derive_capacity and derive_tier:
        list_prices = prices.list_prices()
        try:
            best = lustre_sizing.size(
                dataset_gib, checkpoint_gib if retained else 0.0, target, catalog=catalog, prices=list_prices,
                deployment_types=(dtype.name,), retained_checkpoints=retained,
            ).best  # fmt: skip
            capacity, tier = best.capacity_gib, best.throughput_per_tib
            how = f"cheapest {dtype.name} size and tier by {list_prices.source()} (${best.monthly_usd:,.0f}/month)"
        except ValueError:  # no price for this type's tiers: the smallest size, then the lowest tier
            capacity, tier = min(
                (lustre_sizing.next_allowed_capacity(dtype, max(need_gib, need_mbps / t * 1024, 1)), t)
                for t in dtype.throughput_per_tib
            )
            how = f"no prices for {dtype.name}: smallest size, then lowest tier"
    elif derive_capacity:
        per_tib = lustre_sizing.per_tib_throughput(dtype, tier)
        capacity = lustre_sizing.next_allowed_capacity(dtype, max(need_gib, need_mbps / per_tib * 1024, 1))
        how = f"smallest valid {dtype.name} size at {per_tib} MB/s/TiB"
    else:
        assert capacity is not None
        meeting = [t for t in sorted(dtype.throughput_per_tib) if capacity / 1024 * t >= need_mbps]
        tier = meeting[0] if meeting else max(dtype.throughput_per_tib)
        how = (
            f"lowest {dtype.name} tier at {capacity} GiB that writes it in time"
            if meeting
            else f"no {dtype.name} tier at {capacity} GiB writes it in time: the fastest"
        )
    parts = [f"holds {holds}"] if derive_capacity else []
    if retained:
        parts.append(f"writes a {writes}")
    basis = f"{how}; " + "; ".join(parts)
    if derive_capacity:
        notes.append(
            f"{catalog.parallel_fs_service} cannot shrink: before lowering the stated sizes of a deployed stack, set capacityGiB: {capacity}; "
            "a smaller derived size would replace this protected file system, which pulumi up refuses"
        )
    if notes:
        basis += ". " + ". ".join(notes)
    return LustreSetting(dtype.name, capacity, tier, derive_capacity, derive_tier, basis)


def planned_training(training: TrainingSpec, catalog: Catalog, prices: PriceBook) -> TrainingSpec:
    """`training` with the Lustre capacity and tier the planner derives filled in (what the components build)."""
    setting = lustre_setting(training, catalog, prices)
    lustre = training.storage.lustre
    if setting is None or lustre is None or not setting.derived:
        return training
    filled = lustre.model_copy(
        update={"capacity_gib": setting.capacity_gib, "throughput_per_tib": setting.throughput_per_tib}
    )
    return training.model_copy(update={"storage": training.storage.model_copy(update={"lustre": filled})})


def checkpoint_write(training: TrainingSpec, catalog: Catalog, prices: PriceBook) -> CheckpointWrite:
    """How a checkpoint is written and how fast, for `training` as the planner fills it."""
    return _checkpoint_write(planned_training(training, catalog, prices), catalog)


def _checkpoint_write(training: TrainingSpec, catalog: Catalog) -> CheckpointWrite:
    """`checkpoint_write` of an already planned block (its Lustre capacity filled)."""
    state = checkpoint_state(training, catalog)
    nodes = training.nodes
    lustre = training.storage.lustre
    checkpoints = training.storage.checkpoints
    if _checkpoints_on_lustre(training):
        assert lustre is not None and lustre.capacity_gib is not None
        dtype = lustre_sizing.deployment_type(catalog, lustre.tier or "")
        per_tib = lustre_sizing.per_tib_throughput(dtype, lustre.throughput_per_tib)
        mbps = lustre.capacity_gib / 1024 * per_tib
        basis = f"Lustre {lustre.tier} {lustre.capacity_gib} GiB x {per_tib} MB/s/TiB"
        return CheckpointWrite(state.bytes, state.basis, mbps, basis, "lustre", state.assumed)
    mbps = nodes.count * S3_WRITE_MBPS_PER_NODE
    where, via = (catalog.object_store_service, "s3") if checkpoints is not None else ("node-local disk", "local")
    basis = f"{where} at an assumed {S3_WRITE_MBPS_PER_NODE:g} MB/s per node x {nodes.count}"
    return CheckpointWrite(state.bytes, state.basis, mbps, basis, via, state.assumed)


def write_target(training: TrainingSpec) -> tuple[float, str]:
    """The checkpoint write target in seconds and where it comes from."""
    checkpoints = training.storage.checkpoints
    if checkpoints is not None and checkpoints.write_target_seconds is not None:
        return checkpoints.write_target_seconds, "training.storage.checkpoints.writeTargetSeconds"
    return CHECKPOINT_WRITE_TARGET_SECONDS, "the planner's default target"


def _monthly(prices: PriceBook, deployment_type: str, capacity_gib: int, tier: int | None) -> float | None:
    try:
        return round(capacity_gib * prices.lustre(deployment_type, tier), 2)
    except ValueError:
        return None


def lustre_check(
    training: TrainingSpec,
    write: CheckpointWrite,
    *,
    catalog: Catalog,
    prices: PriceBook,
    target_seconds: float | None = None,
) -> LustreCheck | None:
    """None without Lustre or for a deployment type the catalog does not know (a spec rule reports that)."""
    planned = planned_training(training, catalog, prices)
    return _lustre_check(planned, write, catalog=catalog, prices=prices, target_seconds=target_seconds)


def _lustre_check(
    training: TrainingSpec,
    write: CheckpointWrite,
    *,
    catalog: Catalog,
    prices: PriceBook,
    target_seconds: float | None,
) -> LustreCheck | None:
    """`lustre_check` of an already planned block."""
    lustre = training.storage.lustre
    dtype = catalog.parallel_fs.get(lustre.tier or "") if lustre is not None else None
    if lustre is None or dtype is None:
        return None
    capacity_gib = lustre.capacity_gib
    assert capacity_gib is not None, "planned_training derives the Lustre capacity"
    configured_target, target_basis = write_target(training)
    if target_seconds is None:
        target_seconds = configured_target
    else:
        target_basis = "given"
    per_tib = lustre_sizing.per_tib_throughput(dtype, lustre.throughput_per_tib)
    throughput = capacity_gib / 1024 * per_tib
    checkpoint_gib = write.state_bytes / GIB
    retained = lustre_sizing.DEFAULT_RETAINED_CHECKPOINTS if write.via == "lustre" else 0
    headroom = 1 + lustre_sizing.DEFAULT_HEADROOM
    size_gib = training.storage.datasets.size_gib
    if size_gib is not None:
        dataset_gib, dataset_assumed = float(size_gib), False
    else:
        # No dataset size: assume the configured capacity was chosen to hold the dataset, the
        # retained checkpoints and the planner's headroom, so a suggestion holds the same data.
        dataset_gib = max(0.0, capacity_gib / headroom - checkpoint_gib * retained)
        dataset_assumed = True
    # The capacity requirement counts only what the stack file states, never a guess.
    known = ([] if dataset_assumed else [dataset_gib]) + (
        [checkpoint_gib * retained] if retained and not write.state_assumed else []
    )
    required = sum(known) * headroom if known else None
    minimum = lustre_sizing.next_allowed_capacity(dtype, required) if required else None
    faster = None
    for tier in sorted(t for t in dtype.throughput_per_tib if t > (lustre.throughput_per_tib or 0)):
        mbps = capacity_gib / 1024 * tier
        seconds = checkpoint_gib * GIB / 1e6 / mbps
        if seconds <= target_seconds:
            faster = TierOption(
                tier, round(mbps, 1), round(seconds, 1), _monthly(prices, dtype.name, capacity_gib, tier)
            )
            break
    try:
        cheapest: lustre_sizing.LustreOption | None = lustre_sizing.size(
            dataset_gib, checkpoint_gib, target_seconds, catalog=catalog, prices=prices,
            deployment_types=(dtype.name,), retained_checkpoints=retained,
        ).best  # fmt: skip
    except ValueError:
        cheapest = None  # no priced tier for this deployment type
    return LustreCheck(
        deployment_type=dtype.name,
        capacity_gib=capacity_gib,
        throughput_per_tib=lustre.throughput_per_tib,
        throughput_mbps=round(throughput, 1),
        write_seconds=round(checkpoint_gib * GIB / 1e6 / throughput, 1),
        target_seconds=target_seconds,
        target_basis=target_basis,
        monthly_usd=_monthly(prices, dtype.name, capacity_gib, lustre.throughput_per_tib),
        dataset_gib=round(dataset_gib, 1),
        dataset_assumed=dataset_assumed,
        checkpoint_gib=round(checkpoint_gib, 1),
        checkpoint_assumed=write.state_assumed,
        retained_checkpoints=retained,
        required_gib=round(required, 1) if required is not None else None,
        minimum_capacity_gib=minimum,
        max_capacity_gib=dtype.max_gib,
        faster_tier=faster,
        cheapest=cheapest,
    )


@dataclass(frozen=True)
class JobHours:
    hours: float  # failure-free compute hours
    basis: str


def job_compute_hours(training: TrainingSpec, catalog: Catalog) -> JobHours | None:
    """Failure-free hours of the job `training.model.trainingTokens` describes: FLOPs / (GPUs x peak x MFU),
    6 FLOPs per parameter per token (4 for LoRA: no weight gradients for the frozen base), the estimate
    `accelstack advise` uses. None without trainingTokens or a parameter count."""
    model, nodes = training.model, training.nodes
    if model is None or model.training_tokens is None:
        return None
    arch = get_preset(model.preset) if model.preset else None
    params = arch.compute_params if arch else (model.parameters_billion or 0) * 1e9
    if not params:
        return None  # checkpointGiB alone says nothing about the compute
    flops = 4 if model.method == "lora" else 6
    itype = instance(catalog, nodes.instance_type)
    dev = device(itype)
    hours = costs.compute_hours(params, model.training_tokens, itype, nodes.count, costs.DEFAULT_MFU,
                                flops_per_param_token=flops)  # fmt: skip
    basis = (
        f"training.model.trainingTokens: {flops} x {params / 1e9:g} B params x {model.training_tokens:.3g} tokens / "
        f"({nodes.count} x {dev.count} x {dev.peak_tflops:g} TFLOPS {dev.accelerator} x {costs.DEFAULT_MFU:.0%} MFU, "
        "Llama 3 report s3.3)"
    )
    return JobHours(hours, basis)


def plan_training(training: TrainingSpec, *, catalog: Catalog, prices: PriceBook) -> TrainingPlan:
    """Checkpoint interval (Daly 2006) for the stack's nodes, capacity and storage, and the Lustre check,
    on the machine types and file system tiers of `catalog`, priced by `prices`."""
    training = planned_training(training, catalog, prices)  # once: the helpers below take the planned block
    write = _checkpoint_write(training, catalog)
    nodes = training.nodes
    plan = ck.plan(write.state_bytes, write.write_mbps, nodes.count, nodes.capacity)
    mtbf = ck.job_mtbf_hours(nodes.count, nodes.capacity) * 3600
    interval = ck.daly_interval(write.seconds, mtbf)
    return TrainingPlan(
        write=write,
        checkpoint=plan,
        mtbf_seconds=mtbf,
        interval_seconds=max(1, math.floor(interval)),
        lustre=_lustre_check(training, write, catalog=catalog, prices=prices, target_seconds=None),
        training=training,
        file_system=planned_file_system(training, catalog),
    )


def planned_file_system(training: TrainingSpec, catalog: Catalog) -> PlannedFileSystem | None:
    """The typed file system of a planned training block (`planned_training`'s result); None without one.
    ValueError when a value is still missing: the spec rules refuse such a stack before it is planned."""
    lustre = training.storage.lustre
    if lustre is None:
        return None
    tier = catalog.parallel_fs.get(lustre.tier or "")
    if tier is None or lustre.capacity_gib is None:
        raise ValueError(
            f"training.storage.lustre: tier {lustre.tier!r} and capacity {lustre.capacity_gib!r} must be resolved "
            f"before the file system is built; {catalog.cloud} tiers: {', '.join(catalog.parallel_fs)}"
        )
    return PlannedFileSystem(
        tier=tier.name,
        capacity_gib=lustre.capacity_gib,
        throughput_per_tib=lustre.throughput_per_tib if tier.throughput_per_tib else None,
        mount_path=lustre.mount_path,
        import_path=lustre.import_path,
        protocol=tier.protocol,
    )
