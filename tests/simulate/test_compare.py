"""Trustworthy comparisons: the simulator's cost equals `accelstack cost` for the same hours line by line, the KEDA
peer scales as KEDA and the HPA do, and `--compare` over several seeds reports intervals and the stack design's cost
at equal SLO against the best peer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.planner.cost import HOURS_PER_MONTH
from accelstack.simulate.autoscalers import Observation
from accelstack.simulate.compare import PEER_AUTOSCALERS, KedaQueueLength

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(REPO)
    runner = CliRunner()

    def invoke(*args: str) -> dict:
        result = runner.invoke(app, list(args))
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    return invoke


# What `accelstack cost` lists as not priced and the simulator prices from its traffic, by cloud.
TRAFFIC_LINES = {
    "aws": ("ALB (hourly + LCU)", "SQS requests"),
    "azure": ("Application Gateway capacity units", "Service Bus (base charge + operations)"),
    "gcp": ("external Application Load Balancer (forwarding rules + data processed)", "Pub/Sub (throughput)"),
}


@pytest.mark.parametrize("cloud", sorted(TRAFFIC_LINES))
def test_fixed_fleet_cost_equals_accelstack_cost_for_the_same_hours(cli, cloud: str) -> None:
    """8 replicas all day on every cloud: instances and root volumes (AWS: storage + gp3 IOPS + throughput) as
    `accelstack cost` prices them, per hour of its month, line by line and in total (accelstackCostUsd); the load
    balancer and queue lines come on top, and `cost` names them as not priced. Measured, 3 h: AWS $44.66 + $1.84,
    Azure $88.15 + $1.01, GCP $20.49 + $0.66 in both."""
    hours, stack = 3.0, f"{cloud}-serving"
    costed = cli("cost", stack, "--json", "--set", "serving.replicas.min=8")["stacks"][stack]
    priced = costed["serving"]
    simulated = cli(
        "simulate", "serving", stack, "--autoscaler", "fixed", "--hours", str(hours), "--pattern", "steady",
        "--rate", "5", "--seeds", "1", "--json",
    )["designs"][0]["cost"]  # fmt: skip
    per_hour = hours / HOURS_PER_MONTH
    assert simulated["instancesUsd"] == pytest.approx(priced["computeMonthlyUsd"] * per_hour, abs=0.01)
    assert simulated["volumesRunningUsd"] == pytest.approx(priced["runningVolumesMonthlyUsd"] * per_hour, abs=0.01)
    assert simulated["warmPoolVolumesUsd"] == priced["warmPoolMonthlyUsd"] == 0
    assert simulated["accelstackCostUsd"] == pytest.approx(priced["monthlyUsd"] * per_hour, abs=0.02)
    traffic = simulated["loadBalancerUsd"] + simulated["queueUsd"]
    assert simulated["totalUsd"] == pytest.approx(simulated["accelstackCostUsd"] + traffic, abs=0.02)
    assert set(TRAFFIC_LINES[cloud]) <= set(costed["notPriced"])
    if cloud == "aws":  # the provisioned IOPS and throughput are in it: storage alone would be 200 GiB x $0.08
        assert priced["volumeMonthlyUsd"] > 200 * 0.08


@pytest.mark.parametrize("cloud", ("aws", "azure"))
def test_warm_pool_volumes_cost_equals_accelstack_cost(cli, cloud: str) -> None:
    """A light steady load never scales: the stopped warm-pool instances' volumes (AWS's warm pool of 6, Azure's
    standby pool of 3) all run, priced as `cost` does. (GCP's 70B example scales at 2 req/s, so its pool moves.)"""
    hours, stack = 2.0, f"{cloud}-serving"
    priced = cli("cost", stack, "--json")["stacks"][stack]["serving"]
    design = cli(
        "simulate", "serving", stack, "--hours", str(hours), "--pattern", "steady", "--rate", "2",
        "--seeds", "1", "--json",
    )["designs"][0]  # fmt: skip
    assert design["replicaHours"]["warmPoolStopped"] == pytest.approx(priced["warmPool"] * hours, abs=0.01)
    expected = priced["warmPoolMonthlyUsd"] * hours / HOURS_PER_MONTH
    assert design["cost"]["warmPoolVolumesUsd"] == pytest.approx(expected, abs=0.01)


def observe(now: float, waiting: int, in_flight: int, capacity: int) -> Observation:
    return Observation(
        now=now, backlog=waiting, in_service=capacity, capacity=capacity, busy_fraction=0.0,
        arrivals_last_minute=0, warming=False, not_visible=in_flight,
    )  # fmt: skip


def test_keda_queue_length_scales_as_keda_and_the_hpa_do() -> None:
    keda = KedaQueueLength(queue_length=10, minimum=0, maximum=20)
    assert keda.decide(observe(0, 0, 0, 0)) is None  # nothing waits: stays at zero
    assert keda.decide(observe(30, 3, 0, 0)) == 1  # activation: one message starts the first replica
    # Waiting + in flight = 105 over 10 per replica: 11 wanted, but one step at most doubles or adds 4.
    assert keda.decide(observe(60, 95, 10, 1)) == 5
    assert keda.decide(observe(90, 95, 10, 5)) == 10
    assert keda.decide(observe(120, 95, 10, 10)) is None  # 105 / 100: within the HPA's 10% tolerance
    # Load falls: scale-in waits for the highest recommendation of the last 300 s.
    assert keda.decide(observe(150, 0, 30, 10)) is None
    assert keda.decide(observe(410, 0, 30, 10)) is None  # 120 s's recommendation (10) is still in the window
    assert keda.decide(observe(460, 0, 30, 10)) == 3


def test_compare_over_seeds_reports_intervals_and_cost_at_equal_slo(cli) -> None:
    data = cli(
        "simulate", "serving", "aws-serving", "--hours", "0.5", "--pattern", "steady", "--rate", "20",
        "--seeds", "3", "--compare", "--json",
    )  # fmt: skip
    assert data["workload"]["seeds"] == 3
    designs = data["designs"]
    assert sum(d["autoscaler"] in PEER_AUTOSCALERS for d in designs) == 4
    for design in designs:
        slo, cost = design["slo"], design["cost"]
        assert design["seeds"] == 3 and len(slo["perSeed"]) == 3 and len(cost["perSeed"]) == 3
        assert slo["interval"]["low"] <= slo["attainment"] <= slo["interval"]["high"]
        assert cost["interval"]["low"] <= cost["totalUsd"] <= cost["interval"]["high"]
        assert design["requests"]["arrived"] == data["workload"]["requests"]
    peers = data["againstPeers"]
    assert peers["peer"] in [d["design"] for d in designs[2:]]
    if peers["comparable"]:
        assert peers["verdict"] in ("cheaper", "dearer", "indistinguishable")
        assert peers["costRatio"] == pytest.approx(peers["stackUsd"] / peers["peerUsd"], rel=1e-3)
    pick = data["recommendation"]
    assert set(pick["indistinguishableFrom"]) <= {d["design"] for d in designs}


def test_start_state_is_reported_and_selectable(cli) -> None:
    args = ["simulate", "serving", "aws-serving", "--hours", "0.5", "--pattern", "steady", "--rate", "40", "--seeds", "1", "--json"]  # fmt: skip
    steady = cli(*args)["designs"][0]
    minimum = cli(*args, "--start", "minimum")["designs"][0]
    assert minimum["start"] == {"state": "minimum", "replicas": 1, "backlog": 0}
    # 40 requests/s x 1 s over 7.7 per replica: 6 replicas from the first second.
    assert steady["start"] == {"state": "steady", "replicas": 6, "backlog": 0}
    assert steady["slo"]["attainment"] > minimum["slo"]["attainment"]
    result = CliRunner().invoke(app, [*args, "--start", "warm"])
    assert result.exit_code == 2 and "--start 'warm': allowed: steady, minimum" in result.output
