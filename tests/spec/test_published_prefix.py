"""What a serving stack reads from its training account lies under the prefix the training stack publishes under
(serving.artifactPrefix, default models/, the training stack's training.artifactPrefix): validate refuses a location
outside it at its config path, on every pair (same cloud across accounts, across clouds, and a copy's sources), and a
stack that states its training stack's prefix validates and passes both packs (which let only that prefix cross)."""

from __future__ import annotations

import pytest

from accelstack.engine.policy_runner import policy_verdicts
from accelstack.engine.preview import preview_stack
from accelstack.spec.loader import apply_overrides, parse_spec
from accelstack.spec.problems import SpecError
from tests.conformance.test_cross_cloud_copy import copy_config
from tests.stack_edits import STACKS

REPO = STACKS.parent
SAME_CLOUD = ["serving.model.weightsUri=s3://acme-train-checkpoints/published/llama/", "serving.model.adapters=[]"]


def refusal(config: dict) -> str:
    with pytest.raises(SpecError) as raised:
        parse_spec(config)
    return " ".join(str(raised.value).split())


def test_weights_outside_the_published_prefix_are_refused_across_accounts():
    from accelstack.spec.loader import read_stack_file

    text = refusal(apply_overrides(read_stack_file(STACKS / "Pulumi.aws-serving.yaml"), SAME_CLOUD))
    assert "serving.model.weightsUri" in text and "outside 'models/'" in text and "serving.artifactPrefix" in text


def test_weights_on_another_cloud_outside_it_are_refused():
    config = apply_overrides(
        read_stack_file_of("gcp"),
        [
            'separation.trainingAccounts=["aws:111111111111"]',
            'serving.artifactAccount="aws:111111111111"',
            "serving.model.weightsUri=s3://acme-train/checkpoints/llama/",
            "serving.artifactRegion=us-east-1",
            "serving.model.adapters=[]",
        ],
    )
    assert "serving.model.weightsUri" in refusal(config)


def test_a_copied_adapter_outside_it_is_refused_at_its_copy_from():
    adapter = (
        "{name: acme, uri: gs://acme-serving-models/adapters/acme/, "
        "copyFrom: oci://acme-train-checkpoints@acmetenancy/adapters/acme/}"
    )
    text = refusal(apply_overrides(copy_config("oci", "gcp"), [f"serving.model.adapters=[{adapter}]"]))
    assert "serving.model.adapters.0.copyFrom" in text and "'adapters/acme/'" in text


def test_a_copy_destination_is_not_held_to_it():
    """The copy writes the serving side's own store: only its source is read from the training account."""
    edits = ["serving.model.weightsUri=gs://acme-serving-models/serving/llama/step-1/"]
    parse_spec(apply_overrides(copy_config("oci", "gcp"), edits))


def test_a_bad_published_prefix_is_refused_at_its_path():
    config = apply_overrides(read_stack_file_of("aws"), ["serving.artifactPrefix=../models/"])
    assert "serving.artifactPrefix" in refusal(config)


def test_the_training_stacks_prefix_stated_validates_and_passes_both_packs():
    result = preview_stack(STACKS / "Pulumi.aws-serving.yaml", [*SAME_CLOUD, "serving.artifactPrefix=published/"], REPO)
    assert policy_verdicts(result.export, result.spec) == []


def read_stack_file_of(cloud: str) -> dict:
    from accelstack.spec.loader import read_stack_file

    return read_stack_file(STACKS / f"Pulumi.{cloud}-serving.yaml")
