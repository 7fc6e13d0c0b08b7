"""Units and plurals as a person reads them: `1 replica`, `1 GPU`, one unit per quantity, one human unit
for a duration everywhere, and no negative terms in a formula."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.planner.defaults import derived_defaults
from accelstack.planner.units import counted, duration
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file
from tests.planner.aws_inputs import AWS_CATALOG, aws_book

REPO = Path(__file__).resolve().parents[2]


def rows(stack: str, *overrides: str):
    raw = apply_overrides(read_stack_file(REPO / "stacks" / f"Pulumi.{stack}.yaml"), list(overrides))
    return {d.path: d for d in derived_defaults(parse_spec(raw, stack), catalog=AWS_CATALOG, prices=aws_book())}


def test_counted_and_duration():
    assert [counted(1, "replicas"), counted(2, "replica"), counted(1, "GPUs"), counted(0, "GPUs")] == [
        "1 replica", "2 replicas", "1 GPU", "0 GPUs"]  # fmt: skip
    assert counted(3, "GiB") == "3 GiB"
    # 3126 s = 52.1 min; 97473 s = 27.08 h (under 2 days stays in hours); 400000 s = 4.63 days.
    assert [duration(45), duration(3126), duration(20_000), duration(97_473), duration(400_000)] == [
        "45 s",
        "52.1 min",
        "5.6 h",
        "27.1 h",
        "4.6 days",
    ]


def test_preview_rows_say_one_replica_and_one_gpu_and_no_negative_term():
    serving = rows("aws-serving", "serving.replicas.warmPool=1")
    assert serving["serving.replicas.tensorParallel"].display == "1 GPU"  # g6e.xlarge: one L40S
    assert serving["serving.replicas.warmPool"].display == "1 replica"
    # min 20 of max 32 with a 2000-deep queue: ceil(2000 x 1 s / 300 s) = 7 replicas < min, so the burst adds none.
    big = rows("aws-serving", "serving.replicas.min=20", "serving.replicas.max=32")["serving.replicas.warmPool"].source
    assert "= 7 replicas, of which 20 already run: 0 more" in big and "= -" not in big and "-13" not in big


def test_one_checkpoint_in_one_unit_and_the_interval_in_a_human_unit():
    training = rows("aws-training")
    assert training["checkpoint size"].unit == "GiB" and training["checkpoint size"].value == 919.92
    assert "919.9 GiB checkpoint" in training["training.storage.lustre"].source
    assert " GB" not in training["checkpoint size"].source.replace("GB/", "")
    interval = training["checkpointIntervalSeconds"]
    assert interval.display == "97473 s (27.1 h)"  # Daly's interval for the shipped stack
    checkpoint = CliRunner().invoke(app, ["size", "checkpoint", "--model", "llama-3.1-8b", "--mode", "lora", "--nodes", "1",
                                          "--capacity", "spot", "--write-mbps", "1000"], env={"COLUMNS": "200"})  # fmt: skip
    assert "52.1 min" in checkpoint.output and "976" not in checkpoint.output and "1 x spot node;" in checkpoint.output
