"""`accelstack policy`: --file exports, exit codes, --json, and the separation failures a user must see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from policy_baseline import SERVING_ACCOUNT, context_for, serving_export, training_export
from typer.testing import CliRunner

from accelstack.cli import app

REPO = Path(__file__).resolve().parents[2]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["policy", *args])
    return result.exit_code, result.stdout, result.stderr


def write(tmp_path: Path, doc: object, name: str = "export.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def provider(doc: dict) -> dict:
    return next(r for r in doc["deployment"]["resources"] if r["type"] == "pulumi:providers:aws")


def test_file_export_passes_with_exit_0(tmp_path: Path) -> None:
    code, out, _ = run("--file", write(tmp_path, training_export()), "--project-dir", str(REPO))
    assert code == 0, out
    assert "aws-training: ok (no mandatory violations" in out


def test_serving_load_balancer_in_training_account_fails_clearly(tmp_path: Path) -> None:
    doc = training_export()
    doc["deployment"]["resources"].append(
        {
            "urn": "urn:pulumi:aws-training::accelstack::aws:lb/loadBalancer:LoadBalancer::inference",
            "custom": True,
            "id": "lb",
            "type": "aws:lb/loadBalancer:LoadBalancer",
            "inputs": {"internal": False, "loadBalancerType": "application", "enableDeletionProtection": True},
            "outputs": {},
            "provider": f"{provider(doc)['urn']}::{provider(doc)['id']}",
            "protect": False,
        }
    )
    code, out, _ = run("--file", write(tmp_path, doc), "--project-dir", str(REPO))
    assert code == 1
    assert (
        "accelstack-separation/workload-resource-kinds [mandatory] "
        "urn:pulumi:aws-training::accelstack::aws:lb/loadBalancer:LoadBalancer::inference: "
        "internet-facing load balancer inference in a training stack: serving load balancers belong in the serving account"
    ) in out
    # The same load balancer is unguarded (no web ACL) and unlogged (no access logs): one verdict each.
    assert "load balancer inference has no WAF policy with an enforced per-client rate limit" in out
    assert "load balancer inference writes no access logs" in out
    assert "FAILED: 3 mandatory" in out


def test_provider_pointing_at_the_other_sides_account_fails_clearly(tmp_path: Path) -> None:
    doc = training_export()
    provider(doc)["inputs"]["allowedAccountIds"] = json.dumps([SERVING_ACCOUNT])
    # The account sets come from the project's stacks/Pulumi.aws-training.yaml (the export's accelstack:stack tag).
    code, out, _ = run("--file", write(tmp_path, doc), "--project-dir", str(REPO))
    assert code == 1
    assert "provider aws-training-aws targets account 222222222222, which is a serving account" in out


def test_json_output_for_machines(tmp_path: Path) -> None:
    doc = serving_export()
    next(r for r in doc["deployment"]["resources"] if r["urn"].endswith("::alb") and "loadBalancer" in r["type"])[
        "inputs"
    ]["enableDeletionProtection"] = False
    code, out, _ = run(
        "--file", write(tmp_path, {"stack": "aws-serving", "export": doc}), "--json", "--project-dir", str(REPO)
    )
    assert code == 1
    report = json.loads(out)
    assert report["ok"] is False
    (stack,) = report["stacks"]
    assert stack["stack"] == "aws-serving" and stack["mandatory"] == 1
    assert stack["verdicts"][0] == {
        "pack": "accelstack-guardrails",
        "policy": "lb-deletion-protection",
        "level": "mandatory",
        "urn": "urn:pulumi:aws-serving::accelstack::aws:lb/loadBalancer:LoadBalancer::alb",
        "message": "load balancer alb has no deletion protection (enableDeletionProtection)",
    }


def test_policy_config_file_downgrades_a_policy(tmp_path: Path) -> None:
    doc = serving_export()
    next(r for r in doc["deployment"]["resources"] if r["urn"].endswith("::alb") and "loadBalancer" in r["type"])[
        "inputs"
    ]["enableDeletionProtection"] = False
    config = write(tmp_path, {"lb-deletion-protection": "advisory"}, "config.json")
    code, out, _ = run("--file", write(tmp_path, doc), "--policy-config", config, "--project-dir", str(REPO))
    assert code == 0 and "[advisory]" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"version": 3}', "not a stack export"),
        ('{"deployment": {"resources": [{"type": "x"}]}}', "each resource needs a urn and a type"),
    ],
)
def test_bad_export_is_exit_2(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, _, err = run("--file", str(path))
    assert code == 2 and message in err


def test_bad_policy_config_is_exit_2(tmp_path: Path) -> None:
    config = write(tmp_path, {"provider-account": {"trainingAccounts": "1"}}, "config.json")
    code, _, err = run(
        "--file", write(tmp_path, training_export()), "--policy-config", config, "--project-dir", str(REPO)
    )
    assert code == 2 and "trainingAccounts" in err


def test_emit_config_carries_the_stack_accounts() -> None:
    code, out, _ = run("aws-training", "--emit-config", "separation", "--project-dir", str(REPO))
    assert code == 0
    config = json.loads(out)
    assert config["provider-account"]["workload"] == "training"
    assert "222222222222" in config["provider-account"]["servingAccounts"]


def test_context_for_is_the_stack_files_separation() -> None:
    assert context_for("training")["servingAccounts"] == [SERVING_ACCOUNT]


def test_export_without_account_config_fails_loudly(tmp_path: Path) -> None:
    """A stack the project has no file for, run without --policy-config: the separation pack cannot
    check any account, so it fails (exit 1) and says how to give it the accounts, instead of passing."""
    doc = json.loads(json.dumps(training_export()).replace("aws-training", "prod-train"))
    provider(doc)["inputs"]["allowedAccountIds"] = json.dumps([SERVING_ACCOUNT])
    code, out, err = run("--file", write(tmp_path, doc), "--project-dir", str(REPO))
    assert code == 1, out
    assert "no valid stacks/Pulumi.prod-train.yaml here" in err
    assert "accelstack-separation/accounts-configured [mandatory]" in out
    assert "has no trainingAccounts or servingAccounts config, so it cannot check any account" in out
    assert "--emit-config separation" in out


def _outside_stack(tmp_path: Path) -> tuple[str, str]:
    """aws-training's export and stack file renamed prod-train, the file outside any project's stacks/."""
    doc = json.loads(json.dumps(training_export()).replace("aws-training", "prod-train"))
    stack_file = tmp_path / "elsewhere" / "Pulumi.prod-train.yaml"
    stack_file.parent.mkdir()
    stack_file.write_text((REPO / "stacks" / "Pulumi.aws-training.yaml").read_text())
    return write(tmp_path, doc), str(stack_file)


def test_stack_file_beside_file_configures_the_packs(tmp_path: Path) -> None:
    """Friction 25: a stack outside stacks/ got two accounts-configured violations and no way to name its file."""
    export, stack_file = _outside_stack(tmp_path)
    code, out, err = run("--file", export, "--project-dir", str(REPO))
    assert code == 1 and "accounts-configured" in out and "--stack-file PATH" in err, (out, err)
    code, out, err = run("--file", export, "--stack-file", stack_file, "--project-dir", str(REPO))
    assert code == 0, out + err
    assert "prod-train: ok (no mandatory violations" in out and "no valid" not in err


def test_stack_file_separation_is_what_the_packs_check(tmp_path: Path) -> None:
    """The named file's accounts are the ones compared: a file whose training account is not the export's fails."""
    export, stack_file = _outside_stack(tmp_path)
    moved = Path(stack_file).with_name("Pulumi.moved.yaml")
    moved.write_text(Path(stack_file).read_text().replace("111111111111", "333333333333"))
    code, out, err = run("--file", export, "--stack-file", str(moved), "--project-dir", str(REPO))
    assert code == 1 and "accelstack-separation/provider-account [mandatory]" in out, (out, err)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--stack-file", "stacks/Pulumi.aws-training.yaml"], "--stack-file names the stack of a --file export"),
        (["--file", "EXPORT", "--stack-file", "missing.yaml"], "missing.yaml"),
        (["--file", "EXPORT", "--stack-file", "BROKEN"], "training.nodes.count"),
    ],
)
def test_bad_stack_file_is_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    export, stack_file = _outside_stack(tmp_path)
    broken = Path(stack_file).with_name("Pulumi.broken.yaml")
    broken.write_text(Path(stack_file).read_text().replace("count: 4", 'count: "4"', 1))
    values = {"EXPORT": export, "BROKEN": str(broken)}
    resolved = [values.get(a, str(REPO / a) if a.startswith("stacks/") else a) for a in args]
    code, out, err = run(*resolved, "--project-dir", str(REPO))
    assert code == 2 and message in out + err, (out, err)
