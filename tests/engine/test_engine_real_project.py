"""The real program on the example stack (skipped only until the AWS training components exist)."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelstack.engine.export import integrity_problems
from accelstack.engine.preview import preview_stack

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    not (REPO / "components" / "aws" / "training.py").exists(),
    reason="components/aws/training.py not written yet",
)


@pytest.fixture(scope="module")
def result():
    return preview_stack(REPO / "stacks" / "Pulumi.aws-training.yaml")


def test_export_is_importable(result):
    assert integrity_problems(result.export) == []
    resources = result.export["deployment"]["resources"]
    assert resources[0]["type"] == "pulumi:pulumi:Stack"
    assert all(r["urn"].startswith("urn:pulumi:aws-training::accelstack::") for r in resources)


def test_every_aws_resource_names_the_stack_provider(result):
    resources = result.export["deployment"]["resources"]
    providers = {f"{r['urn']}::{r['id']}" for r in resources if r["type"] == "pulumi:providers:aws"}
    assert len(providers) == 1
    managed = [r for r in resources if r["custom"] and r["type"].startswith("aws:")]
    assert managed, "the training stack registers AWS resources"
    missing = [r["urn"] for r in managed if r.get("provider") not in providers]
    assert missing == []
    # Resources of other packages (the munge key's randomness) use an explicit provider as well.
    all_providers = {f"{r['urn']}::{r['id']}" for r in resources if r["type"].startswith("pulumi:providers:")}
    custom = [r for r in resources if r["custom"] and not r["type"].startswith("pulumi:providers:")]
    assert [r["urn"] for r in custom if r.get("provider") not in all_providers] == []
