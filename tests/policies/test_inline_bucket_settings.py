"""A bucket's inline S3 settings (the deprecated spellings: Bucket's singular blocks, BucketV2's lists) meet the rules
of the split resources of the same meaning (policies/aws/inline_buckets.py): encryption, versioning, server access
logging and lifecycle expiry. Each risk is spelled on the shipped bucket (`aws:s3/bucket:Bucket`) and on a BucketV2;
legitimate inline settings draw nothing."""

from __future__ import annotations

from typing import Any

import pytest
from test_guardrails_no_rule import (
    AWS_TRAINING,
    BUCKET,
    Case,
    _verdicts,
    adding,
    both,
    changes,
    drop,
    edit,
    put,
)

CHECKPOINTS = ("aws-training-storage-checkpoints", BUCKET)
DATASETS = ("aws-training-storage-datasets", BUCKET)
CHECKPOINTS_SSE = (
    "aws-training-storage-checkpoints-encryption",
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
)
CHECKPOINTS_VERSIONING = ("aws-training-storage-checkpoints-versioning", "aws:s3/bucketVersioning:BucketVersioning")
DATASETS_LOGGING = ("aws-training-storage-datasets-access-logging", "aws:s3/bucketLogging:BucketLogging")
BUCKET_V2 = "aws:s3/bucketV2:BucketV2"
KEY = "arn:aws:kms:us-east-1:111111111111:key/0f0f0f0f-0000-4000-8000-00000000000f"


def _sse(algorithm: str, key: str | None = None) -> dict[str, Any]:
    default = {"sseAlgorithm": algorithm, **({"kmsMasterKeyId": key} if key else {})}
    return {"rule": {"applyServerSideEncryptionByDefault": default}}


def _v2_bucket(name: str, **inline: Any) -> Any:
    """A data bucket spelled as BucketV2, with its settings inline (the verdict must name it)."""
    return adding(AWS_TRAINING, BUCKET_V2, name, {"bucket": name, **inline})


CAUGHT = [
    Case(
        "inline-sse-s3-on-checkpoints",
        AWS_TRAINING,
        both(
            drop(CHECKPOINTS_SSE, named=CHECKPOINTS),
            edit(CHECKPOINTS, put(_sse("AES256"), "serverSideEncryptionConfiguration")),
        ),
        "bucket-encryption",
    ),
    Case(
        "inline-sse-without-algorithm",
        AWS_TRAINING,
        edit(CHECKPOINTS, put({"rule": {"bucketKeyEnabled": True}}, "serverSideEncryptionConfiguration")),
        "encryption-at-rest",
    ),
    Case(
        "inline-sse-managed-key",
        AWS_TRAINING,
        both(
            drop(CHECKPOINTS_SSE, named=CHECKPOINTS),
            edit(CHECKPOINTS, put(_sse("aws:kms"), "serverSideEncryptionConfiguration")),
        ),
        "bucket-encryption",
    ),
    Case(
        "v2-sse-s3-on-checkpoints",
        AWS_TRAINING,
        _v2_bucket(
            "acme-checkpoints-v2",
            serverSideEncryptionConfigurations=[
                {"rules": [{"applyServerSideEncryptionByDefaults": [{"sseAlgorithm": "AES256"}]}]}
            ],
        ),
        "bucket-encryption",
    ),
    Case(
        "v2-sse-without-algorithm",
        AWS_TRAINING,
        _v2_bucket(
            "acme-checkpoints-v2b", serverSideEncryptionConfigurations=[{"rules": [{"bucketKeyEnabled": True}]}]
        ),
        "encryption-at-rest",
    ),
    Case(
        "inline-versioning-off-on-checkpoints",
        AWS_TRAINING,
        both(
            drop(CHECKPOINTS_VERSIONING, named=CHECKPOINTS),
            edit(CHECKPOINTS, put({"enabled": False}, "versioning")),
        ),
        "bucket-versioning",
    ),
    Case(
        "v2-versionings-off-on-checkpoints",
        AWS_TRAINING,
        _v2_bucket("acme-checkpoints-v2c", versionings=[{"enabled": False}]),
        "bucket-versioning",
    ),
    Case(
        "inline-lifecycle-expires-checkpoints",
        AWS_TRAINING,
        edit(CHECKPOINTS, put([{"id": "purge", "enabled": True, "expiration": {"days": 30}}], "lifecycleRules")),
        "no-scheduled-data-loss",
    ),
    Case(
        "v2-lifecycle-expires-by-date",
        AWS_TRAINING,
        _v2_bucket(
            "acme-checkpoints-v2d",
            lifecycleRules=[{"id": "purge", "enabled": True, "expirations": [{"date": "2027-01-01"}]}],
        ),
        "no-scheduled-data-loss",
    ),
    Case(
        "inline-logging-into-itself",
        AWS_TRAINING,
        both(
            drop(DATASETS_LOGGING, named=DATASETS),
            edit(DATASETS, changes(lambda p: p.update(logging={"targetBucket": p["bucket"], "targetPrefix": "x/"}))),
        ),
        "bucket-access-logging",
    ),
    Case("v2-data-bucket-unlogged", AWS_TRAINING, _v2_bucket("acme-datasets-v2"), "bucket-access-logging"),
]

LEGITIMATE = [
    Case(
        "inline-sse-with-the-stacks-key",
        AWS_TRAINING,
        edit(CHECKPOINTS, put(_sse("aws:kms", KEY), "serverSideEncryptionConfiguration")),
    ),
    Case("inline-versioning-on", AWS_TRAINING, edit(CHECKPOINTS, put({"enabled": True}, "versioning"))),
    Case(
        "inline-lifecycle-noncurrent-only",
        AWS_TRAINING,
        edit(
            CHECKPOINTS,
            put([{"id": "old", "enabled": True, "noncurrentVersionExpiration": {"days": 30}}], "lifecycleRules"),
        ),
    ),
    Case(
        "inline-lifecycle-rule-disabled",
        AWS_TRAINING,
        edit(CHECKPOINTS, put([{"id": "off", "enabled": False, "expiration": {"days": 30}}], "lifecycleRules")),
    ),
]


@pytest.mark.parametrize("case", CAUGHT, ids=lambda c: c.id)
def test_each_inline_spelling_meets_its_split_twins_rule(case: Case) -> None:
    urn, verdicts = _verdicts(case)
    got = "\n    ".join(v.line() for v in verdicts) or "(no verdict)"
    assert any(v.mandatory and v.urn == urn and v.policy == case.policy for v in verdicts), (
        f"{case.id}: expected mandatory {case.policy} on {urn}; got\n    {got}"
    )


@pytest.mark.parametrize("case", LEGITIMATE, ids=lambda c: c.id)
def test_legitimate_inline_settings_draw_no_verdict(case: Case) -> None:
    _, verdicts = _verdicts(case)
    assert [v.line() for v in verdicts] == []
