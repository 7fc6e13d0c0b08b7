"""Checkpoint intervals against Young 1974 and Daly 2006."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelstack.planner import checkpoint as ck
from accelstack.planner.architectures import get_preset


@pytest.mark.parametrize(
    ("mtbf_min", "published_min", "tolerance"),
    [(24 * 60, 117, 0.5), (6 * 60, 57, 0.5), (15, 9.1, 0.05)],
)
def test_daly_2006_worked_examples(mtbf_min: float, published_min: float, tolerance: float) -> None:
    """Daly 2006 (FGCS 22(3), figures 3-5): Ts = 500 h, R = 10 min, delta = 5 min; "the new model
    predicts tau_opt = 117 min" (M = 24 h), 57 min (M = 6 h), 9.1 min (M = 15 min). Published values
    are rounded, so the tolerance is half a unit of the last printed digit."""
    assert ck.daly_interval(5, mtbf_min) == pytest.approx(published_min, abs=tolerance)


def test_young_first_order() -> None:
    # sqrt(2 x 5 min x 1440 min) = 120 min exactly.
    assert ck.young_interval(5, 1440) == 120


def test_daly_estimate_is_near_the_true_optimum_of_his_complete_model() -> None:
    delta, mtbf, restart = 300.0, 6 * 3600.0, 600.0
    tau = ck.daly_interval(delta, mtbf)
    grid = [tau * (0.5 + i / 1000) for i in range(1001)]
    best = min(grid, key=lambda t: ck.expected_wall_time(t, delta, mtbf, restart, 1.0))
    assert tau == pytest.approx(best, rel=0.01)


def test_daly_falls_back_to_mtbf_when_checkpoints_take_longer_than_two_mtbf() -> None:
    assert ck.daly_interval(100, 40) == 40


def test_llama3_interrupt_rate_reproduces_the_reported_cadence() -> None:
    """Llama 3 report s3.3.4: 419 unexpected interruptions in 54 days on 2,048 8-GPU hosts, i.e.
    one every ~3.1 h for the whole job."""
    assert ck.job_mtbf_hours(2048) == pytest.approx(54 * 24 / 419, rel=1e-9)
    assert ck.job_mtbf_hours(4, "spot") < ck.job_mtbf_hours(4)


def test_plan_from_state_size_and_file_system() -> None:
    # Llama-3.1-8B full state: 8.03e9 x 14 B = 112.4 GB; at 1,200 MB/s -> 93.7 s.
    state = ck.training_state_bytes(get_preset("llama-3.1-8b"))
    result = ck.plan(state, 1200, nodes=4, capacity="spot")
    assert result.write_seconds == pytest.approx(93.7, abs=0.1)
    assert result.young_interval_minutes > result.daly_interval_minutes > 0
    assert 0 < result.overhead_fraction < 0.2
    assert ck.training_state_bytes(get_preset("llama-3.1-8b"), "lora") < state / 100


@settings(max_examples=80, deadline=None)
@given(st.floats(1, 3600), st.floats(60, 1e7))
def test_daly_relationships(delta: float, mtbf: float) -> None:
    young, daly = ck.young_interval(delta, mtbf), ck.daly_interval(delta, mtbf)
    assert 0 < daly <= max(young, mtbf)
    if delta < 2 * mtbf:
        # Daly = Young x (1 + small) - delta: never more than Young + its correction, never negative.
        x = delta / (2 * mtbf)
        assert math.isclose(daly + delta, young * (1 + math.sqrt(x) / 3 + x / 9), rel_tol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 500), st.integers(1, 500))
def test_more_nodes_never_raise_job_mtbf(a: int, b: int) -> None:
    small, large = sorted((a, b))
    assert ck.job_mtbf_hours(large) <= ck.job_mtbf_hours(small)
