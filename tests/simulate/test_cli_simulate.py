"""`accelstack simulate serving` through the real typer app on the example serving stack."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.clouds.aws import prices as prices_aws

REPO = Path(__file__).resolve().parents[2]
QUICK = ["--hours", "1", "--pattern", "steady", "--rate", "5", "--seeds", "1"]


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(REPO)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, ["simulate", "serving", *args])


def as_json(result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_json_report_accounts_for_every_request(run) -> None:
    data = as_json(run("aws-serving", *QUICK, "--json"))
    [design] = data["designs"]
    requests = design["requests"]
    assert requests["arrived"] == data["workload"]["requests"] > 15_000
    assert (
        requests["served"] + requests["refused"] + requests["expired"] + requests["deadLettered"] == requests["arrived"]
    )
    assert design["autoscaler"] == "aws-target-tracking" and design["replicas"] == "1..8"
    assert 0 <= design["slo"]["attainment"] <= 1 and design["latencySeconds"]["p50"] <= design["latencySeconds"]["p99"]
    assert design["cost"]["totalUsd"] > design["cost"]["instancesUsd"] > 0


def test_set_changes_the_design(run) -> None:
    base = as_json(run("aws-serving", *QUICK, "--json"))["designs"][0]
    changed = as_json(
        run("aws-serving", *QUICK, "--json", "--set", "serving.replicas.warmPool=0", "--set", "serving.replicas.min=2")
    )
    design = changed["designs"][0]
    assert (base["warmPool"], design["warmPool"]) == (6, 0)
    assert design["replicas"] == "2..8" and design["replicaHours"]["warmPoolStopped"] == 0
    assert design["replicaHours"]["serving"] >= 2


def test_failed_replicas_are_replaced_and_reported(run) -> None:
    design = as_json(run("aws-serving", *QUICK, "--failures-per-replica-day", "48", "--seed", "1", "--json"))[
        "designs"
    ][0]
    # One replica for an hour at 2 failures/replica-hour: each is replaced from the warm pool (a
    # replacement launched near the end may still be starting). The requests a dead replica held wait
    # out its visibility timeout, so the policy may also add a replica: each scaling event adds at most one.
    scaling = design["scaling"]
    assert scaling["failures"] >= 2 and scaling["peakReplicas"] <= 2
    assert scaling["failures"] - 1 <= scaling["launchesWarm"] <= scaling["failures"] + scaling["events"]
    assert scaling["launchesCold"] == 0
    requests = design["requests"]
    assert (
        requests["served"] + requests["refused"] + requests["expired"] + requests["deadLettered"] == requests["arrived"]
    )


def test_fixed_fleet_cost_is_replicas_times_hours_times_price(run) -> None:
    data = as_json(
        run("aws-serving", "--hours", "2", "--pattern", "steady", "--rate", "5", "--autoscaler", "fixed", "--json")
    )
    cost = data["designs"][0]["cost"]
    assert cost["instancesUsd"] == pytest.approx(8 * 2 * prices_aws.ON_DEMAND_HOURLY["g6e.xlarge"], abs=0.01)
    assert cost["warmPoolVolumesUsd"] == 0


def test_compare_names_the_cheapest_design_meeting_the_slo(run) -> None:
    data = as_json(run("aws-serving", *QUICK, "--compare", "--json"))
    names = [d["design"] for d in data["designs"]]
    assert len(names) == 6 and names[0] == "stack design"
    assert "queue length (KEDA, 7.7/replica)" in names and "request-rate scaling (SkyServe)" in names
    pick = data["recommendation"]
    meeting = [d for d in data["designs"] if d["slo"].get("verdict", "met" if d["slo"]["met"] else "missed") == "met"]
    if meeting:
        assert pick["meetsSlo"] and pick["design"] == min(meeting, key=lambda d: d["cost"]["totalUsd"])["design"]
    else:
        assert not pick["meetsSlo"]
    # The fixed fleet at replicas.max always costs the most instance-hours of the five.
    fixed = data["designs"][-1]
    assert fixed["cost"]["instancesUsd"] == max(d["cost"]["instancesUsd"] for d in data["designs"])


def test_table_output_and_plot(run, tmp_path: Path) -> None:
    png = tmp_path / "timeline.png"
    result = run("aws-serving", *QUICK, "--plot", str(png))
    assert result.exit_code == 0, result.output
    assert "within 10 s SLO" in result.output and "latency p50/p95/p99" in result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_trace_replay(run, tmp_path: Path) -> None:
    trace = tmp_path / "trace.csv"
    rows = [f"{1_700_000_000 + i * 0.5:.3f},{100 + i % 50}" for i in range(2000)]
    trace.write_text("timestamp,tokens\n" + "\n".join(rows) + "\n")
    data = as_json(run("aws-serving", "--trace", str(trace), "--json"))
    assert data["workload"]["requests"] == 2000
    assert data["workload"]["hours"] == pytest.approx(1000 / 3600, abs=0.01)
    assert data["designs"][0]["requests"]["served"] == 2000


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["aws-serving", "--pattern", "weekly"], "--pattern 'weekly': allowed: diurnal, spike, steady"),
        (["aws-serving", "--autoscaler", "keda"], "--autoscaler 'keda': allowed: aws-target-tracking"),
        (["aws-serving", "--pattern", "steady", "--trace", "x.csv"], "not both"),
        (["aws-serving", "--trace", "x.csv", "--rate", "3"], "--rate"),
        (["aws-serving", "--trace", "/nonexistent/trace.csv"], "--trace /nonexistent/trace.csv: cannot read"),
        (["aws-training"], "workload is training"),
        (["aws-nope"], "no such stack"),
        (["aws-serving", "--set", "serving.replicas.min=lots"], "serving.replicas.min"),
        (
            ["aws-serving", *QUICK, "--plot", "/nonexistent/dir/t.png"],
            "--plot /nonexistent/dir: its parent /nonexistent does not exist",
        ),
        (["aws-serving", "--rate", "100000"], "lower --rate or --hours"),
    ],
)
def test_bad_input_exits_2_naming_it(run, args: list[str], message: str) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("0,100\n1,abc\n", "line 2: timestamp and tokens must be numbers"),
        ("0,100\n1\n", "line 2: expected 'timestamp,tokens'"),
        ("0,100\n1,-5\n", "line 2: need a finite timestamp and tokens > 0"),
        ("0,100\nnan,5\n", "line 2: need a finite timestamp"),
        ("timestamp,tokens\n", "no 'timestamp,tokens' rows"),
    ],
)
def test_bad_trace_names_the_line(run, tmp_path: Path, content: str, message: str) -> None:
    trace = tmp_path / "bad.csv"
    trace.write_text(content)
    result = run("aws-serving", "--trace", str(trace))
    assert result.exit_code == 2, result.output
    assert message in result.output


SPIKE = ["--pattern", "spike", "--rate", "20", "--seeds", "1"]


def test_the_spike_shape_is_settable_and_what_is_simulated(run) -> None:
    """Friction 19: the spike was fixed at 5x for 15 minutes. 10x for 30 minutes in 2 h: base 2 req/s for 90 min,
    20 req/s for 30 min: 2 x 5400 + 20 x 1800 = 46,800 requests expected."""
    data = as_json(
        run("aws-serving", *SPIKE, "--hours", "2", "--spike-factor", "10", "--spike-minutes", "30", "--json")
    )
    assert data["workload"]["requests"] == pytest.approx(46_800, rel=0.03)
    assert "(10x the base for 30 min)" in data["workload"]["source"]
    default = as_json(run("aws-serving", *SPIKE, "--hours", "2", "--json"))  # 4 x 6300 + 20 x 900 = 43,200
    assert default["workload"]["requests"] == pytest.approx(43_200, rel=0.03)


def test_a_spike_too_narrow_for_the_plot_says_to_zoom_in(run, tmp_path: Path) -> None:
    wide = run("aws-serving", *SPIKE, "--hours", "24", "--rate", "5", "--plot", str(tmp_path / "day.png"))
    assert wide.exit_code == 0, wide.output
    assert "the 15-minute spike is 1.0% of this 24 h plot: add --hours 1 to see it" in " ".join(wide.output.split())
    data = as_json(run("aws-serving", *SPIKE, "--hours", "1", "--plot", str(tmp_path / "hour.png"), "--json"))
    assert "plotHint" not in data  # 15 minutes of 1 h is plain to see


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--spike-factor", "1"], "--spike-factor 1: the peak over the base rate; allowed: above 1, at most 1000"),
        (["--spike-factor", "5000"], "allowed: above 1, at most 1000"),
        (["--spike-factor", "nan"], "take finite numbers"),
        (["--spike-minutes", "0"], "--spike-minutes 0"),
        (["--spike-minutes", "45", "--hours", "1"], "allowed: above 0, at most 30 minutes (or more --hours)"),
    ],
)
def test_bad_spike_shapes_exit_2_naming_the_option(run, args: list[str], message: str) -> None:
    result = run("aws-serving", *SPIKE, *args)
    assert result.exit_code == 2 and message in " ".join(result.output.split()), result.output
    assert "Traceback" not in result.output


def test_spike_options_need_the_spike_pattern(run) -> None:
    result = run("aws-serving", "--pattern", "steady", "--spike-minutes", "5")
    assert result.exit_code == 2 and "add --pattern spike" in result.output
