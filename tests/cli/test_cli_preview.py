"""`accelstack preview`: validate first, one worker per stack, tree + summary, --json v3 exports."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.engine.export import integrity_problems

SUMMARY = re.compile(r"^(\S+): (\d+) resources \((\d+) custom\) in \d+\.\d\ds$", re.MULTILINE)


@pytest.fixture(scope="module")
def two_stacks(fixture_project, tmp_path_factory):
    """One invocation previewing alpha and beta, exports in a directory (shared by several tests).
    The fixture program is a toy that breaks guardrails on purpose: policies are tested in
    test_cli_preview_policy.py, so they are skipped here."""
    out = tmp_path_factory.mktemp("exports") / "out"
    result = CliRunner().invoke(
        app, ["preview", "alpha", "beta", "--project-dir", str(fixture_project), "--json", str(out), "--no-policy"]
    )
    return result, out


def test_two_stacks_exit_zero_with_a_summary_each(two_stacks):
    result, _ = two_stacks
    assert result.exit_code == 0, result.output
    summaries = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in SUMMARY.finditer(result.output)}
    assert summaries == {"alpha": (8, 5), "beta": (8, 5)}


def test_tree_and_type_counts_are_printed(two_stacks):
    result, _ = two_stacks
    assert "checkpoints  aws:s3/bucket:Bucket  [protected]" in result.output
    assert "aws:ec2/launchTemplate:LaunchTemplate" in result.output
    assert "resources by type" in result.output


def test_json_directory_has_one_export_per_stack(two_stacks):
    _, out = two_stacks
    assert sorted(p.name for p in out.iterdir()) == ["alpha.json", "beta.json"]
    for name in ("alpha", "beta"):
        document = json.loads((out / f"{name}.json").read_text())
        assert document["version"] == 3
        assert integrity_problems(document) == []
        assert document["deployment"]["resources"][0]["type"] == "pulumi:pulumi:Stack"


def test_stacks_do_not_leak_into_each_other(two_stacks):
    _, out = two_stacks
    for name, region in (("alpha", "us-east-1"), ("beta", "us-west-2")):
        resources = json.loads((out / f"{name}.json").read_text())["deployment"]["resources"]
        assert all(r["urn"].startswith(f"urn:pulumi:{name}::accelstack::") for r in resources)
        [provider] = [r for r in resources if r["type"] == "pulumi:providers:aws"]
        assert provider["inputs"]["region"] == region
        reference = f"{provider['urn']}::{provider['id']}"
        managed = [r for r in resources if r["custom"] and r is not provider]
        assert managed and all(r["provider"] == reference for r in managed)


def test_secret_never_written_or_printed(two_stacks):
    result, out = two_stacks
    assert "s3cr3t-fixture-token" not in result.output
    for path in out.iterdir():
        assert "s3cr3t-fixture-token" not in path.read_text()


def test_single_stack_json_is_a_file(runner, fixture_project, tmp_path):
    out = tmp_path / "nested" / "alpha-export.json"
    result = runner.invoke(
        app, ["preview", "alpha", "--project-dir", str(fixture_project), "--json", str(out), "--no-tree", "--no-policy"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["deployment"]["resources"][0]["urn"].endswith("accelstack-alpha")
    assert "resources by type" not in result.output


def test_invalid_config_runs_nothing(runner, fixture_project):
    result = runner.invoke(
        app, ["preview", "alpha", "beta", "--project-dir", str(fixture_project), "--set", "training.nodes.count=0"]
    )
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert [line for line in lines if "training.nodes.count" in line] == [
        line for line in lines if line.startswith(("alpha: training", "beta: training"))
    ]
    assert len([line for line in lines if "training.nodes.count" in line]) == 2
    assert not SUMMARY.search(result.output) and "Traceback" not in result.output


def test_program_refusal_exits_2_and_crash_exits_1(runner, fixture_project):
    refused = runner.invoke(app, ["preview", "broken", "--project-dir", str(fixture_project)])
    assert refused.exit_code == 2
    assert "broken: program refused its config:" in refused.output
    assert "fixture:fail is set" in refused.output
    crashed = runner.invoke(app, ["preview", "crashy", "--project-dir", str(fixture_project)])
    assert crashed.exit_code == 1
    assert "ZeroDivisionError: fixture crashed on purpose" in crashed.output
    assert "Traceback" not in crashed.output
    assert "crashy: `accelstack preview crashy --debug` shows the traceback" in crashed.output
    assert "--debug" not in refused.output  # a refused config says what is wrong; no traceback to look for
    debug = runner.invoke(app, ["preview", "crashy", "--debug", "--project-dir", str(fixture_project)])
    assert "Traceback" in debug.output and "shows the traceback" not in debug.output
    assert "fixture program running for crashy" in debug.output  # the program's own prints, kept apart


def test_unknown_stack(runner, fixture_project):
    result = runner.invoke(app, ["preview", "gamma", "--project-dir", str(fixture_project)])
    assert result.exit_code == 2
    assert "gamma: no such stack; available: alpha, beta, broken, crashy" in result.output


def run_cli(args: list[str], env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "TERM", "COLUMNS")}
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-m", "accelstack.cli", *args], capture_output=True, text=True, env=env, check=False
    )


def test_piped_output_is_plain(fixture_project):
    """Piped to a file or another program: no ANSI escape codes; FORCE_COLOR proves the check can fail."""
    args = ["preview", "alpha", "--project-dir", str(fixture_project)]
    plain = run_cli(args, {"TERM": "xterm-256color"})
    assert plain.returncode == 1, plain.stderr  # the fixture's mandatory policy violations (red lines)
    assert "\x1b[" not in plain.stdout and "\x1b[" not in plain.stderr
    assert SUMMARY.search(plain.stdout) and "[mandatory]" in plain.stdout
    # Same consoles, forced to colour (validate: cheaper than a second preview).
    coloured = run_cli(
        ["validate", "alpha", "--project-dir", str(fixture_project)], {"TERM": "xterm-256color", "FORCE_COLOR": "1"}
    )
    assert "\x1b[" in coloured.stdout


def test_problem_lines_are_never_wrapped_when_piped(fixture_project):
    long_value = "x" * 200
    result = run_cli(
        ["validate", "alpha", "--project-dir", str(fixture_project), "--set", f"training.nodes.{long_value}=1"], {}
    )
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert line.startswith(f"alpha: training.nodes.{long_value}: unknown key; allowed: ")
