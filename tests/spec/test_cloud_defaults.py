"""The cloud's defaults filled into a stack before its models validate it (accelstack.spec.cloud_defaults): what
the user wrote in any shape reaches the models' own errors, never a traceback from the filling."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from accelstack.clouds import registry
from accelstack.spec import SpecError
from accelstack.spec.loader import load_stack
from accelstack.spec.models import HeadNode, LustreSpec, TrainingStack

STACKS = Path(__file__).resolve().parents[2] / "stacks"
AZURE = STACKS / "Pulumi.azure-training.yaml"


def test_a_quoted_throughput_chooses_its_tier_as_the_model_reads_it():
    spec = load_stack(AZURE, ['training.storage.lustre={"throughputPerTiB": "125", "importPath": "/corpus"}'])
    assert isinstance(spec, TrainingStack) and spec.training.storage.lustre is not None
    assert spec.training.storage.lustre.tier == "AMLFS-Durable-Premium-125"
    assert spec.training.storage.lustre.throughput_per_tib == 125


@pytest.mark.parametrize(
    ("override", "path"),
    [
        ('training.storage.lustre="abc"', "training.storage.lustre"),
        ("training.storage.lustre=[]", "training.storage.lustre"),
        ("training.storage.checkpoints=5", "training.storage.checkpoints"),
        ('training.scheduler="x"', "training.scheduler"),
        ("training.scheduler.headNode=[]", "training.scheduler.headNode"),
        ("training.storage.lustre.throughputPerTiB=true", "training.storage.lustre.throughputPerTiB"),
        ('training.storage.lustre.throughputPerTiB="1234567890123"', "training.storage.lustre.throughputPerTiB"),
        ("training.storage.lustre.mountPath=5", "training.storage.lustre.mountPath"),
        ("training.storage.lustre.mountPath=relative/path", "training.storage.lustre.mountPath"),
    ],
)
def test_any_shape_of_a_filled_block_gets_the_models_error_at_its_path(override, path):
    with pytest.raises(SpecError) as raised:
        load_stack(AZURE, [override])
    assert path in {problem.path for problem in raised.value.problems}, raised.value.problems


def test_a_block_validated_outside_a_stack_must_state_what_the_cloud_would_fill():
    """No cloud, no default: the block says so instead of carrying None where the type says text."""
    with pytest.raises(ValidationError, match="has no default"):
        LustreSpec()
    with pytest.raises(ValidationError, match="has no default"):
        HeadNode()
    assert LustreSpec(mountPath="/lustre").mount_path == "/lustre"


@pytest.mark.parametrize("cloud", [c for c in registry.names() if (STACKS / f"Pulumi.{c}-training.yaml").exists()])
def test_a_stated_value_is_kept_whatever_the_cloud_default(cloud):
    spec = load_stack(
        STACKS / f"Pulumi.{cloud}-training.yaml",
        ["training.storage.lustre.mountPath=/mnt/shared", "training.storage.checkpoints.path=/mnt/shared/ckpt"],
    )
    assert isinstance(spec, TrainingStack) and spec.training.storage.lustre is not None
    assert spec.training.storage.lustre.mount_path == "/mnt/shared"
    assert spec.training.storage.checkpoints is not None
    assert spec.training.storage.checkpoints.path == "/mnt/shared/ckpt"
