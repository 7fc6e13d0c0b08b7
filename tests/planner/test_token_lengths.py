"""serving.load.inputLengths / outputLengths: one description of request lengths, checked in the spec, drawn by the
simulator and read by the planner (its mean context for the replica count, its tail for the latency target)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.planner.architectures import get_preset
from accelstack.planner.serving import replica_capacity
from accelstack.planner.token_lengths import Z99, load_lengths, of_load
from accelstack.simulate.workload import synthetic
from accelstack.spec.loader import load_stack
from accelstack.spec.problems import SpecError
from accelstack.spec.token_lengths import TokenLengths
from tests.planner.aws_inputs import aws_itype

REPO = Path(__file__).resolve().parents[2]
AWS_SERVING = REPO / "stacks" / "Pulumi.aws-serving.yaml"


def stated(lengths: str):
    return load_stack(
        AWS_SERVING, [f"serving.load={{requestsPerSecond: 5, inputTokens: 1000, outputTokens: 250{lengths}}}"]
    )


@pytest.mark.parametrize(
    ("lengths", "path", "says"),
    [
        (", outputLengths: {kind: lognormal, p99: 4000}", "serving.load", "at most 14.9 x it"),
        (", outputLengths: {kind: lognormal, p99: 200}", "serving.load", "must be above the mean 250"),
        (", outputLengths: {kind: lognormal}", "serving.load.outputLengths", "p99 is for kind lognormal"),
        (", inputLengths: {kind: fixed, p99: 3000}", "serving.load.inputLengths", "p99 is for kind lognormal"),
        (", inputLengths: {kind: histogram, bins: [{tokens: 100, share: 0.5}, {tokens: 300, share: 0.5}]}",
         "serving.load", "the histogram's mean is 200 tokens but the stated mean is 1000"),
        (", outputLengths: {kind: gamma}", "serving.load.outputLengths.kind", "fixed"),
    ],
)  # fmt: skip
def test_lengths_that_cannot_have_the_stated_mean_are_errors_at_their_path(lengths: str, path: str, says: str):
    with pytest.raises(SpecError) as error:
        stated(lengths)
    problems = {p.path: p.message for p in error.value.problems}
    assert path in problems and says in problems[path], problems


def test_lognormal_from_mean_and_p99_has_that_mean_and_p99():
    """sigma = z - sqrt(z^2 - 2 ln(p99 / mean)): mean 250, p99 2000 -> sigma 1.129; drawn, the mean and the p99
    come back within 2%, and E[X^2] = mean^2 exp(sigma^2)."""
    spec = stated(", outputLengths: {kind: lognormal, p99: 2000}")
    lengths = of_load(spec.serving.load)
    sigma = lengths.outputs.sigma
    assert sigma == pytest.approx(Z99 - math.sqrt(Z99**2 - 2 * math.log(8)), rel=1e-9)
    drawn = lengths.outputs.sample(np.random.default_rng(1), 400_000)
    assert drawn.mean() == pytest.approx(250, rel=0.02)
    assert np.percentile(drawn, 99) == pytest.approx(2000, rel=0.02)
    assert np.mean(drawn**2) == pytest.approx(lengths.outputs.second_moment, rel=0.05)


def test_the_mean_context_weights_the_context_by_output():
    """E[I] + E[O^2] / (2 E[O]): fixed 1000 + 250/2 = 1125; exponential outputs 1000 + 250 = 1250 (E[O^2] = 2 x 250^2);
    a histogram of prompts 500/1500 at equal shares has mean 1000 and the same mean context as fixed prompts."""
    assert load_lengths(1000, 250, TokenLengths(kind="fixed"), TokenLengths(kind="fixed")).mean_context == 1125
    assert load_lengths(1000, 250).mean_context == 1250  # the defaults: fixed prompts, exponential outputs
    histogram = TokenLengths.model_validate(
        {"kind": "histogram", "bins": [{"tokens": 500, "share": 1}, {"tokens": 1500, "share": 1}]}
    )
    assert load_lengths(1000, 250, histogram).mean_context == 1250


def test_the_simulator_draws_the_stated_lengths_and_by_default_the_stream_it_always_drew():
    spec = stated(", inputLengths: {kind: lognormal, p99: 6000}, outputLengths: {kind: lognormal, p99: 2000}")
    stream = synthetic("steady", 50, horizon=3600, mean_tokens=250, seed=4, lengths=of_load(spec.serving.load))
    assert stream.input_tokens is not None
    assert np.percentile(stream.tokens, 99) == pytest.approx(2000, rel=0.05)
    assert np.percentile(stream.input_tokens, 99) == pytest.approx(6000, rel=0.05)
    plain, default = (
        synthetic("steady", 50, horizon=600, mean_tokens=250, seed=4, lengths=x)
        for x in (None, load_lengths(1000, 250))
    )
    assert np.array_equal(plain.tokens, default.tokens) and default.input_tokens is None


def test_the_latency_target_is_checked_at_the_tail_of_the_lengths():
    """llama-3.1-8b on g6e.xlarge at batch 1: the p95 of exponential outputs of mean 250 is 250 ln 20 = 749 tokens,
    which take 0.1109 + 749 x (16.06e9 + 131072 x (1000 + 749 / 2)) / 518.4e9 = 23.6 s (drawn: 23.55): a 10 s p95 target is out of
    reach, though the mean request (7.9 s at batch 1) is within it; with fixed lengths the batch of 11 meets it."""
    arch, itype = get_preset("llama-3.1-8b"), aws_itype("g6e.xlarge")
    kwargs = dict(input_tokens=1000, output_tokens=250, max_batch=11, latency_seconds=10, latency_percentile=95)
    fixed = replica_capacity(arch, itype, **kwargs, lengths=load_lengths(1000, 250, None, TokenLengths(kind="fixed")))
    assert fixed.batch == 11 and fixed.meets_latency and fixed.tail_service_seconds == pytest.approx(9.75, abs=0.01)
    exponential = replica_capacity(arch, itype, **kwargs, lengths=load_lengths(1000, 250))
    by_hand = 0.1109 + 250 * math.log(20) * (16.06e9 + 131072 * (1000 + 250 * math.log(20) / 2)) / 518.4e9
    assert exponential.batch == 1 and not exponential.meets_latency
    assert exponential.tail_service_seconds == pytest.approx(by_hand, rel=0.02)
    assert "p95 service time at that batch over the stated lengths (23.55 s" in exponential.assumptions()


def test_size_takes_the_lengths_and_refuses_bad_ones():
    args = ["size", "serving", "--model", "llama-3.1-8b", "--instance-type", "g6e.xlarge", "--context", "16384",
            "--rps", "5", "--json"]  # fmt: skip
    runner = CliRunner()
    fixed = runner.invoke(app, [*args, "--output-lengths", "fixed"])
    lognormal = runner.invoke(app, [*args, "--output-lengths", "lognormal:2000"])
    assert fixed.exit_code == lognormal.exit_code == 0
    assert "outputs lognormal, mean 250, p99 2000" in lognormal.stdout and "outputs fixed" in fixed.stdout
    bad = runner.invoke(app, [*args, "--output-lengths", "lognormal:9000"])
    assert bad.exit_code == 2 and "--output-lengths 'lognormal:9000': lognormal p99 9000" in bad.output
