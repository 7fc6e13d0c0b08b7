"""Replicas for a load (a memory-bandwidth roofline per replica), the queue's backlog-per-replica target, and whether a model fits an instance.

Backlog target: AWS's method for scaling on an SQS queue ("Scaling policy based on Amazon SQS",
Amazon EC2 Auto Scaling User Guide): acceptable backlog per instance = longest acceptable latency /
average processing time per message. Their worked example: 0.1 s per message and 10 s latency give
100 messages per instance; the scaling metric is queue depth / running instances, tracked at that target.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from accelstack.clouds.base import InstanceType
from accelstack.planner.architectures import Architecture
from accelstack.planner.hardware import GIB, memory_bandwidth_gbps
from accelstack.planner.kv_cache import DEFAULT_GPU_MEMORY_UTILIZATION, KvPlan, plan_for_instance
from accelstack.planner.service_time import DECODE_BANDWIDTH_EFFICIENCY, PREFILL_MFU, ServiceTime, roofline
from accelstack.planner.token_lengths import LoadLengths

# Replicas run below saturation so a burst queues briefly instead of timing out.
DEFAULT_TARGET_UTILIZATION = 0.7


def backlog_per_instance(acceptable_latency_s: float, processing_time_s: float) -> int:
    """Acceptable backlog per instance (AWS SQS method): floor(latency / processing time)."""
    if acceptable_latency_s <= 0 or processing_time_s <= 0:
        raise ValueError("latency and processing time must be > 0")
    # Round before flooring so 10 / 0.1 (= 99.99999 in binary floating point) is 100, as AWS writes it.
    return max(1, math.floor(round(acceptable_latency_s / processing_time_s, 9)))


def backlog_target_from_slo(target_seconds: float, service_seconds: float, concurrency_per_replica: int = 1) -> int:
    """AWS's SQS method with batching: waiting messages per replica that still meet the latency, as each
    replica drains `concurrency` per service time. A threshold on the visible queue only (`accelstack size`,
    the simulator's Azure and GCP models); the AWS stack tracks `owned_backlog_target` instead."""
    return backlog_per_instance(target_seconds, service_seconds) * max(1, concurrency_per_replica)


__all__ = ["DECODE_BANDWIDTH_EFFICIENCY", "PREFILL_MFU"]  # the roofline's assumptions, quoted from here too


def owned_backlog_target(concurrency_per_replica: int, utilization: float = DEFAULT_TARGET_UTILIZATION) -> float:
    """Messages per replica, waiting plus in flight, the AWS scaling policy tracks: the requests a
    replica serves at once (continuous batching) at the target utilization.

    Not AWS's latency / service time (`backlog_target_from_slo`): counting in-flight messages, any
    target at or above the concurrency is reached only with every slot busy and a queue, i.e. at
    saturation, where waits grow without bound (M/M/c) and every new request waits for the next
    scale-out (simulated diurnal day of the example stack, concurrency 11: 72-73% within the SLO at
    targets of 22..110, 93% at 11, 99.7% at 7.7). Below it, the headroom 1 - utilization absorbs load
    growth while the policy reacts (three one-minute datapoints plus an instance start), as
    request-rate scaling does."""
    if not 0 < utilization <= 1:
        raise ValueError("utilization must be in (0, 1]")
    return round(max(1, concurrency_per_replica) * utilization, 2)


@dataclass(frozen=True)
class ReplicaCapacity:
    """What one replica carries for requests of `input_tokens` + `output_tokens`, by the service-time model
    (`planner.service_time`: the roofline, or a measured profile):

    step     = (weights per GPU + batch x KV bytes per token per GPU x mean context) / (bandwidth x efficiency)
    prefill  = 2 x parameters x input tokens / (tp x peak FLOPS x MFU)
    service  = batch x prefill + output tokens x step         (one request's latency at that batch: its own
                                                                prefill and the others', which stall decoding)
    rate     = batch / service = 1 / (prefill + output tokens x step / batch)
    The batch is the queue worker's concurrency, cut to the largest that meets the latency target.
    """

    instance_type: str
    tp: int
    input_tokens: int
    output_tokens: int
    max_batch: int
    batch: int
    bandwidth_gbps: float  # per accelerator, data sheet
    step_seconds: float
    prefill_seconds: float
    service_seconds: float
    requests_per_second: float
    latency_seconds: float | None
    latency_percentile: float | None
    model: ServiceTime | None = None  # the service-time model the numbers come from
    # Stated token-length distributions (`planner.token_lengths`): the mean context the steps read, and the
    # service time at the latency percentile over the lengths; None: fixed lengths (input + output / 2, and the
    # service time itself).
    lengths: LoadLengths | None = None
    context_tokens: float | None = None
    tail_service_seconds: float | None = None

    @property
    def source(self) -> str:
        return self.model.source if self.model is not None else "roofline"

    @property
    def meets_latency(self) -> bool:
        return self.latency_seconds is None or self.latency_service_seconds <= self.latency_seconds + 1e-9

    @property
    def latency_service_seconds(self) -> float:
        """What the latency target is checked against: the percentile service time over the stated lengths, else
        the service time of the stated lengths."""
        return self.tail_service_seconds if self.tail_service_seconds is not None else self.service_seconds

    @property
    def output_tokens_per_second(self) -> float:
        return self.requests_per_second * self.output_tokens

    def assumptions(self) -> str:
        if self.latency_seconds is None:
            latency = ""
        elif self.lengths is None:
            latency = (
                f"; p{self.latency_percentile:g} latency taken as the service time at that batch (fixed token counts; "
                "queueing kept short by the utilization target)"
            )
        else:
            latency = (
                f"; p{self.latency_percentile:g} latency taken as the p{self.latency_percentile:g} service time at "
                f"that batch over the stated lengths ({self.latency_service_seconds:.2f} s; queueing kept short by "
                "the utilization target)"
            )
        if self.lengths is not None:
            latency = f"; {self.lengths.describe()} (mean context {self.context_tokens:.0f} tokens){latency}"
        basis = (
            self.model.assumptions
            if self.model is not None
            else f"decode at {DECODE_BANDWIDTH_EFFICIENCY:.0%} of {self.bandwidth_gbps:g} GB/s per accelerator, "
            f"prefill at {PREFILL_MFU:.0%} MFU"
        )
        return f"{basis}{latency}"

    def formula(self) -> str:
        cut = f" (cut from {self.max_batch} to meet the latency target)" if self.batch < self.max_batch else ""
        return (
            f"batch {self.batch}{cut}: step {self.step_seconds * 1000:.1f} ms, prefill {self.prefill_seconds:.2f} s, "
            f"service {self.service_seconds:.2f} s for {self.input_tokens} + {self.output_tokens} tokens; "
            f"1 / ({self.prefill_seconds:.3f} + {self.output_tokens} x {self.step_seconds:.4f} / {self.batch}) = "
            f"{self.requests_per_second:.2f} req/s per replica"
        )


def replica_capacity(
    arch: Architecture,
    itype: InstanceType,
    *,
    input_tokens: int,
    output_tokens: int,
    max_batch: int,
    precision: str = "bf16",
    kv_precision: str | None = None,
    tp: int | None = None,
    latency_seconds: float | None = None,
    latency_percentile: float | None = None,
    model: ServiceTime | None = None,
    lengths: LoadLengths | None = None,
) -> ReplicaCapacity:
    """Requests/s one replica serves (see `ReplicaCapacity`) by `model` (default: the roofline of `arch` on
    `itype`), for requests of fixed lengths or, with `lengths`, of those distributions (the mean context for the
    rate, the latency percentile of the service time for the batch cut); ValueError on unknown hardware or bad
    sizes."""
    if input_tokens < 1 or output_tokens < 1 or max_batch < 1:
        raise ValueError("input and output tokens and the batch must be >= 1")
    model = model or roofline(arch, itype, precision=precision, kv_precision=kv_precision, tp=tp)
    tp = tp or itype.accelerators
    batch = max_batch
    context = input_tokens + output_tokens / 2 if lengths is None else lengths.mean_context
    tail = None
    if latency_seconds is not None and lengths is None:
        batch = model.largest_batch_within(latency_seconds, input_tokens, output_tokens, max_batch)
    elif latency_seconds is not None and lengths is not None:
        percentile = latency_percentile if latency_percentile is not None else 99.0
        inputs, outputs = lengths.tail_sample()
        batch = model.largest_batch_at_percentile(latency_seconds, percentile, inputs, outputs, max_batch)
        tail = model.percentile_service(percentile, inputs, outputs, batch, float(model.prefill_seconds(inputs).mean()))
    step = float(model.step_seconds(batch, context))
    prefill = float(model.prefill_seconds(input_tokens))
    service = float(model.service_seconds(input_tokens, output_tokens, batch, context=context))
    return ReplicaCapacity(
        itype.name, tp, input_tokens, output_tokens, max_batch, batch, memory_bandwidth_gbps(itype), step, prefill,
        service, batch / service, latency_seconds, latency_percentile, model, lengths,
        context if lengths is not None else None, tail,
    )  # fmt: skip


@dataclass(frozen=True)
class LoadPlan:
    """Replicas for a peak load at a target utilization u, and the per-replica capacity it rests on.

    A fleet at utilization u keeps u x batch requests in flight per replica, and at that batch a request takes
    T(u x batch) -- fewer of the others' prefills stall it than at the full batch. By Little's law the fleet holds
    rate x T(u x batch) requests, so it needs rate x T(u x batch) / (u x batch) replicas: the count the simulator's
    fleet settles on, as it serves each request at the batch actually running (`accelstack.simulate.service`).
    (u x the full-batch rate, batch / T(batch), would count the prefill stalls of a full batch the fleet never
    runs: 13% too many replicas on the AWS example, 2.8x on the Azure one.)"""

    requests_per_second: float
    capacity: ReplicaCapacity
    target_utilization: float
    replicas: int
    running_batch: float  # u x batch: the requests a replica has in flight at the target utilization
    running_service_seconds: float  # T(u x batch): a request's service time at that batch

    @property
    def replica_rate(self) -> float:
        """Requests/s one replica carries at the target utilization: (u x batch) / T(u x batch)."""
        return self.running_batch / self.running_service_seconds

    @property
    def needed(self) -> float:
        """Replicas before rounding up: rate x T(u x batch) / (u x batch)."""
        return self.requests_per_second / self.replica_rate

    @property
    def in_flight(self) -> float:
        """Requests in flight at the peak (Little's law: rate x service time at the running batch)."""
        return self.requests_per_second * self.running_service_seconds

    def carried(self, replicas: int) -> float:
        """Requests/s `replicas` carry at the target utilization."""
        return replicas * self.replica_rate

    def count_formula(self) -> str:
        return (
            f"ceil({self.requests_per_second:g} req/s x {self.running_service_seconds:.3f} s / "
            f"({self.target_utilization:.0%} utilization x {self.capacity.batch} in flight)) = {self.replicas}"
        )

    def basis(self) -> str:
        return (
            f"{self.count_formula()}, the service time at {self.running_batch:g} in flight (each replica carries "
            f"{self.replica_rate:.3f} req/s there); {self.capacity.formula()}; assumed: {self.capacity.assumptions()}"
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "requestsPerSecond": self.requests_per_second,
            "targetUtilization": self.target_utilization,
            "replicas": self.replicas,
            "replicasUnrounded": round(self.needed, 3),
            "inFlight": round(self.in_flight, 2),
            "runningBatch": round(self.running_batch, 3),
            "runningServiceSeconds": round(self.running_service_seconds, 4),
            "requestsPerSecondPerReplicaAtTarget": round(self.replica_rate, 4),
            "perReplica": {
                "batch": self.capacity.batch,
                "maxBatch": self.capacity.max_batch,
                "stepSeconds": round(self.capacity.step_seconds, 5),
                "prefillSeconds": round(self.capacity.prefill_seconds, 4),
                "serviceSeconds": round(self.capacity.service_seconds, 3),
                "requestsPerSecond": round(self.capacity.requests_per_second, 3),
                "outputTokensPerSecond": round(self.capacity.output_tokens_per_second, 1),
                "meetsLatency": self.capacity.meets_latency,
            },
            "serviceModel": self.capacity.source,
            "assumptions": {
                "decodeBandwidthEfficiency": DECODE_BANDWIDTH_EFFICIENCY,
                "memoryBandwidthGBps": self.capacity.bandwidth_gbps,
                "prefillMfu": PREFILL_MFU,
                "targetUtilization": self.target_utilization,
            },
            "basis": self.basis(),
        }


def replicas_for_load(
    requests_per_second: float, capacity: ReplicaCapacity, target_utilization: float = DEFAULT_TARGET_UTILIZATION
) -> LoadPlan:
    """Replicas = ceil(rate x T(u x batch) / (u x batch)) (see `LoadPlan`): each replica keeps u x batch requests
    in flight, each served at that batch. Without a service-time model, T is the full batch's."""
    if requests_per_second < 0:
        raise ValueError("requests per second must be >= 0")
    if not 0 < target_utilization <= 1:
        raise ValueError("target utilization must be in (0, 1]")
    running = capacity.batch * target_utilization
    if capacity.model is not None:
        service = float(
            capacity.model.service_seconds(
                capacity.input_tokens, capacity.output_tokens, max(1.0, running), context=capacity.context_tokens
            )
        )
    else:
        service = capacity.service_seconds
    needed = math.ceil(requests_per_second * service / running - 1e-9)
    return LoadPlan(
        requests_per_second, capacity, target_utilization, max(1 if requests_per_second > 0 else 0, needed),
        round(running, 6), service,
    )  # fmt: skip


@dataclass(frozen=True)
class FitResult:
    """Whether `model` at `precision` fits `instance_type` with tensor-parallel degree `tp`."""

    fits: bool
    model: str
    precision: str
    instance_type: str
    tp: int
    weights_gib_per_gpu: float
    usable_gib_per_gpu: float  # gpu_memory_utilization x visible memory
    kv_cache_gib_per_gpu: float
    max_concurrent_sequences: int
    reason: str
    kv: KvPlan

    def as_dict(self) -> dict[str, object]:
        data = {k: v for k, v in asdict(self).items() if k != "kv"}
        data["kv"] = self.kv.as_dict()
        return data


def fits(
    model: Architecture,
    precision: str,
    itype: InstanceType,
    tp: int | None = None,
    *,
    context_length: int = 8192,
    kv_precision: str | None = None,
    gpu_memory_utilization: float = DEFAULT_GPU_MEMORY_UTILIZATION,
) -> FitResult:
    """Does the model, its activations and one full-context sequence of KV cache fit the instance?

    Used by the serving validator to reject instance types without the GPU memory the model needs.
    """
    instance_type = itype.name
    kv = plan_for_instance(
        model,
        itype,
        tp=tp,
        precision=precision,
        kv_precision=kv_precision,
        context_length=context_length,
        gpu_memory_utilization=gpu_memory_utilization,
    )
    tp, accelerator = kv.tp, itype.accelerator
    usable = kv.budget_bytes / GIB
    weights = kv.weights_bytes / GIB
    if weights >= usable:
        reason = (
            f"{model.name} at {precision} needs {weights:.1f} GiB of weights per GPU (tp={tp}) but "
            f"{instance_type} offers {usable:.1f} GiB usable per {accelerator}"
        )
    elif not kv.fits:
        reason = (
            f"{model.name} at {precision} leaves {max(kv.kv_cache_bytes, 0) / GIB:.2f} GiB per GPU for KV cache "
            f"on {instance_type} (tp={tp}): not one {context_length}-token sequence"
        )
    else:
        count = kv.max_concurrent_sequences
        reason = f"fits: {count} concurrent {context_length}-token {'sequence' if count == 1 else 'sequences'}"
    return FitResult(
        kv.fits,
        model.name,
        precision,
        instance_type,
        tp,
        round(weights, 3),
        round(usable, 3),
        round(max(kv.kv_cache_bytes, 0) / GIB, 3),
        kv.max_concurrent_sequences,
        reason,
        kv,
    )
