"""The CLI on landing stacks: `plan quotas` shows requested vs needed, `validate` reads landing stacks and warns a
workload stack its landing stack requests too little, `--all` leaves landing stacks out of the workload commands."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.examples import example_file

REPO = Path(__file__).resolve().parents[2]
LANDING_FILE = REPO / "stacks" / "Pulumi.aws-landing.yaml"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with the AWS examples and the landing stack in stacks/, the fine-tune stack wired to it but not
    listed by it."""
    shutil.copy(REPO / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    for name in ("aws-training", "aws-serving", "aws-finetune"):
        shutil.copy(example_file(name, REPO / "stacks"), stacks)
    landing = LANDING_FILE.read_text().replace("stacks: [aws-training, aws-finetune]", "stacks: [aws-training]")
    assert "stacks: [aws-training]" in landing
    (stacks / "Pulumi.aws-landing.yaml").write_text(landing)
    finetune = stacks / "Pulumi.aws-finetune.yaml"
    text = re.sub(r"\n    deployRole: [^\n]*", "", finetune.read_text(), count=1)
    text = text.replace(
        "  accelstack:account:", "  accelstack:landing: {stack: acme/accelstack/aws-landing}\n  accelstack:account:", 1
    )
    finetune.write_text(text)
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    # As a user piping the output sees it: pytest-xdist workers set COLUMNS=80.
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": None})
    return result.exit_code, result.stdout, result.stderr


def test_plan_quotas_shows_requested_vs_needed_and_the_shortfall(project: Path) -> None:
    code, out, _ = run("plan", "quotas", "aws-landing", "--project-dir", str(project))
    assert code == 0
    short = next(line for line in out.splitlines() if "All G and VT Spot Instance Requests" in line)
    assert re.search(r"\b0 vCPUs\b.*\b48 vCPUs\b.*aws-finetune", short)
    p5 = next(line for line in out.splitlines() if "Running On-Demand P instances" in line)
    assert re.search(r"768 vCPUs.*768 vCPUs.*aws-training", p5)
    assert "aws-landing: 1 of 3 quotas short" in out


def test_plan_quotas_refuses_a_workload_stack(project: Path) -> None:
    code, _, err = run("plan", "quotas", "aws-training", "--project-dir", str(project))
    assert code == 2 and "not a landing stack" in err


def test_validate_warns_a_workload_stack_its_landing_stack_requests_too_little(project: Path) -> None:
    code, out, _ = run("validate", "aws-finetune", "aws-landing", "--project-dir", str(project))
    assert code == 0
    assert "aws-landing: ok" in out
    assert "aws-finetune: landing.stack: warning: aws-landing does not list aws-finetune" in out
    assert "needs 48 vCPUs of 'All G and VT Spot Instance Requests' in us-east-1; aws-landing requests 0" in out


def test_validate_names_the_path_of_a_bad_landing_stack(project: Path) -> None:
    path = project / "stacks" / "Pulumi.aws-landing.yaml"
    path.write_text(path.read_text().replace("parentId: r-a1b2", "parentId: root"))
    code, _, err = run("validate", "aws-landing", "--project-dir", str(project))
    assert code == 2 and "aws-landing: organization.parentId:" in err


def test_all_leaves_landing_stacks_to_the_commands_that_read_them(project: Path) -> None:
    code, out, _ = run("validate", "--all", "--project-dir", str(project))
    assert code == 0 and "aws-landing: ok" in out
    code, out, err = run("cost", "--all", "--project-dir", str(project))
    assert code == 0, err
    assert "aws-landing" not in out + err


def test_policy_runs_the_packs_on_a_landing_stack_with_its_plan(project: Path) -> None:
    shutil.copy(REPO / "__main__.py", project / "__main__.py")
    code, out, err = run("policy", "aws-landing", "--project-dir", str(project))
    assert code == 0, out + err
    assert "aws-landing: ok" in out


def test_emit_config_carries_the_planned_quota_needs(project: Path) -> None:
    import json

    code, out, err = run("policy", "aws-landing", "--emit-config", "separation", "--project-dir", str(project))
    assert code == 0, err
    caps = json.loads(out)["landing-quota-caps"]
    assert caps["workload"] == "landing"
    # The project's landing stack lists only aws-training on the training side (the fixture): 4 x p5.48xlarge.
    assert {
        "side": "training",
        "region": "us-east-1",
        "quota": "Running On-Demand P instances",
        "quotaCode": "L-417A185B",
        "amount": 768,
    } in caps["quotaNeeds"]
    assert "p5" in caps["deniedFamilies"]


def test_validate_warns_a_workload_stack_outside_its_landing_stacks_regions(project: Path) -> None:
    path = project / "stacks" / "Pulumi.aws-landing.yaml"
    path.write_text(path.read_text().replace("allowedRegions: [us-east-1, us-west-2]", "allowedRegions: [us-west-2]"))
    path.write_text(path.read_text().replace("region: us-east-1", "region: us-west-2"))
    code, out, _ = run("validate", "aws-finetune", "--project-dir", str(project))
    assert code == 0
    assert "aws-landing's region guardrail denies us-east-1 (allowed: us-west-2)" in out
