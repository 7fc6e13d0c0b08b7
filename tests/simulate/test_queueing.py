"""The simulator against queueing theory: M/M/c waits (Erlang C), Little's law, and the admission
queue's depth limit, TTL and redelivery on exact hand-checked scenarios."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from accelstack.simulate.design import design_from_spec
from accelstack.simulate.engine import Simulation
from accelstack.simulate.report import littles_law, summarize
from accelstack.simulate.workload import Workload, poisson_arrivals, synthetic
from accelstack.spec.loader import load_stack
from tests.planner.aws_inputs import AWS_CATALOG, aws_book, rules_for

REPO = Path(__file__).resolve().parents[2]
SERVING = REPO / "stacks" / "Pulumi.aws-serving.yaml"


def stack_design(*overrides: str, autoscaler: str = "aws-target-tracking", **kwargs):
    spec = load_stack(SERVING, list(overrides))
    return design_from_spec(
        spec.serving, aws_book(), autoscaler=autoscaler, **kwargs, catalog=AWS_CATALOG, rules=rules_for(autoscaler)
    )


def fixed_design(replicas: int, concurrency: int, **changes):
    return stack_design(autoscaler="fixed", fixed_replicas=replicas).with_changes(concurrency=concurrency, **changes)


def erlang_c_wait(arrival_rate: float, service_rate: float, servers: int) -> float:
    """Mean wait in queue of M/M/c: C(c, a) / (c mu - lambda), C the Erlang C probability of waiting."""
    a = arrival_rate / service_rate
    rho = a / servers
    tail = a**servers / math.factorial(servers) / (1 - rho)
    c = tail / (sum(a**k / math.factorial(k) for k in range(servers)) + tail)
    return c / (servers * service_rate - arrival_rate)


@pytest.mark.parametrize(("replicas", "concurrency", "utilization"), [(1, 4, 0.8), (2, 3, 0.7), (1, 1, 0.6)])
def test_mmc_mean_wait_matches_erlang_c(replicas: int, concurrency: int, utilization: float) -> None:
    """Poisson arrivals, exponential service, c = replicas x concurrency slots, no TTL or depth limit
    reached: the simulated mean queue wait is Erlang C's within 6% (200k requests, seeds fixed; the
    standard error of the mean wait at these loads is ~2-3%)."""
    servers, mean_service = replicas * concurrency, 1.0
    rate = utilization * servers / mean_service
    horizon = 200_000 / rate
    load = synthetic("steady", rate, horizon=horizon, mean_tokens=100.0, seed=7)
    design = fixed_design(replicas, concurrency, ttl_seconds=1e12, max_depth=10**9, service_seconds=mean_service)
    run = Simulation(design, load, tokens_per_second=100.0, sample_seconds=3600).run()
    totals = run.queue.stats.totals
    assert totals.served == len(load.arrivals)
    expected = erlang_c_wait(rate, 1 / mean_service, servers)
    assert totals.wait_sum / totals.served == pytest.approx(expected, rel=0.06)


SCENARIOS = {
    "diurnal, target tracking": lambda: (stack_design(), synthetic("diurnal", 40, horizon=4 * 3600, seed=3)),
    "spike into depth limit and TTL": lambda: (
        stack_design("serving.admission.maxDepth=300", "serving.admission.ttlSeconds=60"),
        synthetic("spike", 60, horizon=4 * 3600, seed=4),
    ),
    "no warm pool": lambda: (
        stack_design("serving.replicas.warmPool=0"),
        synthetic("diurnal", 30, horizon=3 * 3600, seed=5),
    ),
    "gcp autoscaler": lambda: (
        stack_design(autoscaler="gcp-autoscaler"),
        synthetic("spike", 50, horizon=3 * 3600, seed=6),
    ),
    "request rate": lambda: (
        stack_design(autoscaler="request-rate"),
        synthetic("diurnal", 50, horizon=3 * 3600, seed=8),
    ),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_littles_law_holds(scenario: str) -> None:
    """Requests in the system sampled every second (queue + in flight, read from the simulator's state)
    equal arrival rate x mean time in system (from each request's own timestamps) within 1%."""
    design, load = SCENARIOS[scenario]()
    run = Simulation(design, load, sample_seconds=1.0).run()
    check = littles_law(run)
    assert check["lambdaW"] > 0.5
    assert check["relativeError"] < 0.01, check


def test_littles_law_is_reported_on_every_run() -> None:
    design, load = SCENARIOS["diurnal, target tracking"]()
    summary = summarize(Simulation(design, load).run(), 0.99)
    assert summary["littlesLaw"]["relativeError"] < 0.1  # one-minute samples: a coarser estimate of L


def one_replica_one_slot(**changes):
    return fixed_design(1, 1, **changes)


def replay(design, times: list[float], services: list[float], horizon: float = 600.0, **kwargs):
    load = Workload(np.array(times), np.array(services), horizon, "hand-made")
    return Simulation(design, load, tokens_per_second=1.0, sample_seconds=1.0, keep_starts=True, **kwargs).run()


def test_depth_limit_refuses_and_ttl_expires_exactly() -> None:
    """One slot, 10 s per request, 10 requests in the first second, depth 3, TTL 25 s: the first is
    served at once, three queue (the rest are refused); the second starts at 10 s (waited 9.9 s), the
    third at 20 s (waited 19.8 s), the fourth would start at 30 s after 29.7 s > TTL: expired."""
    design = one_replica_one_slot(max_depth=3, ttl_seconds=25.0)
    run = replay(design, [i * 0.1 for i in range(10)], [10.0] * 10)
    summary = summarize(run, 0.99)
    assert summary["requests"] == {"arrived": 10, "served": 3, "refused": 6, "expired": 1, "deadLettered": 0}
    starts = run.queue.start
    assert starts[:3] == pytest.approx([0.0, 10.0, 20.0])
    assert starts[3] == -1.0


def test_refused_slots_free_up_as_the_queue_drains() -> None:
    """Depth counts waiting requests only: once one starts, the next arrival is admitted again."""
    design = one_replica_one_slot(max_depth=1, ttl_seconds=100.0)
    run = replay(design, [0.0, 0.5, 1.0, 10.5], [10.0] * 4)
    assert summarize(run, 0.99)["requests"]["refused"] == 1  # the third: one waits already
    assert run.queue.start[3] == pytest.approx(20.0)  # admitted at 10.5 behind the second


def test_a_dead_replica_is_replaced_and_its_requests_redelivered() -> None:
    """A replica that fails loses its requests in flight: they reappear after the visibility timeout
    and are served by the replacement, which the group launches once the health checks fail it."""
    design = fixed_design(1, 8, warm_pool=1, visibility_timeout_seconds=30.0)
    load = Workload(np.arange(0, 600, 2.0), np.full(300, 10.0), 3600.0, "steady")
    sim = Simulation(design, load, tokens_per_second=1.0, sample_seconds=1.0, keep_starts=True)
    replica = sim.replicas[0]
    sim.env.process(sim._fail_later(replica, 101.0))
    run = sim.run()
    summary = summarize(run, 0.99)
    assert run.failures == 1
    # Failed at 101 s, detected after unhealthy threshold x interval, replaced from the warm pool.
    assert run.ready_events == [(pytest.approx(101.0 + design.unhealthy_seconds + design.warm_start_seconds), True)]
    assert summary["requests"]["served"] == 300 and summary["requests"]["expired"] == 0
    lost = [j for j in range(300) if run.queue.receives[j] == 1]
    assert len(lost) == 5  # 5 slots were busy at 101 s (10 s generations every 2 s)
    ready = run.ready_events[0][0]
    for j in lost:
        assert run.queue.start[j] >= max(101.0 + 30.0, ready)


def test_requests_dead_letter_on_their_last_receive() -> None:
    design = fixed_design(1, 4, warm_pool=0, max_receive_count=1)
    load = Workload(np.array([0.0, 1.0, 2.0]), np.array([50.0, 50.0, 50.0]), 3600.0, "three")
    sim = Simulation(design, load, tokens_per_second=1.0)
    sim.env.process(sim._fail_later(sim.replicas[0], 10.0))
    summary = summarize(sim.run(), 0.99)
    assert summary["requests"]["deadLettered"] == 3 and summary["requests"]["served"] == 0


def test_poisson_arrivals_follow_the_rate_profile() -> None:
    rng = np.random.default_rng(1)
    arrivals = poisson_arrivals([0.0, 1000.0], [5.0, 50.0], 2000.0, rng)
    first, second = (arrivals < 1000).sum(), (arrivals >= 1000).sum()
    assert first == pytest.approx(5000, rel=0.05) and second == pytest.approx(50_000, rel=0.02)
    assert np.all(np.diff(arrivals) >= 0) and arrivals[-1] < 2000.0


def test_scale_in_drains_then_releases_long_generations_to_other_replicas() -> None:
    """A replica leaving the group finishes what it has in flight for the drain time, then releases the
    rest, which another replica receives at once (one more receive each)."""
    from accelstack.simulate.engine import RequestQueue

    queue = RequestQueue(
        np.array([0.0, 1.0]),
        np.array([300.0, 50.0]),
        ttl=3600,
        max_depth=10,
        visibility=30,
        max_receives=3,
        keep_starts=True,
    )
    queue.add_replica(0, 2, 0.0)
    queue.add_replica(1, 1, 0.0)
    queue.advance_to(10.0)
    # Both went to replica 0 (the earliest free slots, ties by replica); replica 1 is idle.
    assert sorted((owner, request) for _, owner, request, _ in queue.slots if request >= 0) == [(0, 0), (0, 1)]
    stops_at = queue.retire(0, 10.0, drain=120.0)
    assert stops_at == pytest.approx(130.0)  # the 50 s one finished at 51 s; the long one is released at 130 s
    queue.finish()
    assert queue.receives[0] == 1 and queue.status[0] == 0
    assert queue.start[0] == pytest.approx(130.0) and queue.start[1] == pytest.approx(1.0)
