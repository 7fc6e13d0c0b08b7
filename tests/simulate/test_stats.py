"""Streaming statistics: the sketch's percentiles within their stated relative error of the exact order
statistics, exact counts and means, a fixed fleet still equal to an independent FCFS replay request by request,
and the intervals that decide whether one design is better than another."""

from __future__ import annotations

import heapq
import math
from pathlib import Path

import numpy as np
import pytest

from accelstack.simulate.compare import against_peers, combined, recommend, simulate_designs, slo_side
from accelstack.simulate.design import design_from_spec
from accelstack.simulate.engine import Simulation
from accelstack.simulate.report import summarize
from accelstack.simulate.start import steady_state_replicas
from accelstack.simulate.stats import RELATIVE_ERROR, LogHistogram, confidence_interval, separate
from accelstack.simulate.workload import Workload, synthetic
from accelstack.spec.loader import load_stack
from tests.planner.aws_inputs import AWS_CATALOG, aws_book, rules_for

REPO = Path(__file__).resolve().parents[2]
QUANTILES = (0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999)


def stack_design(autoscaler: str = "aws-target-tracking", *overrides: str, **kwargs):
    spec = load_stack(REPO / "stacks" / "Pulumi.aws-serving.yaml", list(overrides))
    kwargs.setdefault("rules", rules_for(autoscaler))
    return design_from_spec(spec.serving, aws_book(), autoscaler=autoscaler, catalog=AWS_CATALOG, **kwargs)


@pytest.mark.parametrize(
    "values",
    [
        np.random.default_rng(1).exponential(2.0, 100_000),
        np.random.default_rng(2).lognormal(0.0, 3.0, 50_000),
        np.concatenate([np.zeros(30_000), np.random.default_rng(3).pareto(1.5, 70_000)]),
        np.array([7.0]),
    ],
    ids=["exponential", "lognormal", "zeros-and-heavy-tail", "one value"],
)
def test_sketch_quantiles_are_within_the_relative_error_of_the_exact_order_statistic(values: np.ndarray) -> None:
    sketch = LogHistogram()
    sketch.add(values)
    assert sketch.count == len(values)
    for q in QUANTILES:
        exact = float(np.quantile(values, q, method="inverted_cdf"))
        read = sketch.quantile(q)
        if exact < sketch.lowest:
            assert read == 0.0
        else:
            assert abs(read - exact) <= RELATIVE_ERROR * exact * (1 + 1e-9), (q, exact, read)


def test_sketch_counts_are_exact_signed_and_mergeable() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.exponential(1.0, 10_000), rng.exponential(5.0, 20_000)
    whole, left, right = LogHistogram(), LogHistogram(), LogHistogram()
    whole.add(np.concatenate([a, b]))
    left.add(a)
    right.add(b)
    left.merge(right)
    assert np.array_equal(left.counts, whole.counts) and left.zeros == whole.zeros
    # A start taken back (a failed replica's request) is un-counted exactly.
    whole.add(b, weight=-1)
    single = LogHistogram()
    single.add(a)
    assert np.array_equal(whole.counts, single.counts) and whole.count == len(a)
    assert LogHistogram().quantile(0.5) is None


def fcfs_replay(arrivals: np.ndarray, service: np.ndarray, slots: int) -> np.ndarray:
    """An independent FCFS replay on `slots` identical servers with no admission limit: each request starts
    when it arrives or when the earliest server frees, whichever is later."""
    free = [0.0] * slots
    start = np.empty(len(arrivals))
    for j, (a, s) in enumerate(zip(arrivals.tolist(), service.tolist(), strict=True)):
        earliest = heapq.heappop(free)
        start[j] = max(a, earliest)
        heapq.heappush(free, start[j] + s)
    return start


def test_a_fixed_fleet_equals_an_fcfs_replay_request_by_request_and_its_statistics_are_exact() -> None:
    """3 replicas x 4 slots at 85% load, 150k requests: every start equals the replay's to the bit; counts,
    attainment and means are exact; every percentile within the sketch's relative error."""
    design = stack_design("fixed", fixed_replicas=3).with_changes(
        concurrency=4, ttl_seconds=1e12, max_depth=10**9, service_seconds=1.0
    )
    rate = 0.85 * 12
    load = synthetic("steady", rate, horizon=150_000 / rate, mean_tokens=100.0, seed=11)
    run = Simulation(design, load, tokens_per_second=100.0, keep_starts=True).run()
    service = load.tokens / 100.0
    expected = fcfs_replay(load.arrivals, service, 12)
    assert np.array_equal(np.asarray(run.queue.start), expected)
    wait, latency = expected - load.arrivals, expected - load.arrivals + service
    summary = summarize(run, 0.99)
    assert summary["requests"]["served"] == len(load.arrivals)
    assert summary["slo"]["attainment"] == round(float((latency <= design.slo_target_seconds).mean()), 5)
    assert run.queue.stats.totals.wait_sum / len(wait) == pytest.approx(wait.mean(), rel=1e-9)
    for name, values, sketch in (("wait", wait, run.queue.stats.wait), ("latency", latency, run.queue.stats.latency)):
        for q in QUANTILES:
            exact = float(np.quantile(values, q, method="inverted_cdf"))
            read = sketch.quantile(q)
            assert read == 0.0 if exact < sketch.lowest else abs(read - exact) <= RELATIVE_ERROR * exact * 1.000001, (
                name,
                q,
            )


def test_per_interval_series_add_up_to_the_totals() -> None:
    design = stack_design("aws-target-tracking", "serving.admission.maxDepth=300", "serving.admission.ttlSeconds=60")
    run = Simulation(design, synthetic("spike", 60, horizon=2 * 3600, seed=4), start="minimum").run()
    series, summary = run.queue.stats.series(), summarize(run, 0.99)
    requests = summary["requests"]
    assert series["arrivals"].sum() == requests["arrived"]
    assert series["dropped"].sum() == requests["refused"] + requests["expired"] + requests["deadLettered"] > 0
    met = requests["arrived"] - series["misses"].sum()
    assert met / requests["arrived"] == pytest.approx(summary["slo"]["attainment"], abs=1e-5)
    busy = series["arrivals"] > 0
    assert np.all(series["p50"][busy] <= series["p99"][busy])


def test_runs_start_at_the_steady_state_of_the_initial_load() -> None:
    """Hour 0 of the default day is 25% of a 61.6/s peak: 15.4 requests/s x 1 s in flight over 7.7 per replica
    (11 slots at 70%) needs 2-3 replicas, not replicas.min = 1. Starting there removes the start-up misses."""
    design = stack_design()
    load = synthetic("diurnal", 61.6, horizon=3600, seed=0)
    steady = Simulation(design, load).run()
    minimum = Simulation(design, load, start="minimum").run()
    assert minimum.initial_replicas == 1
    service = load.service_seconds(load.mean_tokens / design.service_seconds)
    assert steady.initial_replicas == steady_state_replicas(design, load.arrivals, service, 3600.0)
    assert steady.initial_replicas in (2, 3)
    s, m = summarize(steady, 0.99), summarize(minimum, 0.99)
    assert s["start"] == {"state": "steady", "replicas": steady.initial_replicas, "backlog": 0}
    assert m["slo"]["attainment"] < 0.97 < 0.999 < s["slo"]["attainment"]
    # A fixed fleet starts at its size either way; the bounds hold.
    fixed = stack_design("fixed", fixed_replicas=5)
    assert Simulation(fixed, load).initial_replicas == 5
    assert steady_state_replicas(design, load.arrivals * 0 + 1.0, load.tokens, 3600.0) == design.replicas_max


def test_confidence_interval_is_students_t() -> None:
    ci = confidence_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    assert ci is not None
    # mean 3, sd sqrt(2.5), t(0.975, 4) = 2.776
    assert ci["mean"] == 3.0 and ci["halfWidth"] == pytest.approx(2.776 * math.sqrt(2.5) / math.sqrt(5), rel=1e-6)
    assert confidence_interval([1.0]) is None
    low, high = {"low": 1.0, "high": 2.0}, {"low": 2.5, "high": 3.0}
    assert (separate(high, low), separate(low, high), separate(low, {"low": 1.5, "high": 4.0})) == (1, -1, 0)


def summary_of(name: str, attainment: list[float], costs: list[float]) -> dict:
    def interval(values: list[float]) -> dict | None:
        return confidence_interval(values)

    mean_a = sum(attainment) / len(attainment)
    return {
        "design": name,
        "seeds": len(costs),
        "slo": {"attainment": mean_a, "met": mean_a >= 0.99, "required": 0.99, "targetSeconds": 10.0,
                "interval": interval(attainment)},
        "cost": {"totalUsd": sum(costs) / len(costs), "interval": interval(costs)},
    }  # fmt: skip


def test_a_design_is_called_cheaper_only_when_the_intervals_separate() -> None:
    a = summary_of("a", [0.995, 0.996, 0.994], [100.0, 101.0, 99.0])
    close = summary_of("close", [0.995, 0.996, 0.994], [102.0, 99.0, 104.0])
    far = summary_of("far", [0.995, 0.996, 0.994], [150.0, 151.0, 149.0])
    missing = summary_of("missing", [0.90, 0.91, 0.92], [10.0, 10.0, 10.0])
    pick = recommend([far, close, a, missing])
    assert pick["design"] == "a" and pick["indistinguishableFrom"] == ["close"]
    assert "indistinguishable from close at 3 seeds" in pick["why"]
    assert recommend([far, a])["indistinguishableFrom"] == []


def test_a_design_is_called_meeting_the_slo_only_when_its_interval_does() -> None:
    """The cheapest design whose mean attainment passes 99% but whose interval straddles it is not called meeting:
    the dearer one whose interval lies above is recommended, the straddling one named as undecided (more seeds
    decide). With no design surely meeting, none is called meeting. Before, the mean decided: the straddler won."""
    sure = summary_of("sure", [0.995, 0.996, 0.994], [100.0, 101.0, 99.0])
    straddling = summary_of("straddling", [0.999, 0.985, 0.998], [50.0, 51.0, 49.0])
    assert (
        straddling["slo"]["met"] and straddling["slo"]["interval"]["low"] < 0.99 < straddling["slo"]["interval"]["high"]
    )
    assert (slo_side(sure), slo_side(straddling)) == (1, 0)
    pick = recommend([straddling, sure])
    assert pick["design"] == "sure" and pick["meetsSlo"] and pick["undecided"] == ["straddling"]
    assert "straddles the required 99.00%" in pick["why"]
    alone = recommend([straddling])
    assert not alone["meetsSlo"] and alone["undecided"] == ["straddling"]
    peers = against_peers([straddling, sure], ["aws-target-tracking", "request-rate"])
    assert not peers["comparable"] and "not shown to meet it" in peers["why"]


def test_several_seeds_pool_requests_and_give_intervals() -> None:
    design = stack_design()
    loads = [(seed, synthetic("steady", 20, horizon=1800, seed=seed)) for seed in range(3)]
    [result] = simulate_designs([design], iter(loads), slo_share=0.99)
    report = combined(result, 0.99)
    assert report["seeds"] == 3
    assert report["requests"]["arrived"] == sum(len(load.arrivals) for _, load in loads)
    per_seed = [s["slo"]["attainment"] for s in result.summaries]
    assert report["slo"]["perSeed"] == per_seed
    assert report["slo"]["interval"]["low"] <= report["slo"]["attainment"] <= report["slo"]["interval"]["high"]
    costs = [s["cost"]["totalUsd"] for s in result.summaries]
    assert report["cost"]["totalUsd"] == pytest.approx(sum(costs) / 3, abs=0.01)
    assert result.latency.count == report["requests"]["served"]


def test_an_empty_stream_reports_no_percentiles() -> None:
    load = Workload(np.array([]), np.array([]), 600.0, "empty")
    summary = summarize(Simulation(stack_design(), load).run(), 0.99)
    assert summary["latencySeconds"]["p99"] is None and summary["slo"]["attainment"] == 1.0
