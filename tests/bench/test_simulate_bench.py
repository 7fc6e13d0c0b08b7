"""Simulator speed (`make bench`): one simulated day at 50 requests/s (4.3 million requests) runs in
seconds, and the time grows linearly with the number of requests (per-request time flat from 12.5 to
50 requests/s). Times are printed; the machine is shared, so the limits leave room for noise."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from accelstack.simulate.design import design_from_spec
from accelstack.simulate.engine import Simulation
from accelstack.simulate.report import summarize
from accelstack.simulate.workload import synthetic
from accelstack.spec.loader import load_stack
from tests.planner.aws_inputs import AWS_CATALOG, AWS_RULES, aws_book

pytestmark = pytest.mark.bench

REPO = Path(__file__).resolve().parents[2]
DAY_AT_50_RPS_LIMIT_SECONDS = 60.0


def simulate_day(rps: float, autoscaler: str) -> tuple[int, float]:
    serving = load_stack(REPO / "stacks" / "Pulumi.aws-serving.yaml", []).serving
    design = design_from_spec(serving, aws_book(), autoscaler=autoscaler, catalog=AWS_CATALOG, rules=AWS_RULES)
    started = time.perf_counter()
    load = synthetic("steady", rps, seed=1)
    summarize(Simulation(design, load).run(), 0.99)
    return len(load.arrivals), time.perf_counter() - started


@pytest.mark.parametrize("autoscaler", ["fixed", "aws-target-tracking"])
def test_a_day_at_50_rps_in_seconds_and_linear(capsys, autoscaler: str) -> None:
    results = {rps: simulate_day(rps, autoscaler) for rps in (12.5, 25.0, 50.0)}
    with capsys.disabled():
        for rps, (requests, seconds) in results.items():
            print(f"\n[bench] simulate {autoscaler}: 1 day at {rps:g} requests/s = {requests:,} requests in {seconds:.2f} s "
                  f"({seconds / requests * 1e6:.2f} us/request)")  # fmt: skip
    requests, seconds = results[50.0]
    assert requests > 4_000_000
    assert seconds < DAY_AT_50_RPS_LIMIT_SECONDS
    per_request = {rps: s / n for rps, (n, s) in results.items()}
    # Linear: the cost of one request does not grow with the number of requests.
    assert per_request[50.0] < 1.6 * per_request[12.5]
