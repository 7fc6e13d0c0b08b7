"""The serving plan's replica concurrency (what the queue worker keeps in flight) and the backlog
target that follows from it: AWS's latency / service time, times the requests a replica batches."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelstack.planner import cold_start
from accelstack.planner import serving_plan as sp
from accelstack.planner.architectures import get_preset
from accelstack.planner.defaults import serving_defaults
from accelstack.planner.kv_cache import plan_for_instance
from accelstack.planner.serving import owned_backlog_target
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file
from tests.planner.aws_inputs import AWS_CATALOG, aws_itype

EXAMPLE = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.aws-serving.yaml"


def serving(*overrides: str):
    return parse_spec(apply_overrides(read_stack_file(EXAMPLE), list(overrides)), "aws-serving").serving


def test_example_concurrency_is_the_kv_caches_full_context_sequences_with_its_adapters():
    # Llama-3.1-8B bf16 on one L40S at 16384 tokens, two adapters resident at rank 32 (--max-loras 2).
    kv = plan_for_instance(
        get_preset("llama-3.1-8b"),
        aws_itype("g6e.xlarge"),
        precision="bf16",
        context_length=16384,
        lora_rank=32,
        lora_adapters=2,
    )
    plan = sp.plan_serving(serving(), AWS_CATALOG)
    assert plan.concurrency == kv.max_concurrent_sequences == 11
    assert f"{kv.blocks} blocks" in plan.concurrency_basis and "2 LoRA adapters of rank <= 32" in plan.concurrency_basis


def test_backlog_target_is_the_concurrency_at_the_target_utilization_whatever_the_slo():
    """The policy counts messages waiting and in flight; a target at or above the concurrency is only
    reached with every slot busy (AWS's latency / service time x concurrency was 110 here)."""
    plan = sp.plan_serving(serving(), AWS_CATALOG)
    assert plan.concurrency == 11 and plan.backlog_per_instance_target == 7.7
    assert plan.backlog_metrics == ("ApproximateNumberOfMessagesVisible", "ApproximateNumberOfMessagesNotVisible")
    for overrides in (
        ("serving.slo.targetSeconds=2", "serving.slo.serviceSeconds=0.5"),
        ("serving.slo.targetSeconds=120",),
    ):
        other = sp.plan_serving(serving(*overrides), AWS_CATALOG)
        assert other.backlog_per_instance_target == round(0.7 * other.concurrency, 2) < other.concurrency
    # One request at a time still leaves headroom (a target of 1 would mean always busy).
    assert owned_backlog_target(1) == 0.7 and owned_backlog_target(0) == 0.7
    with pytest.raises(ValueError, match="utilization"):
        owned_backlog_target(11, utilization=1.2)


def test_shorter_context_and_fp8_serve_more_at_once():
    base = sp.plan_serving(serving(), AWS_CATALOG).concurrency
    shorter = sp.plan_serving(serving("serving.model.contextLength=4096"), AWS_CATALOG).concurrency
    fp8 = sp.plan_serving(serving("serving.model.precision=fp8"), AWS_CATALOG).concurrency
    assert shorter >= 4 * base - 4  # a quarter of the tokens per sequence (block rounding aside)
    assert fp8 > base


def test_concurrency_is_capped_at_vllms_max_num_seqs():
    plan = sp.plan_serving(
        serving(
            "serving.replicas.instanceType=p5.48xlarge", "serving.model.contextLength=512", "serving.model.adapters=[]"
        ),
        AWS_CATALOG,
    )
    assert plan.concurrency == sp.WORKER_CONCURRENCY_CAP == 256
    assert "capped at vLLM max_num_seqs 256" in plan.concurrency_basis


def test_unknown_architecture_gets_a_stated_assumption():
    plan = sp.plan_serving(
        serving("serving.model.name=acme/house-model-13b", "serving.model.parametersBillion=13"), AWS_CATALOG
    )
    assert plan.concurrency == sp.UNKNOWN_ARCHITECTURE_CONCURRENCY
    assert "serving.model.preset" in plan.concurrency_basis
    assert plan.backlog_per_instance_target == round(0.7 * sp.UNKNOWN_ARCHITECTURE_CONCURRENCY, 2)


def test_worker_timeouts_follow_the_load_balancer():
    plan = sp.plan_serving(serving(), AWS_CATALOG)
    # A queued generation may run as long as a synchronous one; shutdown drains within the cap.
    assert plan.generation_timeout_seconds == plan.idle_timeout_seconds > plan.visibility_timeout_seconds
    assert plan.worker_drain_seconds == min(sp.WORKER_DRAIN_CAP_SECONDS, plan.deregistration_delay_seconds)
    slow = sp.plan_serving(serving("serving.slo.targetSeconds=200", "serving.slo.serviceSeconds=20"), AWS_CATALOG)
    assert slow.worker_drain_seconds == sp.WORKER_DRAIN_CAP_SECONDS


@pytest.mark.parametrize("overrides", [(), ("serving.model.contextLength=4096",)])
def test_preview_reports_the_concurrency_and_its_part_in_the_target(overrides):
    spec = serving(*overrides)
    plan = sp.plan_serving(spec, AWS_CATALOG)
    rows = {row.path: row for row in serving_defaults("aws-serving", spec, AWS_CATALOG)}
    assert rows["replica concurrency"].value == plan.concurrency
    assert rows["replica concurrency"].kind == "estimate"
    target = rows["aws-serving-backlog-per-instance.targetTrackingConfiguration.targetValue"]
    assert target.value == plan.backlog_per_instance_target
    assert (
        f"{plan.concurrency} requests in flight per replica (the queue worker's concurrency) x target utilization 70%"
        in target.source
    )
    # The formula's inputs and what it buys: the metric, and the reaction time the headroom covers.
    assert (
        "(ApproximateNumberOfMessagesVisible + ApproximateNumberOfMessagesNotVisible) / GroupInServiceInstances"
        in target.source
    )
    assert f"warm start {plan.warm_start_seconds} s = {180 + plan.warm_start_seconds} s" in target.source
    assert "load may grow 1.43x" in target.source


def test_cold_start_loads_the_same_weights_the_plan_sizes_volumes_for():
    """A size stated only in the model name (no preset) once gave a 0 s weight load in the cold start
    while the root volume was sized for 26 GB: one size now feeds both."""
    plan = sp.plan_serving(serving("serving.model.name=acme/foo-13b", "serving.model.preset=null"), AWS_CATALOG)
    assert plan.weights_gb == pytest.approx(26.0)
    assert plan.estimate.weights_seconds == pytest.approx(plan.weights_gb * 1000 / cold_start.DEFAULT_WEIGHTS_MBPS)
