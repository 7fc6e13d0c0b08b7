"""Issue 31's headline pair, train on OCI and serve on Vultr: what `validate` accepts and what it refuses, each at
its config path naming the allowed values (accelstack.spec.handoff_rules, clouds/vultr/rules.py)."""

from __future__ import annotations

import pytest

from accelstack.spec.handoff import artifact_handoff
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file
from accelstack.spec.problems import SpecError
from tests.conformance.test_cross_cloud_handoff import OCI_TENANCY, overrides, pair_config
from tests.stack_edits import STACKS


def problems(config: dict) -> str:
    with pytest.raises(SpecError) as raised:
        parse_spec(config)
    return str(raised.value)


def test_the_pair_resolves_the_bucket_namespace_prefix_tenancy_and_lifetime():
    handoff = artifact_handoff(parse_spec(pair_config("oci", "vultr")))
    assert handoff is not None
    assert (handoff.location.bucket, handoff.location.namespace, handoff.location.prefix) == (
        "acme-train-checkpoints",
        "acmetenancy",
        "models/llama-3.1-8b/",
    )
    assert (handoff.tenancy, handoff.region, handoff.url_lifetime_minutes) == (OCI_TENANCY, "us-ashburn-1", 120)
    config = pair_config("oci", "vultr")
    config["serving"]["artifactUrlLifetimeMinutes"] = 30
    assert artifact_handoff(parse_spec(config)).url_lifetime_minutes == 30  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("edit", "path", "fragment"),
    [
        (
            {"model": {"weightsUri": "oci://acme-train-checkpoints/models/llama-3.1-8b/"}},
            "serving.model.weightsUri",
            "names no Object Storage namespace (the tenancy's, `oci os ns get`); allowed: "
            "oci://<bucket>@<namespace>/<prefix>",
        ),
        (
            {"model": {"weightsUri": "oci://acme-train-checkpoints@acmetenancy/"}},
            "serving.model.weightsUri",
            "names a whole bucket; point at the artifact prefix",
        ),
        ({"artifactTenancy": None}, "serving.artifactTenancy", "name the training tenancy's OCID"),
        (
            {"artifactTenancy": "ocid1.compartment.oc1..aaaaaaaaacmetrain"},
            "serving.artifactTenancy",
            "ocid1.tenancy.<realm>..<unique id>",
        ),
        ({"artifactRegion": None}, "serving.artifactRegion", "an OCI region identifier, e.g. us-ashburn-1"),
        ({"artifactRegion": "ewr"}, "serving.artifactRegion", "'ewr' is not an OCI region; allowed: us-ashburn-1"),
        ({"artifactUrlLifetimeMinutes": 2000}, "serving.artifactUrlLifetimeMinutes", "1440"),
        ({"artifactAccount": "env:VULTR_TRAINING_API_KEY"}, "serving.artifactAccount", "the weights are on oci"),
    ],
)
def test_a_broken_pair_is_refused_at_its_key(edit, path, fragment):
    config = pair_config("oci", "vultr")
    for key, value in edit.items():
        if key == "model":
            config["serving"]["model"].update(value)
        else:
            config["serving"][key] = value
    text = problems(config)
    assert path in text and fragment in text, text


def test_a_vultr_weights_key_with_oci_weights_is_refused():
    config = pair_config("oci", "vultr")
    shipped = read_stack_file(STACKS / "Pulumi.vultr-serving.yaml")["account"]["weightsKey"]
    config["account"]["weightsKey"] = shipped
    text = problems(config)
    assert "account.weightsKey" in text and "the weights are on OCI" in text and "remove it" in text


def test_oci_weights_from_a_cloud_without_a_reader_name_the_supported_ones():
    """AWS, Azure and GCP replicas do not read OCI (no reader pair): said at the weights URI, naming what they read."""
    config = apply_overrides(read_stack_file(STACKS / "Pulumi.aws-serving.yaml"), overrides("oci")[:5])
    text = problems(config)
    # The refusal says why since issue 31's second pair (REFUSED_BECAUSE), between the refusal and the allowed list.
    assert "serving.model.weightsUri: a aws stack cannot read oci artifacts without keys (" in text
    assert "minted at deploy time would expire before an autoscaled aws replica boots); allowed training" in text
    assert "for aws: gcp, azure" in text


def test_a_vultr_stack_names_only_oci_accounts_of_another_cloud():
    config = pair_config("oci", "vultr")
    config["separation"]["trainingAccounts"].append("azure:3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c")  # aws: reads now
    text = problems(config)
    assert (
        "separation.trainingAccounts.1: 'azure:3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c': accounts of another cloud are named between aws:, azure:, "
        "gcp: stacks only (and aws: in a vultr stack, gcp: in a vultr stack, oci: in a vultr stack)"  # issue 31's pairs
    ) in text


def test_oci_only_keys_are_refused_elsewhere():
    config = pair_config("aws", "gcp")
    config["serving"]["artifactTenancy"] = OCI_TENANCY
    config["serving"]["artifactUrlLifetimeMinutes"] = 60
    text = problems(config)
    assert "serving.artifactTenancy: set only for weights on OCI" in text
    # Since GCP -> Vultr the lifetime is also a Cloud Storage token's: the message names both pairs.
    assert "serving.artifactUrlLifetimeMinutes: set only where each replica reads with a short-lived credential" in text
