"""Checkpoint size from training.model, against the ZeRO paper's accounting, and the sources preview prints.

Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models"
(SC20, arXiv:1910.02054), section 3.1: mixed-precision Adam holds 2 + 2 + K = 12 bytes per parameter
(fp16 params, fp16 grads, fp32 params + momentum + variance) = 16; "a GPT-2 model with 1.5 Billion
parameters ... requires at least 24 GB". A checkpoint is that less the gradients: 14 bytes/param.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from accelstack.commands.cost import dataset_gb_of
from accelstack.planner import checkpoint as ck
from accelstack.planner import training_plan as tp
from accelstack.planner.defaults import DerivedDefault, derived_defaults
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file
from tests.planner.aws_inputs import AWS_CATALOG, aws_book

STACKS = Path(__file__).resolve().parents[2] / "stacks"
GIB = 2**30


def spec_of(stack: str, *overrides: str):
    return parse_spec(apply_overrides(read_stack_file(STACKS / f"Pulumi.{stack}.yaml"), list(overrides)), stack)


def training_of(stack: str, *overrides: str):
    return spec_of(stack, *overrides).training


def rows(stack: str, *overrides: str) -> dict[str, DerivedDefault]:
    return {d.path: d for d in derived_defaults(spec_of(stack, *overrides), catalog=AWS_CATALOG, prices=aws_book())}


def test_zero_model_states_are_16_bytes_per_param_and_a_checkpoint_drops_the_gradients():
    states = tp.MIXED_PRECISION_ADAM_BYTES_PER_PARAM
    assert sum(states.values()) == 16  # ZeRO s3.1: 2 + 2 + K, K = 12
    assert states["16-bit weights"] == states["16-bit gradients"] == 2
    assert states["fp32 master weights"] + states["Adam momentum (fp32)"] + states["Adam variance (fp32)"] == 12
    assert sum(states.values()) * 1.5e9 == 24e9  # the paper's GPT-2 1.5B example: "at least 24 GB"
    assert set(states) - set(tp.CHECKPOINTED_STATE) == {"16-bit gradients"}
    assert tp.CHECKPOINT_BYTES_PER_PARAM == 14 == ck.FULL_STATE_BYTES_PER_PARAM


def test_full_checkpoint_is_14_bytes_per_parameter_exactly():
    base = "training.model.method=full"
    preset = tp.checkpoint_state(training_of("aws-training", base), AWS_CATALOG)
    assert preset.bytes == 70.554e9 * 14 and not preset.assumed  # llama-3.1-70b safetensors total
    assert round(preset.bytes / GIB, 1) == 919.9
    given = tp.checkpoint_state(
        training_of("aws-training", "training.model={parametersBillion: 7}", "training.storage.datasets.sizeGiB=100"),
        AWS_CATALOG,
    )
    assert given.bytes == 98e9 and not given.assumed
    assert "7 B-parameter model full: 7 B params x 14 B/param" in given.basis


def test_lora_checkpoint_is_the_adapter_and_its_optimizer_state_only():
    # Llama-3.1-8B config.json: 32 layers, hidden 4096, 32 heads x 128, 8 KV heads, intermediate 14336.
    # Rank 16 on q, k, v, o, gate, up, down: r x (in + out) per projection per layer.
    per_layer = 16 * ((4096 + 4096) + 2 * (4096 + 1024) + (4096 + 4096) + 2 * (4096 + 14336) + (14336 + 4096))
    adapter_params = per_layer * 32
    assert adapter_params == 41_943_040
    state = tp.checkpoint_state(training_of("aws-finetune"), AWS_CATALOG)
    assert state.bytes == adapter_params * 14 and not state.assumed
    assert "41.9 M adapter params" in state.basis and "base weights not saved" in state.basis
    full = tp.checkpoint_state(training_of("aws-finetune", "training.model.method=full"), AWS_CATALOG)
    assert full.bytes == pytest.approx(8.030e9 * 14, rel=1e-12)  # exact up to float rounding
    assert state.bytes < full.bytes / 100  # the point of LoRA checkpoints: tiny
    rank64 = tp.checkpoint_state(training_of("aws-finetune", "training.model.loraRank=64"), AWS_CATALOG)
    assert rank64.bytes == 4 * state.bytes  # adapter size is linear in the rank


def test_stated_checkpoint_size_wins_over_the_estimate():
    state = tp.checkpoint_state(training_of("aws-training", "training.model.checkpointGiB=500"), AWS_CATALOG)
    assert state.bytes == 500 * GIB and state.basis == "training.model.checkpointGiB 500 GiB"


def test_unknown_preset_is_a_value_error_listing_the_names():
    training = training_of("aws-training").model_copy(
        update={"model": training_of("aws-training").model.model_copy(update={"preset": "gpt-5"})}
    )
    with pytest.raises(ValueError, match=r"allowed: .*llama-3\.1-70b"):
        tp.checkpoint_state(training, AWS_CATALOG)


def test_derived_defaults_are_exact_when_the_model_is_given():
    training = rows("aws-training")
    size = training["checkpoint size"]
    assert size.value == 919.92  # GiB: 70.554e9 x 14 B / 2^30 (987.8 GB), the unit Lustre sizes are in
    assert size.source.startswith("planner.training_plan: exact: llama-3.1-70b full: 70.554 B params x 14 B/param")
    assert "Rajbhandari et al. 2020 (ZeRO) s3.1" in size.source and "assumed" not in size.source
    lustre = training["training.storage.lustre"]
    assert lustre.ok and lustre.value == 842.9  # 987.756e9 B / (4800/1024 x 250 MB/s = 1171.9e6 B/s)
    assert "dataset 2000 GiB (training.storage.datasets.sizeGiB)" in lustre.source
    assert "holds the stated data + 20% headroom = 4607.8 GiB" in lustre.source
    assert "within the 900 s target (training.storage.checkpoints.writeTargetSeconds)" in lustre.source
    finetune = rows("aws-finetune")["checkpoint size"]
    assert finetune.value == 0.55 and finetune.source.startswith(
        "planner.training_plan: exact: llama-3.1-8b LoRA rank 16"
    )


def test_derived_defaults_say_what_is_assumed_without_a_model_or_dataset():
    training = rows("aws-training", "training.model=null", "training.storage.datasets.sizeGiB=null")
    size = training["checkpoint size"]
    assert size.value == 640.0  # 25% of 4 x 8 x 80 GiB
    assert size.source == (
        "planner.training_plan: assumed: 25% of cluster HBM (4 x 8 x 80 GiB H100); set training.model to make this exact"
    )
    lustre = training["training.storage.lustre"].source
    assert "dataset assumed 2720 GiB" in lustre and "set training.storage.datasets.sizeGiB to make this exact" in lustre
    assert "holds the stated data" not in lustre  # nothing stated, nothing to check the capacity against


def test_the_exported_interval_follows_the_model():
    # Daly's interval grows with the square root of the write time: a 70B checkpoint vs the 25% guess.
    exact = tp.plan_training(training_of("aws-training"), catalog=AWS_CATALOG, prices=aws_book())
    guess = tp.plan_training(training_of("aws-training", "training.model=null"), catalog=AWS_CATALOG, prices=aws_book())
    mtbf = ck.job_mtbf_hours(4) * 3600
    assert exact.interval_seconds == int(ck.daly_interval(70.554e9 * 14 / (4800 / 1024 * 250e6), mtbf)) == 97473
    assert guess.interval_seconds < exact.interval_seconds


def test_lustre_check_counts_only_checkpoints_kept_on_lustre():
    check = tp.plan_training(training_of("aws-training"), catalog=AWS_CATALOG, prices=aws_book()).lustre
    assert check is not None and check.retained_checkpoints == 2 and check.required_gib == 4607.8
    assert check.minimum_capacity_gib == 4800 and check.holds_data


def test_cost_takes_the_dataset_size_from_the_stack_file_unless_given():
    spec = spec_of("aws-training")
    assert dataset_gb_of(spec, None) == (2147.5, "training.storage.datasets.sizeGiB")  # 2000 GiB in GB
    assert dataset_gb_of(spec, 10.0) == (10.0, "--dataset-gb")
    unsized = spec_of("aws-training", "training.storage.datasets.sizeGiB=null")
    assert dataset_gb_of(unsized, None)[1].startswith("assumed")
