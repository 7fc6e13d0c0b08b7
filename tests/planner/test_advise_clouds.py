"""`accelstack advise --cloud all` (one decision on every registered cloud), `advise --stack` with a training stack,
and the per-accelerator facts every catalog needs (a catalog row without them broke `advise --cloud oci`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.clouds import registry
from accelstack.planner.hardware import PEAK_BF16_TFLOPS, memory_bandwidth_gbps

REPO = Path(__file__).resolve().parents[2]
SERVE_8B = ("--custom-weights", "--model", "llama-3.1-8b", "--rps", "20")


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(REPO)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args))


@pytest.mark.parametrize("cloud", registry.names())
def test_every_catalog_accelerator_has_the_planners_facts(cloud: str) -> None:
    """Serving plans read each accelerator's memory bandwidth and peak BF16: a catalog that lists an accelerator
    without them makes every plan on that cloud fail, not just the plans that would pick it."""
    for itype in registry.get(cloud).catalog.instances.values():
        if not itype.accelerator:
            continue
        assert memory_bandwidth_gbps(itype) > 0, itype.name
        assert PEAK_BF16_TFLOPS.get(itype.accelerator, 0) > 0, itype.name


def test_every_cloud_side_by_side_agrees_with_each_single_cloud_run(run) -> None:
    result = run("advise", "--cloud", "all", *SERVE_8B, "--json")
    assert result.exit_code == 0, result.output
    answers = {a["cloud"]: a for a in json.loads(result.output)["clouds"]}
    assert set(answers) == set(registry.names())
    for cloud, answer in answers.items():
        single = run("advise", "--cloud", cloud, *SERVE_8B, "--json")
        assert single.exit_code == 0, single.output
        serving = json.loads(single.output)["details"]["serving"]
        assert answer["servingUsdPerMonth"] == serving["monthlyUsdAtPeak"], cloud
        assert answer["firstYearUsd"] == pytest.approx(12 * serving["monthlyUsdAtPeak"]), cloud


def test_the_table_ranks_by_first_year_and_says_why_a_cloud_has_no_answer(run) -> None:
    result = run("advise", "--cloud", "all", "--custom-weights", "--need-train", "--model", "llama-3.1-70b",
                 "--data-tokens", "2e11", "--rps", "5")  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("  ")]
    priced = [line for line in lines if "first year $" in line]
    years = [float(line.split("first year $")[1].split(":")[0].replace(",", "")) for line in priced]
    assert years == sorted(years) and len(priced) >= 3
    assert "  vultr: no answer: the vultr catalog has no priced instance type with a training fabric" in lines
    cheapest = priced[0].split(":")[0].strip()
    assert f"=> cheapest: {cheapest}" in result.output


def test_a_cloud_that_does_not_build_the_workload_says_so(run) -> None:
    table = run("advise", "--cloud", "all", *SERVE_8B)
    [oci] = [line for line in table.output.splitlines() if line.startswith("  oci:")]
    assert oci.endswith("(accelstack does not deploy serving on oci yet)")
    single = run("advise", "--cloud", "oci", "--custom-weights", "--need-train", "--model", "llama-3.1-70b",
                 "--data-tokens", "2e11")  # fmt: skip
    assert single.exit_code == 0, single.output
    assert "  oci-serving: accelstack does not deploy serving on oci yet" in single.output
    assert "then: accelstack validate oci-training && accelstack cost oci-training" in single.output


def test_one_clouds_price_book_or_profile_is_refused_with_all(run, tmp_path) -> None:
    for flag in ("--prices", "--profile"):
        result = run("advise", "--cloud", "all", *SERVE_8B, flag, str(tmp_path / "x.json"))
        assert result.exit_code == 2 and f"{flag} is one cloud's" in result.output


def test_a_training_stack_is_read_and_named_as_the_users_own(run) -> None:
    result = run("advise", "--stack", "aws-training", "--data-tokens", "2e11")
    assert result.exit_code == 0, result.output
    assert "Your stack aws-training is the training stack this plan needs." in result.output
    assert "  aws-training:" not in result.output  # not offered as an example to copy
    assert "then: accelstack validate aws-training aws-serving" in result.output
    missing = run("advise", "--stack", "aws-training")
    assert missing.exit_code == 2 and "training.model.trainingTokens is not set" in missing.output


def test_a_serving_stack_is_named_as_the_users_own(run) -> None:
    result = run("advise", "--stack", "gcp-serving")
    assert result.exit_code == 0, result.output
    assert "Your stack gcp-serving is the serving stack this plan needs." in result.output
    assert "Create these stacks" not in result.output
