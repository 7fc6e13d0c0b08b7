"""`accelstack advise`: walk the decision list in order and stop at the first honest answer.

1. Managed model API - if you do not need weights you control, renting tokens beats running GPUs.
2. Parameter-efficient tuning on one machine - LoRA on one accelerator node fits most adaptation
   jobs: the frozen base model is sharded over the node's GPUs and only the adapter trains.
3. Serving only - you already have the weights; deploy a serving stack.
4. Distributed training - the job is too big for one node within the time you allow.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from accelstack.clouds.base import Catalog, InstanceType
from accelstack.planner.architectures import Architecture
from accelstack.planner.cost import DEFAULT_MFU, HOURS_PER_MONTH, training_compute_hours
from accelstack.planner.hardware import GIB, device, instance
from accelstack.planner.kv_cache import bytes_per_element, lora_bytes
from accelstack.planner.pricing import PriceBook
from accelstack.planner.service_time import ServiceTime
from accelstack.planner.serving import fits, replica_capacity, replicas_for_load
from accelstack.planner.serving_plan import WORKER_CONCURRENCY_CAP
from accelstack.planner.token_lengths import LoadLengths

DEFAULT_MAX_DAYS = 3.0
# LoRA training FLOPs per token ~ 4N: forward (2N) plus backward through frozen weights for the
# activation gradients (2N); no weight-gradient matmuls for the base (Hu et al. 2021 report ~25%
# faster training than full fine-tuning on GPT-3; 4N vs 6N is the usual first-order estimate).
LORA_FLOPS_PER_PARAM_TOKEN = 4
FULL_FLOPS_PER_PARAM_TOKEN = 6
# Activations, adapter gradients and allocator slack on top of the frozen weights (assumption).
LORA_MEMORY_FACTOR = 1.3


def serving_candidates(catalog: Catalog, prices: PriceBook) -> tuple[InstanceType, ...]:
    """The cloud's serving shortlist (`Catalog.serving_candidates`), else every priced instance type.
    ValueError when the shortlist names a type the catalog lacks."""
    names = catalog.serving_candidates or tuple(n for n in catalog.instances if n in prices.on_demand_hourly)
    return tuple(instance(catalog, n) for n in names)


def one_node_candidates(catalog: Catalog, prices: PriceBook) -> tuple[InstanceType, ...]:
    """The cloud's single-node tuning shortlist, else every priced instance type."""
    names = catalog.single_node_training_candidates or tuple(
        n for n in catalog.instances if n in prices.on_demand_hourly
    )
    return tuple(instance(catalog, n) for n in names)


def distributed_instance(catalog: Catalog, prices: PriceBook) -> InstanceType:
    """The cloud's instance type for multi-node training, else the priced one with a fabric and the most
    accelerator memory. ValueError when the catalog has none."""
    if catalog.distributed_training_instance is not None:
        return instance(catalog, catalog.distributed_training_instance)
    fabric = [i for i in catalog.instances.values() if i.has_fabric and i.name in prices.on_demand_hourly]
    if not fabric:
        raise ValueError(f"the {catalog.cloud} catalog has no priced instance type with a training fabric")
    return max(fabric, key=lambda i: i.accelerator_memory_total_gib)


@dataclass(frozen=True)
class Step:
    question: str
    answer: str
    why: str


@dataclass(frozen=True)
class Advice:
    outcome: str  # managed-model-api | peft-one-machine | serving-only | distributed-training
    summary: str
    stacks: tuple[str, ...]
    steps: tuple[Step, ...]
    details: dict[str, object] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _lora_fits(arch: Architecture, itype: InstanceType, precision: str, rank: int) -> bool:
    dev = device(itype)
    need = (
        arch.params * bytes_per_element(precision) * LORA_MEMORY_FACTOR + lora_bytes(arch, rank, precision="fp32") * 4
    )
    return need <= dev.count * dev.visible_gib * GIB * 0.9


@dataclass(frozen=True)
class Load:
    """A serving load to size for: peak requests/s, tokens per request, optional latency target."""

    requests_per_second: float
    input_tokens: int
    output_tokens: int
    latency_seconds: float | None = None
    latency_percentile: float = 95.0
    # How the lengths spread around their means (`planner.token_lengths`); None: fixed lengths.
    lengths: LoadLengths | None = None


def cheapest_serving_instance(
    arch: Architecture,
    precision: str,
    context_length: int,
    *,
    catalog: Catalog,
    prices: PriceBook,
    load: Load | None = None,
    measured: Mapping[str, ServiceTime] | None = None,
) -> dict[str, Any] | None:
    """Without a load: the cheapest instance type the model fits. With one: the type whose replicas carry
    the load (within the latency target) at the least cost per month at peak (replicas x price x 730 h).
    `measured`: service-time models measured on instance types (`accelstack.planner.profile`); only those types
    are candidates, each sized by its measurement (a profile says nothing of other hardware)."""
    best = None
    candidates = serving_candidates(catalog, prices)
    if measured is not None:
        candidates = tuple(instance(catalog, name) for name in measured)
    for itype in candidates:
        result = fits(arch, precision, itype, context_length=context_length)
        if not result.fits or itype.name not in prices.on_demand_hourly:
            continue
        price = prices.hourly(itype.name)
        option: dict[str, object] = {
            "instanceType": itype.name, "hourlyUsd": price, "maxConcurrentSequences": result.max_concurrent_sequences,
        }  # fmt: skip
        if load is not None:
            capacity = replica_capacity(
                arch, itype, input_tokens=load.input_tokens, output_tokens=load.output_tokens,
                max_batch=min(WORKER_CONCURRENCY_CAP, max(1, result.max_concurrent_sequences)), precision=precision,
                latency_seconds=load.latency_seconds,
                latency_percentile=load.latency_percentile if load.latency_seconds is not None else None,
                model=measured.get(itype.name) if measured is not None else None, lengths=load.lengths,
            )  # fmt: skip
            if not capacity.meets_latency:
                continue
            plan = replicas_for_load(load.requests_per_second, capacity)
            option.update(replicas=plan.replicas, monthlyUsdAtPeak=round(plan.replicas * price * HOURS_PER_MONTH, 2),
                          basis=plan.basis(), serviceModel=capacity.source)  # fmt: skip
        rank = option.get("monthlyUsdAtPeak", price)
        if best is None or rank < best.get("monthlyUsdAtPeak", best["hourlyUsd"]):  # type: ignore[operator]
            best = option
    return best


def advise(
    *,
    custom_weights: bool,
    need_train: bool,
    model: Architecture | None = None,
    data_tokens: float = 0.0,
    max_days: float = DEFAULT_MAX_DAYS,
    precision: str = "bf16",
    lora_rank: int = 16,
    context_length: int = 8192,
    mfu: float = DEFAULT_MFU,
    catalog: Catalog,
    prices: PriceBook,
    load: Load | None = None,
    measured: Mapping[str, ServiceTime] | None = None,
) -> Advice:
    """The first honest answer of the decision list, on `catalog`'s machine types priced by `prices`;
    the stacks it names are the cloud's examples (`<cloud>-serving`, ...). `measured`: service times measured on
    instance types (see `cheapest_serving_instance`)."""
    steps: list[Step] = []
    if not custom_weights:
        hosted = f" (e.g. {catalog.managed_model_api})" if catalog.managed_model_api else ""
        steps.append(
            Step(
                "Do you need weights you control (private data, fine-tuning, residency)?",
                "no",
                f"a managed model API{hosted} serves a hosted model per token with no fleet",
            )
        )
        return Advice("managed-model-api", "Use a managed model API; no accelstack stack is needed.", (), tuple(steps))
    steps.append(Step("Do you need weights you control?", "yes", "self-hosting is justified"))
    if model is None:
        raise ValueError("--model is required once you need your own weights (a preset or a custom architecture)")
    if load is not None and load.input_tokens + load.output_tokens > context_length:
        raise ValueError(
            f"input + output tokens ({load.input_tokens + load.output_tokens}) exceed the context ({context_length})"
        )
    serving = cheapest_serving_instance(
        model, precision, context_length, catalog=catalog, prices=prices, load=load, measured=measured
    )
    cloud = catalog.cloud
    details: dict[str, object] = {"model": model.name, "serving": serving}

    if need_train:
        if data_tokens <= 0:
            raise ValueError("--data-tokens must be > 0 when --need-train is given")
        options: list[dict[str, Any]] = []
        for itype in one_node_candidates(catalog, prices):
            if not _lora_fits(model, itype, precision, lora_rank):
                continue
            hours = training_compute_hours(
                model, data_tokens, itype, 1, mfu, flops_per_param_token=LORA_FLOPS_PER_PARAM_TOKEN
            )
            if hours > max_days * 24 or itype.name not in prices.on_demand_hourly:
                continue
            options.append(
                {
                    "instanceType": itype.name,
                    "hours": round(hours, 2),
                    "spotUsd": round(hours * prices.hourly(itype.name, "spot"), 2),
                }
            )
        if options:
            best = min(options, key=lambda o: o["spotUsd"])
            details["finetune"] = best
            steps.append(
                Step(
                    f"Does LoRA on one node finish {data_tokens:.3g} tokens within {max_days:g} days?",
                    "yes",
                    f"{best['instanceType']}: ~{best['hours']} h, ~${best['spotUsd']} on spot with checkpoints to {catalog.object_store_service}",
                )
            )
            return Advice(
                "peft-one-machine",
                f"Parameter-efficient tuning (LoRA) of {model.name} on one {best['instanceType']}, then serve it.",
                (f"{cloud}-finetune", f"{cloud}-serving"),
                tuple(steps),
                details,
            )
        steps.append(
            Step(
                "Does LoRA on one node finish in time?",
                "no",
                f"no single node fits {model.name} and finishes {data_tokens:.3g} tokens in {max_days:g} days",
            )
        )
    else:
        steps.append(Step("Do you need to train?", "no", "you already have the weights"))
        if serving is None:
            within = " and meets the latency target" if load is not None and load.latency_seconds is not None else ""
            raise ValueError(f"{model.name} at {precision} does not fit{within} on any single serving instance type")
        if load is None:
            how = "the cheapest instance type that fits; give --rps/--input-tokens/--output-tokens to size for a load"
        else:
            latency = f" within p{load.latency_percentile:g} {load.latency_seconds:g} s" if load.latency_seconds else ""
            how = (
                f"{serving['replicas']} {'replica carries' if serving['replicas'] == 1 else 'replicas carry'} "
                f"{load.requests_per_second:g} req/s{latency} for ${serving['monthlyUsdAtPeak']:,.0f}/month at peak, 24x7: "
                + ("sized by the measured profile" if measured is not None else "the least cost of the types that fit")
            )
            steps.append(Step("Which instance type carries the load at least cost?", str(serving["instanceType"]),
                              str(serving["basis"])))  # fmt: skip
        return Advice(
            "serving-only",
            f"Serve {model.name} on {serving['instanceType']} ({how}).",
            (f"{cloud}-serving",),
            tuple(steps),
            details,
        )
    distributed = distributed_instance(catalog, prices)
    per_node_hours = training_compute_hours(
        model, data_tokens, distributed, 1, mfu, flops_per_param_token=FULL_FLOPS_PER_PARAM_TOKEN
    )
    nodes = max(2, math.ceil(per_node_hours / (max_days * 24)))
    details["training"] = {
        "instanceType": distributed.name,
        "nodes": nodes,
        "hours": round(per_node_hours / nodes, 2),
    }
    steps.append(
        Step(
            "Distributed training",
            "yes",
            f"{nodes} x {distributed.name} finish in ~{per_node_hours / nodes:.1f} h at {mfu:.0%} MFU",
        )
    )
    return Advice(
        "distributed-training",
        f"Distributed training of {model.name} on {nodes} x {distributed.name}, then serve it.",
        (f"{cloud}-training", f"{cloud}-serving"),
        tuple(steps),
        details,
    )
