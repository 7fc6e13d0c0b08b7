"""`accelstack preview` shows the policy verdicts and the planner-derived defaults of each stack."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.engine.export import integrity_problems
from accelstack.examples import SHIPPED_EXAMPLES
from accelstack.planner import checkpoint as ck
from accelstack.planner.training_plan import plan_training
from accelstack.spec import load_stack
from tests.planner.aws_inputs import AWS_CATALOG, aws_book

REPO = Path(__file__).resolve().parents[2]

SHIPPED = ("aws-finetune", "aws-serving", "aws-training")
ENCRYPTION_VERDICT = (
    "alpha: accelstack-guardrails/bucket-encryption [mandatory] "
    "urn:pulumi:alpha::accelstack::fixture:cluster:Cluster$aws:s3/bucket:Bucket::checkpoints: "
    "bucket checkpoints has no server-side encryption configuration"
)


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """Every shipped stack previewed once, policies on, exports in a directory."""
    out = tmp_path_factory.mktemp("shipped")
    # As a user piping the output sees it (160 columns): pytest-xdist workers set COLUMNS=80.
    result = CliRunner().invoke(
        app,
        ["preview", *SHIPPED_EXAMPLES, "--project-dir", str(REPO), "--no-tree", "--json", str(out)],
        env={"COLUMNS": None},
    )
    return result, {name: json.loads((out / f"{name}.json").read_text()) for name in SHIPPED}


def test_a_mandatory_violation_is_printed_and_exits_1(runner, fixture_project, tmp_path):
    out = tmp_path / "alpha.json"
    result = runner.invoke(app, ["preview", "alpha", "--project-dir", str(fixture_project), "--json", str(out)])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert ENCRYPTION_VERDICT in lines
    # The tally counts every policy of both packs; the five the fixture breaks are the ones that fail
    # (its checkpoints bucket also has no server access logging: guardrails bucket-access-logging), and
    # workload-tags names the untagged provider and each of its three taggable resources (the same rule on
    # every cloud: a resource carries its side's tag, its own or its provider's).
    assert re.search(
        r"^alpha: policies: \d+ passed, 8 mandatory and 0 advisory violations$", result.output, re.MULTILINE
    )
    tags = [line for line in lines if line.startswith("alpha: accelstack-separation/workload-tags [mandatory]")]
    assert len(tags) == 4
    assert re.search(r"^alpha: 8 resources \(5 custom\)", result.output, re.MULTILINE)  # the preview still reports
    policy = json.loads(out.read_text())["accelstack"]["policy"]
    assert policy["ran"] and policy["mandatory"] == 8 and policy["advisory"] == 0
    assert any(v["policy"] == "bucket-access-logging" for v in policy["verdicts"])
    assert {
        "pack": "accelstack-guardrails",
        "policy": "bucket-encryption",
        "level": "mandatory",
        "urn": "urn:pulumi:alpha::accelstack::fixture:cluster:Cluster$aws:s3/bucket:Bucket::checkpoints",
        "message": "bucket checkpoints has no server-side encryption configuration",
    } in policy["verdicts"]


def test_no_policy_skips_the_packs(runner, fixture_project):
    result = runner.invoke(app, ["preview", "alpha", "--project-dir", str(fixture_project), "--no-tree", "--no-policy"])
    assert result.exit_code == 0, result.output
    assert "policies:" not in result.output and "[mandatory]" not in result.output


def test_help_documents_the_policy_exit_code_and_switch(runner):
    result = runner.invoke(app, ["preview", "--help"], env={"COLUMNS": "200"})
    assert "--no-policy" in result.output
    assert "1 a mandatory policy is violated" in result.output


def test_shipped_stacks_have_no_violations(shipped):
    result, exports = shipped
    assert result.exit_code == 0, result.output
    for name in SHIPPED:
        assert re.search(rf"^{name}: policies: \d+ passed, 0 violations$", result.output, re.MULTILINE), name
        policy = exports[name]["accelstack"]["policy"]
        assert policy["ran"] and policy["verdicts"] == [] and policy["passed"] > 20
    assert "[mandatory]" not in result.output and "[advisory]" not in result.output


def test_exports_stay_importable_with_the_accelstack_section(shipped):
    _, exports = shipped
    for name, document in exports.items():
        assert document["version"] == 3 and integrity_problems(document) == []
        assert document["accelstack"]["stack"] == name


def row(output: str, stack: str, target: str) -> str:
    """The derived-defaults table row whose first column is `target` in `stack`'s table, its wrapped
    cells joined back into one line per column."""
    lines = output.split(f"{stack}: derived defaults", 1)[1].splitlines()
    for index, line in enumerate(lines):
        cells = [cell.strip() for cell in line.strip().strip("│").split("│")]
        if cells[0] != target:
            continue
        for more in lines[index + 1 :]:
            extra = [cell.strip() for cell in more.strip().strip("│").split("│")]
            if len(extra) != len(cells) or extra[0]:
                break  # the next row, or the table's bottom border
            cells = [f"{a} {b}".strip() for a, b in zip(cells, extra, strict=True)]
        return " | ".join(cells)
    raise AssertionError(f"no row {target!r} in {stack}'s derived defaults")


def test_preview_shows_derived_defaults_with_sources(shipped):
    result, exports = shipped
    output = result.output
    warm = row(output, "aws-serving", "serving.replicas.warmPool")
    assert "6 replicas" in warm and "full-queue burst" in warm
    assert "30 s" in row(output, "aws-serving", "aws-serving-replicas (Group) healthCheckGracePeriod")
    interval = plan_training(
        load_stack(REPO / "stacks" / "Pulumi.aws-training.yaml").training, catalog=AWS_CATALOG, prices=aws_book()
    ).interval_seconds
    line = row(output, "aws-training", "output checkpointIntervalSeconds")
    assert f"{interval} s" in line and "Daly 2006" in line
    # The Lustre check: 4800 GiB at 250 MB/s/TiB writes the example's 70B checkpoint in ~843 s, within its 900 s target.
    assert "within the 900 s target" in output
    machine = {d["target"]: d for d in exports["aws-training"]["accelstack"]["derivedDefaults"]}
    assert machine["output checkpointIntervalSeconds"]["value"] == interval
    assert machine["training.storage.lustre"]["ok"] is True


def test_exported_interval_is_the_planners_daly_interval(shipped):
    """The stack output the component registers equals Daly's interval for the stack's own numbers."""
    _, exports = shipped
    [stack] = [r for r in exports["aws-finetune"]["deployment"]["resources"] if r["type"] == "pulumi:pulumi:Stack"]
    # One spot g6e.12xlarge, llama-3.1-8b LoRA rank 16 (41,943,040 adapter params x 14 B), to S3 at the assumed 1000 MB/s.
    delta = 41_943_040 * 14 / 1000e6
    mtbf = ck.job_mtbf_hours(1, "spot") * 3600
    assert stack["outputs"]["checkpointIntervalSeconds"] == int(ck.daly_interval(delta, mtbf))
