"""`size`/`advise` and the simulator count the same replicas for a stated load: both take service times from one
model (`planner.service_time`), so the fleet the planner sizes runs, in simulation, at the planner's target
utilization -- every shipped serving example, both topologies (queue-admitted and direct), a few loads, within
10%; `size` and `advise` print the planner's own count, and the deployed rule holds that fleet."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.clouds import registry
from accelstack.examples import example_files
from accelstack.planner.model_size import architecture_of
from accelstack.planner.pricing import PriceBook
from accelstack.planner.scaling_rules import TargetTracking
from accelstack.planner.serving import DEFAULT_TARGET_UTILIZATION
from accelstack.planner.serving_plan import plan_serving
from accelstack.planner.token_lengths import of_load
from accelstack.simulate.design import default_autoscaler, design_from_spec
from accelstack.simulate.engine import Simulation
from accelstack.simulate.workload import synthetic
from accelstack.spec.loader import load_stack

REPO = Path(__file__).resolve().parents[2]
SERVING_EXAMPLES = [path for path in example_files() if "serving" in path.name]
# The two topologies: a queue admits requests (the examples' own), or each replica admits its share (direct).
TOPOLOGIES = {"queue": (), "direct": ("serving.admission.kind=replica",)}
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


@pytest.mark.parametrize("topology", TOPOLOGIES)
@pytest.mark.parametrize("path", SERVING_EXAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize(("rps", "lengths"), [*((rps, "") for rps in LOADS), (20.0, SPREAD)])
def test_the_planned_fleet_runs_at_the_planned_utilization(path, rps: float, lengths: str, topology: str) -> None:
    """The planner says `needed` = rate x T(u c) / (u c) replicas keep u c requests in flight each (u the target
    utilization, c the concurrency, T the service time at that batch). The simulator's count for the same load:
    the requests in flight (Little's law: service seconds served over the run) when its fleet runs at that
    utilization, over u c. A fleet is whole replicas, so the planner's ceil(needed) replicas are run at the load
    they carry at u by the planner (rate x ceil(needed) / needed) and the simulator's count is scaled back to the
    stated rate. (Run at the stated rate, ceil(needed) replicas sit below u, at a smaller batch with shorter
    service times, and would flatter any count.) Also with stated length distributions (a prompt histogram,
    lognormal outputs), drawn by the simulator. Measured: 1.0-3.3% apart on every example at 5, 20 and 60 req/s;
    the former count, u x the full batch's rate, was 13% high on AWS and 2.8x on Azure (60 req/s: 35.9 and 14.1
    against 31.8 and 5.0). Both topologies: a direct fleet holds each replica's share of the waiting requests."""
    spec = stated(path, rps, *TOPOLOGIES[topology], lengths=lengths)
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
    average lies between that count and the count at the rule's scale-in threshold, with 10% for the noise. That
    band is AWS's, not the model's: target tracking scales in only "sufficiently below the target value (typically
    more than 10% lower)" and never where one instance fewer would put the metric over the target (Application Auto
    Scaling User Guide, "How target tracking scaling works"), so the fleet held sits up to 1 / 0.9 above the
    count at the target, and noise (all 15 datapoints must read below the line) holds it higher. Measured (seeds 1,
    2): 5 req/s, 2.71 planned, 3.07/3.17 held (13%/17% above); 20 req/s, 10.82 planned, 12.71/11.97 held (17%/11%)."""
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


def deployed_design(spec):
    cloud = registry.get(spec.cloud)
    kind = default_autoscaler(spec.serving, cloud.default_autoscaler, cloud.load_balancer_autoscaler)
    assert kind is not None
    return design(spec, kind)


@pytest.mark.parametrize("topology", TOPOLOGIES)
@pytest.mark.parametrize("path", SERVING_EXAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("rps", (5.0, 20.0))
def test_the_deployed_rule_holds_the_planned_fleet(path, rps: float, topology: str) -> None:
    """The rule each example deploys in each topology (queue backlog, or the load balancer's requests per replica)
    under the stated load holds on average no fewer replicas than the planner counts (10% for the noise) and no
    more than its whole count plus the rule's band: a fleet held below the count runs past the target utilization,
    one held far above wastes what the count saves. Measured (seed 1, 1 h): AWS target tracking 3.63 / 12.83 held
    for 2.71 / 10.82 planned, ALB requests 3.0 / 11.63; Azure 1.0 / 4.0 for 0.88 / 3.5 in both topologies; GCP
    (a 70B on 3 in flight) 28.9 / 102.6 for 23.3 / 93.2 by Pub/Sub backlog, 25.6 / 97.7 by load-balancer
    utilization."""
    spec = stated(path, rps, *TOPOLOGIES[topology])
    planned = plan_serving(spec.serving, registry.get(spec.cloud).catalog).load
    assert planned is not None
    fleet = deployed_design(spec)
    stream = synthetic(
        "steady", rps, horizon=HORIZON, mean_tokens=OUTPUT_TOKENS, seed=1, lengths=of_load(spec.serving.load)
    )
    run = Simulation(fleet, stream).run()
    held = run.meter.seconds["serving"] / HORIZON
    if fleet.autoscaler == "fixed":
        # No scaling rule (Vultr): the fleet is replicas.max all day whatever the load, never fewer than the count.
        assert held == spec.serving.replicas.max >= planned.replicas, (held, planned.replicas)
        return
    assert 0.9 * planned.needed <= held <= 1.25 * planned.replicas, (fleet.autoscaler, held, planned.needed)


LATENCY_BOUND = ", latency: {percentile: 95, targetSeconds: 10}"


def test_the_latency_cut_batch_is_the_deployed_concurrency() -> None:
    """A p95 target of 10 s on the AWS example (1000 + 100 tokens, exponential outputs): only 3 in flight keep the
    p95 service time within it (11 fit the KV cache). The planner counts replicas at that batch, so the worker
    keeps 3 in flight and the scaling rule tracks 3 x 70% per replica. Before, the plan counted 32.3 replicas at
    batch 3 while the deployed worker kept 11 and its rule held 12.4 replicas at p95 10.75 s (20 req/s, seed 3);
    now it holds 36.7 and p95 is 9.7 s."""
    [path] = [p for p in SERVING_EXAMPLES if p.name == "Pulumi.aws-serving.yaml"]
    spec = load_stack(
        path,
        [
            f"serving.load={{requestsPerSecond: 20, inputTokens: {INPUT_TOKENS}, outputTokens: {OUTPUT_TOKENS}"
            f"{LATENCY_BOUND}}}",
            "serving.replicas.max=400",
        ],
    )
    cloud = registry.get(spec.cloud)
    plan = plan_serving(spec.serving, cloud.catalog, cloud.serving_scaling)
    assert plan.load is not None and plan.load.capacity.meets_latency
    assert plan.load.capacity.batch == plan.concurrency == 3 < plan.load.capacity.max_batch == 11
    assert "cut to 3" in plan.concurrency_basis and "p95" in plan.concurrency_basis
    assert isinstance(plan.scaling, TargetTracking) and plan.scaling.target == pytest.approx(3 * 0.7)
    fleet = deployed_design(spec)
    assert fleet.concurrency == 3
    run = Simulation(fleet, synthetic("steady", 20, horizon=HORIZON, mean_tokens=OUTPUT_TOKENS, seed=3)).run()
    assert run.queue.stats.latency.quantile(0.95) <= 10.0
    assert run.meter.seconds["serving"] / HORIZON >= 0.9 * plan.load.needed


def size_args(spec) -> list[str]:
    """`size serving` flags for the replicas of `spec` (model, instance, tp, context, adapters, the stated load)."""
    serving, load = spec.serving, spec.serving.load
    arch = architecture_of(serving.model.name, serving.model.preset)
    plan = plan_serving(serving, registry.get(spec.cloud).catalog)
    args = ["size", "serving", "--cloud", spec.cloud, "--model", arch.name, "--instance-type",
            serving.replicas.instance_type, "--tp", str(plan.tensor_parallel), "--precision", serving.model.precision,
            "--context", str(serving.model.context_length), "--rps", f"{load.requests_per_second:g}",
            "--input-tokens", str(load.input_tokens), "--output-tokens", str(load.output_tokens), "--json"]  # fmt: skip
    if serving.model.adapters:
        rank = max(a.rank for a in serving.model.adapters)
        args += ["--lora-rank", str(rank), "--lora-adapters", str(len(serving.model.adapters))]
    if load.latency is not None:
        args += ["--latency-target", f"{load.latency.target_seconds:g}", "--latency-percentile",
                 f"{load.latency.percentile:g}"]  # fmt: skip
    return args


@pytest.mark.parametrize("path", SERVING_EXAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("latency", ("", LATENCY_BOUND))
def test_size_and_advise_print_the_count_the_simulator_checks(path, latency: str) -> None:
    """`size serving` for an example's replicas and load prints the plan's count, running batch, backlog target and
    requests per replica per minute (what the stack deploys and the simulator replays, the tests above); `advise
    --stack` prints, for the type it picks, the count the plan makes on that type."""
    spec = stated(path, 20.0, lengths=latency)
    cloud = registry.get(spec.cloud)
    plan = plan_serving(spec.serving, cloud.catalog)
    assert plan.load is not None
    sized = CliRunner().invoke(app, size_args(spec))
    assert sized.exit_code == 0, sized.output
    data = json.loads(sized.stdout)
    assert data["load"]["replicas"] == plan.load.replicas
    assert data["load"]["replicasUnrounded"] == pytest.approx(plan.load.needed, abs=1e-3)
    assert data["perReplica"]["batch"] == plan.concurrency
    assert data["backlogPerReplica"] == plan.backlog_per_instance_target
    assert data["requestsPerReplicaMinute"] == pytest.approx(plan.requests_per_replica_minute_target, rel=1e-3)
    load = (
        f"serving.load={{requestsPerSecond: 20, inputTokens: {INPUT_TOKENS}, outputTokens: {OUTPUT_TOKENS}{latency}}}"
    )
    advised = CliRunner().invoke(app, ["advise", "--stack", path.stem.removeprefix("Pulumi."), "--project-dir",
                                       str(REPO), "--set", load, "--json"])  # fmt: skip
    assert advised.exit_code == 0, advised.output
    chosen = json.loads(advised.stdout)["details"]["serving"]
    on_chosen = stated(path, 20.0, f"serving.replicas.instanceType={chosen['instanceType']}", lengths=latency)
    there = plan_serving(on_chosen.serving, cloud.catalog).load
    assert there is not None and chosen["replicas"] == there.replicas, (chosen, there.basis())
