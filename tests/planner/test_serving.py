"""Replica counts, the SQS backlog target and the GPU-memory fit check."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelstack.planner.architectures import get_preset
from accelstack.planner.cold_start import cold_start, serving_defaults
from accelstack.planner.serving import backlog_per_instance, backlog_target_from_slo, fits, replicas_for_load


def test_aws_sqs_backlog_example_exactly() -> None:
    """Amazon EC2 Auto Scaling User Guide, "Scaling policy based on Amazon SQS": an average
    processing time of 0.1 s per message and a longest acceptable latency of 10 s give an
    acceptable backlog per instance of 10 / 0.1 = 100 messages."""
    assert backlog_per_instance(10, 0.1) == 100


def test_backlog_target_scales_with_replica_concurrency() -> None:
    assert backlog_target_from_slo(2.0, 0.5) == 4
    assert backlog_target_from_slo(2.0, 0.5, concurrency_per_replica=32) == 128
    with pytest.raises(ValueError):
        backlog_per_instance(0, 1)


def test_replicas_throughput_and_concurrency_bounds() -> None:
    # 10 req/s x 500 tokens = 5000 tok/s; 2500 tok/s per replica at 70% -> ceil(2.86) = 3.
    plan = replicas_for_load(10, 500, 2500)
    assert plan.throughput_replicas == 3 and plan.replicas == 3
    # 20 s per request, 10 req/s -> 200 in flight; 32 sequences per replica -> 7 replicas.
    bound = replicas_for_load(10, 500, 2500, service_seconds=20, max_concurrency_per_replica=32)
    assert bound.concurrency_replicas == 7 and bound.replicas == 7
    assert replicas_for_load(0, 500, 2500).replicas == 0


@settings(max_examples=50, deadline=None)
@given(st.floats(0.1, 100), st.floats(0.1, 100))
def test_replicas_monotone_in_load(rate: float, extra: float) -> None:
    assert replicas_for_load(rate + extra, 400, 2000).replicas >= replicas_for_load(rate, 400, 2000).replicas


def test_fit_rejects_instances_without_the_memory() -> None:
    arch = get_preset("llama-3.1-70b")
    small = fits(arch, "bf16", "g6e.xlarge")
    assert not small.fits and "needs" in small.reason and "g6e.xlarge" in small.reason
    assert fits(arch, "bf16", "p5.48xlarge").fits
    # int4 weights (35 GB) fit two L40S only with room for KV: four do.
    assert fits(arch, "int4", "g6e.12xlarge").fits
    with pytest.raises(ValueError, match="exceeds"):
        fits(arch, "bf16", "g6e.xlarge", tp=2)
    with pytest.raises(ValueError, match="unknown instance type"):
        fits(arch, "bf16", "p9.huge")


def test_cold_start_window_and_warm_pool() -> None:
    # 16 GB of weights at 500 MB/s = 32 s; 10 GB image at 200 MB/s = 50 s; + 90 s boot + 60 s start.
    result = cold_start(16, scale_out_replicas_per_hour=60)
    assert result.total_seconds == pytest.approx(232)
    assert result.warm_pool_size == 4  # 60 replicas/h x 232 s = 3.9
    assert result.health_check_grace_seconds == 290  # 232 x 1.25 rounded up to 10 s
    assert cold_start(16).warm_pool_size == 0


def test_serving_defaults_cap_the_pool_at_the_headroom() -> None:
    result = serving_defaults(get_preset("llama-3.1-70b"), replicas_min=2, replicas_max=3, ramp_hours=0.01)
    assert result.warm_pool_size == 1
    # 70.554e9 params x 2 B = 141.1 GB at 500 MB/s.
    assert result.weights_seconds == pytest.approx(282.2, abs=0.2)
