"""`serving.load` in a stack: the replicas it needs, and `validate` warnings when replicas.min..max
cannot carry it (or waste), or the latency target is out of reach, each naming its config path.

Shipped aws-serving: Llama-3.1-8B-Instruct bf16 on g6e.xlarge, 16384-token context, 2 LoRA adapters
(rank <= 32): the queue worker keeps 11 requests in flight (planner.kv_cache), replicas 1..8.
For 1000 + 250 tokens one replica serves 1 / (0.1109 s prefill + 250 x 34.11 ms / 11) = 1.129 req/s
at its full batch; at 70% utilization it keeps 7.7 in flight, where a request takes 9.147 s, so it carries
7.7 / 9.147 = 0.842 req/s (both worked in tests/planner/test_serving.py).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.planner.defaults import derived_defaults
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file, spec_warnings
from accelstack.spec.problems import SpecError
from tests.planner.aws_inputs import AWS_CATALOG, aws_book

REPO = Path(__file__).resolve().parents[2]


def spec_of(*overrides: str):
    raw = apply_overrides(read_stack_file(REPO / "stacks" / "Pulumi.aws-serving.yaml"), list(overrides))
    return parse_spec(raw, "aws-serving")


def load(rps: float, latency: str = "") -> str:
    return f"serving.load={{requestsPerSecond: {rps}, inputTokens: 1000, outputTokens: 250{latency}}}"


def warnings_at(spec) -> dict[str, str]:
    return {w.path: w.message for w in spec_warnings(spec)}


def test_max_too_small_for_the_load_warns_with_the_numbers():
    """50 req/s: ceil(50 / 0.842) = ceil(59.4) = 60 replicas; 8 carry 8 x 0.842 = 6.7 req/s."""
    spec = spec_of(load(50))
    assert plan_serving(spec.serving, AWS_CATALOG).load.replicas == 60
    message = warnings_at(spec)["serving.replicas.max"]
    assert message.startswith("8 replicas of g6e.xlarge carry 6.7 req/s; the stated load of 50 req/s needs 60")
    assert "60% of 864 GB/s" in message and "70% utilization" in message


def test_a_range_that_carries_the_load_is_quiet_and_min_above_the_peak_warns():
    """5 req/s: ceil(5 / 0.842) = ceil(5.94) = 6 <= 8: no warning. 2 req/s: ceil(2.38) = 3, so min 4 wastes one."""
    assert not {"serving.replicas.max", "serving.replicas.min"} & warnings_at(spec_of(load(5))).keys()
    message = warnings_at(spec_of(load(2), "serving.replicas.min=4"))["serving.replicas.min"]
    assert message.startswith("4 replicas run at all hours, but the peak of 2 req/s needs 3")
    # 0.1 req/s needs ceil(0.119) = 1; with max 1 and 5 req/s, the one replica carries 0.8 req/s.
    assert warnings_at(spec_of(load(0.1), "serving.replicas.min=2"))["serving.replicas.min"].startswith(
        "2 replicas run at all hours, but the peak of 0.1 req/s needs 1 (ceil("
    )
    one = warnings_at(spec_of(load(5), "serving.replicas.min=1", "serving.replicas.max=1"))["serving.replicas.max"]
    assert one.startswith("1 replica of g6e.xlarge carries 0.8 req/s; the stated load of 5 req/s needs 6")


def test_unreachable_latency_target_warns_at_its_path():
    """Alone, one request takes 0.1109 + 250 x (16.06e9 + 147.456e6) / 518.4e9 = 7.93 s > 2 s."""
    spec = spec_of(load(1, ", latency: {percentile: 99, targetSeconds: 2}"))
    message = warnings_at(spec)["serving.load.latency.targetSeconds"]
    assert message.startswith("one request alone takes 7.9 s on g6e.xlarge") and "p99 target of 2 s" in message


def test_latency_target_becomes_the_queue_slo_unless_slo_is_stated():
    raw = apply_overrides(
        read_stack_file(REPO / "stacks" / "Pulumi.aws-serving.yaml"), [load(1, ", latency: {targetSeconds: 6}")]
    )
    del raw["serving"]["slo"]
    assert parse_spec(raw, "x").serving.slo.target_seconds == 6
    assert spec_of(load(1, ", latency: {targetSeconds: 6}")).serving.slo.target_seconds == 10  # stated slo wins


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        ("serving.load={requestsPerSecond: 0, inputTokens: 10, outputTokens: 10}", "serving.load.requestsPerSecond"),
        ("serving.load={requestsPerSecond: 1, outputTokens: 10}", "serving.load.inputTokens"),
        (
            "serving.load={requestsPerSecond: 1, inputTokens: 10, outputTokens: 10, latency: {percentile: 100, targetSeconds: 1}}",
            "serving.load.latency.percentile",
        ),
        (
            "serving.load={requestsPerSecond: 1, inputTokens: 10, outputTokens: 10, latency: {percentile: 95}}",
            "serving.load.latency.targetSeconds",
        ),
        ("serving.load={requestsPerSecond: 1, inputTokens: 16000, outputTokens: 1000}", "serving.load"),
        ("serving.load={rps: 1, inputTokens: 10, outputTokens: 10}", "serving.load.rps"),
    ],
)
def test_bad_load_is_an_error_naming_the_path(edit: str, path: str):
    with pytest.raises(SpecError) as error:
        spec_of(edit)
    assert path in {p.path for p in error.value.problems}, [str(p) for p in error.value.problems]


def test_preview_row_and_validate_cli_agree():
    rows = {d.path: d for d in derived_defaults(spec_of(load(50)), catalog=AWS_CATALOG, prices=aws_book())}
    row = rows["replicas for serving.load"]
    assert (row.value, row.display, row.ok) == (60, "60 replicas", False)
    result = CliRunner().invoke(app, ["validate", "aws-serving", "--project-dir", str(REPO), "--set", load(50)])
    assert (
        result.exit_code == 0
        and "serving.replicas.max: warning: 8 replicas of g6e.xlarge carry 6.7 req/s" in result.output
    )


def test_size_serving_without_rps_shows_one_replica_not_zero_replicas():
    result = CliRunner().invoke(app, ["size", "serving", "--model", "llama-3.1-8b", "--instance-type", "g6e.xlarge"])
    assert result.exit_code == 0, result.output
    # The table wraps long cells: read its text as one line, without the box's borders.
    text = " ".join(result.output.replace("│", " ").split())
    assert not re.search(r"(?<![\d.])0(?:\.0+)? req/s", text), text
    assert "req/s per replica" in text and "give --rps" in text


def test_advise_with_a_load_picks_least_cost_for_the_load_not_the_cheapest_type():
    """Without a load: g6.xlarge ($0.8048/h) is the cheapest type llama-3.1-8b fits. With 50 req/s of
    1000 + 250 tokens at 16384 context it carries 0.04 req/s per replica (batch 1 on 300 GB/s), so it is
    out; g6e.xlarge needs 60 replicas x $1.861 x 730 h = $81,512/month (50 x 9.147 s at 7.7 in flight / 7.7 =
    59.4), p4d.24xlarge 2 x $21.958 x 730 = $32,059/month (50 x 2.466 s / 91.7 = 1.34). The advice is the least monthly cost among all types that fit."""
    from accelstack.planner.advisor import Load, advise, cheapest_serving_instance, serving_candidates
    from accelstack.planner.architectures import get_preset

    arch, prices = get_preset("llama-3.1-8b"), aws_book()
    plain = advise(
        custom_weights=True, need_train=False, model=arch, context_length=16384, catalog=AWS_CATALOG, prices=aws_book()
    )
    assert plain.details["serving"]["instanceType"] == "g6.xlarge" and "give --rps" in plain.summary
    load = Load(50, 1000, 250, latency_seconds=10)
    loaded = advise(
        custom_weights=True,
        need_train=False,
        model=arch,
        context_length=16384,
        load=load,
        catalog=AWS_CATALOG,
        prices=aws_book(),
    )
    best = loaded.details["serving"]
    assert best["instanceType"] == "p4d.24xlarge" and best["replicas"] == 2
    assert best["monthlyUsdAtPeak"] == round(2 * 21.958 * 730, 2)
    assert "2 replicas carry 50 req/s within p95 10 s for $32,059/month at peak" in loaded.summary
    # Each candidate alone (a price book that prices only it), to see every option's monthly cost.
    every = [
        cheapest_serving_instance(
            arch,
            "bf16",
            16384,
            catalog=AWS_CATALOG,
            prices=replace(prices, on_demand_hourly={t.name: prices.on_demand_hourly[t.name]}),
            load=load,
        )
        for t in serving_candidates(AWS_CATALOG, prices)
    ]
    costs = {o["instanceType"]: o["monthlyUsdAtPeak"] for o in every if o is not None}
    assert costs["g6e.xlarge"] == round(60 * 1.861 * 730, 2) and "g6.xlarge" not in costs
    assert min(costs, key=costs.get) == "p4d.24xlarge"


def test_advise_cli_takes_the_load_and_refuses_a_latency_without_it():
    runner = CliRunner()
    ok = runner.invoke(app, ["advise", "--custom-weights", "--model", "llama-3.1-8b", "--context", "16384",
                             "--rps", "50", "--latency-p95", "10"])  # fmt: skip
    assert ok.exit_code == 0 and "Serve llama-3.1-8b on p4d.24xlarge (2 replicas carry 50 req/s" in ok.output
    bad = runner.invoke(app, ["advise", "--custom-weights", "--model", "llama-3.1-8b", "--latency-p95", "10"])
    assert bad.exit_code == 2 and "--latency-p95 needs --rps" in bad.output


def test_advise_reads_model_context_and_load_from_a_serving_stack():
    """aws-serving + the 50 req/s load above: the same answer as the flags (p4d.24xlarge, 2 replicas)."""
    runner = CliRunner()
    result = runner.invoke(app, ["advise", "--stack", "aws-serving", "--project-dir", str(REPO), "--set",
                                 load(50, ", latency: {targetSeconds: 10}")])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Serve llama-3.1-8b on p4d.24xlarge (2 replicas carry 50 req/s within p95 10 s" in result.output
    landing = runner.invoke(app, ["advise", "--stack", "aws-landing", "--project-dir", str(REPO)])
    assert landing.exit_code == 2 and "this command reads training and serving stacks" in landing.output
    neither = runner.invoke(app, ["advise"])
    assert neither.exit_code == 2 and "give --custom-weights or --no-custom-weights" in neither.output


def test_validate_warns_when_the_stated_load_misses_its_target_in_simulation():
    """250 exponential output tokens at ~34 ms each: a third of the requests take over 10 s on any fleet, so the
    fast simulation misses p99 within 10 s and says by how much; 60 tokens meet it, and nothing is said."""
    message = warnings_at(spec_of(load(4)))["serving.load"]
    assert "simulation of the stated 4 req/s" in message and "below the p99 target of 99%" in message
    assert float(message.split("finishes ")[1].split("%")[0]) < 90
    short = "serving.load={requestsPerSecond: 4, inputTokens: 500, outputTokens: 60}"
    assert "serving.load" not in warnings_at(spec_of(short))


def test_advise_judges_a_stack_at_the_percentile_it_states():
    """20 req/s of 1000 + 100 tokens (exponential outputs) within 6 s: at p50 three g5.12xlarge carry it, at p95
    the long outputs need g6e.12xlarge's faster steps. `advise --stack` once judged every stack at p95."""
    runner = CliRunner()
    answers = {}
    for percentile in (50, 95):
        stated_load = (
            "serving.load={requestsPerSecond: 20, inputTokens: 1000, outputTokens: 100, "
            f"latency: {{percentile: {percentile}, targetSeconds: 6}}}}"
        )
        result = runner.invoke(
            app, ["advise", "--stack", "aws-serving", "--project-dir", str(REPO), "--set", stated_load]
        )
        assert result.exit_code == 0, result.output
        answers[percentile] = " ".join(result.output.split())
    assert "Serve llama-3.1-8b on g5.12xlarge (3 replicas carry 20 req/s within p50 6 s" in answers[50]
    assert "p50 latency taken as the p50 service time" in answers[50]
    assert "Serve llama-3.1-8b on g6e.12xlarge (2 replicas carry 20 req/s within p95 6 s" in answers[95]
