"""Separation's `workload-tags`, one behaviour on every cloud (issue 29, friction 26): a resource of a kind whose
provider schema takes tags or labels fails without the workload tag, its own or its provider's default; before,
an untagged Azure or OCI resource (and a GCP one on an unlabelled provider) passed while AWS's failed.

Red-team style: an untagged user resource added to a shipped stack's own export on aws, azure, gcp and oci; the
same resource tagged with the stack's side draws no workload-tags verdict, and a kind that cannot carry a tag
is exempt."""

from __future__ import annotations

import copy
import json

import pytest
from red_team_edits import Doc, Edit, add, both
from red_team_suite import Change, verdicts_after

from accelstack.policies import vendors
from accelstack.policies.separation.taggable_kinds import TAG_PROPERTY, TAGGABLE

MISSING = "carries no accelstack:workload tag"
# (stack, a taggable kind, its inputs without any tag, the tag input the stack's side would carry)
UNTAGGED = {
    "azure-serving": (
        "azure-native:storage:StorageAccount",
        {"kind": "StorageV2", "sku": {"name": "Standard_LRS"}, "minimumTlsVersion": "TLS1_2"},
        {"tags": {"accelstack:workload": "serving"}},
    ),
    "oci-training": (
        "oci:ObjectStorage/bucket:Bucket",
        {"name": "scratch", "namespace": "acme", "accessType": "NoPublicAccess"},
        {"freeformTags": {"accelstack-workload": "training"}},
    ),
}


def on_an_unstamped_provider(stack_doc_provider_type: str) -> Edit:
    """A second provider of the stack's package with its default tags (aws) or labels (gcp) removed: what a user
    project's own provider block looks like."""

    def apply(doc: Doc) -> None:
        resources = doc["deployment"]["resources"]
        original = next(r for r in resources if r["type"] == stack_doc_provider_type)
        bare = copy.deepcopy(original)
        bare["urn"] = original["urn"].rsplit("::", 1)[0] + "::user-provider"
        bare["id"] = "user-provider-id"
        for side in ("inputs", "outputs"):
            for key in ("defaultTags", "defaultLabels"):
                bare.get(side, {}).pop(key, None)
        resources.append(bare)

    return apply


def using_the_bare_provider(name: str) -> Edit:
    def apply(doc: Doc) -> None:
        resources = doc["deployment"]["resources"]
        bare = next(r for r in resources if r["urn"].endswith("::user-provider"))
        target = next(r for r in resources if r["urn"].endswith(f"::{name}"))
        target["provider"] = f"{bare['urn']}::{bare['id']}"

    return apply


CASES = {
    "azure": Change(
        "azure-untagged", "azure-serving", add(UNTAGGED["azure-serving"][0], "user-store", UNTAGGED["azure-serving"][1])
    ),
    "oci": Change(
        "oci-untagged", "oci-training", add(UNTAGGED["oci-training"][0], "user-bucket", UNTAGGED["oci-training"][1])
    ),
    "gcp": Change(
        "gcp-unlabelled",
        "gcp-training",
        both(
            on_an_unstamped_provider("pulumi:providers:gcp"),
            add("gcp:storage/bucket:Bucket", "user-bucket", {"name": "acme-user-scratch", "location": "US-CENTRAL1"}),
            using_the_bare_provider("user-bucket"),
        ),
    ),
    "aws": Change(
        "aws-untagged",
        "aws-training",
        both(
            on_an_unstamped_provider("pulumi:providers:aws"),
            add("aws:s3/bucketV2:BucketV2", "user-bucket", {"bucket": "acme-user-scratch"}),
            using_the_bare_provider("user-bucket"),
        ),
    ),
}


def tag_verdicts(change: Change, name: str) -> list[str]:
    return [
        v.line()
        for v in verdicts_after(change)
        if v.policy == "workload-tags" and (v.urn.endswith(f"::{name}") or name in v.message)
    ]


@pytest.mark.parametrize("cloud", sorted(CASES))
def test_an_untagged_user_resource_fails_on_every_cloud(cloud: str) -> None:
    change = CASES[cloud]
    name = "user-store" if cloud == "azure" else "user-bucket"
    found = tag_verdicts(change, name)
    assert any(MISSING in line and "[mandatory]" in line for line in found), found


@pytest.mark.parametrize("stack", sorted(UNTAGGED))
def test_the_same_resource_tagged_with_its_side_passes(stack: str) -> None:
    kind, inputs, tag = UNTAGGED[stack]
    change = Change(f"{stack}-tagged", stack, add(kind, "user-thing", {**inputs, **tag}))
    assert tag_verdicts(change, "user-thing") == []


def test_a_kind_that_cannot_carry_a_tag_is_exempt() -> None:
    kind = "azure-native:network:Subnet"
    assert kind not in TAGGABLE["azure-native"]
    change = Change("azure-subnet", "azure-serving", add(kind, "user-subnet", {"addressPrefix": "10.30.250.0/24"}))
    assert [line for line in tag_verdicts(change, "user-subnet") if MISSING in line] == []


def test_the_taggable_table_is_what_the_sdks_say() -> None:
    """Every kind the packs know, taggable exactly when its installed SDK's Args class has the tag input."""
    from accelstack.policies import schema

    derived: dict[str, set[str]] = {}
    for vendor in vendors.VENDORS:
        for tokens in vendor.concepts.values():
            for token in tokens:
                package = token.split(":")[0]
                if TAG_PROPERTY[package] in schema.properties(schema.current_token(token)):
                    derived.setdefault(package, set()).add(token)
    assert {p: sorted(t) for p, t in TAGGABLE.items()} == {p: sorted(t) for p, t in derived.items()}, json.dumps(
        {p: sorted(set(t) ^ set(TAGGABLE.get(p, ()))) for p, t in derived.items()}
    )
