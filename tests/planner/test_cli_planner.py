"""`accelstack size|cost|advise` through the real typer app, and the aws-finetune example stack."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.examples import WORKLOAD_EXAMPLES
from accelstack.spec.loader import load_stack
from accelstack.spec.models import ServingStack, TrainingStack
from tests.planner.aws_inputs import AWS_CATALOG

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(REPO)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args))


def test_size_serving_json(run) -> None:
    result = run("size", "serving", "--model", "llama-3.1-70b", "--instance-type", "p5.48xlarge",
                 "--kv-precision", "fp8", "--rps", "5", "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["fits"] and data["kv"]["tp"] == 8
    assert data["kv"]["kv_bytes_per_token"] == 2 * 80 * 1 * 128 * 1  # 8 KV heads / tp 8, fp8
    assert data["load"]["replicas"] >= 1 and data["coldStart"]["health_check_grace_seconds"] > 0


def test_size_serving_that_does_not_fit_exits_1_and_says_why(run) -> None:
    result = run("size", "serving", "--model", "llama-3.1-70b", "--instance-type", "g6e.xlarge")
    assert result.exit_code == 1
    assert "needs" in result.output and "g6e.xlarge" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["size", "serving", "--model", "gpt-9", "--instance-type", "p5.48xlarge"], "allowed: "),
        (["size", "serving", "--model", "llama-2-7b", "--instance-type", "p9.huge"], "unknown instance type"),
        (
            ["size", "serving", "--model", "llama-2-7b", "--instance-type", "g6.xlarge", "--precision", "fp5"],
            "--precision",
        ),
        (["size", "serving", "--instance-type", "g6.xlarge"], "--model"),
        (["size", "checkpoint", "--nodes", "4", "--state-gb", "100"], "--write-mbps"),
        (["size", "lustre", "--dataset-gib", "10", "--checkpoint-gib", "1", "--deployment-type", "FOO"], "allowed"),
        (["advise", "--custom-weights", "--need-train", "--model", "llama-3.1-8b"], "--data-tokens"),
    ],
)
def test_bad_flags_exit_2_with_a_clear_message(run, args: list[str], message: str) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.output


def test_size_checkpoint_and_lustre(run) -> None:
    result = run("size", "checkpoint", "--nodes", "1", "--state-gb", "300", "--write-mbps", "1000", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["write_seconds"] == 300
    lustre = run("size", "lustre", "--dataset-gib", "4000", "--checkpoint-gib", "1000", "--write-target-seconds", "120")
    assert lustre.exit_code == 0 and "9600" in lustre.output


def test_cost_all_stacks(run) -> None:
    result = run("cost", *WORKLOAD_EXAMPLES, "--json")
    assert result.exit_code == 0, result.output
    stacks = json.loads(result.output)["stacks"]
    assert {"aws-training", "aws-serving", "aws-finetune"} <= set(stacks)
    assert stacks["aws-finetune"]["capacity"] == "spot"
    # On-demand 4 x p5 for a 730 h month dominates the one spot node.
    assert stacks["aws-training"]["totalUsd"] > 10 * stacks["aws-finetune"]["totalUsd"]
    assert stacks["aws-serving"]["serving"]["lifetimeUsd"] == pytest.approx(
        stacks["aws-serving"]["monthlyUsd"] * 24, rel=1e-3
    )
    assert run("cost", "no-such-stack").exit_code == 2


def test_advise_points_at_the_finetune_stack(run) -> None:
    result = run("advise", "--custom-weights", "--need-train", "--model", "llama-3.1-8b", "--data-tokens", "5e7")
    assert result.exit_code == 0, result.output
    assert "aws-finetune" in result.output and "aws-serving" in result.output
    managed = run("advise", "--no-custom-weights", "--json")
    assert json.loads(managed.output)["outcome"] == "managed-model-api"


def test_advise_describes_each_stack_from_its_own_file(run, tmp_path) -> None:
    """The example stack's header comment is its description: a new cloud's examples need no table entry."""
    result = run("advise", "--custom-weights", "--model", "llama-3.1-8b")
    assert "  aws-serving: Online inference on AWS: Llama-3.1-8B-Instruct at bf16 on g6e.xlarge" in result.output
    assert "(stacks/Pulumi.aws-serving.yaml)" in result.output
    (tmp_path / "Pulumi.yaml").write_text((REPO / "Pulumi.yaml").read_text())
    bare = run("advise", "--custom-weights", "--model", "llama-3.1-8b", "--project-dir", str(tmp_path))
    assert "  aws-serving: no example stack file for it in this project" in bare.output


def test_a_cloud_without_a_finetune_example_is_pointed_at_its_training_example(run) -> None:
    result = run(
        "advise",
        "--cloud",
        "gcp",
        "--custom-weights",
        "--need-train",
        "--model",
        "llama-3.1-8b",
        "--data-tokens",
        "2e10",
    )
    assert result.exit_code == 0, result.output
    assert (
        "  gcp-finetune: no example of its own; start from gcp-training with training.nodes.count 1 and "
        "training.model.method lora: Distributed training on Google Cloud"
    ) in result.output


def test_finetune_example_stack_is_one_spot_node_without_lustre() -> None:
    spec = load_stack(REPO / "stacks" / "Pulumi.aws-finetune.yaml")
    assert isinstance(spec, TrainingStack)
    training = spec.training
    assert training.nodes.count == 1 and training.nodes.capacity == "spot"
    assert training.storage.lustre is None
    assert training.storage.checkpoints is not None and training.storage.checkpoints.uri.startswith("s3://")


def test_size_serving_backlog_is_the_target_the_serving_stack_deploys(run) -> None:
    """`size serving` and the stack's scaling policy agree: messages owned per replica (waiting + in flight)."""
    from accelstack.planner.serving_plan import plan_serving

    spec = load_stack(REPO / "stacks" / "Pulumi.aws-serving.yaml", ["serving.model.adapters=[]"])
    assert isinstance(spec, ServingStack)
    result = run("size", "serving", "--model", "llama-3.1-8b", "--instance-type", "g6e.xlarge",
                 "--context", "16384", "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["backlogPerReplica"] == plan_serving(spec.serving, AWS_CATALOG).backlog_per_instance_target
    assert data["backlogAtLatencySlo"] > data["backlogPerReplica"]


@pytest.mark.parametrize("cloud", ["gcp", "azure"])
def test_size_lustre_sizes_an_unpriced_cloud_and_says_so(cloud: str) -> None:
    args = ["size", "lustre", "--cloud", cloud, "--dataset-gib", "2000", "--checkpoint-gib", "920"]
    table = CliRunner().invoke(app, args, env={"COLUMNS": "300"})
    assert table.exit_code == 0, table.output
    assert "NOT PRICED (no list price recorded; give one with --prices)" in table.output
    data = json.loads(CliRunner().invoke(app, [*args, "--json"]).output)
    assert data["best"]["monthly_usd"] is None and data["best"]["checkpoint_write_seconds"] <= 300


def test_a_managed_slurm_prices_its_login_node_and_a_batch_service_does_not(run) -> None:
    """Cluster Director's login node (training.scheduler.headNode) runs while the cluster exists; AWS Batch and
    Azure ML run no node of the stack's outside jobs."""

    def head_usd(stack: str, *overrides: str) -> float:
        args = [arg for override in overrides for arg in ("--set", override)]
        result = run("cost", stack, *args, "--json")
        assert result.exit_code == 0, result.output
        document = json.loads(result.output)
        return float(document.get("stacks", {stack: document})[stack]["headNodeUsd"])

    gcp_managed = ("training.scheduler.kind=managed", 'training.scheduler.partitions=[{"name": "gpu"}]')
    assert head_usd("gcp-training", *gcp_managed) == pytest.approx(head_usd("gcp-training"))
    assert head_usd("gcp-training", *gcp_managed) > 0
    assert head_usd("aws-training", "training.scheduler.kind=managed") == 0
