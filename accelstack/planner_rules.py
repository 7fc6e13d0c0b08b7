"""Spec rules that need the planner's math: model presets, GPU-memory fit, Lustre capacity and
checkpoint write time. Same `@rule` registry, paths, messages and levels as the spec's own rules.

The spec layer sits below the planner and never imports it. This module is a rule plug-in: it is
named under the `accelstack.rules` entry-point group in pyproject.toml, and the spec's
`run_validators` loads that group once (see `accelstack.spec.validators`), so importing only
`accelstack.spec` still runs these rules.

It lives beside the planner, not in it: the planner is handed a catalog and a price book and asks no
registry, while a rule gets only the spec, so this module looks the stack's cloud up
(`accelstack.clouds.registry`) and hands the planner that cloud's catalog and list prices.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelstack.clouds import registry
from accelstack.clouds.base import Cloud
from accelstack.planner import training_plan as tp
from accelstack.planner.architectures import get_preset, preset_names
from accelstack.planner.hardware import GIB
from accelstack.planner.kv_cache import DEFAULT_GPU_MEMORY_UTILIZATION
from accelstack.planner.lustre import DEFAULT_HEADROOM
from accelstack.planner.model_size import architecture_of, weights_gb
from accelstack.planner.pricing import PriceBook
from accelstack.planner.serving import fits
from accelstack.planner.serving_plan import VISIBILITY_TIMEOUT_SERVICE_MULTIPLE, plan_serving
from accelstack.planner.units import counted
from accelstack.spec.models import ServingStack, StackSpec, TrainingStack
from accelstack.spec.problems import Level, Problem, did_you_mean
from accelstack.spec.validators import rule


def _cloud(spec: StackSpec) -> Cloud | None:
    """The stack's registered cloud; None for one the registry lacks (the spec's own rules report it)."""
    try:
        return registry.get(spec.cloud)
    except ValueError:
        return None


def _list_prices(cloud: Cloud) -> PriceBook:
    return PriceBook.from_prices(cloud.prices)


@rule(workload="training")
def training_model_preset_known(spec: TrainingStack) -> Iterator[Problem]:
    """training.model.preset names one of the planner's architecture presets (it sizes the checkpoint)."""
    preset = spec.training.model.preset if spec.training.model is not None else None
    if preset is None:
        return
    try:
        get_preset(preset)
    except ValueError:
        names = preset_names()
        yield Problem(
            "training.model.preset",
            f"unknown model {preset!r}{did_you_mean(preset, names)}; allowed: {', '.join(names)}",
        )


def _lustre_check(spec: TrainingStack) -> tp.LustreCheck | None:
    """The planner's Lustre check for a training stack, or None when another rule already rejects its inputs."""
    cloud = _cloud(spec)
    if cloud is None:
        return None
    training = spec.training
    lustre = training.storage.lustre
    if lustre is None:
        return None
    kind = cloud.catalog.parallel_fs.get(lustre.tier or "")
    if kind is None or (kind.throughput_per_tib and lustre.throughput_per_tib not in kind.throughput_per_tib):
        return None  # parallel_fs_tier_known / parallel_fs_throughput_tier report it
    catalog, prices = cloud.catalog, _list_prices(cloud)
    try:
        return tp.lustre_check(training, tp.checkpoint_write(training, catalog, prices), catalog=catalog, prices=prices)
    except ValueError:
        return None  # unknown preset or instance type: their own rules report it


@rule(workload="training")
def lustre_holds_dataset_and_checkpoints(spec: TrainingStack) -> Iterator[Problem]:
    """Lustre must hold the stated dataset (datasets.sizeGiB) and the checkpoints kept on it (two of the
    size training.model gives: the latest and the one being written) with 20% headroom; a full file
    system fails staging and checkpoint writes mid-job. Only stated sizes count, never the HBM guess."""
    check = _lustre_check(spec)
    if check is None or check.holds_data or check.required_gib is None:
        return
    parts = []
    if not check.dataset_assumed:
        parts.append(f"the {check.dataset_gib:g} GiB dataset")
    if check.retained_checkpoints and not check.checkpoint_assumed:
        parts.append(f"{check.retained_checkpoints} checkpoints of {check.checkpoint_gib:g} GiB")
    yield Problem(
        "training.storage.lustre.capacityGiB",
        f"{check.capacity_gib} GiB cannot hold {' + '.join(parts)} + {DEFAULT_HEADROOM:.0%} headroom = "
        f"{check.required_gib:g} GiB; {check.smallest_holding()}",
    )


@rule(workload="training")
def lustre_capacity_derivable(spec: TrainingStack) -> Iterator[Problem]:
    """With capacityGiB omitted the planner sizes Lustre for the data; without datasets.sizeGiB it cannot,
    and keeps the fixed 4800 GiB of earlier releases (grown for the checkpoints): say so. A derived size
    above the account's default FSx quota gets the same warning a stated one does."""
    cloud = _cloud(spec)
    if cloud is None:
        return
    training = spec.training
    lustre = training.storage.lustre
    if lustre is None or lustre.capacity_gib is not None:
        return
    try:
        setting = tp.lustre_setting(training, cloud.catalog, _list_prices(cloud))
    except ValueError:
        return  # unknown preset or instance type: their own rules report it
    if setting is None:
        return
    quota = cloud.limits.get("lustre_default_quota_gib")
    if quota is not None and setting.capacity_gib > quota:
        yield Problem(
            "training.storage.lustre.capacityGiB",
            f"derived {setting.capacity_gib} GiB is above the default {cloud.catalog.parallel_fs_service} storage "
            f"quota ({quota} GiB per {cloud.account_kind} and Region); request an increase first",
            Level.WARNING,
        )
    if training.storage.datasets.size_gib is not None:
        return
    yield Problem(
        "training.storage.datasets.sizeGiB",
        f"not stated, so training.storage.lustre.capacityGiB cannot be sized for the data and is "
        f"{setting.capacity_gib} GiB; state the dataset size (GiB) or capacityGiB",
        Level.WARNING,
    )


def _usd_per_month(delta: float) -> str:
    return f"{'+' if delta >= 0 else '-'}${abs(delta):,.0f}/month"


@rule(workload="training")
def checkpoint_write_within_target(spec: TrainingStack) -> Iterator[Problem]:
    """A synchronous checkpoint stalls every GPU while Lustre writes it: warn when the checkpoint of the
    model in training.model takes longer than the target at the configured throughput, naming the tier
    that meets it and what it costs. Silent when the checkpoint size is only assumed."""
    check = _lustre_check(spec)
    if check is None or check.checkpoint_assumed or check.retained_checkpoints == 0 or check.meets_target:
        return
    configured = f"${check.monthly_usd:,.0f}/month" if check.monthly_usd is not None else "no known price"
    tier = check.throughput_per_tib
    message = (
        f"a {check.checkpoint_gib:g} GiB checkpoint takes {check.write_seconds:g} s at {check.capacity_gib} GiB x "
        f"{tier or 'baseline'} MB/s/TiB = {check.throughput_mbps:g} MB/s ({configured}), over the "
        f"{check.target_seconds:g} s target ({check.target_basis})"
    )
    faster = check.faster_tier
    if faster is not None:
        if faster.monthly_usd is not None and check.monthly_usd is not None:
            cost = (
                f"{_usd_per_month(faster.monthly_usd - check.monthly_usd)} (${faster.monthly_usd:,.0f} vs {configured})"
            )
        else:
            cost = "no known price for the difference"
        message += f"; throughputPerTiB: {faster.throughput_per_tib} writes it in {faster.write_seconds:g} s, {cost}"
    elif tier is None:
        message += f"; {check.deployment_type} throughput is fixed per TiB, so only more capacity writes faster"
    else:
        message += f"; no {check.deployment_type} tier at {check.capacity_gib} GiB does"
    best = check.cheapest
    if (
        best is not None
        and best.monthly_usd is not None
        and (faster is None or faster.monthly_usd is None or best.monthly_usd < faster.monthly_usd - 0.005)
    ):
        delta = f", {_usd_per_month(best.monthly_usd - check.monthly_usd)}" if check.monthly_usd is not None else ""
        message += (
            f"; cheapest that holds the same data and meets it: capacityGiB: {best.capacity_gib} at "
            f"{best.throughput_per_tib or 'baseline'} MB/s/TiB ({best.checkpoint_write_seconds:g} s, "
            f"${best.monthly_usd:,.0f}/month{delta})"
        )
    path = "training.storage.lustre.throughputPerTiB" if tier is not None else "training.storage.lustre.capacityGiB"
    yield Problem(path, message, Level.WARNING)


@rule(workload="serving")
def serving_instance_fits_model(spec: ServingStack) -> Iterator[Problem]:
    """The model (weights, activations and KV cache for one full-context request) must fit in the
    GPUs it is sharded over, at the fraction of memory the server may use (planner `fits`). Silent
    when the spec's `serving_machine_type_in_catalog` already rejects the instance type or sharding."""
    cloud = _cloud(spec)
    serving = spec.serving
    if cloud is None:
        return
    replicas, model = serving.replicas, serving.model
    itype = cloud.catalog.instances.get(replicas.instance_type)
    shards = (replicas.tensor_parallel or itype.accelerators) if itype else 0
    if itype is None or shards > itype.accelerators:
        return
    path = "serving.replicas.instanceType"
    has = f"{itype.name} has {itype.accelerators} x {itype.accelerator_memory_gib} GiB {itype.accelerator}"
    advice = "choose a larger instance, a lower precision (fp8/int4) or a shorter contextLength"
    arch = architecture_of(model.name, model.preset)
    if arch is not None:
        result = fits(arch, model.precision, itype, shards, context_length=model.context_length)
        if not result.fits:
            shown_weights = weights_gb(serving) or 0.0
            yield Problem(
                path,
                f"{model.name} at {model.precision} needs ~{shown_weights:.0f} GB weights + KV: {result.reason}; {has}; {advice}",
            )
        return
    weights = weights_gb(serving)
    if weights is None:
        yield Problem(
            "serving.model.parametersBillion",
            f"cannot tell the size of {model.name!r}; set parametersBillion (or a known preset) so the "
            "GPU memory check can run",
            Level.WARNING,
        )
        return
    # Unknown architecture: the weights alone must fit (the KV cache cannot be sized without it).
    usable_gb = shards * itype.accelerator_memory_gib * GIB / 1e9 * DEFAULT_GPU_MEMORY_UTILIZATION
    if weights > usable_gb:
        yield Problem(
            path,
            f"{model.name} at {model.precision} needs ~{weights:.0f} GB weights + KV; {has} "
            f"(~{usable_gb:.0f} GB usable at {DEFAULT_GPU_MEMORY_UTILIZATION:.0%}); {advice}",
        )


@rule(workload="serving")
def serving_replicas_carry_load(spec: ServingStack) -> Iterator[Problem]:
    """With `serving.load` stated: replicas.max must carry the peak at the target utilization, the
    latency target must be reachable on the instance, and replicas.min should not exceed what the peak
    needs (those replicas run every hour). Numbers from `planner.serving.replica_capacity`."""
    cloud = _cloud(spec)
    serving = spec.serving
    if serving.load is None or cloud is None:
        return
    load, replicas, model = serving.load, serving.replicas, serving.model
    if load.input_tokens + load.output_tokens > model.context_length:
        yield Problem(
            "serving.load",
            f"inputTokens + outputTokens = {load.input_tokens + load.output_tokens} exceed "
            f"serving.model.contextLength {model.context_length}",
        )
        return
    if architecture_of(model.name, model.preset) is None:
        yield Problem(
            "serving.model.preset",
            f"cannot size replicas for serving.load: {model.name!r} has no known architecture; set a preset",
            Level.WARNING,
        )
        return
    try:
        plan = plan_serving(serving, cloud.catalog).load
    except ValueError:
        return  # unknown instance type or model size: their own rules report it
    if plan is None:
        return
    capacity = plan.capacity
    if not capacity.meets_latency:
        assert load.latency is not None
        tail = (
            f"; the p{load.latency.percentile:g} request of the stated lengths ({capacity.lengths.describe()}) "
            f"{capacity.latency_service_seconds:.1f} s"
            if capacity.lengths is not None
            else ""
        )
        yield Problem(
            "serving.load.latency.targetSeconds",
            f"one request alone takes {capacity.service_seconds:.1f} s on {replicas.instance_type} "
            f"(prefill {capacity.prefill_seconds:.2f} s + {load.output_tokens} tokens x {capacity.step_seconds * 1000:.1f} ms{tail}), "
            f"over the p{load.latency.percentile:g} target of {load.latency.target_seconds:g} s; choose a faster "
            f"instance type, a lower precision or fewer output tokens (assumed: {capacity.assumptions()})",
            Level.WARNING,
        )
    stated = serving.slo.service_seconds
    if not 0.5 <= stated / capacity.service_seconds <= 2:
        yield Problem(
            "serving.slo.serviceSeconds",
            f"{stated:g} s, but a request of the stated load takes ~{capacity.service_seconds:.1f} s on "
            f"{replicas.instance_type} ({capacity.formula()}); scaling's request-rate targets use that modelled time, "
            f"but the stated one still sizes the queue's visibility timeout (serviceSeconds x "
            f"{VISIBILITY_TIMEOUT_SERVICE_MULTIPLE}), the warm pool's burst (maxDepth x serviceSeconds / ttlSeconds) and "
            f"the queue-drain check, which come out too {'short' if stated < capacity.service_seconds else 'long'}; "
            f"measure it or set serving.slo.serviceSeconds: {capacity.service_seconds:.1f}",
            Level.WARNING,
        )
    if plan.replicas > replicas.max:
        yield Problem(
            "serving.replicas.max",
            f"{counted(replicas.max, 'replicas')} of {replicas.instance_type} {'carries' if replicas.max == 1 else 'carry'} "
            f"{plan.carried(replicas.max):.1f} req/s; "
            f"the stated load of {load.requests_per_second:g} req/s needs {plan.replicas} ({plan.basis()})",
            Level.WARNING,
        )
    elif replicas.min > plan.replicas:
        yield Problem(
            "serving.replicas.min",
            f"{counted(replicas.min, 'replicas')} {'runs' if replicas.min == 1 else 'run'} at all hours, but the peak of "
            f"{load.requests_per_second:g} req/s "
            f"needs {plan.replicas} ({plan.basis()}); lower min to {plan.replicas} or below",
            Level.WARNING,
        )


# The fast simulation `validate` runs of a stated load: a steady hour at most, and at most this many requests, so
# a rule costs about a second whatever the rate.
LOAD_CHECK_SECONDS = 3600.0
LOAD_CHECK_REQUESTS = 200_000


@rule(workload="serving")
def serving_load_meets_slo_in_simulation(spec: ServingStack) -> Iterator[Problem]:
    """With `serving.load` stated: a short steady simulation of that load on what the stack deploys (its cloud's
    scaling rule, the plan's service-time model, a steady start) meets the latency target at the stated
    percentile; warn with the figure otherwise."""
    cloud = _cloud(spec)
    serving = spec.serving
    if serving.load is None or cloud is None or cloud.serving_scaling is None:
        return
    # Imported here: the simulator (numpy, SimPy) loads only for stacks that state a load.
    from accelstack.planner.token_lengths import of_load
    from accelstack.simulate.design import default_autoscaler, design_from_spec
    from accelstack.simulate.engine import Simulation
    from accelstack.simulate.report import summarize
    from accelstack.simulate.workload import synthetic

    load = serving.load
    kind = default_autoscaler(serving, cloud.default_autoscaler, cloud.load_balancer_autoscaler)
    if kind is None:
        return
    try:
        design = design_from_spec(
            serving, _list_prices(cloud), catalog=cloud.catalog, autoscaler=kind, rules=cloud.serving_scaling
        )
    except (ValueError, KeyError):
        return  # unknown instance type, model or rule: their own rules report it
    if design.service_time is None:
        return  # no architecture known: serving_model_architecture_known says so
    horizon = min(LOAD_CHECK_SECONDS, LOAD_CHECK_REQUESTS / load.requests_per_second)
    share = load.latency.percentile / 100 if load.latency is not None else 0.99
    stream = synthetic(
        "steady", load.requests_per_second, horizon=horizon, mean_tokens=load.output_tokens, seed=0,
        lengths=of_load(load),
    )  # fmt: skip
    summary = summarize(Simulation(design, stream).run(), share)
    slo = summary["slo"]
    if slo["met"]:
        return
    latency = summary["latencySeconds"]
    percentile = f"p{share * 100:g}"
    yield Problem(
        "serving.load",
        f"a {horizon / 60:.0f}-minute simulation of the stated {load.requests_per_second:g} req/s "
        f"({load.input_tokens} + {load.output_tokens} tokens; {of_load(load).describe()}) on {summary['replicas']} replicas "
        f"({kind}) finishes {slo['attainment']:.1%} of requests within {slo['targetSeconds']:g} s, below the "
        f"{percentile} target of {share:.0%} (latency p95 {latency['p95']} s, p99 {latency['p99']} s; "
        f"{summary['requests']['refused']:,} refused, {summary['requests']['expired']:,} expired); "
        f"`accelstack simulate serving {spec.stack}` shows why",
        Level.WARNING,
    )


@rule(workload="serving")
def serving_model_architecture_known(spec: ServingStack) -> Iterator[Problem]:
    """serving.model.preset names a planner preset; a model the planner cannot map to an architecture
    is sized from its weights alone (KV cache per request and concurrency are assumed), so say so."""
    cloud = _cloud(spec)
    serving = spec.serving
    if cloud is None:
        return
    model = serving.model
    names = preset_names()
    if model.preset is not None:
        try:
            get_preset(model.preset)
        except ValueError:
            yield Problem(
                "serving.model.preset",
                f"{model.preset!r} is not a known preset{did_you_mean(model.preset, names)}; allowed: {', '.join(names)}",
            )
        return
    if architecture_of(model.name, None) is None and weights_gb(serving) is not None:
        yield Problem(
            "serving.model.preset",
            f"{model.name!r} is not a known architecture: only its weights are checked against GPU memory; the "
            "KV cache per request and the concurrency are assumed; set preset to the closest of: "
            f"{', '.join(names)}",
            Level.WARNING,
        )
