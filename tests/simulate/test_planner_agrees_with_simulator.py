"""`size`/`advise` and the simulator count the same replicas for a stated load: both take service times from one
model (`planner.service_time`), so the fleet the planner sizes runs, in simulation, at the planner's target
utilization -- every shipped serving example, a few loads, within 10%."""

from __future__ import annotations

import math

import pytest

from accelstack.clouds import registry
from accelstack.examples import example_files
from accelstack.planner.pricing import PriceBook
from accelstack.planner.serving import DEFAULT_TARGET_UTILIZATION
from accelstack.planner.serving_plan import plan_serving
from accelstack.simulate.design import default_autoscaler, design_from_spec
from accelstack.simulate.engine import Simulation
from accelstack.simulate.workload import synthetic
from accelstack.spec.loader import load_stack

SERVING_EXAMPLES = [path for path in example_files() if "serving" in path.name]
LOADS = (5.0, 20.0, 60.0)  # requests/s
INPUT_TOKENS, OUTPUT_TOKENS = 1000, 100
HORIZON = 3600.0


def stated(path, rps: float, *more: str):
    load = f"serving.load={{requestsPerSecond: {rps}, inputTokens: {INPUT_TOKENS}, outputTokens: {OUTPUT_TOKENS}}}"
    return load_stack(path, [load, "serving.replicas.max=400", *more])


def design(spec, autoscaler: str, **kwargs):
    cloud = registry.get(spec.cloud)
    return design_from_spec(
        spec.serving, PriceBook.from_prices(cloud.prices), catalog=cloud.catalog, autoscaler=autoscaler,
        rules=cloud.serving_scaling, **kwargs,
    )  # fmt: skip


@pytest.mark.xfail(
    reason="open: replicas_for_load takes 70% of the FULL-batch rate (batch / (batch x prefill + output x step)); "
    "the planned fleet then runs at a smaller batch, where the prefill stalls are fewer, so it needs fewer replicas "
    "(aws 60 req/s: 31.8 vs 35.9; azure, 54 sequences: 5.0 vs 14.1). The count consistent with the one model is "
    "rate x T(u c) / (u c); changing it re-derives the planner's worked figures",
    strict=False,
)
@pytest.mark.parametrize("path", SERVING_EXAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("rps", LOADS)
def test_the_planned_fleet_runs_at_the_planned_utilization(path, rps: float) -> None:
    """A fixed fleet of the planner's replicas under the stated load: requests in flight (Little's law: the served
    requests' service seconds over the run) over (concurrency x target utilization) is the fleet the simulator
    needs at the planner's utilization; it equals the planner's (unrounded) count within 10%."""
    spec = stated(path, rps)
    cloud = registry.get(spec.cloud)
    load = plan_serving(spec.serving, cloud.catalog).load
    assert load is not None
    planned = rps / (load.capacity.requests_per_second * DEFAULT_TARGET_UTILIZATION)
    fleet = design(spec, "fixed", fixed_replicas=load.replicas)
    run = Simulation(fleet, synthetic("steady", rps, horizon=HORIZON, mean_tokens=OUTPUT_TOKENS, seed=3)).run()
    totals = run.queue.stats.totals
    in_flight = (totals.latency_sum - totals.wait_sum) / HORIZON
    needed = in_flight / (fleet.concurrency * DEFAULT_TARGET_UTILIZATION)
    assert needed == pytest.approx(planned, rel=0.10), (needed, planned, load.basis())
    assert load.replicas == math.ceil(planned - 1e-9)


@pytest.mark.parametrize("rps", (5.0, 20.0))
def test_aws_target_tracking_settles_on_the_planned_fleet(rps: float) -> None:
    """The AWS example's deployed rule (owned backlog per replica at concurrency x 70%) under the stated load keeps,
    on average, the replicas `size` counts, within 10%."""
    [path] = [p for p in SERVING_EXAMPLES if p.name == "Pulumi.aws-serving.yaml"]
    spec = stated(path, rps)
    cloud = registry.get(spec.cloud)
    planned = plan_serving(spec.serving, cloud.catalog).load
    assert planned is not None
    kind = default_autoscaler(spec.serving, cloud.default_autoscaler, cloud.load_balancer_autoscaler)
    run = Simulation(
        design(spec, kind), synthetic("steady", rps, horizon=3 * HORIZON, mean_tokens=OUTPUT_TOKENS, seed=1)
    ).run()
    mean_fleet = run.meter.seconds["serving"] / (3 * HORIZON)
    assert mean_fleet == pytest.approx(planned.replicas, rel=0.10)
