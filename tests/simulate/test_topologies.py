"""The simulator follows the stack's topology, never its cloud: which autoscaler the stack deploys (queue
backlog, the load balancer's requests per replica, or none for a fixed fleet), how many requests may wait
(the queue's depth, or each live replica's share), and what a failed replica costs (redelivered from a queue,
lost without one)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from accelstack.clouds import registry
from accelstack.clouds.azure.serving_scaling import ACTIVE_MESSAGES, REQUESTS_PER_HOST
from accelstack.planner import scaling_rules as rules
from accelstack.planner.serving_plan import plan_serving
from accelstack.simulate import autoscalers as scalers
from accelstack.simulate.autoscalers import Observation
from accelstack.simulate.design import default_autoscaler, design_from_spec
from accelstack.simulate.engine import Simulation
from accelstack.simulate.report import summarize
from accelstack.simulate.workload import Workload
from accelstack.spec.loader import load_stack
from tests.planner.aws_inputs import AWS_CATALOG, AWS_RULES, aws_book

REPO = Path(__file__).resolve().parents[2]
SERVING = REPO / "stacks" / "Pulumi.aws-serving.yaml"
DIRECT = ("serving.admission.kind=replica",)
FIXED = ("serving.replicas.scaling=fixed", "serving.replicas.min=3", "serving.replicas.max=3")


@pytest.mark.parametrize("cloud", sorted(registry.deployable()))
def test_each_cloud_names_a_simulated_autoscaler_per_topology(cloud: str) -> None:
    declared = registry.get(cloud)
    if declared.default_autoscaler is None and declared.load_balancer_autoscaler is None:
        pytest.skip(f"{cloud} deploys no serving autoscaler")
    # None: the cloud deploys no autoscaler in that topology (Vultr has the direct one only, a fixed fleet).
    named = {declared.default_autoscaler, declared.load_balancer_autoscaler} - {None}
    assert named and named <= set(scalers.AUTOSCALERS)


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [((), "queue"), (DIRECT, "load"), (FIXED, "fixed"), ((*DIRECT, *FIXED), "fixed")],
)
def test_the_default_autoscaler_follows_the_topology(overrides: tuple[str, ...], expected: str) -> None:
    serving = load_stack(SERVING, list(overrides)).serving
    assert default_autoscaler(serving, "queue", "load") == expected


def test_a_direct_design_holds_each_replicas_share_and_loses_what_a_failed_replica_held() -> None:
    serving = load_stack(SERVING, list(DIRECT)).serving
    plan = plan_serving(serving, AWS_CATALOG)
    design = design_from_spec(serving, aws_book(), rules=AWS_RULES, catalog=AWS_CATALOG, autoscaler="aws-alb-requests")
    assert design.waiting_per_replica == plan.replica_waiting > 0
    assert design.ttl_seconds == plan.replica_wait_seconds
    assert design.max_receive_count == 1
    queued = design_from_spec(
        load_stack(SERVING).serving, aws_book(), rules=AWS_RULES, catalog=AWS_CATALOG, autoscaler="aws-target-tracking"
    )
    assert (queued.waiting_per_replica, queued.max_receive_count) == (0, queued.max_receive_count)
    assert queued.max_receive_count > 1


def test_the_waiting_limit_moves_with_the_live_replicas() -> None:
    """Two replicas of one slot, two waiting places each: ten requests at once get two slots and four places;
    the other four are refused. One replica: one slot and two places."""
    serving = load_stack(SERVING, [*DIRECT, *FIXED]).serving
    base = design_from_spec(
        serving, aws_book(), rules=AWS_RULES, catalog=AWS_CATALOG, autoscaler="fixed", fixed_replicas=2
    )
    design = base.with_changes(concurrency=1, waiting_per_replica=2, ttl_seconds=1000.0)
    for replicas, served in ((2, 6), (1, 3)):
        d = design.with_changes(initial_replicas=replicas, replicas_min=replicas, replicas_max=replicas)
        load = Workload(np.array([0.01 * i for i in range(10)]), np.full(10, 5.0), 600.0, "burst")
        run = Simulation(d, load, tokens_per_second=1.0, sample_seconds=1.0).run()
        requests = summarize(run, 0.99)["requests"]
        assert (requests["served"], requests["refused"]) == (served, 10 - served)


def observation(arrivals_last_minute: int, in_service: int, now: float) -> Observation:
    return Observation(
        now=now, backlog=0, in_service=in_service, capacity=in_service, busy_fraction=0.5,
        arrivals_last_minute=arrivals_last_minute, warming=False,
    )  # fmt: skip


def test_alb_request_tracking_scales_out_after_three_minutes_on_requests_per_target() -> None:
    policy = scalers.AwsTargetTracking(100.0, 1, 20, 60.0, metric="requests")
    decisions = [policy.decide(observation(600, 2, 60.0 * t)) for t in range(3)]
    assert decisions == [None, None, 6]  # 300 per target against 100: ceil(2 x 300 / 100)


def azure_profile(metric: rules.Metric, per_instance: bool) -> rules.AzureAutoscale:
    """Out above 100 by one, in below 50 by one, 5-minute windows and cooldowns."""
    return rules.AzureAutoscale(
        autoscaler="what-if", minimum=1, maximum=20, default=1, standby_pool=0,
        rules=(
            rules.AutoscaleRule(rules.MetricTrigger(metric, per_instance, "GreaterThan", 100.0, 300),
                                rules.ScaleAction("Increase", "ChangeCount", 1, 300)),
            rules.AutoscaleRule(rules.MetricTrigger(metric, per_instance, "LessThan", 50.0, 300),
                                rules.ScaleAction("Decrease", "ChangeCount", 1, 300)),
        ),
    )  # fmt: skip


def test_gateway_requests_per_host_scale_by_one_step_per_cooldown() -> None:
    policy = scalers.AzureAutoscale(azure_profile(REQUESTS_PER_HOST, per_instance=False))
    decisions = [policy.decide(observation(600, 2, 60.0 * t)) for t in range(7)]
    # 300 requests per host in the minute against 100: one more, then nothing until the 5-minute cooldown ends.
    assert decisions == [3, None, None, None, None, 3, None]
    queue_policy = scalers.AzureAutoscale(azure_profile(ACTIVE_MESSAGES, per_instance=True))
    # The same load read as the queue's active messages: nothing waits or is held, so the queue rule scales in.
    assert queue_policy.decide(observation(600, 2, 0.0)) == 1


def test_load_balancing_utilization_recommends_the_rate_over_each_replicas_share() -> None:
    policy = scalers.GcpAutoscaler(
        rules.GcpAutoscaler(
            autoscaler="gcp-lb-utilization", minimum=1, maximum=20, initialization_seconds=60, standby_pool=0,
            utilization_target=1.0, max_rate_per_instance=1.0, delay_seconds=60,
        )
    )  # fmt: skip
    assert policy.decide(observation(600, 2, 0.0)) is None  # not visible yet
    assert policy.decide(observation(600, 2, 60.0)) == 10  # 10 requests/s at 1 per replica


def test_a_stack_without_a_queue_pays_for_no_queue() -> None:
    arrivals = np.arange(0.0, 1000.0, 0.005)  # 200,000 requests: about 1.2 M SQS calls with a queue
    load = Workload(arrivals, np.full(len(arrivals), 0.001), 1000.0, "steady")
    costs = {}
    for name, overrides in (("queue", ()), ("replica", DIRECT)):
        serving = load_stack(SERVING, list(overrides)).serving
        design = design_from_spec(
            serving, aws_book(), rules=AWS_RULES, catalog=AWS_CATALOG, autoscaler="fixed", fixed_replicas=2
        )
        costs[name] = summarize(Simulation(design, load, tokens_per_second=1.0).run(), 0.99)["cost"]
    assert costs["queue"]["queueUsd"] > 0 and costs["replica"]["queueUsd"] == 0
