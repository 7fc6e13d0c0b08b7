"""Issue 31, train on AWS and serve on Vultr: what `validate` accepts and refuses, each at its config path naming the
allowed values (accelstack.spec.handoff_rules): the weights by their S3 URL (s3:// is Vultr's own store in a Vultr
stack), the deploying principal the reader role trusts, and the session lifetime role chaining allows."""

from __future__ import annotations

import pytest

from accelstack.spec.handoff import artifact_handoff
from accelstack.spec.loader import parse_spec
from accelstack.spec.problems import SpecError
from tests.conformance.test_cross_cloud_handoff import DEPLOYER, pair_config


def problems(config: dict) -> str:
    with pytest.raises(SpecError) as raised:
        parse_spec(config)
    return str(raised.value)


def test_the_pair_resolves_the_bucket_prefix_region_deployer_and_an_hour():
    handoff = artifact_handoff(parse_spec(pair_config("aws", "vultr")))
    assert handoff is not None and (handoff.training_cloud, handoff.serving_cloud) == ("aws", "vultr")
    assert (handoff.location.bucket, handoff.location.prefix) == ("acme-train-checkpoints", "models/llama-3.1-8b/")
    assert (handoff.training_account, handoff.region, handoff.url_lifetime_minutes) == ("111111111111", "us-east-1", 60)
    assert handoff.deployer == DEPLOYER


@pytest.mark.parametrize(
    ("edit", "path", "fragment"),
    [
        ({"artifactUrlLifetimeMinutes": 90}, "serving.artifactUrlLifetimeMinutes", "iam-term-role-chaining"),
        ({"artifactUrlLifetimeMinutes": 90}, "serving.artifactUrlLifetimeMinutes", "allowed: 15..60"),
        ({"artifactDeployer": None}, "serving.artifactDeployer", "name the IAM role or user the deploy runs as"),
        (
            {"artifactDeployer": "arn:aws:sts::111111111111:assumed-role/AWSReservedSSO_AcmeDeploy_0123abcd/alice"},
            "serving.artifactDeployer",
            "is an assumed-role session (what get-caller-identity prints), not a principal a trust names: name its "
            "role, arn:aws:iam::111111111111:role/<path/>AWSReservedSSO_AcmeDeploy_0123abcd",
        ),
        ({"artifactDeployer": "arn:aws:iam::111111111111:role/*"}, "serving.artifactDeployer", "not an IAM principal"),
        ({"artifactDeployer": "deployer"}, "serving.artifactDeployer", "allowed: arn:aws:iam::<account>:role/"),
        ({"artifactRegion": None}, "serving.artifactRegion", "an AWS Region, e.g. us-east-1"),
        ({"artifactRegion": "eu-west-1"}, "serving.artifactRegion", "the weights' S3 URL is in us-east-1"),
        (
            {"model": {"weightsUri": "s3://acme-train-checkpoints/models/llama-3.1-8b/"}},
            "serving.model.weightsUri",
            "is vultr's own object storage here (its store speaks S3); weights in AWS (aws:111111111111) are named by "
            "their S3 URL; allowed: https://<bucket>.s3.<region>.amazonaws.com/<prefix>",
        ),
    ],
)
def test_a_broken_pair_is_refused_at_its_key(edit, path, fragment):
    config = pair_config("aws", "vultr")
    for key, value in edit.items():
        if key == "model":
            config["serving"]["model"].update(value)
        else:
            config["serving"][key] = value
    text = problems(config)
    assert path in text and fragment in text, text


def test_a_user_deployer_and_a_plain_role_are_accepted():
    for deployer in ("arn:aws:iam::222222222222:user/ci/deployer", "arn:aws:iam::111111111111:role/accelstack-deploy"):
        config = pair_config("aws", "vultr")
        config["serving"]["artifactDeployer"] = deployer
        assert artifact_handoff(parse_spec(config)).deployer == deployer  # type: ignore[union-attr]


def test_the_deployer_is_refused_for_any_other_pair():
    config = pair_config("aws", "gcp")
    config["serving"]["artifactDeployer"] = DEPLOYER
    assert "serving.artifactDeployer: set only for weights on AWS read by a Vultr stack; remove it" in problems(config)
