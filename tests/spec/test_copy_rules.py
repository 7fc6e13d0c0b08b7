"""The copy handoff's rules (accelstack.spec.copy_rules): each refusal at its config path, naming what is allowed;
and the pairs that read directly keep working unchanged."""

from __future__ import annotations

import pytest

from accelstack.spec.copies import artifact_copies
from accelstack.spec.loader import apply_overrides, parse_spec
from accelstack.spec.problems import SpecError
from tests.conformance.test_cross_cloud_copy import DESTINATIONS, SOURCES, copy_config


def problems(config: dict) -> str:
    with pytest.raises(SpecError) as raised:
        parse_spec(config)
    return " ".join(str(raised.value).split())


def edited(source: str, serving: str, *edits: str) -> dict:
    return apply_overrides(copy_config(source, serving), list(edits))


@pytest.mark.parametrize(
    ("serving", "uri", "said"),
    [
        ("gcp", "s3://acme-train-checkpoints/models/x/", "every serving cloud reads aws where it is"),
        ("vultr", "gs://acme-train-checkpoints/models/x/", "every serving cloud reads gcp where it is"),
        ("vultr", "s3://acme-models/models/x/", "vultr is this stack's own cloud"),  # s3:// is Vultr's own store there
    ],
)
def test_a_copy_from_a_store_the_replicas_read_directly_is_refused(serving, uri, said):
    text = problems(edited("oci", serving, f"serving.model.copyFrom={uri}"))
    assert "serving.model.copyFrom" in text and said in text
    assert "allowed: oci://<bucket>@<namespace>/<prefix>, https://<account>.blob.core.windows.net" in text


def test_a_copy_from_the_stacks_own_cloud_is_refused():
    config = edited("oci", "azure", f"serving.model.copyFrom={DESTINATIONS['azure']}")
    text = problems(config)
    assert "serving.model.copyFrom" in text and "azure is this stack's own cloud" in text


def test_the_destination_is_a_prefix_of_the_stacks_own_store():
    text = problems(edited("oci", "aws", "serving.model.weightsUri=gs://acme-serving-models/models/x/"))
    assert "serving.model.weightsUri" in text and "this stack's own aws store" in text and "allowed: s3://" in text
    text = problems(edited("oci", "aws", "serving.model.weightsUri=s3://acme-serving-models/"))
    assert "serving.model.weightsUri" in text and "names a whole bucket" in text


def test_the_source_is_a_prefix_too():
    text = problems(edited("oci", "gcp", "serving.model.copyFrom=oci://acme-train-checkpoints@acmetenancy/"))
    assert "serving.model.copyFrom" in text and "names a whole bucket" in text


def test_two_copies_never_write_the_same_prefix_or_one_inside_another():
    weights = DESTINATIONS["aws"]
    inside = weights + "adapters/acme/"
    adapter = f"{{name: acme, uri: {inside}, copyFrom: oci://acme-train-checkpoints@acmetenancy/models/adapters/acme/}}"
    text = problems(edited("oci", "aws", f"serving.model.adapters=[{adapter}]"))
    assert "serving.model.weightsUri" in text and "one inside the other" in text
    beside = "s3://acme-serving-models/adapters/acme/"
    adapter = f"{{name: acme, uri: {beside}, copyFrom: oci://acme-train-checkpoints@acmetenancy/models/adapters/acme/}}"
    spec = parse_spec(edited("oci", "aws", f"serving.model.adapters=[{adapter}]"))
    assert [c.name for c in artifact_copies(spec)] == ["weights", "adapter-acme"]
    assert artifact_copies(spec)[1].destination == beside


def test_adapters_are_copied_from_the_weights_cloud_or_read_from_the_own_store():
    other = "https://acmetrainckpts.blob.core.windows.net/checkpoints/adapters/acme/"
    adapter = f"{{name: acme, uri: s3://acme-serving-models/adapters/acme/, copyFrom: {other}}}"
    text = problems(edited("oci", "aws", f"serving.model.adapters=[{adapter}]"))
    assert "serving.model.adapters.0.copyFrom" in text and "from the weights' oci account" in text
    # Without copyFrom an adapter in the own store is read as it is (nothing crosses a cloud).
    own = "{name: acme, uri: s3://acme-serving-models/adapters/acme/}"
    assert [c.name for c in artifact_copies(parse_spec(edited("oci", "aws", f"serving.model.adapters=[{own}]")))] == [
        "weights"
    ]
    elsewhere = "{name: acme, uri: gs://acme-train-checkpoints/adapters/acme/}"
    text = problems(edited("oci", "aws", f"serving.model.adapters=[{elsewhere}]"))
    assert "serving.model.adapters.0.uri" in text and "this stack's own aws store" in text


def test_an_adapter_copy_needs_the_weights_copy():
    config = copy_config("oci", "aws")
    config["serving"]["model"].pop("copyFrom")
    config["serving"]["model"]["weightsUri"] = "s3://acme-serving-models/models/base/"
    config["serving"]["model"]["adapters"] = [
        {"name": "acme", "uri": "s3://acme-serving-models/adapters/acme/", "copyFrom": SOURCES["oci"][1]}
    ]
    text = problems(config)
    assert "serving.model.adapters.0.copyFrom" in text and "set serving.model.copyFrom too" in text


def test_the_artifact_account_is_the_sources_training_account():
    text = problems(edited("oci", "aws", 'serving.artifactAccount="azure:3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c"'))
    assert "serving.artifactAccount" in text and "name the oci training account" in text
    assert "allowed: oci:ocid1.compartment.oc1..aaaaaaaaacmetrain" in text


@pytest.mark.parametrize(
    ("edit", "path", "said"),
    [
        ("serving.artifactTenancy=null", "serving.artifactTenancy", "name the training tenancy's OCID"),
        ("serving.artifactRegion=null", "serving.artifactRegion", "name the bucket's region"),
        ("serving.artifactRegion=eastus", "serving.artifactRegion", "is not an OCI region"),
        ("serving.artifactUrlLifetimeMinutes=5000", "serving.artifactUrlLifetimeMinutes", "1440"),
    ],
)
def test_an_oci_source_needs_its_tenancy_region_and_a_bounded_lifetime(edit, path, said):
    text = problems(edited("oci", "gcp", edit))
    assert path in text and said in text


def test_the_oci_lifetime_sets_the_copys_par_lifetime():
    spec = parse_spec(edited("oci", "gcp", "serving.artifactUrlLifetimeMinutes=480"))
    assert artifact_copies(spec)[0].lifetime_minutes == 480


@pytest.mark.parametrize(
    "edit",
    [
        "serving.artifactRegion=eastus",
        f"serving.artifactTenancy={SOURCES['oci'][2][0].split('=', 1)[1]}",
        "serving.artifactUrlLifetimeMinutes=60",
    ],
)
def test_an_azure_source_takes_no_reader_keys(edit):
    path = edit.split("=", 1)[0]
    text = problems(edited("azure", "vultr", edit))
    assert path in text and "deployer's own Entra ID token" in text


def test_without_copy_from_the_refusal_says_how_to_copy():
    config = copy_config("oci", "gcp", copy=False)
    text = problems(config)
    assert "serving.model.weightsUri: a gcp stack cannot read oci artifacts without keys" in text
    assert "or copy them into this stack's own store: serving.model.copyFrom" in text
    assert "serving.artifactAccount" in text and "copy the weights into this stack's own store" in text


def test_a_vultr_copy_never_writes_where_the_weights_key_lies():
    """The Vultr destination is read with the read-only weights key (its object outside every synced prefix): a
    destination over the key's object would copy next to it, and sync it onto every replica."""
    text = problems(edited("azure", "vultr", "serving.model.weightsUri=s3://acme-models/keys/"))
    assert "account.weightsKey.object" in text and "lies under s3://acme-models/keys/" in text
    spec = parse_spec(copy_config("azure", "vultr"))
    assert spec.account.weights_key is not None  # kept: it signs the replicas' key URL and writes the copy
