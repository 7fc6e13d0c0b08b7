"""Scaling delays: on a step increase in load, new capacity arrives after the autoscaler's own delay
plus the warm or cold start the plan predicts -- computed here from the cloud's documented rules and
`plan_serving`, not from the simulator."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from accelstack.planner.scaling_rules import Counts
from accelstack.planner.serving_plan import plan_serving
from accelstack.simulate.autoscalers import AwsTargetTracking, Observation, cpu_percent
from accelstack.simulate.design import design_from_spec
from accelstack.simulate.engine import Simulation
from accelstack.simulate.workload import Workload, poisson_arrivals
from tests.planner.aws_inputs import AWS_CATALOG, AWS_RULES, aws_book, rules_for

REPO = Path(__file__).resolve().parents[2]
SERVING = REPO / "stacks" / "Pulumi.aws-serving.yaml"
STEP_AT = 600.0  # on a metric-period boundary
BASE_RPS, HIGH_RPS = 4.0, 40.0  # one replica clears 11/s (concurrency 11, 1 s service)


def spec_of(*overrides: str):
    from accelstack.spec.loader import load_stack

    return load_stack(SERVING, list(overrides)).serving


def step_load(horizon: float = 2400.0, high_until: float | None = None) -> Workload:
    rng = np.random.default_rng(11)
    starts, rates = [0.0, STEP_AT], [BASE_RPS, HIGH_RPS]
    if high_until is not None:
        starts, rates = [*starts, high_until], [*rates, BASE_RPS]
    arrivals = poisson_arrivals(starts, rates, horizon, rng)
    return Workload(arrivals, rng.exponential(256.0, len(arrivals)), horizon, "step")


def ready_after_step(serving, autoscaler: str, load: Workload | None = None):
    design = design_from_spec(
        serving, aws_book(), autoscaler=autoscaler, catalog=AWS_CATALOG, rules=rules_for(autoscaler)
    )
    run = Simulation(design, load or step_load(), sample_seconds=10.0).run()
    return run, [(t - STEP_AT, warm) for t, warm in run.ready_events]


@pytest.mark.parametrize("warm_pool", [None, 0])
def test_aws_target_tracking_capacity_after_three_datapoints_plus_start(warm_pool: int | None) -> None:
    """Backlog per instance passes the target within seconds of the step; the 1-minute datapoints at
    +60, +120, +180 s breach, the alarm acts at +180 s, and a replica serves a warm start later (a cold
    start without a warm pool; launches beyond the pool start cold)."""
    serving = spec_of(*([] if warm_pool is None else [f"serving.replicas.warmPool={warm_pool}"]))
    plan = plan_serving(serving, AWS_CATALOG)
    _, ready = ready_after_step(serving, "aws-target-tracking")
    delay = 3 * 60
    if plan.warm_pool_size:
        assert ready[0] == (pytest.approx(delay + plan.warm_start_seconds), True)
        launched = serving.replicas.max - serving.replicas.min
        warm = [t for t, w in ready if w and t < delay + plan.cold_start_seconds]
        cold = [t for t, w in ready if not w]
        assert len(warm) == min(plan.warm_pool_size, launched)
        assert cold and cold[0] == pytest.approx(delay + plan.cold_start_seconds)
    else:
        assert ready[0] == (pytest.approx(delay + plan.cold_start_seconds), False)


def test_gcp_autoscaler_acts_on_a_two_minute_old_backlog() -> None:
    serving = spec_of()
    plan = plan_serving(serving, AWS_CATALOG)
    run, ready = ready_after_step(serving, "gcp-autoscaler")
    # First sample after the step (+60 s), visible to the autoscaler 120 s later.
    after = [(t, warm) for t, warm in ready if t > 0]
    assert after[0] == (pytest.approx(60 + 120 + plan.warm_start_seconds), True)
    # num_undelivered_messages counts the unacked messages replicas hold too: 40 requests/s x 1 s in flight over the
    # plan's 7.7 per replica is about 6 replicas at once, where a count of waiting messages alone would ask for 1.
    [(when, _, new), *_] = [event for event in run.scaling_events if event[0] > STEP_AT]
    assert when - STEP_AT == 180 and new >= 5


def test_azure_autoscale_adds_half_the_count_per_cooldown() -> None:
    """ActiveMessages per instance over the 5-minute window passes the target (7.7) within a grain of the step: +50%
    of the count (at least one) per scale-out, each after a cooldown of one cold start (233 s -> PT4M)."""
    serving = spec_of()
    plan = plan_serving(serving, AWS_CATALOG)
    run, ready = ready_after_step(serving, "azure-autoscale")
    cooldown = 60 * -(-plan.cold_start_seconds // 60)
    outs = [(t - STEP_AT, old, new) for t, old, new in run.scaling_events if new > old][:3]
    assert outs == [(60, 1, 2), (60 + cooldown, 2, 3), (60 + 2 * cooldown, 3, 5)]
    assert ready[0] == (pytest.approx(60 + plan.warm_start_seconds), True)


def test_request_rate_scaling_waits_its_upscale_delay() -> None:
    serving = spec_of()
    plan = plan_serving(serving, AWS_CATALOG)
    _, ready = ready_after_step(serving, "request-rate")
    # Decision every 20 s from the first one after the step; 15 consecutive (300 s) before acting.
    assert ready[0][0] == pytest.approx(20 + 280 + plan.warm_start_seconds)


def test_fixed_fleet_never_scales() -> None:
    run, ready = ready_after_step(spec_of(), "fixed")
    assert ready == [] and run.scaling_events == []
    assert all(s.in_service == 8 for s in run.samples)


def test_aws_scales_in_to_min_after_fifteen_quiet_datapoints_and_refills_the_pool() -> None:
    serving = spec_of()
    plan = plan_serving(serving, AWS_CATALOG)
    high_until = 1500.0
    run, _ = ready_after_step(serving, "aws-target-tracking", step_load(horizon=4800.0, high_until=high_until))
    scale_in = [(t, old, new) for t, old, new in run.scaling_events if new < old]
    assert scale_in, run.scaling_events
    when, _, to = scale_in[0]
    assert to == serving.replicas.min  # ceil(4 requests/s x 1 s in flight / 7.7), at least min
    # The 15 one-minute datapoints up to the decision are all 10% below the target ((waiting + in flight) / InService).
    minute = {round(s.time): s for s in run.samples if round(s.time) % 60 == 0}
    quiet = [minute[round(when) - 60 * k] for k in range(15)]
    assert all(s.backlog + s.in_flight < 0.9 * plan.backlog_per_instance_target * s.in_service for s in quiet)
    last = run.samples[-1]
    assert last.in_service == serving.replicas.min and last.pool == plan.warm_pool_size


def obs(backlog: int, in_service: int = 2, capacity: int = 2, warming: bool = False, busy: float = 0.0) -> Observation:
    return Observation(0.0, backlog, in_service, capacity, busy, 0, warming)


def test_target_tracking_needs_three_consecutive_breaches() -> None:
    policy = AwsTargetTracking(target=100, minimum=1, maximum=10, warmup_seconds=60)
    assert policy.decide(obs(500)) is None
    assert policy.decide(obs(500)) is None
    assert policy.decide(obs(150)) is None  # 75 per instance: below target, the streak breaks
    assert [policy.decide(obs(500)) for _ in range(3)] == [None, None, 5]  # ceil(500 / 100)


def test_target_tracking_does_not_scale_in_while_an_instance_warms_up() -> None:
    policy = AwsTargetTracking(target=100, minimum=1, maximum=10, warmup_seconds=60)
    decisions = [policy.decide(obs(0, 4, 4, warming=True)) for _ in range(20)]
    assert decisions == [None] * 20
    assert policy.decide(obs(0, 4, 4)) == 1


def test_scale_from_zero_starts_one_replica_when_requests_wait() -> None:
    policy = AwsTargetTracking(target=100, minimum=0, maximum=10, warmup_seconds=60)
    assert policy.decide(obs(0, 0, 0)) is None
    assert policy.decide(obs(3, 0, 0)) == 1
    assert policy.decide(obs(3, 0, 1)) is None  # one is launching already


def test_cpu_stays_low_on_a_gpu_replica_whatever_the_backlog() -> None:
    """The CPU-utilization alternative's premise: a g6e.xlarge flat out is still under a 50% target."""
    assert cpu_percent(1.0, vcpus=4, gpus=1) < 50
    policy = AwsTargetTracking(target=50, minimum=1, maximum=8, warmup_seconds=60, vcpus=4, gpus=1, metric="cpu")
    assert all(policy.decide(obs(10_000, 1, 1, busy=1.0)) is None for _ in range(10))


def test_cpu_scaling_misses_the_slo_that_backlog_scaling_meets_on_a_spike() -> None:
    from accelstack.simulate.report import summarize

    serving = spec_of()
    load = step_load(horizon=3600.0, high_until=2400.0)
    backlog = summarize(
        Simulation(
            design_from_spec(
                serving, aws_book(), autoscaler="aws-target-tracking", catalog=AWS_CATALOG, rules=AWS_RULES
            ),
            load,
        ).run(),
        0.99,
    )
    cpu = summarize(
        Simulation(
            design_from_spec(serving, aws_book(), autoscaler="cpu-utilization", catalog=AWS_CATALOG), load
        ).run(),
        0.99,
    )
    assert cpu["requests"]["refused"] > 0 and cpu["scaling"]["events"] == 0
    assert backlog["slo"]["attainment"] > cpu["slo"]["attainment"] + 0.2


def test_target_tracking_scales_in_only_ten_percent_below_the_target() -> None:
    """20 instances at 92% of the target: ceil(20 x 0.92) = 19 would still hold the target, but the
    scale-in alarm waits for 10% below it; at 85%, 15 datapoints scale in to ceil(20 x 0.85) = 17."""
    policy = AwsTargetTracking(target=100, minimum=1, maximum=30, warmup_seconds=60)
    assert [policy.decide(obs(1840, 20, 20)) for _ in range(30)] == [None] * 30
    assert [policy.decide(obs(1700, 20, 20)) for _ in range(15)] == [None] * 14 + [17]


def test_target_tracking_never_scales_in_past_the_target() -> None:
    """AWS: below the target the policy does not scale in where removing the smallest unit of capacity would likely
    put the metric above the target ("How target tracking scaling works", Application Auto Scaling User Guide). Two
    instances at 80% of the target are 10% below it for 15 minutes, but one alone would read 160%: they stay; at
    45% one alone reads 90% and the group goes to ceil(2 x 0.45) = 1."""
    policy = AwsTargetTracking(target=100, minimum=1, maximum=30, warmup_seconds=60)
    assert [policy.decide(obs(160, 2, 2)) for _ in range(30)] == [None] * 30
    assert policy.decide(obs(90, 2, 2)) == 1  # the 15 datapoints before were already below 90% of the target
    fresh = AwsTargetTracking(target=100, minimum=1, maximum=30, warmup_seconds=60)
    assert [fresh.decide(obs(90, 2, 2)) for _ in range(15)] == [None] * 14 + [1]


@pytest.mark.parametrize("needed", [2.5, 7.3, 10.0, 23.4])
def test_the_fleet_target_tracking_holds_lies_in_its_band(needed: float) -> None:
    """What AWS's two rules leave at a steady load of `needed` x the target (summed over the fleet): any fleet N
    with needed <= N and needed / N >= 90% of the target stays -- from ceil(needed) up to needed / 0.9, 11% above
    the count at the target -- and a fleet beyond the band is brought down to ceil(needed). So a planned count at
    the target is a floor of what target tracking holds, not its mean: the fleet a day's ramps leave sits in the
    band, and noise in the metric (a scale-in needs all 15 datapoints below the line) holds it higher still."""
    target = 100.0
    load = needed * target
    for fleet in range(1, 40):
        policy = AwsTargetTracking(target=target, minimum=1, maximum=60, warmup_seconds=60)
        decisions = [policy.decide(Observation(0.0, round(load), fleet, fleet, 0.0, 0, False)) for _ in range(15)]
        per_instance = round(load) / fleet
        if per_instance > target:
            assert decisions[2] == math.ceil(round(load) / target), fleet  # out after 3 datapoints
        elif per_instance >= 0.9 * target:
            assert decisions == [None] * 15, fleet  # in the band: held
        else:
            assert decisions[-1] == (
                math.ceil(round(load) / target) if math.ceil(round(load) / target) < fleet else None
            )


def test_deployed_metric_counts_messages_in_flight_and_waiting() -> None:
    """(Visible + NotVisible) / InService: replicas busy with 30 requests and nothing waiting read 15
    per instance, over the target of 10; Visible alone would read 0 and scale in."""
    both = (Counts.WAITING, Counts.IN_FLIGHT)
    busy = Observation(0.0, 0, 2, 2, 1.0, 0, False, not_visible=30)
    deployed = AwsTargetTracking(target=10, minimum=1, maximum=10, warmup_seconds=60, reads=both)
    assert [deployed.decide(busy) for _ in range(3)] == [None, None, 3]  # ceil(2 x 15 / 10)
    visible_only = AwsTargetTracking(target=10, minimum=1, maximum=10, warmup_seconds=60)
    assert [visible_only.decide(busy) for _ in range(15)][-1] == 1
