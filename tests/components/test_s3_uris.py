"""One split of `s3://bucket/prefix` for the spec rules, the training storage and the serving grant."""

from __future__ import annotations

import pytest

from accelstack.components.aws.serving.identity import model_read_policy
from accelstack.components.aws.storage import parse_s3_uri
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file
from accelstack.spec.uris import split_bucket_uri
from accelstack.spec.validators import bucket_of
from tests.spec.spec_helpers import ROOT, all_problems


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("s3://bucket", ("bucket", "")),
        ("s3://bucket/", ("bucket", "")),
        ("s3://bucket/models/x/", ("bucket", "models/x/")),
        # '?' and '#' are key characters to S3 and the AWS CLI, not a query or a fragment.
        ("s3://bucket/models/a#b?c", ("bucket", "models/a#b?c")),
        ("s3://bucket?x/models/", ("bucket?x", "models/")),
    ],
)
def test_split_keeps_the_prefix_as_written(uri: str, expected: tuple[str, str]) -> None:
    assert split_bucket_uri(uri) == expected
    assert bucket_of(uri) == expected[0]


def test_training_storage_strips_the_prefix_slashes_the_serving_grant_keeps_them() -> None:
    assert parse_s3_uri("s3://bucket/models/x/", "p") == ("bucket", "models/x")
    raw = read_stack_file(ROOT / "stacks" / "Pulumi.aws-serving.yaml")
    serving = parse_spec(
        apply_overrides(
            raw,
            [
                "serving.model.weightsUri=s3://acme-models/base/llama-3/",
                "serving.model.adapters=[]",
                "serving.artifactPrefix=base/",  # the training stack publishes under base/
            ],
        ),
        "aws-serving",
    ).serving
    [grant] = [
        s for s in model_read_policy(serving, "222222222222", "aws")["Statement"] if s["Sid"] == "ReadModelArtifacts"
    ]
    # The trailing "/" keeps the grant off sibling prefixes (llama-3-70b/).
    assert grant["Resource"] == ["arn:aws:s3:::acme-models/base/llama-3/*"]


def test_a_query_like_bucket_is_refused_by_the_spec_naming_the_config_path() -> None:
    raw = read_stack_file(ROOT / "stacks" / "Pulumi.aws-serving.yaml")
    problems = all_problems(apply_overrides(raw, ["serving.model.weightsUri=s3://acme-models?x/base/"]))
    # The URI grammar refuses it before the bucket-name rule reads it (a `?` is no S3 key or bucket character).
    assert [p.message for p in problems if p.path == "serving.model.weightsUri"] == [
        "'s3://acme-models?x/base/' is not a URI; write scheme://bucket[/prefix], e.g. s3://acme-models-x-base/"
    ]
