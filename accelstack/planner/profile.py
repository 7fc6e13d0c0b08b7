"""Measured service times that replace the data-sheet assumptions (`planner.service_time`): a profile document,
as `accelstack calibrate` writes it, or the result file of `vllm bench serve --save-result`. Pure: the caller
reads the file (`accelstack.spec.json_input.read_json`) and hands the parsed JSON here.

A profile (JSON):

    {"kind": "accelstack-serving-profile", "version": 1, "model": "...", "instanceType": "...",
     "decode": [{"batch": 1, "context": 1024, "stepSeconds": 0.0121}, ...],
     "prefill": [{"tokens": 512, "seconds": 0.031}, ...]}

Decode steps by batch and context: at each measured batch, seconds = fixed + per-context x context (least squares
over its contexts, slope >= 0; one context: the roofline's slope scaled to the measurement, else flat); piecewise
linear between batches. With ONE measured batch the roofline's shape is kept and scaled to the measurement (a
point cannot say how a step grows with the batch). Prefill seconds by prompt length: piecewise linear (one point:
proportional).

A `vllm bench serve` result (vLLM vllm/benchmarks/serve.py, formerly benchmarks/benchmark_serving.py,
`--save-result`) measures one operating point. Its keys, as serve.py writes them: `completed`, `total_input_tokens`,
`total_output_tokens`, `request_throughput` (completed / duration) always; `max_concurrency` always (null unless
`--max-concurrency`); `latencies` (each request's end-to-end seconds, 0 for a failed one) unless trimmed;
`mean_<metric>_ms` only for the metrics `--percentile-metrics` selects, by default ttft, tpot and itl -- so
`mean_e2el_ms` is there only when e2el is selected. Read: `mean_tpot_ms` (time per output token after the first:
one decode step) at the batch it ran -- the requests in flight by Little's law (request_throughput x the mean
end-to-end latency, from `mean_e2el_ms` or `latencies`; at most `max_concurrency`), else `max_concurrency` -- over a
context of the mean prompt plus half the mean output (`total_input_tokens`, `total_output_tokens` over
`completed`); and `mean_ttft_ms` as the prefill of the mean prompt (an upper bound: TTFT includes any wait in the
server's queue). A missing or malformed key is named.
"""

from __future__ import annotations

import math
from typing import Any

from accelstack.planner.service_time import ServiceTime

PROFILE_KIND = "accelstack-serving-profile"
PROFILE_VERSION = 1
MAX_POINTS = 10_000  # a sweep of batches x contexts x lengths is a few hundred points
MAX_LATENCIES = 1_000_000  # a vllm bench serve result's per-request latencies (--num-prompts; the file is size-capped)
VLLM_KEYS = ("mean_tpot_ms", "mean_ttft_ms", "completed", "total_input_tokens", "total_output_tokens")
# Keys only a vllm bench serve result has (an accelstack profile has `kind`): any of them makes a file one.
VLLM_MARKERS = (*VLLM_KEYS, "request_throughput", "max_concurrency", "latencies", "mean_e2el_ms")


class ProfileError(ValueError):
    """A profile document that cannot be used; the message names the field."""


# What a measurement can be (a field's name -> its largest value, and what that largest means): past these a number
# is in other units (milliseconds written as seconds) or not a measurement, and the simulator would replay it as a
# fleet that answers in hours or in no time at all.
LARGEST = {
    "batch": (100_000, "sequences in one batch"),
    "context": (2_000_000, "tokens (serving.model.contextLength's bound)"),
    "tokens": (2_000_000, "tokens (serving.model.contextLength's bound)"),
    "stepSeconds": (10.0, "s per decode step; if these are milliseconds, divide by 1000"),
    "seconds": (600.0, "s of prefill; if these are milliseconds, divide by 1000"),
    "mean_tpot_ms": (10_000.0, "ms per output token"),
    "mean_ttft_ms": (600_000.0, "ms to the first token"),
    "max_concurrency": (100_000, "sequences in one batch"),
    "mean_e2el_ms": (3_600_000.0, "ms per request (an hour)"),
    "request_throughput": (1_000_000.0, "requests/s"),
}
# The fastest a step or a prefill is timed (1 microsecond): below it a value is in other units or rounding noise.
SMALLEST_SECONDS = 1e-6


def _number(value: Any, where: str, *, minimum: float = 0.0, strict: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ProfileError(f"{where}: expected a number, got {value!r}")
    if value < minimum or (strict and value == minimum):
        raise ProfileError(f"{where}: must be {'>' if strict else '>='} {minimum:g}, got {value!r}")
    field = where.rsplit(".", 1)[-1]
    if field in LARGEST and value > LARGEST[field][0]:
        largest, what = LARGEST[field]
        shown = f"{largest:,}" if isinstance(largest, int) else f"{largest:g}"
        raise ProfileError(f"{where}: {value!r} is more than {shown} {what}")
    if field in ("stepSeconds", "seconds") and value < SMALLEST_SECONDS:
        raise ProfileError(f"{where}: {value!r} s is under a microsecond; if these are not seconds, convert them")
    return float(value)


def _points(document: dict[str, Any], key: str, fields: tuple[str, ...]) -> list[tuple[float, ...]]:
    rows = document.get(key)
    if not isinstance(rows, list) or not rows:
        raise ProfileError(f"{key}: expected a non-empty list of {{{', '.join(fields)}}}")
    if len(rows) > MAX_POINTS:
        raise ProfileError(f"{key}: {len(rows):,} points; at most {MAX_POINTS:,}")
    points = []
    for index, row in enumerate(rows):
        if not isinstance(row, dict) or set(row) - set(fields) or not set(fields) <= set(row):
            raise ProfileError(f"{key}[{index}]: expected exactly the fields {', '.join(fields)}, got {row!r:.80}")
        minimum = {"batch": 1.0}
        points.append(
            tuple(
                _number(row[f], f"{key}[{index}].{f}", minimum=minimum.get(f, 0.0), strict=f not in minimum)
                for f in fields
            )
        )
    return points


def _decode_knots(
    points: list[tuple[float, ...]], roofline: ServiceTime | None
) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    """(batches, fixed, per-context) from (batch, context, seconds) points."""
    import numpy as np

    batches = sorted({p[0] for p in points})
    if len(batches) == 1 and roofline is not None:
        [(batch, context, seconds)] = [max(points, key=lambda p: p[1])]
        scale = seconds / float(roofline.step_seconds(batch, context))
        return (
            roofline.batches,
            tuple(f * scale for f in roofline.step_fixed),
            tuple(c * scale for c in roofline.step_per_context),
        )
    fixed, per_context = [], []
    for batch in batches:
        at = [(p[1], p[2]) for p in points if p[0] == batch]
        contexts = np.array([c for c, _ in at])
        measured = np.array([t for _, t in at])
        mean = float(measured.mean())
        slope: float
        if len(set(contexts.tolist())) > 1:
            slope = max(0.0, float(np.polyfit(contexts, measured, 1)[0]))
            intercept = mean - slope * float(contexts.mean())
        elif roofline is not None:  # one context: the roofline's share of the step that grows with context
            context = float(contexts[0])
            slope = float(roofline.step_terms(batch)[1]) * mean / float(roofline.step_seconds(batch, context))
            intercept = mean - slope * context
        else:
            slope, intercept = 0.0, mean
        fixed.append(max(intercept, 0.0))
        per_context.append(slope)
    return tuple(batches), tuple(fixed), tuple(per_context)


def from_profile(document: Any, source: str, roofline: ServiceTime | None = None) -> ServiceTime:
    """The service-time model of an accelstack profile document; ProfileError names what is wrong."""
    if not isinstance(document, dict):
        raise ProfileError("expected a JSON object (an accelstack profile or a vllm bench serve result)")
    if document.get("kind") != PROFILE_KIND:
        raise ProfileError(f"kind: expected {PROFILE_KIND!r}, got {document.get('kind')!r}")
    if document.get("version") != PROFILE_VERSION:
        raise ProfileError(f"version: expected {PROFILE_VERSION}, got {document.get('version')!r}")
    decode = _points(document, "decode", ("batch", "context", "stepSeconds"))
    prefill = sorted(_points(document, "prefill", ("tokens", "seconds")))
    if len({t for t, _ in prefill}) != len(prefill):
        raise ProfileError("prefill: one point per prompt length")
    batches, fixed, per_context = _decode_knots(decode, roofline)
    what = f"{len(decode)} decode steps over batches {', '.join(f'{b:g}' for b in sorted({p[0] for p in decode}))}"
    return ServiceTime(
        source, batches, fixed, per_context, tuple(t for t, _ in prefill), tuple(s for _, s in prefill),
        f"measured ({source}: {what}; {len(prefill)} prefill lengths)",
    )  # fmt: skip


def is_vllm_result(document: Any) -> bool:
    """A vllm bench serve result, whole or partial (so a partial one is told which of its keys is missing)."""
    return isinstance(document, dict) and "kind" not in document and any(key in document for key in VLLM_MARKERS)


def _mean_latency(document: dict[str, Any]) -> tuple[float, str] | None:
    """The mean end-to-end latency in seconds: `mean_e2el_ms`, else the mean of `latencies` over the requests that
    finished (a failed request's latency is 0); None when the result has neither."""
    if "mean_e2el_ms" in document:
        return _number(document["mean_e2el_ms"], "mean_e2el_ms") / 1000, "mean_e2el_ms"
    latencies = document.get("latencies")
    if latencies is None:
        return None
    if not isinstance(latencies, list) or len(latencies) > MAX_LATENCIES:
        raise ProfileError(f"latencies: expected a list of at most {MAX_LATENCIES:,} seconds, got {latencies!r:.80}")
    values = [_number(v, f"latencies[{i}]", strict=False) for i, v in enumerate(latencies)]
    finished = [v for v in values if v > 0]
    if not finished:
        raise ProfileError("latencies: no request finished (every latency is 0)")
    return sum(finished) / len(finished), "latencies"


def from_vllm_result(document: dict[str, Any], source: str, roofline: ServiceTime | None = None) -> ServiceTime:
    """The operating point a `vllm bench serve` result measured, as a profile (see the module)."""
    missing = [key for key in VLLM_KEYS if key not in document]
    if missing:
        raise ProfileError(
            f"a vllm bench serve result needs {', '.join(missing)} (run it with --save-result; the mean_*_ms keys "
            "come with --percentile-metrics ttft,tpot, its default)"
        )
    completed = _number(document["completed"], "completed", minimum=1.0, strict=False)
    mean_input = _number(document["total_input_tokens"], "total_input_tokens") / completed
    mean_output = _number(document["total_output_tokens"], "total_output_tokens") / completed
    tpot = _number(document["mean_tpot_ms"], "mean_tpot_ms") / 1000
    ttft = _number(document["mean_ttft_ms"], "mean_ttft_ms") / 1000
    cap = document.get("max_concurrency")
    capped = None if cap in (None, "None") else _number(cap, "max_concurrency", minimum=1.0, strict=False)
    latency = _mean_latency(document) if "request_throughput" in document else None
    if latency is not None:
        in_flight = _number(document["request_throughput"], "request_throughput") * latency[0]
        batch = max(1.0, in_flight if capped is None else min(capped, in_flight))
        how = f"request_throughput x mean latency ({latency[1]})" + (
            "" if capped is None else ", within max_concurrency"
        )
    elif capped is not None:
        batch, how = capped, "max_concurrency"
    else:
        raise ProfileError(
            "the batch it ran at: max_concurrency is null and there is no request_throughput with mean_e2el_ms or "
            "latencies to count the requests in flight"
        )
    batch = float(round(batch, 3))
    profile = {
        "kind": PROFILE_KIND,
        "version": PROFILE_VERSION,
        "decode": [{"batch": batch, "context": mean_input + mean_output / 2, "stepSeconds": tpot}],
        "prefill": [{"tokens": mean_input, "seconds": ttft}],
    }
    model = from_profile(profile, source, roofline)
    return ServiceTime(
        model.source, model.batches, model.step_fixed, model.step_per_context, model.prefill_tokens,
        model.prefill_knot_seconds,
        f"measured by vllm bench serve ({source}): {tpot * 1000:.2f} ms per output token at batch {batch:g} ({how}), "
        f"TTFT {ttft:.3f} s for {mean_input:.0f} prompt tokens; the roofline's shape scaled to them",
    )  # fmt: skip


def service_time_from(document: Any, source: str, roofline: ServiceTime | None = None) -> ServiceTime:
    """An accelstack profile or a vllm bench serve result, whichever `document` is."""
    if is_vllm_result(document):
        return from_vllm_result(document, source, roofline)
    return from_profile(document, source, roofline)


def profile_document(
    decode: list[tuple[int, int, float]], prefill: list[tuple[int, float]], **about: Any
) -> dict[str, Any]:
    """A profile document (what `from_profile` reads) from measured (batch, context, step seconds) and (prompt
    tokens, seconds); `about`: model, instanceType, device and the like, kept as they are."""
    return {
        "kind": PROFILE_KIND,
        "version": PROFILE_VERSION,
        **about,
        "decode": [{"batch": b, "context": c, "stepSeconds": round(s, 9)} for b, c, s in decode],
        "prefill": [{"tokens": t, "seconds": round(s, 9)} for t, s in prefill],
    }
