"""`accelstack calibrate --synthetic`: a decoder of a tiny shape (2 layers, hidden 64) with random weights, timed
on numpy on this CPU. The profile must be one `--profile` reads, its decode steps must grow with the batch and the
context as attention over a longer KV cache does, and `size --profile` must turn it into a replica count. Timings
on a shared two-core machine are noisy: the compared points are far apart (32x the batch, 32x the context)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.commands import synthetic_decoder
from accelstack.commands.synthetic_decoder import SyntheticDecoder, parse_shape, select_backend
from accelstack.planner.profile import service_time_from

pytest.importorskip("array_api_compat")

TINY = "layers=2,hidden=64,heads=4,kv-heads=2,intermediate=128,vocab=256"


def calibrate(*args: str) -> object:
    return CliRunner().invoke(app, ["calibrate", "--instance-type", "g6e.xlarge", *args], env={"COLUMNS": None})


def test_synthetic_profile_grows_with_batch_and_context_and_size_reads_it(tmp_path) -> None:
    path = tmp_path / "profile.json"
    result = calibrate(
        "--synthetic", TINY, "--device", "cpu", "--out", str(path), "--batches", "1,32", "--contexts", "64,2048",
        "--prefill-lengths", "16,512", "--repeats", "5", "--warmup", "2",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(path.read_text())
    assert document["kind"] == "accelstack-serving-profile" and document["version"] == 1
    assert document["instanceType"] == "g6e.xlarge" and document["dtype"] == "float32"
    assert "all 2 layers timed" in document["notes"] and "hidden=64" in document["notes"]
    steps = {(p["batch"], p["context"]): p["stepSeconds"] for p in document["decode"]}
    assert set(steps) == {(1, 64), (1, 2048), (32, 64), (32, 2048)}
    # 32 sequences attending over 2,048 cached tokens read 32x the cache of one (and 32x the context of 64).
    assert steps[32, 2048] > steps[1, 2048] and steps[32, 2048] > steps[32, 64]
    prefill = {p["tokens"]: p["seconds"] for p in document["prefill"]}
    assert prefill[512] > prefill[16] > 0
    model = service_time_from(document, str(path))
    assert float(model.step_seconds(32, 2048)) > float(model.step_seconds(1, 64)) > 0
    sized = CliRunner().invoke(app, ["size", "serving", "--model", "llama-3.1-8b", "--instance-type", "g6e.xlarge",
                                     "--rps", "5", "--profile", str(path), "--json"])  # fmt: skip
    assert sized.exit_code == 0, sized.output
    report = json.loads(sized.stdout)
    assert report["serviceModel"] == f"--profile {path}" and report["load"]["replicas"] >= 1
    simulated = CliRunner().invoke(app, ["simulate", "serving", "aws-serving", "--pattern", "steady", "--hours",
                                         "0.05", "--profile", str(path), "--json"])  # fmt: skip
    assert simulated.exit_code == 0, simulated.output
    service = json.loads(simulated.stdout)["serviceModel"]
    assert service["source"] == f"--profile {path}" and [p["batch"] for p in service["decode"]] == [1, 32]


def test_sampled_layers_are_scaled_to_the_model_and_said_so(tmp_path) -> None:
    path = tmp_path / "profile.json"
    shape = TINY.replace("layers=2", "layers=8")
    result = calibrate("--synthetic", shape, "--device", "cpu", "--out", str(path), "--layers-measured", "2",
                       "--batches", "4", "--contexts", "128", "--prefill-lengths", "64", "--repeats", "3")  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(path.read_text())
    assert "2 of 8 layers timed and scaled by 4" in document["notes"]
    assert document["decode"][0]["stepSeconds"] > 0 and document["prefill"][0]["seconds"] > 0


def test_decoder_computes_attention_over_the_cache() -> None:
    """The step is the computation it claims: the new token's K/V land in the cache at its position, and the
    prefill's last-token logits equal decoding that token over the cache the first tokens filled."""
    shape = parse_shape(TINY)
    decoder = SyntheticDecoder(shape, 2, select_backend("cpu", None), seed=1)
    prompt = decoder.activations(6)
    full_cache = decoder.kv_cache(1, 6)
    prefilled = decoder.prefill(prompt, full_cache)
    cache = decoder.kv_cache(1, 6)
    decoder.prefill(prompt[:5, :], cache)
    stepped = decoder.decode_step(prompt[5:, :], cache, 5)
    assert np.allclose(np.asarray(stepped), np.asarray(prefilled), rtol=1e-4, atol=1e-5)
    assert np.allclose(np.asarray(cache[1][0]), np.asarray(full_cache[1][0]), rtol=1e-4, atol=1e-5)


def test_a_shape_that_does_not_fit_is_refused_before_allocating(tmp_path) -> None:
    result = calibrate("--synthetic", "llama-3.1-405b", "--device", "cpu", "--layers-measured", "126",
                       "--out", str(tmp_path / "p.json"))  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "--synthetic: the largest measurement needs" in result.output and "GiB free" in result.output
    assert "weights" in result.output and not (tmp_path / "p.json").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--synthetic", "gpt-9"], "unknown model 'gpt-9'; allowed:"),
        (["--synthetic", "mixtral-8x7b"], "a mixture of experts; the synthetic decoder times dense layers only"),
        (["--synthetic", "layers=2,hidden=64,heads=4"], "missing kv-heads, intermediate, vocab"),
        (["--synthetic", TINY.replace("kv-heads=2", "kv-heads=3")], "must be a multiple of kv-heads"),
        (["--synthetic", TINY + ",depth=3"], "unknown key 'depth'; allowed: layers"),
        (["--synthetic", TINY, "--device", "tpu"], "--device 'tpu': allowed: auto, cpu, cuda, cuda:N"),
        (["--synthetic", TINY, "--device", "cuda:x"], "--device 'cuda:x': allowed: auto, cpu, cuda, cuda:N"),
        (["--synthetic", TINY, "--device", "cpu", "--dtype", "bfloat16"], "numpy (the cpu device) has no bfloat16"),
        (["--synthetic", TINY, "--dtype", "int8"], "--dtype 'int8': allowed: float32, float16, bfloat16"),
        ([], "--model: the model name the server serves (or --synthetic"),
    ],
)
def test_bad_synthetic_input_names_the_option(args: list[str], message: str, tmp_path) -> None:
    result = calibrate(*args, "--out", str(tmp_path / "p.json"))
    assert result.exit_code == 2 and message in result.output, result.output
    assert "Traceback" not in result.output and not (tmp_path / "p.json").exists()


def test_asking_for_a_gpu_without_torch_or_cupy_says_so(monkeypatch, tmp_path) -> None:
    """--device cuda never falls back to the CPU (the profile would name the wrong machine); auto does."""
    monkeypatch.setattr(synthetic_decoder, "_optional", lambda module: None)
    result = calibrate("--synthetic", TINY, "--device", "cuda:0", "--out", str(tmp_path / "p.json"))
    assert result.exit_code == 2 and "--device cuda:0: no GPU seen by torch or cupy here" in result.output
    assert select_backend("auto", None).dtype_name == "float32"
