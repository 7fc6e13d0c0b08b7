"""`accelstack init`: a project of the user's own (Pulumi.yaml, program, stack, packs, requirements, PR workflow)
that previews under its own project name and runs the same policy packs; it refuses to overwrite or to write
through a symlink, and writes nothing when it refuses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import accelstack
from accelstack.cli import app
from accelstack.engine.policy_runner import default_packs, load_pack
from accelstack.examples import STARTER, example_file

# Each cloud's GitHub login action and the inputs that make it an OIDC login (no stored key).
LOGINS = {
    "aws": ("aws-actions/configure-aws-credentials@v4", {"role-to-assume", "aws-region"}),
    "azure": ("azure/login@v2", {"client-id", "tenant-id", "subscription-id"}),
    "gcp": ("google-github-actions/auth@v2", {"workload_identity_provider", "service_account"}),
}
# The least role each cloud's preview identity needs, as the workflow's header names it.
LEAST_ROLES = {"aws": "ReadOnlyAccess", "azure": "Reader on the stack's subscription", "gcp": "roles/viewer"}


def init(directory: Path, *args: str):
    return CliRunner().invoke(app, ["init", str(directory), *args])


def tree(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): p.read_text() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("cloud", ["aws", "azure", "gcp"])
def test_init_writes_a_project_of_the_users_own(tmp_path: Path, cloud: str) -> None:
    project = tmp_path / "acme-ml"
    result = init(project, "--cloud", cloud, "--workload", "serving")
    assert result.exit_code == 0, result.output
    stack = STARTER[(cloud, "serving")]
    pulumi_yaml = yaml.safe_load((project / "Pulumi.yaml").read_text())
    assert pulumi_yaml["name"] == "acme-ml" and pulumi_yaml["stackConfigDir"] == "stacks"
    assert pulumi_yaml["runtime"] == {"name": "python", "options": {"toolchain": "pip", "virtualenv": ".venv"}}
    assert "*" not in pulumi_yaml["config"]["pulumi:disable-default-providers"]["value"]
    assert "from accelstack.program import main" in (project / "__main__.py").read_text()
    assert (project / "stacks" / f"Pulumi.{stack}.yaml").read_text() == example_file(stack).read_text()
    assert (project / "requirements.txt").read_text() == f"accelstack=={accelstack.__version__}\n"

    workflow = yaml.safe_load((project / ".github/workflows/accelstack-pr.yml").read_text())
    preview = workflow["jobs"]["preview"]
    assert preview["permissions"]["id-token"] == "write"
    assert [entry["stack"] for entry in preview["strategy"]["matrix"]["include"]] == [stack]
    steps = {step.get("uses", "").split("@")[0]: step for step in preview["steps"]}
    action, inputs = LOGINS[cloud]
    assert inputs <= set(steps[action.split("@")[0]]["with"]), steps[action.split("@")[0]]
    others = {LOGINS[other][0].split("@")[0] for other in LOGINS if other != cloud}
    assert others.isdisjoint(steps)  # one cloud's login only
    assert steps["pulumi/actions"]["with"]["policyPacks"] == "policy-packs/separation,policy-packs/guardrails"
    assert LEAST_ROLES[cloud] in (project / ".github/workflows/accelstack-pr.yml").read_text()
    offline = [step.get("run", "") for step in workflow["jobs"]["offline"]["steps"]]
    assert any("accelstack preview --all" in run for run in offline)


def test_the_projects_packs_are_the_installed_packs(tmp_path: Path) -> None:
    assert init(tmp_path / "p", "--cloud", "gcp").exit_code == 0
    for shipped in default_packs():
        local = load_pack(tmp_path / "p" / "policy-packs" / shipped.name.removeprefix("accelstack-"))
        assert (local.name, local.version) == (shipped.name, shipped.version)
        assert [p.name for p in local.policies] == [p.name for p in shipped.policies]


def test_preview_urns_carry_the_users_project_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "acme-ml"
    assert init(project, "--cloud", "gcp", "--workload", "serving", "--name", "acme.platform").exit_code == 0
    monkeypatch.chdir(project)  # as a user runs it: inside the project, no --project-dir
    result = CliRunner().invoke(app, ["preview", "gcp-serving", "--no-tree", "--json", str(tmp_path / "x.json")])
    assert result.exit_code == 0, result.output
    resources = json.loads((tmp_path / "x.json").read_text())["deployment"]["resources"]
    assert (
        resources[0]["urn"] == "urn:pulumi:gcp-serving::acme.platform::pulumi:pulumi:Stack::acme.platform-gcp-serving"
    )
    assert all(r["urn"].startswith("urn:pulumi:gcp-serving::acme.platform::") for r in resources)
    diff = CliRunner().invoke(app, ["diff", "gcp-serving", "--set", "serving.replicas.max=6"])
    assert diff.exit_code == 0, diff.output


def test_a_second_init_overwrites_nothing(tmp_path: Path) -> None:
    assert init(tmp_path / "p").exit_code == 0
    (tmp_path / "p" / "Pulumi.yaml").write_text("name: mine\n")
    before = tree(tmp_path / "p")
    result = init(tmp_path / "p", "--cloud", "azure")
    assert result.exit_code == 2
    assert "Pulumi.yaml already exists; nothing is overwritten" in result.output
    assert tree(tmp_path / "p") == before  # not even the files that did not exist yet


def test_init_writes_through_no_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "p").mkdir()
    os.symlink(outside, tmp_path / "p" / "stacks")
    result = init(tmp_path / "p")
    assert result.exit_code == 2 and "stacks is a symlink" in result.output
    os.symlink(outside, tmp_path / "link")
    result = init(tmp_path / "link")
    assert result.exit_code == 2 and "is a symlink" in result.output
    assert list(outside.iterdir()) == [] and sorted(p.name for p in (tmp_path / "p").iterdir()) == ["stacks"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cloud", "oci"], "--cloud 'oci': allowed: aws, azure, gcp"),
        (["--workload", "batch"], "--workload 'batch': allowed: training, serving"),
        (["--name", "acme ml"], "--name 'acme ml': not a Pulumi project name"),
    ],
)
def test_bad_options_are_refused_before_anything_is_written(tmp_path: Path, args: list[str], message: str) -> None:
    result = init(tmp_path / "p", *args)
    assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "p").exists()


def test_a_directory_name_that_is_no_project_name_asks_for_name(tmp_path: Path) -> None:
    result = init(tmp_path / "my project")
    assert result.exit_code == 2 and "pass --name" in result.output
    assert init(tmp_path / "my project", "--name", "my-project").exit_code == 0
