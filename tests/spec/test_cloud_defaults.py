"""The cloud's defaults filled into a stack before its models validate it (accelstack.spec.cloud_defaults): what
the user wrote in any shape reaches the models' own errors, never a traceback from the filling."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from accelstack.clouds import registry
from accelstack.examples import example_file
from accelstack.spec import SpecError, parse_spec
from accelstack.spec.loader import load_stack, read_stack_file
from accelstack.spec.models import AdmissionPolicy, HeadNode, LustreSpec, ServingStack, TrainingStack

STACKS = Path(__file__).resolve().parents[2] / "stacks"
AZURE = STACKS / "Pulumi.azure-training.yaml"


def test_a_throughput_chooses_its_tier_and_a_quoted_one_is_refused_at_its_path():
    spec = load_stack(AZURE, ['training.storage.lustre={"throughputPerTiB": 125, "importPath": "/corpus"}'])
    assert isinstance(spec, TrainingStack) and spec.training.storage.lustre is not None
    assert spec.training.storage.lustre.tier == "AMLFS-Durable-Premium-125"
    assert spec.training.storage.lustre.throughput_per_tib == 125
    with pytest.raises(SpecError) as raised:  # strict numbers: text is not the integer it spells
        load_stack(AZURE, ['training.storage.lustre={"throughputPerTiB": "125", "importPath": "/corpus"}'])
    assert any(
        p.path == "training.storage.lustre.throughputPerTiB" and "'125' is text (quoted)" in p.message
        for p in raised.value.problems
    ), raised.value.problems


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
    with pytest.raises(ValidationError, match="has no default"):
        AdmissionPolicy()
    assert AdmissionPolicy(maxReceiveCount=7).max_receive_count == 7


SERVING_DEFAULTS = {"aws": 3, "azure": 10, "gcp": 5}


@pytest.mark.parametrize(("cloud", "count"), sorted(SERVING_DEFAULTS.items()))
def test_an_omitted_delivery_count_is_the_clouds_own_default(cloud, count):
    """Friction 5 (GCP): one neutral default of 3 was outside Pub/Sub's 5..100, so omitting admission failed."""
    for override in ("serving.admission.maxReceiveCount=null", "serving.admission=null"):
        if override == "serving.admission=null":
            raw = read_stack_file(example_file(f"{cloud}-serving"))
            del raw["serving"]["admission"]  # the whole block omitted
            spec = parse_spec(raw, f"{cloud}-serving")
        else:
            spec = load_stack(example_file(f"{cloud}-serving"), [override])
        assert isinstance(spec, ServingStack)
        assert spec.serving.admission.max_receive_count == count
        limits = registry.get(cloud).catalog.admission
        assert limits is not None and limits.max_receive_count[0] <= count <= limits.max_receive_count[1]


def test_a_stated_delivery_count_outside_the_clouds_bound_is_still_refused():
    with pytest.raises(SpecError) as raised:
        load_stack(example_file("gcp-serving"), ["serving.admission.maxReceiveCount=3"])
    assert [str(p) for p in raised.value.problems] == [
        "serving.admission.maxReceiveCount: 3 deliveries; Pub/Sub on gcp takes 5..100 deliveries "
        "(from --set serving.admission.maxReceiveCount=3)"
    ]
    spec = load_stack(example_file("azure-serving"), ["serving.admission.maxReceiveCount=3"])
    assert isinstance(spec, ServingStack) and spec.serving.admission.max_receive_count == 3


def test_the_reference_says_each_clouds_delivery_count():
    text = (STACKS.parent / "docs" / "spec-reference.md").read_text()
    row = next(line for line in text.splitlines() if "maxReceiveCount" in line)
    assert "aws 3" in row and "azure 10" in row and "gcp 5" in row, row


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
