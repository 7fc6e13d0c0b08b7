"""Designs compared on the same requests over several seeds, with intervals, and the peers a design is judged
against.

Each seed draws a new request stream (a trace replays the same requests: only failures differ); every design
runs on it in turn and is summarised at once, so memory holds one run at a time (`accelstack.simulate.stats`).
Per design the report gives the pooled requests and percentiles (sketches merged over the seeds), and the mean and
a 95% interval (Student's t over the seeds) of SLO attainment and cost. One design is called better than another
only when their intervals separate; otherwise they are "indistinguishable" at this many seeds.

The peers (`peer_designs`): request-rate scaling as SkyServe does it, queue length per replica as KEDA does it, a
fixed fleet and CPU utilization; "cost at equal SLO" compares the stack's design with the cheapest peer that meets
the same SLO.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from accelstack.clouds.base import Catalog
from accelstack.planner.pricing import PriceBook
from accelstack.planner.scaling_rules import ScalingRules
from accelstack.planner.serving_plan import MeasuredProfile
from accelstack.simulate.design import Design, alternatives
from accelstack.simulate.engine import Run, Simulation
from accelstack.simulate.report import summarize
from accelstack.simulate.stats import LogHistogram, confidence_interval, percentiles, separate
from accelstack.simulate.workload import Workload
from accelstack.spec.models import ServingSpec

DEFAULT_SEEDS = 5
# The designs `--compare` reports as peers, by autoscaler: what the stack's design is judged against.
PEER_AUTOSCALERS = ("request-rate", "keda-queue-length", "fixed", "cpu-utilization")


@dataclass
class KedaQueueLength:
    """KEDA's queue scalers (aws-sqs-queue, azure-servicebus, gcp-pubsub) behind a Kubernetes HPA: every polling
    interval (pollingInterval, default 30 s) the scaler reads the queue's messages -- visible plus in flight
    (scaleOnInFlight, default true: ApproximateNumberOfMessages + ApproximateNumberOfMessagesNotVisible) -- and
    the HPA sets replicas = ceil(messages / queueLength) (an AverageValue target), leaving them alone within its
    10% tolerance. Scale-up is immediate but at most max(double, +4 pods) per step (the HPA's default scale-up
    policies); scale-down takes the highest recommendation of the last 300 s (the default downscale
    stabilization window). With minReplicaCount 0, KEDA activates the first replica when any message waits
    (activationQueueLength 0). Sources: keda.sh/docs/scalers/aws-sqs; Kubernetes "Horizontal Pod Autoscaling"
    (algorithm details, default behavior)."""

    queue_length: float
    minimum: int
    maximum: int
    interval: float = 30.0
    tolerance: float = 0.1
    downscale_window_seconds: float = 300.0
    recommendations: list[tuple[float, int]] = field(default_factory=list)

    def decide(self, obs) -> int | None:
        messages = obs.backlog + obs.not_visible
        current = obs.capacity
        if current == 0:
            return 1 if messages > 0 and self.maximum > 0 else None
        ratio = messages / (current * self.queue_length)
        wanted = current if abs(ratio - 1) <= self.tolerance else math.ceil(round(messages / self.queue_length, 9))
        wanted = min(self.maximum, max(self.minimum, wanted))
        self.recommendations = [(t, r) for t, r in self.recommendations if t > obs.now - self.downscale_window_seconds]
        self.recommendations.append((obs.now, wanted))
        if wanted > current:
            return min(wanted, max(2 * current, current + 4))
        stabilized = max(r for _, r in self.recommendations)
        return stabilized if stabilized < current else None


def peer_designs(
    serving: ServingSpec,
    prices: PriceBook,
    autoscaler: str,
    *,
    catalog: Catalog,
    rules: ScalingRules | None = None,
    profile: MeasuredProfile | None = None,
) -> list[Design]:
    """The stack's design, its no-warm-pool variant, and the peers: CPU utilization, request rate (SkyServe), a
    fixed fleet at replicas.max (from `design.alternatives`), and with an admission queue, queue length per replica
    (KEDA), whose target is the plan's messages per instance on the same queue (ServingPlan.backlog_per_instance_target)."""
    designs = alternatives(serving, prices, autoscaler, catalog=catalog, rules=rules, profile=profile)
    if serving.admission.kind != "queue":  # no queue for KEDA to read: requests wait on the replicas
        return designs
    # The target is the stack's design's own (its plan with the same --profile and rules), never a second plan
    # made without them.
    target = designs[0].backlog_target
    lo, hi = serving.replicas.min, serving.replicas.max
    keda = designs[0].with_changes(  # the stack's design (alternatives' first), its policy swapped
        name=f"queue length (KEDA, {target:g}/replica)",
        autoscaler="keda-queue-length",
        policy=lambda: KedaQueueLength(target, lo, hi),
        backlog_target=target,
    )
    return [*designs[:-1], keda, designs[-1]]


@dataclass
class DesignResult:
    """One design over every seed: its per-seed summaries and the sketches merged over the seeds."""

    design: Design
    summaries: list[dict[str, Any]] = field(default_factory=list)
    wait: LogHistogram = field(default_factory=LogHistogram)
    latency: LogHistogram = field(default_factory=LogHistogram)
    wait_sum: float = 0.0
    latency_sum: float = 0.0

    def add(self, run: Run, summary: dict[str, Any]) -> None:
        stats = run.queue.stats
        self.summaries.append(summary)
        self.wait.merge(stats.wait)
        self.latency.merge(stats.latency)
        self.wait_sum += stats.totals.wait_sum
        self.latency_sum += stats.totals.latency_sum


def simulate_designs(
    designs: list[Design],
    workloads: Iterable[tuple[int, Workload]],
    *,
    slo_share: float,
    each: Callable[[int, int, Run], None] | None = None,
    **simulation: Any,
) -> list[DesignResult]:
    """Every design on every seed's requests, each run summarised as it ends and then dropped; `each(design
    index, seed, run)` sees every whole run first (the plot's); `simulation`: `Simulation` options (start,
    failures, tokens/s)."""
    results = [DesignResult(d) for d in designs]
    for seed, load in workloads:
        for index, (design, result) in enumerate(zip(designs, results, strict=True)):
            run = Simulation(design, load, seed=seed, **simulation).run()
            result.add(run, summarize(run, slo_share))
            if each is not None:
                each(index, seed, run)
            # The SimPy processes hold the simulation in reference cycles: free this run's arrays before the next.
            del run
            gc.collect()
        # Let this seed's requests go before the next seed's are drawn: two streams of a day at the Azure
        # example's 300 requests/s would hold 480 MB at once.
        del load
    return results


def _mean(values: list[float], digits: int) -> float:
    return round(sum(values) / len(values), digits)


def _interval(values: list[float], digits: int) -> dict[str, float] | None:
    ci = confidence_interval(values)
    return None if ci is None else {k: round(v, digits) for k, v in ci.items()}


def combined(result: DesignResult, slo_share: float) -> dict[str, Any]:
    """One design's report over its seeds: requests summed, percentiles of all requests (merged sketches), and the
    mean with a 95% interval of SLO attainment and cost per run (None with one seed)."""
    runs = result.summaries
    if len(runs) == 1:
        return {**runs[0], "seeds": 1}
    first = runs[0]
    attainment = [s["slo"]["attainment"] for s in runs]
    totals = [s["cost"]["totalUsd"] for s in runs]
    mean_attainment = _mean(attainment, 5)
    slo = {
        **first["slo"],
        "attainment": mean_attainment,
        "met": mean_attainment >= slo_share,
        "interval": _interval(attainment, 5),
        "perSeed": attainment,
    }
    return {
        **first,
        "seeds": len(runs),
        "start": {**first["start"], "replicas": [s["start"]["replicas"] for s in runs]},
        "requests": {key: sum(s["requests"][key] for s in runs) for key in first["requests"]},
        "queueWaitSeconds": percentiles(result.wait, result.wait_sum),
        "latencySeconds": percentiles(result.latency, result.latency_sum),
        "slo": {**slo, "verdict": SLO_VERDICTS[slo_side({"slo": slo})]},
        "replicaHours": {key: _mean([s["replicaHours"][key] for s in runs], 2) for key in first["replicaHours"]},
        "scaling": {
            **{key: _mean([s["scaling"][key] for s in runs], 1) for key in first["scaling"]},
            "peakReplicas": max(s["scaling"]["peakReplicas"] for s in runs),
        },
        "cost": {
            **first["cost"],
            **{key: _mean([s["cost"][key] for s in runs], 2) for key in first["cost"] if key != "notPriced"},
            "interval": _interval(totals, 2),
            "perSeed": totals,
        },
        "littlesLaw": {key: _mean([s["littlesLaw"][key] or 0.0 for s in runs], 4) for key in first["littlesLaw"]},
    }


def _interval_of(summary: dict[str, Any], what: str) -> dict[str, float] | None:
    return summary["slo"].get("interval") if what == "attainment" else summary["cost"].get("interval")


def verdict(a: dict[str, Any], b: dict[str, Any], what: str) -> int:
    """+1: a's attainment (or cost) interval lies above b's; -1 below; 0 indistinguishable (or one seed)."""
    return separate(_interval_of(a, what), _interval_of(b, what))


def slo_side(summary: dict[str, Any]) -> int:
    """+1: the design meets the SLO (its attainment interval lies at or above the required share), -1: it misses
    (the interval lies below), 0: the interval straddles the share, so these seeds cannot tell. One seed has no
    interval: its attainment decides."""
    slo = summary["slo"]
    interval = slo.get("interval")
    if interval is None:
        return 1 if slo["met"] else -1
    if interval["low"] >= slo["required"]:
        return 1
    return -1 if interval["high"] < slo["required"] else 0


SLO_VERDICTS = {1: "met", -1: "missed", 0: "undecided"}


def _straddles(summary: dict[str, Any]) -> str:
    interval = summary["slo"]["interval"]
    return (
        f"{summary['design']}'s attainment interval ({interval['low']:.2%}..{interval['high']:.2%}) straddles the "
        f"required {summary['slo']['required']:.2%}"
    )


def recommend(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """The cheapest design meeting the SLO -- by its attainment interval, with several seeds: a design whose interval
    straddles the required share is neither called meeting nor missing -- and whether its cost is distinguishable
    from the others meeting it."""
    seeds = summaries[0].get("seeds", 1)
    meeting = [s for s in summaries if slo_side(s) > 0]
    undecided = [s for s in summaries if slo_side(s) == 0]
    if not meeting:
        best = max(summaries, key=lambda s: s["slo"]["attainment"])
        tied = [s["design"] for s in summaries if s is not best and verdict(best, s, "attainment") == 0 and seeds > 1]
        why = f"no design meets the SLO; the closest reaches {best['slo']['attainment']:.2%} (required {best['slo']['required']:.2%})"
        if undecided:
            why += f"; {'; '.join(_straddles(s) for s in undecided)}: more seeds decide"
        return {"design": best["design"], "totalUsd": best["cost"]["totalUsd"], "meetsSlo": False, "indistinguishableFrom": tied,
                "undecided": [s["design"] for s in undecided], "why": why}  # fmt: skip
    best = min(meeting, key=lambda s: s["cost"]["totalUsd"])
    tied = [s["design"] for s in meeting if s is not best and (seeds == 1 or verdict(best, s, "cost") == 0)]
    cheaper = [s for s in undecided if s["cost"]["totalUsd"] < best["cost"]["totalUsd"]]
    why = f"meets the SLO ({best['slo']['attainment']:.2%} of requests within {best['slo']['targetSeconds']:g} s) at the least cost"
    if seeds == 1:
        why += "; one seed, so no interval: differences may be noise (give --seeds 5)"
    elif tied:
        why += f"; its cost is indistinguishable from {', '.join(tied)} at {seeds} seeds"
    if cheaper:
        why += (
            f"; cheaper, but not shown to meet the SLO: {'; '.join(_straddles(s) for s in cheaper)} (more seeds decide)"
        )
    return {"design": best["design"], "totalUsd": best["cost"]["totalUsd"], "meetsSlo": True, "indistinguishableFrom": tied,
            "undecided": [s["design"] for s in cheaper], "why": why}  # fmt: skip


def against_peers(summaries: list[dict[str, Any]], autoscalers: list[str]) -> dict[str, Any]:
    """The stack's design (first) against the best peer at equal SLO: the cheapest peer meeting the same SLO."""
    stack = summaries[0]
    peers = [s for s, kind in zip(summaries[1:], autoscalers[1:], strict=True) if kind in PEER_AUTOSCALERS]
    meeting = [p for p in peers if slo_side(p) > 0]
    if not meeting:
        best = max(peers, key=lambda s: s["slo"]["attainment"]) if peers else None
        return {"peer": None if best is None else best["design"], "comparable": False,
                "why": "no peer meets the SLO" + (f" (the closest, {best['design']}, reaches {best['slo']['attainment']:.2%})" if best else "")}  # fmt: skip
    best = min(meeting, key=lambda s: s["cost"]["totalUsd"])
    result = {"peer": best["design"], "peerUsd": best["cost"]["totalUsd"], "stackUsd": stack["cost"]["totalUsd"]}
    if slo_side(stack) == 0:
        return {**result, "comparable": False,
                "why": f"{_straddles(stack)}: not shown to meet it; {best['design']} meets it at ${best['cost']['totalUsd']:,.2f}"}  # fmt: skip
    if slo_side(stack) < 0:
        return {**result, "comparable": False,
                "why": f"the stack design misses the SLO ({stack['slo']['attainment']:.2%}); {best['design']} meets it at ${best['cost']['totalUsd']:,.2f}"}  # fmt: skip
    ratio = stack["cost"]["totalUsd"] / best["cost"]["totalUsd"] if best["cost"]["totalUsd"] else math.inf
    if stack.get("seeds", 1) == 1:
        call = "one seed: no interval to judge by"
    else:
        call = {1: "dearer", -1: "cheaper", 0: "indistinguishable"}[verdict(stack, best, "cost")]
    return {**result, "comparable": True, "costRatio": round(ratio, 3), "verdict": call,
            "why": f"at equal SLO the stack design costs {ratio:.2f}x the best peer, {best['design']} ({call})"}  # fmt: skip
