"""`accelstack export`: one stack to stdout or a file, several to a directory, the Pulumi v3 form too;
bad input is a clear stderr line and exit 2 with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app


def invoke(*args: str):
    return CliRunner().invoke(app, ["export", *args])


def test_one_stack_to_stdout_is_a_terraform_plan(fixture_project):
    result = invoke("alpha", "--project-dir", str(fixture_project))
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["format_version"] == "1.2" and plan["terraform_version"]
    types = {r["type"] for r in plan["planned_values"]["root_module"]["resources"]}
    assert "aws_s3_bucket" in types


def test_several_stacks_go_to_a_directory(fixture_project, tmp_path):
    out = tmp_path / "plans"
    result = invoke("alpha", "beta", "--project-dir", str(fixture_project), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["alpha.tfplan.json", "beta.tfplan.json"]
    assert f"wrote {out / 'alpha.tfplan.json'}" in result.stderr


def test_pulumi_format_is_the_v3_export(fixture_project, tmp_path):
    target = tmp_path / "alpha.json"
    result = invoke("alpha", "--project-dir", str(fixture_project), "--format", "pulumi", "--out", str(target))
    assert result.exit_code == 0, result.output
    document = json.loads(target.read_text())
    assert document["version"] == 3 and document["deployment"]["resources"][0]["type"] == "pulumi:pulumi:Stack"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "nope: no such stack; available: alpha, beta"),
        (["alpha", "beta"], "--out -: stdout takes one stack, 2 given; pass --out DIRECTORY"),
        (["alpha", "--set", "training.nodes.count=0"], "alpha: training.nodes.count:"),
        (["alpha", "--format", "hcl"], "'hcl' is not one of"),
    ],
)
def test_bad_input_exits_2_naming_it(fixture_project, tmp_path, args, message):
    result = invoke(*args, "--project-dir", str(fixture_project))
    assert result.exit_code == 2
    assert message in result.stderr or message in result.output
    assert "Traceback" not in result.output
    assert result.stdout.strip() == "" or not result.stdout.lstrip().startswith("{")


def test_a_plan_that_leaves_resources_out_says_how_many_a_scanner_does_not_see(tmp_path):
    """Azure's resources mostly have no Terraform type: the plan is small, and export says so beside the URNs."""
    repo = Path(__file__).resolve().parents[2]
    out = tmp_path / "azure.json"
    result = invoke("azure-training", "--project-dir", str(repo), "--out", str(out))
    assert result.exit_code == 0, result.output
    not_exported = [line for line in result.stderr.splitlines() if "not exported (no Terraform type" in line]
    planned = json.loads(out.read_text())["planned_values"]["root_module"]["resources"]
    summary = f"azure-training: the plan holds {len(planned)} of {len(planned) + len(not_exported)} resources"
    assert not_exported and summary in result.stderr


def test_a_plan_holding_every_resource_says_nothing_more(fixture_project):
    result = invoke("alpha", "--project-dir", str(fixture_project))
    assert result.exit_code == 0 and "a scanner reading it" not in result.stderr
