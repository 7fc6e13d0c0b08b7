"""The one service-time model: the roofline as knots, measured profiles and vllm bench serve results in its place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.clouds import registry
from accelstack.planner.architectures import get_preset
from accelstack.planner.pricing import PriceBook
from accelstack.planner.profile import ProfileError, profile_document, service_time_from
from accelstack.planner.service_time import roofline
from accelstack.planner.serving_plan import MeasuredProfile
from accelstack.simulate.compare import peer_designs
from accelstack.spec.loader import load_stack
from tests.planner.aws_inputs import aws_itype

REPO = Path(__file__).resolve().parents[2]

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


def _vllm_result(tpot_ms: float) -> dict[str, float]:
    return {"completed": 10, "total_input_tokens": 10_000, "total_output_tokens": 2_500, "mean_ttft_ms": 150.0,
            "mean_tpot_ms": tpot_ms, "max_concurrency": 11}  # fmt: skip


def test_advise_takes_a_profile_as_size_does(tmp_path) -> None:
    """advise --profile reads the profile with size's reader and sizes the instance type it was measured on: the
    profile's instanceType (calibrate writes it), else the --stack's. Twice the data sheet's step at batch 11
    (68.2 ms) needs more replicas; advise and size count the same."""
    path = tmp_path / "profile.json"
    path.write_text(json.dumps({**_vllm_result(68.2), "instanceType": "g6e.xlarge"}))
    load = ["--rps", "20", "--input-tokens", "1000", "--output-tokens", "250"]
    advise = ["advise", "--custom-weights", "--model", "llama-3.1-8b", "--context", "16384", *load, "--json"]
    measured = json.loads(CliRunner().invoke(app, [*advise, "--profile", str(path)]).stdout)
    serving = measured["details"]["serving"]
    assert serving["instanceType"] == "g6e.xlarge" and serving["serviceModel"] == f"--profile {path}"
    size = ["size", "serving", "--instance-type", "g6e.xlarge", "--model", "llama-3.1-8b", "--context", "16384"]
    sized = json.loads(CliRunner().invoke(app, [*size, *load, "--profile", str(path), "--json"]).stdout)
    assert serving["replicas"] == sized["load"]["replicas"]
    roof = json.loads(CliRunner().invoke(app, [*size, *load, "--json"]).stdout)
    assert serving["replicas"] > roof["load"]["replicas"]
    # A vllm bench serve result names no instance type: --stack gives it, else exit 2 saying so.
    path.write_text(json.dumps(_vllm_result(68.2)))
    bare = CliRunner().invoke(app, [*advise, "--profile", str(path)])
    assert bare.exit_code == 2 and "names no instanceType" in bare.output
    stacked = CliRunner().invoke(
        app, ["advise", "--stack", "aws-serving", "--project-dir", str(REPO), *load, "--json", "--profile", str(path)]
    )
    assert stacked.exit_code == 0, stacked.output
    assert json.loads(stacked.stdout)["details"]["serving"]["instanceType"] == "g6e.xlarge"


def test_the_keda_peer_runs_on_the_profile_and_the_stack_designs_target(tmp_path) -> None:
    """simulate --compare with --profile: every design serves by the measured model, and the KEDA peer's
    queueLength target is the stack design's (its plan with the profile), not a plan made without it."""

    spec = load_stack(REPO / "stacks" / "Pulumi.aws-serving.yaml", [
        "serving.load={requestsPerSecond: 5, inputTokens: 1000, outputTokens: 250}"])  # fmt: skip
    cloud = registry.get(spec.cloud)
    profile = MeasuredProfile(_vllm_result(68.2), "--profile p.json")
    designs = peer_designs(spec.serving, PriceBook.from_prices(cloud.prices), "aws-target-tracking",
                           catalog=cloud.catalog, rules=cloud.serving_scaling, profile=profile)  # fmt: skip
    [keda] = [d for d in designs if d.autoscaler == "keda-queue-length"]
    assert keda.backlog_target == designs[0].backlog_target
    assert all(d.service_time is not None and d.service_time.source == "--profile p.json" for d in designs)
    assert float(keda.service_time.step_seconds(11, 1125)) == pytest.approx(0.0682)
