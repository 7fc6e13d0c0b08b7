"""A company pack beside the two (docs/extending.md): `accelstack policy --pack PATH` and `preview --pack PATH` run a
pulumi-policy pack directory, the one `pulumi preview --policy-pack PATH` takes, on a shipped example. Its mandatory
violations fail the command like the shipped packs' (exit 1), its advisory ones are printed and counted, its config
comes from `--pack-config` as Pulumi's `--policy-pack-config`, and a pack that does not load is exit 2 naming it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from policy_baseline import training_export
from typer.testing import CliRunner

from accelstack.cli import app

REPO = Path(__file__).resolve().parents[2]
PACKS = REPO / "tests" / "fixtures" / "policy_packs"
COST_CENTRE = PACKS / "cost_centre"
STACK = "aws-training"
HEAD = f"urn:pulumi:{STACK}::accelstack::accelstack:aws:SlurmCluster$aws:ec2/instance:Instance::{STACK}-head"
NODES = f"urn:pulumi:{STACK}::accelstack::accelstack:aws:TrainingCluster$aws:ec2/launchTemplate:LaunchTemplate::{STACK}-nodes"
BUCKETS = ("net-flow-logs", "storage-access-logs", "storage-checkpoints", "storage-datasets")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, [*args, "--project-dir", str(REPO)])
    return result.exit_code, result.stdout, result.stderr


def test_a_company_packs_mandatory_violations_fail_the_run_and_its_advisory_ones_are_printed() -> None:
    code, out, err = run("policy", STACK, "--pack", str(COST_CENTRE))
    assert code == 1, out + err
    missing = "carries no 'cost-centre' tag: finance charges every machine to a cost centre"
    assert f"{STACK}: acme-cost-centre/machines-carry-cost-centre [mandatory] {HEAD}: {STACK}-head {missing}" in out
    assert f"{STACK}: acme-cost-centre/machines-carry-cost-centre [mandatory] {NODES}: {STACK}-nodes {missing}" in out
    bucket_urn = f"urn:pulumi:{STACK}::accelstack::accelstack:aws:SecureBucket$aws:s3/bucket:Bucket::{STACK}"
    for bucket in BUCKETS:
        assert (
            f"{STACK}: acme-cost-centre/buckets-name-their-team [advisory] {bucket_urn}-{bucket}: "
            f"bucket {STACK}-{bucket} names no team"
        ) in out
    # The shipped packs pass on the example: what is counted is the company pack's.
    assert f"{STACK}: FAILED: 2 mandatory, 4 advisory violations" in out


def test_pack_config_sets_the_company_packs_levels_and_properties(tmp_path: Path) -> None:
    config = tmp_path / "cost-centre.json"
    config.write_text(
        json.dumps({"machines-carry-cost-centre": {"enforcementLevel": "advisory", "tagKey": "accelstack:role"}})
    )
    code, out, err = run("policy", STACK, "--pack", str(COST_CENTRE), "--pack-config", str(config), "--json")
    assert code == 0, out + err
    (report,) = json.loads(out)["stacks"]
    assert (report["mandatory"], report["advisory"]) == (0, 5)
    machines = [v for v in report["verdicts"] if v["policy"] == "machines-carry-cost-centre"]
    # The head carries accelstack:role; the nodes' launch template carries no tags of its own.
    assert machines == [
        {
            "pack": "acme-cost-centre",
            "policy": "machines-carry-cost-centre",
            "level": "advisory",
            "urn": NODES,
            "message": f"{STACK}-nodes carries no 'accelstack:role' tag: finance charges every machine to a cost centre",
        }
    ]


def test_preview_runs_a_company_pack_and_counts_it() -> None:
    code, out, err = run("preview", STACK, "--no-tree", "--no-defaults", "--pack", str(COST_CENTRE))
    assert code == 1, out + err
    assert f"{STACK}: acme-cost-centre/machines-carry-cost-centre [mandatory] {HEAD}" in out
    assert f"{STACK}: policies: " in out and " passed, 2 mandatory and 4 advisory violations" in out


@pytest.mark.parametrize("command", ["policy", "preview"])
def test_a_pack_that_fails_to_import_is_refused_naming_it(command: str) -> None:
    broken = PACKS / "broken"
    code, out, err = run(command, STACK, "--pack", str(broken))
    assert code == 2, out + err
    assert err.strip() == (
        f"--pack {broken}: {broken}/__main__.py failed: ModuleNotFoundError: No module named 'acme_finance_rules'"
    )
    assert "Traceback" not in out + err and STACK not in out


def test_what_is_not_a_python_policy_pack_is_refused(tmp_path: Path) -> None:
    code, _, err = run("policy", STACK, "--pack", str(tmp_path))
    assert code == 2
    assert err.strip() == (
        f"--pack {tmp_path}: not a policy pack directory (no PulumiPolicy.yaml or __main__.py; one holds "
        "PulumiPolicy.yaml and a __main__.py calling PolicyPack(...))"
    )
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime: nodejs\n")
    (tmp_path / "__main__.py").write_text("raise SystemExit('never run')\n")
    code, _, err = run("policy", STACK, "--pack", str(tmp_path))
    assert code == 2
    assert (
        err.strip() == f"--pack {tmp_path}: {tmp_path.resolve()}/PulumiPolicy.yaml: runtime 'nodejs'; allowed: python"
    )


def test_pack_configs_pair_with_packs_and_pack_names_stay_unique(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text("{}")
    code, _, err = run("policy", STACK, "--pack-config", str(config))
    assert code == 2
    assert err.strip() == "1 --pack-config for 0 --pack: give none, or one per --pack in order"
    code, _, err = run("policy", STACK, "--pack", str(COST_CENTRE), "--pack", str(COST_CENTRE))
    assert code == 2
    assert err.strip() == f"--pack {COST_CENTRE}: its pack is named 'acme-cost-centre', as --pack {COST_CENTRE} is"
    code, _, err = run("policy", STACK, "--pack", str(REPO / "policies" / "guardrails"))
    assert code == 2
    assert "its pack is named 'accelstack-guardrails', as the shipped pack policies/guardrails is" in err
    config.write_text("[]")
    code, _, err = run("policy", STACK, "--pack", str(COST_CENTRE), "--pack-config", str(config))
    assert code == 2
    assert err.strip() == f"--pack-config {config}: expected a JSON object keyed by policy name"


def test_preview_without_the_packs_takes_no_company_pack() -> None:
    code, _, err = run("preview", STACK, "--no-policy", "--pack", str(COST_CENTRE))
    assert code == 2
    assert err.strip() == "--pack runs a policy pack: drop --no-policy"


def test_a_company_policy_declaring_a_context_key_gets_the_stacks_value_offline(tmp_path: Path) -> None:
    """The stack's context reaches any policy whose schema declares its key (below --pack-config); advisory only."""
    pack = tmp_path / "context-pack"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("version: 0.1.0\nruntime: python\n")
    (pack / "__main__.py").write_text(
        textwrap.dedent(
            """
            from pulumi_policy import EnforcementLevel, PolicyConfigSchema, PolicyPack, StackValidationPolicy


            def report_side(args, report_violation):
                config = args.get_config()
                report_violation(f"{config['workload']} stack, serving accounts {config['servingAccounts']}")


            PolicyPack(
                name="acme-context",
                enforcement_level=EnforcementLevel.ADVISORY,
                policies=[
                    StackValidationPolicy(
                        name="report-side",
                        description="Says which side the stack is.",
                        validate=report_side,
                        config_schema=PolicyConfigSchema(
                            properties={"workload": {"type": "string"}, "servingAccounts": {"type": "array"}}
                        ),
                    )
                ],
            )
            """
        )
    )
    export = tmp_path / "export.json"
    export.write_text(json.dumps(training_export()))
    code, out, err = run("policy", "--file", str(export), "--pack", str(pack))
    assert code == 0, out + err
    assert "aws-training: acme-context/report-side [advisory] (stack): training stack, serving accounts" in out
    assert "aws-training: ok (no mandatory violations; 1 advisory)" in out
