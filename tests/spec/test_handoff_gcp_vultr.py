"""Issue 31, train on Google Cloud and serve on Vultr: what `validate` accepts and refuses, each at its config path
naming the allowed values (accelstack.spec.handoff_rules, clouds/vultr/rules.py); and the pairs Vultr still cannot
read, refused saying why."""

from __future__ import annotations

import pytest

from accelstack.spec.handoff import artifact_handoff
from accelstack.spec.loader import parse_spec, read_stack_file
from accelstack.spec.problems import SpecError
from tests.conformance.test_cross_cloud_handoff import OCI_TENANCY, pair_config
from tests.stack_edits import STACKS


def problems(config: dict) -> str:
    with pytest.raises(SpecError) as raised:
        parse_spec(config)
    return str(raised.value)


def test_the_pair_resolves_the_bucket_prefix_and_a_token_lifetime_of_an_hour():
    handoff = artifact_handoff(parse_spec(pair_config("gcp", "vultr")))
    assert handoff is not None and (handoff.training_cloud, handoff.serving_cloud) == ("gcp", "vultr")
    assert (handoff.location.bucket, handoff.location.prefix) == ("acme-train-checkpoints", "models/llama-3.1-8b/")
    assert (handoff.training_account, handoff.region, handoff.url_lifetime_minutes) == ("acme-train", "", 60)
    config = pair_config("gcp", "vultr")
    config["serving"]["artifactUrlLifetimeMinutes"] = 20
    assert artifact_handoff(parse_spec(config)).url_lifetime_minutes == 20  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("edit", "path", "fragment"),
    [
        (
            {"artifactUrlLifetimeMinutes": 61},
            "serving.artifactUrlLifetimeMinutes",
            "iam.allowServiceAccountCredentialLifetimeExtension",
        ),
        ({"artifactUrlLifetimeMinutes": 120}, "serving.artifactUrlLifetimeMinutes", "allowed: 15..60"),
        ({"artifactUrlLifetimeMinutes": 5}, "serving.artifactUrlLifetimeMinutes", "15"),
        ({"artifactRegion": "us-central1"}, "serving.artifactRegion", "gcp's reader is global: remove artifactRegion"),
        ({"artifactTenancy": OCI_TENANCY}, "serving.artifactTenancy", "set only for weights on OCI"),
        ({"model": {"weightsUri": "gs://acme-train-checkpoints/"}}, "serving.model.weightsUri", "names a whole bucket"),
        ({"artifactAccount": "gcp:Not_A_Project"}, "serving.artifactAccount", "gcp: "),
    ],
)
def test_a_broken_pair_is_refused_at_its_key(edit, path, fragment):
    config = pair_config("gcp", "vultr")
    for key, value in edit.items():
        if key == "model":
            config["serving"]["model"].update(value)
        else:
            config["serving"][key] = value
    text = problems(config)
    assert path in text and fragment in text, text


def test_a_vultr_weights_key_with_gcs_weights_is_refused():
    config = pair_config("gcp", "vultr")
    config["account"]["weightsKey"] = read_stack_file(STACKS / "Pulumi.vultr-serving.yaml")["account"]["weightsKey"]
    text = problems(config)
    assert "account.weightsKey: the weights are on Google Cloud, read through a short-lived OAuth access token" in text


def test_the_lifetime_is_refused_where_no_replica_reads_with_its_own_credential():
    config = pair_config("gcp", "aws")
    config["serving"]["artifactUrlLifetimeMinutes"] = 30
    text = problems(config)
    assert "serving.artifactUrlLifetimeMinutes: set only where each replica reads with a short-lived credential" in text


def test_azure_weights_in_a_vultr_stack_are_refused_saying_why():
    account = "azure:3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c"
    config = pair_config("gcp", "vultr")
    config["separation"]["trainingAccounts"] = [account]
    config["serving"]["artifactAccount"] = account
    text = problems(config)
    assert f"separation.trainingAccounts.0: '{account}'" in text
    assert "(and aws: in a vultr stack, gcp: in a vultr stack, oci: in a vultr stack)" in text
    # Why, in the order that decides it: the checkpoint account's firewall refuses the deployer's and the replicas'
    # data-plane calls whatever signs them, and a flat namespace takes no prefix-wide SAS; then what to do instead.
    assert "the training checkpoint account admits an internet address only where the training stack lists it" in text
    assert "storage-network-security-limitations" in text, text
    assert "Get User Delegation Key and List Blobs calls and every Vultr replica's reads would be refused" in text
    assert "a directory SAS, sr=d, needs a hierarchical namespace" in text, text
    assert "copy them to a store a Vultr stack reads" in text, text


def test_azure_weights_in_a_vultr_stack_are_refused_by_validate_with_exit_2():
    """The refusal reaches `accelstack validate` as a config error (exit 2, no traceback) at the weights URI and the
    account references, naming the training clouds a Vultr stack reads."""
    from typer.testing import CliRunner

    from accelstack.cli import app
    from tests.conformance.test_cross_cloud_handoff import overrides

    sets = [word for override in overrides("azure", "vultr") for word in ("--set", override)]
    result = CliRunner().invoke(app, ["validate", str(STACKS / "Pulumi.vultr-serving.yaml"), *sets])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    text = " ".join(result.output.split())  # the terminal wraps long lines
    assert "serving.model.weightsUri: a vultr stack cannot read azure artifacts without keys (" in text, text
    assert "allowed training clouds for vultr: oci, gcp, aws" in text, text
    assert "serving.artifactAccount: 'azure:" in text and "admits an internet address only where" in text, text


def test_oci_weights_in_an_autoscaled_stack_are_refused_saying_why():
    from accelstack.spec.loader import apply_overrides
    from tests.conformance.test_cross_cloud_handoff import overrides

    config = apply_overrides(read_stack_file(STACKS / "Pulumi.gcp-serving.yaml"), overrides("oci")[:5])
    text = problems(config)
    assert "serving.model.weightsUri: a gcp stack cannot read oci artifacts without keys (" in text
    assert "would expire before an autoscaled gcp replica boots" in text
