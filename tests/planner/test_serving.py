"""Replica counts, the SQS backlog target and the GPU-memory fit check."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelstack.planner.architectures import get_preset
from accelstack.planner.cold_start import cold_start, serving_defaults
from accelstack.planner.serving import (
    backlog_per_instance,
    backlog_target_from_slo,
    fits,
    replica_capacity,
    replicas_for_load,
)
from tests.planner.aws_inputs import aws_itype


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


def test_replica_capacity_worked_by_hand() -> None:
    """Llama-3.1-8B bf16 (8.03e9 params: 16.06e9 B of weights; KV 2 x 32 layers x 8 heads x 128 x 2 B =
    131072 B/token) on g6e.xlarge (1 x L40S: 864 GB/s, 362 TFLOPS), 1000 prompt + 250 output tokens:
    mean context 1000 + 250/2 = 1125 tokens -> 147.456e6 B of KV per sequence; bandwidth 0.6 x 864e9 = 518.4e9 B/s.
    batch 11: step = (16.06e9 + 11 x 147.456e6) / 518.4e9 = 34.11 ms; prefill = 2 x 8.03e9 x 1000 /
    (362e12 x 0.4) = 0.1109 s; service = 11 x 0.1109 (its own prefill and the 10 others', which stall the
    decode steps) + 250 x 0.03411 = 9.75 s; rate = 11 / 9.75 = 1 / (0.1109 + 250 x 0.03411 / 11) = 1.129 req/s.
    50 req/s at 70%: a replica keeps 0.7 x 11 = 7.7 in flight, where step = (16.06e9 + 7.7 x 147.456e6) / 518.4e9
    = 33.17 ms and T = 7.7 x 0.1109 + 250 x 0.03317 = 9.147 s, so it carries 7.7 / 9.147 = 0.8418 req/s and
    50 req/s need ceil(50 x 9.147 / 7.7) = ceil(59.39) = 60 replicas (not 70% of the full batch's 1.129 req/s,
    ceil(63.3) = 64: that counts prefill stalls of a batch of 11 the fleet never runs).
    With a 10 s target: b x 0.1109 + 250 x (16.06e9 + b x 147.456e6) / 518.4e9 = 7.745 + 0.1820 b <= 10 gives
    b <= 12.39, so a worker batch of 64 is cut to 12."""
    arch = get_preset("llama-3.1-8b")
    capacity = replica_capacity(arch, aws_itype("g6e.xlarge"), input_tokens=1000, output_tokens=250, max_batch=11)
    assert capacity.batch == 11 and capacity.meets_latency
    assert capacity.step_seconds == pytest.approx(0.03411, abs=1e-5)
    assert capacity.prefill_seconds == pytest.approx(0.1109, abs=1e-4)
    assert capacity.service_seconds == pytest.approx(9.75, abs=0.01)
    assert capacity.requests_per_second == pytest.approx(1.129, abs=0.001)
    load = replicas_for_load(50, capacity)
    assert load.replicas == 60 and "= 60" in load.basis() and "60% of 864 GB/s" in load.basis()
    assert load.running_batch == pytest.approx(7.7) and load.running_service_seconds == pytest.approx(9.147, abs=1e-3)
    assert load.replica_rate == pytest.approx(0.8418, abs=1e-4) and load.needed == pytest.approx(59.39, abs=0.01)
    assert load.in_flight == pytest.approx(50 * 9.147, abs=0.1)
    assert load.carried(59) < 50 <= load.carried(60)
    cut = replica_capacity(
        arch, aws_itype("g6e.xlarge"), input_tokens=1000, output_tokens=250, max_batch=64, latency_seconds=10
    )
    assert cut.batch == 12 and cut.service_seconds <= 10 and cut.meets_latency
    assert replicas_for_load(0, capacity).replicas == 0


def test_an_unreachable_latency_target_is_reported_not_hidden() -> None:
    """g6.xlarge (1 x L4, 300 GB/s): one request's 250 tokens alone take 250 x 16.06e9 / (0.6 x 300e9) = 22.3 s."""
    arch = get_preset("llama-3.1-8b")
    capacity = replica_capacity(
        arch, aws_itype("g6.xlarge"), input_tokens=1000, output_tokens=250, max_batch=8, latency_seconds=10
    )
    assert capacity.batch == 1 and not capacity.meets_latency and capacity.service_seconds > 22


@settings(max_examples=50, deadline=None)
@given(st.floats(0.1, 100), st.floats(0.1, 100), st.integers(1, 256))
def test_replicas_monotone_in_load(rate: float, extra: float, batch: int) -> None:
    capacity = replica_capacity(
        get_preset("llama-3.1-8b"), aws_itype("g6e.xlarge"), input_tokens=400, output_tokens=200, max_batch=batch
    )
    assert replicas_for_load(rate + extra, capacity).replicas >= replicas_for_load(rate, capacity).replicas


def test_fit_rejects_instances_without_the_memory() -> None:
    arch = get_preset("llama-3.1-70b")
    small = fits(arch, "bf16", aws_itype("g6e.xlarge"))
    assert not small.fits and "needs" in small.reason and "g6e.xlarge" in small.reason
    assert fits(arch, "bf16", aws_itype("p5.48xlarge")).fits
    # int4 weights (35 GB) fit two L40S only with room for KV: four do.
    assert fits(arch, "int4", aws_itype("g6e.12xlarge")).fits
    with pytest.raises(ValueError, match="exceeds"):
        fits(arch, "bf16", aws_itype("g6e.xlarge"), tp=2)
    with pytest.raises(ValueError, match="unknown instance type"):
        fits(arch, "bf16", aws_itype("p9.huge"))


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
