"""The one service-time model: the roofline as knots, measured profiles and vllm bench serve results in its place."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.planner.architectures import get_preset
from accelstack.planner.profile import ProfileError, profile_document, service_time_from
from accelstack.planner.service_time import roofline
from tests.planner.aws_inputs import aws_itype

ROOF = roofline(get_preset("llama-3.1-8b"), aws_itype("g6e.xlarge"))


def test_roofline_knots_reproduce_the_formula_at_any_batch() -> None:
    """(16.06e9 + b x 131072 x 1125) / 518.4e9 at b = 1, 11, 200 (beyond the knots: continued linearly)."""
    for batch in (1, 11, 200):
        expected = (get_preset("llama-3.1-8b").params * 2 + batch * 131072 * 1125) / 518.4e9
        assert float(ROOF.step_seconds(batch, 1125)) == pytest.approx(expected, rel=1e-9)
    assert float(ROOF.service_seconds(1000, 250, 11)) == pytest.approx(9.75, abs=0.01)


def test_a_measured_table_replaces_the_roofline() -> None:
    """Two batches, two contexts each: step = fixed + slope x context per batch, linear between batches."""
    document = profile_document(
        [(1, 1000, 0.010), (1, 3000, 0.012), (8, 1000, 0.014), (8, 3000, 0.022)], [(500, 0.05), (2000, 0.2)]
    )
    model = service_time_from(document, "profile.json", ROOF)
    assert float(model.step_seconds(1, 2000)) == pytest.approx(0.011)
    assert float(model.step_seconds(8, 2000)) == pytest.approx(0.018)
    assert float(model.step_seconds(4.5, 2000)) == pytest.approx(0.0145)
    assert float(model.prefill_seconds(1250)) == pytest.approx(0.125)
    assert float(model.prefill_seconds(250)) == pytest.approx(0.025)  # proportional below the first point


def test_a_vllm_bench_serve_result_scales_the_roofline_to_its_operating_point() -> None:
    result = {"completed": 100, "total_input_tokens": 100_000, "total_output_tokens": 25_000, "mean_ttft_ms": 150.0,
              "mean_tpot_ms": 45.0, "max_concurrency": 11, "request_throughput": 1.0}  # fmt: skip
    model = service_time_from(result, "vllm.json", ROOF)
    assert float(model.step_seconds(11, 1125)) == pytest.approx(0.045)
    assert float(model.prefill_seconds(1000)) == pytest.approx(0.150)
    # The roofline's shape: the step grows with the batch as the data sheet says, scaled.
    assert float(model.step_seconds(22, 1125) / model.step_seconds(11, 1125)) == pytest.approx(
        float(ROOF.step_seconds(22, 1125) / ROOF.step_seconds(11, 1125))
    )
    with pytest.raises(ProfileError, match="a vllm bench serve result needs"):
        service_time_from({"mean_tpot_ms": 1.0, "mean_ttft_ms": 1.0}, "x", ROOF)
    with pytest.raises(ProfileError, match="kind"):
        service_time_from({"decode": []}, "x", ROOF)


def test_size_serving_takes_a_profile(tmp_path) -> None:
    path = tmp_path / "vllm.json"
    path.write_text(json.dumps({"completed": 10, "total_input_tokens": 10_000, "total_output_tokens": 2_500,
                                "mean_ttft_ms": 150.0, "mean_tpot_ms": 68.2, "max_concurrency": 11}))  # fmt: skip
    args = ["size", "serving", "--instance-type", "g6e.xlarge", "--model", "llama-3.1-8b", "--context", "16384"]
    measured = json.loads(CliRunner().invoke(app, [*args, "--rps", "50", "--profile", str(path), "--json"]).stdout)
    datasheet = json.loads(CliRunner().invoke(app, [*args, "--rps", "50", "--json"]).stdout)
    assert measured["serviceModel"] == str(f"--profile {path}") and datasheet["serviceModel"] == "roofline"
    assert measured["load"]["replicas"] > datasheet["load"]["replicas"]  # twice the data sheet's step
    path.write_text('{"mean_tpot_ms": NaN}')
    bad = CliRunner().invoke(app, [*args, "--profile", str(path)])
    assert bad.exit_code == 2 and "NaN" in bad.output
