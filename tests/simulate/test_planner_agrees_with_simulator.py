"""`size`/`advise` and the simulator count the same replicas for a stated load: both take service times from one
model (`planner.service_time`), so the fleet the planner sizes runs, in simulation, at the planner's target
utilization -- every shipped serving example, a few loads, within 10%."""

from __future__ import annotations

import math

import pytest

from accelstack.clouds import registry
from accelstack.examples import example_files
from accelstack.planner.pricing import PriceBook
from accelstack.planner.scaling_rules import TargetTracking
from accelstack.planner.serving import DEFAULT_TARGET_UTILIZATION
from accelstack.planner.serving_plan import plan_serving
from accelstack.planner.token_lengths import of_load
from accelstack.simulate.design import default_autoscaler, design_from_spec
from accelstack.simulate.engine import Simulation
from accelstack.simulate.workload import synthetic
from accelstack.spec.loader import load_stack

SERVING_EXAMPLES = [path for path in example_files() if "serving" in path.name]
LOADS = (5.0, 20.0, 60.0)  # requests/s
INPUT_TOKENS, OUTPUT_TOKENS = 1000, 100
HORIZON = 3600.0


# Stated length distributions (serving.load.inputLengths / outputLengths): a histogram of prompts around 1000 and
# long-tailed outputs around 100; the planner sizes by their mean context, the simulator draws them.
SPREAD = (
    ", inputLengths: {kind: histogram, bins: [{tokens: 200, share: 0.5}, {tokens: 1800, share: 0.5}]}"
    ", outputLengths: {kind: lognormal, p99: 1000}"
)


def stated(path, rps: float, *more: str, lengths: str = ""):
    load = f"serving.load={{requestsPerSecond: {rps}, inputTokens: {INPUT_TOKENS}, outputTokens: {OUTPUT_TOKENS}{lengths}}}"
    fleet = ["serving.replicas.max=400"]
    if load_stack(path).serving.replicas.scaling == "fixed":
        # A fixed fleet (Vultr's) keeps min equal to max, and one Vultr load balancer attaches at most 100.
        fleet = ["serving.replicas.max=100", "serving.replicas.min=100"]
    return load_stack(path, [load, *fleet, *more])


def design(spec, autoscaler: str, **kwargs):
    cloud = registry.get(spec.cloud)
    return design_from_spec(
        spec.serving, PriceBook.from_prices(cloud.prices), catalog=cloud.catalog, autoscaler=autoscaler,
        rules=cloud.serving_scaling, **kwargs,
    )  # fmt: skip


@pytest.mark.parametrize("path", SERVING_EXAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize(("rps", "lengths"), [*((rps, "") for rps in LOADS), (20.0, SPREAD)])
def test_the_planned_fleet_runs_at_the_planned_utilization(path, rps: float, lengths: str) -> None:
    """The planner says `needed` = rate x T(u c) / (u c) replicas keep u c requests in flight each (u the target
    utilization, c the concurrency, T the service time at that batch). The simulator's count for the same load:
    the requests in flight (Little's law: service seconds served over the run) when its fleet runs at that
    utilization, over u c. A fleet is whole replicas, so the planner's ceil(needed) replicas are run at the load
    they carry at u by the planner (rate x ceil(needed) / needed) and the simulator's count is scaled back to the
    stated rate. (Run at the stated rate, ceil(needed) replicas sit below u, at a smaller batch with shorter
    service times, and would flatter any count.) Also with stated length distributions (a prompt histogram,
    lognormal outputs), drawn by the simulator. Measured: 1.0-3.3% apart on every example at 5, 20 and 60 req/s;
    the former count, u x the full batch's rate, was 13% high on AWS and 2.8x on Azure (60 req/s: 35.9 and 14.1
    against 31.8 and 5.0)."""
    spec = stated(path, rps, lengths=lengths)
    cloud = registry.get(spec.cloud)
    load = plan_serving(spec.serving, cloud.catalog).load
    assert load is not None and load.target_utilization == DEFAULT_TARGET_UTILIZATION
    fleet = design(spec, "fixed", fixed_replicas=load.replicas)
    carried = rps * load.replicas / load.needed
    assert carried == pytest.approx(load.carried(load.replicas))
    stream = synthetic(
        "steady", carried, horizon=HORIZON, mean_tokens=OUTPUT_TOKENS, seed=3, lengths=of_load(spec.serving.load)
    )
    run = Simulation(fleet, stream).run()
    totals = run.queue.stats.totals
    in_flight = (totals.latency_sum - totals.wait_sum) / HORIZON
    simulated = in_flight / (fleet.concurrency * DEFAULT_TARGET_UTILIZATION) * rps / carried
    assert simulated == pytest.approx(load.needed, rel=0.10), (simulated, load.needed, load.basis())
    assert load.replicas == math.ceil(load.needed - 1e-9)


@pytest.mark.parametrize("rps", (5.0, 20.0))
def test_aws_target_tracking_holds_the_planned_fleet(rps: float) -> None:
    """The AWS example's deployed rule (owned backlog per replica at concurrency x 70%) under the stated load: the
    requests it keeps in flight need the planner's count at the target (within 10%), and the fleet it holds on
    average lies between that count and the count at the rule's scale-in threshold (it removes replicas only 10%
    below the target, so noise holds it above), with 10% for the noise. Measured (seeds 1, 2): 5 req/s, 2.71
    planned, 3.07/3.17 held; 20 req/s, 10.82 planned, 12.71/11.97 held."""
    [path] = [p for p in SERVING_EXAMPLES if p.name == "Pulumi.aws-serving.yaml"]
    spec = stated(path, rps)
    cloud = registry.get(spec.cloud)
    planned = plan_serving(spec.serving, cloud.catalog).load
    assert planned is not None
    kind = default_autoscaler(spec.serving, cloud.default_autoscaler, cloud.load_balancer_autoscaler)
    fleet = design(spec, kind)
    assert isinstance(fleet.rule, TargetTracking)
    run = Simulation(fleet, synthetic("steady", rps, horizon=3 * HORIZON, mean_tokens=OUTPUT_TOKENS, seed=1)).run()
    totals = run.queue.stats.totals
    in_flight = (totals.latency_sum - totals.wait_sum) / (3 * HORIZON)
    assert in_flight / (fleet.concurrency * DEFAULT_TARGET_UTILIZATION) == pytest.approx(planned.needed, rel=0.10)
    mean_fleet = run.meter.seconds["serving"] / (3 * HORIZON)
    assert 0.9 * planned.needed <= mean_fleet <= 1.1 * planned.needed / fleet.rule.scale_in_fraction, mean_fleet
