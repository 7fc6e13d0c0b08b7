"""The PR workflow previews every stack file: its matrix comes from stacks/, not a hand-kept list."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / ".github" / "scripts" / "preview_matrix.py"


def run(project: Path, output: Path | None = None) -> subprocess.CompletedProcess:
    env = {"GITHUB_OUTPUT": str(output)} if output else {}
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(project)], capture_output=True, text=True, check=False, env=env
    )


def test_every_shipped_stack_is_in_the_matrix_with_its_region_and_role(tmp_path: Path) -> None:
    result = run(REPO, tmp_path / "out")
    assert result.returncode == 0, result.stderr
    include = json.loads(result.stdout)["include"]
    assert [entry["stack"] for entry in include] == sorted(
        p.name[7:-5] for p in (REPO / "stacks").glob("Pulumi.*.yaml")
    )
    for entry in include:
        config = yaml.safe_load((REPO / "stacks" / f"Pulumi.{entry['stack']}.yaml").read_text())["config"]
        account = config["accelstack:account"]
        assert entry["region"] == account.get("region", account.get("location"))
        workload = config["accelstack:workload"]
        cloud = config.get("accelstack:cloud", "aws").upper()
        assert entry["role_secret"] == f"{cloud}_{workload.upper()}_PREVIEW_ROLE"
    assert (tmp_path / "out").read_text() == f"matrix={result.stdout.strip()}\n"


def test_a_new_stack_file_joins_the_matrix(tmp_path: Path) -> None:
    (tmp_path / "stacks").mkdir()
    text = (REPO / "stacks" / "Pulumi.aws-serving.yaml").read_text().replace("region: us-east-1", "region: us-west-2")
    (tmp_path / "stacks" / "Pulumi.aws-chat8b.yaml").write_text(text)
    include = json.loads(run(tmp_path).stdout)["include"]
    assert include == [
        {"stack": "aws-chat8b", "cloud": "aws", "region": "us-west-2", "role_secret": "AWS_SERVING_PREVIEW_ROLE"}
    ]


def test_a_stack_file_without_workload_fails_the_job(tmp_path: Path) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.odd.yaml").write_text("config:\n  aws:region: us-east-1\n")
    result = run(tmp_path)
    assert result.returncode != 0 and "accelstack:workload" in result.stderr


def test_the_workflow_uses_the_script_and_pins_the_cli() -> None:
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "pr.yml").read_text())
    jobs = workflow["jobs"]
    assert "preview_matrix.py" in json.dumps(jobs["stacks"])
    assert jobs["preview"]["strategy"]["matrix"] == "${{ fromJSON(needs.stacks.outputs.matrix) }}"
    [pulumi] = [step for step in jobs["preview"]["steps"] if step.get("uses", "").startswith("pulumi/actions")]
    pyproject = (REPO / "pyproject.toml").read_text()
    assert f'"pulumi=={pulumi["with"]["pulumi-version"]}"' in pyproject  # CLI pinned to the SDK's version
    assert "head.repo.full_name == github.repository" in jobs["stacks"]["if"]  # forks: no secrets, no preview
