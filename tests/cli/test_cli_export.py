"""`accelstack export`: one stack to stdout or a file, several to a directory, the Pulumi v3 form too;
bad input is a clear stderr line and exit 2 with nothing written."""

from __future__ import annotations

import json

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
