"""A `vllm bench serve --save-result` file as vLLM writes it (vllm/benchmarks/serve.py: `result_json` = the run's
settings, `max_concurrency` null unless capped, merged with the benchmark's result; the per-request lists it trims
without --save-detailed are gone, `latencies` stays; `mean_<metric>_ms` for the --percentile-metrics selected, by
default ttft, tpot and itl, so no `mean_e2el_ms`) is accepted as a profile, and a partial or hostile one exits 2
naming its key."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.planner.architectures import get_preset
from accelstack.planner.profile import service_time_from
from accelstack.planner.service_time import roofline
from tests.planner.aws_inputs import aws_itype

ROOF = roofline(get_preset("llama-3.1-8b"), aws_itype("g6e.xlarge"))
LATENCIES = [4.2, 3.8, 0.0, 4.0]  # seconds; the third request failed (vLLM leaves its latency 0)


def default_run(**changes: Any) -> dict[str, Any]:
    """What `vllm bench serve --save-result` writes for an uncapped run at 2 requests/s with its default metrics."""
    result: dict[str, Any] = {
        "date": "20261206-041500", "endpoint_type": "openai", "backend": "openai", "label": None,
        "model_id": "meta-llama/Llama-3.1-8B-Instruct", "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct",
        "num_prompts": 4, "request_rate": 2.0, "burstiness": 1.0, "max_concurrency": None,
        "duration": 1.5, "completed": 3, "failed": 1, "total_input_tokens": 3000, "total_output_tokens": 300,
        "request_throughput": 2.0, "request_goodput": None, "output_throughput": 200.0,
        "total_token_throughput": 2200.0, "latencies": LATENCIES, "queue_times": [0.0, 0.0, 0.0, 0.0],
        "max_output_tokens_per_s": 260.0, "max_concurrent_requests": 4, "rtfx": 0.0,
        "mean_ttft_ms": 150.0, "median_ttft_ms": 148.0, "std_ttft_ms": 5.0, "p99_ttft_ms": 160.0,
        "mean_tpot_ms": 38.0, "median_tpot_ms": 37.5, "std_tpot_ms": 1.0, "p99_tpot_ms": 40.0,
        "mean_itl_ms": 38.0, "median_itl_ms": 37.0, "std_itl_ms": 2.0, "p99_itl_ms": 45.0,
    }  # fmt: skip
    result.update(changes)
    return result


def test_a_default_uncapped_run_counts_its_batch_by_littles_law() -> None:
    """No max_concurrency and no mean_e2el_ms (not a default metric): 2 requests/s x the finished requests' mean
    latency (4.0 s; the failed one's 0 left out) = 8 in flight, the batch its 38 ms step was measured at."""
    model = service_time_from(default_run(), "run.json", ROOF)
    assert float(model.step_seconds(8, 1000 + 100 / 2)) == pytest.approx(0.038)
    assert "batch 8 (request_throughput x mean latency (latencies))" in model.assumptions
    assert float(model.prefill_seconds(1000)) == pytest.approx(0.150)
    # With e2el selected, its mean is read instead; a cap bounds the count (a capped run at a low rate holds fewer).
    e2el = service_time_from(default_run(mean_e2el_ms=3000.0, latencies=None), "run.json", ROOF)
    assert "batch 6 " in e2el.assumptions
    capped = service_time_from(default_run(max_concurrency=5), "run.json", ROOF)
    assert "batch 5 " in capped.assumptions and "within max_concurrency" in capped.assumptions
    # A trimmed file keeps only the cap to say the batch.
    only_cap = service_time_from(default_run(max_concurrency=5, latencies=None), "run.json", ROOF)
    assert "batch 5 (max_concurrency)" in only_cap.assumptions


def profile_exit(tmp_path, document: Any) -> tuple[int, str]:
    path = tmp_path / "run.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    args = ["size", "serving", "--instance-type", "g6e.xlarge", "--model", "llama-3.1-8b", "--context", "16384",
            "--rps", "5", "--profile", str(path)]  # fmt: skip
    result = CliRunner().invoke(app, args, env={"COLUMNS": None})
    return result.exit_code, " ".join(result.output.split())


def test_size_takes_the_file_as_vllm_writes_it(tmp_path) -> None:
    code, output = profile_exit(tmp_path, default_run())
    assert code == 0, output


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"mean_tpot_ms": None}, "needs mean_tpot_ms"),  # --percentile-metrics without tpot
        ({"mean_ttft_ms": None, "mean_tpot_ms": None}, "needs mean_tpot_ms, mean_ttft_ms"),  # --skip-tokenizer-init
        ({"completed": None}, "needs completed"),
        ({"completed": "3"}, "completed: expected a number"),
        ({"completed": 0}, "completed: must be >= 1"),
        ({"total_output_tokens": True}, "total_output_tokens: expected a number"),
        ({"mean_tpot_ms": -1.0}, "mean_tpot_ms: must be > 0"),
        ({"max_concurrency": 0}, "max_concurrency: must be >= 1"),
        ({"latencies": ["4.2"]}, "latencies[0]: expected a number"),
        ({"latencies": [0.0, 0.0]}, "latencies: no request finished"),
        ({"latencies": {"p50": 4.0}}, "latencies: expected a list"),
        ({"latencies": None}, "max_concurrency is null and there is no request_throughput with mean_e2el_ms or latencies"),
        ({"request_throughput": "fast"}, "request_throughput: expected a number"),
    ],
)  # fmt: skip
def test_a_partial_or_hostile_result_exits_2_naming_the_key(tmp_path, changes: dict[str, Any], named: str) -> None:
    # A change to None drops the key (a file without it); max_concurrency stays null as vLLM writes it.
    document = {k: v for k, v in default_run(**changes).items() if not (k in changes and changes[k] is None)}
    code, output = profile_exit(tmp_path, document)
    assert code == 2 and named in output, output


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('{"mean_tpot_ms": NaN, "mean_ttft_ms": 1}', "NaN"),
        ("[1, 2]", "expected a JSON object"),
        ('{"completed": 3', "run.json"),
    ],
)
def test_a_file_that_is_not_a_result_exits_2(tmp_path, text: str, named: str) -> None:
    code, output = profile_exit(tmp_path, text)
    assert code == 2 and named in output, output
