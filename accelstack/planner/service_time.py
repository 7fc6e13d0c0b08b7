"""How long one replica takes to serve a request: the one model the planner sizes replicas with
(`planner.serving.replica_capacity`) and the simulator serves each request with (`accelstack.simulate.engine`).

Per request of `input` prompt tokens and `output` generated tokens, on a replica running `batch` sequences:

    prefill(input)           compute bound: 2 x parameters x input / (tp x peak FLOPS x MFU)
    step(batch, context)     memory bound, one decode step shared by the batch: (weights + batch x KV bytes per token
                             x context) / (bandwidth x efficiency), per GPU; context = input + output / 2 (the mean
                             context over the generation)
    service(batch)           prefill(input) + (batch - 1) x prefill(mean input) + output x step(batch, context)

The middle term: prefills run one at a time and stall the batch's decode steps (vLLM schedules a waiting prefill
before the next decode step), and in a steady batch each of the other `batch - 1` sequences is replaced once during
a request's generation. So a replica clears `batch / service(batch)` requests per second -- the planner's rate
1 / (prefill + output x step / batch) -- and a request's latency at that batch is `service(batch)`: one story.

Measured profiles replace the data-sheet figures (`accelstack.planner.profile`): decode step seconds by batch and
context, prefill seconds by prompt length. The model is stored as knots, the same for both: the decode step is
`fixed(batch) + per_context(batch) x context`, piecewise linear in batch between knots (linear beyond the last
two), and prefill is piecewise linear in prompt tokens (proportional below the first knot and, with one knot,
beyond it). Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelstack.clouds.base import InstanceType
from accelstack.planner.architectures import Architecture
from accelstack.planner.hardware import device, memory_bandwidth_gbps
from accelstack.planner.kv_cache import kv_bytes_per_token, weights_bytes

if TYPE_CHECKING:  # numpy is imported where an array is made: a training stack's validation and program never do
    import numpy as np
    import numpy.typing as npt

    Numbers = npt.ArrayLike

# Decoding one step reads every weight (and each sequence's KV cache) once, so a replica's decode rate
# is memory-bandwidth bound; serving engines reach about this fraction of the data-sheet bandwidth
# (an assumption, printed with every replica count; a measured profile replaces it).
DECODE_BANDWIDTH_EFFICIENCY = 0.6
# Prefill is compute bound: 2 FLOPs per parameter per prompt token at this model-FLOPs utilization
# (the training figure of the Llama 3 report, s3.3, as the assumption).
PREFILL_MFU = 0.4


@dataclass(frozen=True)
class ServiceTime:
    """One replica's service-time model (see the module): decode-step knots by batch, prefill knots by length."""

    source: str  # where the numbers come from: "roofline", "profile FILE", "vllm bench serve FILE"
    batches: tuple[float, ...]  # decode knots, increasing, >= 1
    step_fixed: tuple[float, ...]  # seconds per decode step at each knot, context 0
    step_per_context: tuple[float, ...]  # seconds per decode step per token of context, at each knot
    prefill_tokens: tuple[float, ...]  # prefill knots, increasing, > 0
    prefill_knot_seconds: tuple[float, ...]
    assumptions: str = ""

    def __post_init__(self) -> None:
        if not self.batches or len({len(self.batches), len(self.step_fixed), len(self.step_per_context)}) != 1:
            raise ValueError("one decode step per batch knot")
        if not self.prefill_tokens or len(self.prefill_tokens) != len(self.prefill_knot_seconds):
            raise ValueError("one prefill time per length knot")
        if any(b < 1 for b in self.batches) or list(self.batches) != sorted(set(self.batches)):
            raise ValueError("decode batches must increase from >= 1")
        if any(t <= 0 for t in self.prefill_tokens) or list(self.prefill_tokens) != sorted(set(self.prefill_tokens)):
            raise ValueError("prefill lengths must increase from > 0")
        values = (*self.step_fixed, *self.step_per_context, *self.prefill_knot_seconds)
        if any(not math.isfinite(v) or v < 0 for v in values) or not any(v > 0 for v in self.step_fixed):
            raise ValueError("step and prefill seconds must be finite and >= 0, some step > 0")

    # --- the model --------------------------------------------------------------------------------

    def step_terms(self, batch: Numbers) -> tuple[np.ndarray, np.ndarray]:
        """(fixed, per-context) seconds of one decode step at each `batch`: piecewise linear through the knots,
        constant below the first, continued along the last segment beyond the last (never below zero)."""
        import numpy as np

        b = np.asarray(batch, dtype=float)
        knots = np.asarray(self.batches)
        fixed, per_context = np.asarray(self.step_fixed), np.asarray(self.step_per_context)
        if len(knots) == 1:
            return np.broadcast_to(fixed[0], b.shape).copy(), np.broadcast_to(per_context[0], b.shape).copy()
        inside_fixed = np.interp(b, knots, fixed)
        inside_context = np.interp(b, knots, per_context)
        beyond = b > knots[-1]
        if beyond.any():
            run = knots[-1] - knots[-2]
            extra = b - knots[-1]
            inside_fixed = np.where(beyond, fixed[-1] + extra * (fixed[-1] - fixed[-2]) / run, inside_fixed)
            inside_context = np.where(
                beyond, per_context[-1] + extra * (per_context[-1] - per_context[-2]) / run, inside_context
            )
        return np.maximum(inside_fixed, 0.0), np.maximum(inside_context, 0.0)

    def step_seconds(self, batch: Numbers, context: Numbers) -> np.ndarray:
        import numpy as np

        fixed, per_context = self.step_terms(batch)
        return np.asarray(fixed + per_context * np.asarray(context, dtype=float))

    def prefill_seconds(self, tokens: Numbers) -> np.ndarray:
        """Seconds to prefill prompts of `tokens`: proportional up to the first knot, piecewise linear through the
        knots, then along the last segment (with one knot: proportional throughout)."""
        import numpy as np

        t = np.asarray(tokens, dtype=float)
        knots, seconds = np.asarray(self.prefill_tokens), np.asarray(self.prefill_knot_seconds)
        xs, ys = np.concatenate([[0.0], knots]), np.concatenate([[0.0], seconds])
        inside = np.interp(t, xs, ys)
        slope = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2])
        return np.asarray(np.where(t > xs[-1], ys[-1] + (t - xs[-1]) * slope, inside))

    def service_seconds(
        self,
        input_tokens: Numbers,
        output_tokens: Numbers,
        batch: Numbers,
        mean_prefill: float | None = None,
        context: Numbers | None = None,
    ) -> np.ndarray:
        """A request's time on its slot at `batch`: its prefill, the other sequences' prefills, its decode steps
        (`mean_prefill`: the others' prefill, default this request's own; `context`: the mean context its steps
        read, default input + output / 2 -- a distribution's mean is `planner.token_lengths`' mean context)."""
        import numpy as np

        inputs, outputs = np.asarray(input_tokens, dtype=float), np.asarray(output_tokens, dtype=float)
        own = self.prefill_seconds(inputs)
        others = own if mean_prefill is None else mean_prefill
        b = np.asarray(batch, dtype=float)
        read = inputs + outputs / 2 if context is None else np.asarray(context, dtype=float)
        return np.asarray(own + (b - 1) * others + outputs * self.step_seconds(b, read))

    def requests_per_second(self, input_tokens: float, output_tokens: float, batch: int) -> float:
        """What one replica clears with `batch` sequences in flight: batch / service(batch)."""
        return float(batch / self.service_seconds(input_tokens, output_tokens, batch))

    def largest_batch_within(self, latency: float, input_tokens: float, output_tokens: float, max_batch: int) -> int:
        """The largest batch (1..max_batch) whose service time meets `latency`; 1 when none does."""
        import numpy as np

        batches = np.arange(1, max_batch + 1)
        ok = np.flatnonzero(self.service_seconds(input_tokens, output_tokens, batches) <= latency + 1e-9)
        return int(batches[ok[-1]]) if len(ok) else 1

    def percentile_service(
        self, percentile: float, inputs: np.ndarray, outputs: np.ndarray, batch: float, mean_prefill: float
    ) -> float:
        """The `percentile`-th service time at `batch` over requests of the drawn `inputs` and `outputs`."""
        import numpy as np

        return float(np.percentile(self.service_seconds(inputs, outputs, batch, mean_prefill), percentile))

    def largest_batch_at_percentile(
        self, latency: float, percentile: float, inputs: np.ndarray, outputs: np.ndarray, max_batch: int
    ) -> int:
        """The largest batch (1..max_batch) whose `percentile`-th service time over the drawn lengths meets
        `latency`; 1 when none does. A bisection: the service time grows with the batch (more prefills stall it,
        each step reads more KV cache)."""
        mean_prefill = float(self.prefill_seconds(inputs).mean())
        lo, hi = 1, max_batch
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.percentile_service(percentile, inputs, outputs, mid, mean_prefill) <= latency + 1e-9:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def as_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "decode": [
                {"batch": b, "stepSecondsAtContext0": round(f, 6), "stepSecondsPerContextToken": c}
                for b, f, c in zip(self.batches, self.step_fixed, self.step_per_context, strict=True)
            ],
            "prefill": [
                {"tokens": t, "seconds": round(s, 6)}
                for t, s in zip(self.prefill_tokens, self.prefill_knot_seconds, strict=True)
            ],
            "assumptions": self.assumptions,
        }


def roofline(
    arch: Architecture,
    itype: InstanceType,
    *,
    precision: str = "bf16",
    kv_precision: str | None = None,
    tp: int | None = None,
    bandwidth_efficiency: float = DECODE_BANDWIDTH_EFFICIENCY,
    mfu: float = PREFILL_MFU,
) -> ServiceTime:
    """The data-sheet model of `arch` on `itype` (per GPU, tp-way): ValueError on unknown hardware."""
    dev = device(itype)
    tp = tp or dev.count
    bandwidth = memory_bandwidth_gbps(itype)
    if not dev.peak_tflops:
        raise ValueError(f"no peak TFLOPS known for {dev.accelerator}")
    effective = bandwidth * 1e9 * bandwidth_efficiency
    weights = weights_bytes(arch, precision) / tp
    per_token = kv_bytes_per_token(arch, kv_precision or precision, tp)
    prefill_per_token = 2 * arch.compute_params / (tp * dev.peak_tflops * 1e12 * mfu)
    fixed = weights / effective
    return ServiceTime(
        "roofline",
        (1.0, 2.0),
        (fixed, fixed),
        (per_token / effective, 2 * per_token / effective),
        (1.0,),
        (prefill_per_token,),
        f"decode at {bandwidth_efficiency:.0%} of {bandwidth:g} GB/s per accelerator, prefill at {mfu:.0%} MFU",
    )


def stated_rate(tokens_per_second: float, source: str) -> ServiceTime:
    """A fixed per-sequence decode rate, whatever the batch, and no prefill: the service time a user states
    (`simulate --tokens-per-second`, or serving.slo.serviceSeconds over the mean output)."""
    if not tokens_per_second > 0:
        raise ValueError("tokens per second must be > 0")
    return ServiceTime(source, (1.0,), (1 / tokens_per_second,), (0.0,), (1.0,), (0.0,), source)
