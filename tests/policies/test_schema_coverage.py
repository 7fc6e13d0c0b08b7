"""Schema-complete readers (issue 28, item 2): every input property of the installed provider SDKs' Args classes,
for every kind of a security concept (policies/schema.py), is judged by a named rule of the packs, declared inert
with a reason, or listed as unjudged with why it matters (policies/<vendor>/properties*.py).

A provider upgrade that adds a property fails here until someone classifies it; a property the SDK dropped, or a
rule name the packs do not have, fails too. A judged claim must be true: a trace of both packs (the recording
proxy of accelstack/engine/schema_report.py) over the example stacks and a probe resource of each kind must see the named
rule read the property. `python -m accelstack.engine.schema_report` prints the same findings.
"""

from __future__ import annotations

import pytest

from accelstack.engine import schema_report
from accelstack.policies import schema

PACKAGES = sorted(schema.SDK_MODULES)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_sdk_property_of_a_guarded_kind_is_classified(package: str) -> None:
    found = schema.problems(package)
    kinds = schema.security_kinds(package)
    open_ = schema.unjudged(package)
    judged = schema.classified(package)
    count = sum(len(v) for k, v in open_.items() if k in kinds)
    rules = sum(1 for k in kinds for v in judged.get(k, {}).values() if schema.rules_of(v))
    total = sum(len(schema.properties(k)) for k in kinds)
    print(f"\n{package}: {len(kinds)} kinds, {total} properties: {rules} judged, {count} unjudged")
    assert len(kinds) >= (8 if package == "vultr" else 15)  # Vultr has no IAM kinds, nor queues or keys
    assert found.unlisted_kinds == ()
    assert dict(found.unclassified) == {}, "classify these in policies/<vendor>/properties*.py"
    assert dict(found.stale) == {}, "the installed SDK no longer has these properties"
    assert dict(found.unknown_rules) == {}, "no policy of the packs has this name"
    assert dict(found.both) == {}


# The inputs issue 28 item 2 left open last: a Vultr node's boot by reference and an OCI VPN's routes.
LAST_UNJUDGED = {
    "vultr:index/instance:Instance": ("scriptId", "appVariables"),
    "vultr:index/bareMetalServer:BareMetalServer": ("scriptId", "appVariables"),
    "oci:Core/ipsec:Ipsec": ("staticRoutes",),
}


def test_nothing_of_vultr_or_the_network_links_stays_unjudged() -> None:
    """Vultr's guarded kinds and OCI's VPN leave no input unjudged; the last ones name rules (whose reads the trace
    test below confirms), not an inert reason."""
    assert schema.unjudged("vultr") == {}
    assert "oci:Core/ipsec:Ipsec" not in schema.unjudged("oci")
    for kind, wires in LAST_UNJUDGED.items():
        table = schema.classified(kind.split(":")[0])[kind]
        for wire in wires:
            assert schema.rules_of(table[wire]), f"{kind} {wire}: {table[wire]}"
    # The startup script a node names is a guarded kind of its own, its body judged like userData.
    assert "vultr:index/startupScript:StartupScript" in schema.security_kinds("vultr")


def test_a_new_sdk_property_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a provider upgrade looks like: the Args class gains an input nobody classified."""
    kind = "aws:s3/bucket:Bucket"
    grown = dict(schema.properties(kind)) | {
        "newPublicSwitch": schema.Prop("newPublicSwitch", "new_public_switch", "bool")
    }
    original = schema.properties
    monkeypatch.setattr(schema, "properties", lambda token: grown if token == kind else original(token))
    found = schema.problems("aws")
    assert found.unclassified == {kind: ("newPublicSwitch",)}


def test_vultr_kinds_are_read_from_ediri_vultr_and_a_new_property_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """Vultr's guarded kinds come from the `ediri-vultr` SDK (one Python module per kind under `vultr:index/...`);
    an input it adds to the replica's kind fails until classified."""
    kinds = schema.security_kinds("vultr")
    assert {"vultr:index/instance:Instance", "vultr:index/firewallRule:FirewallRule"} <= set(kinds)
    instance = schema.properties("vultr:index/instance:Instance")
    assert {"firewallGroupId", "userData", "enableIpv6"} <= set(instance)
    kind = "vultr:index/instance:Instance"
    grown = dict(instance) | {
        "publicFirewallBypass": schema.Prop("publicFirewallBypass", "public_firewall_bypass", "bool")
    }
    original = schema.properties
    monkeypatch.setattr(schema, "properties", lambda token: grown if token == kind else original(token))
    assert schema.problems("vultr").unclassified == {kind: ("publicFirewallBypass",)}


def test_a_dropped_property_and_an_unknown_rule_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    from accelstack.policies.aws import properties

    kind = "aws:sqs/queue:Queue"
    changed = dict(properties.PROPERTIES) | {kind: dict(properties.PROPERTIES[kind]) | {"gone": "queue-dlq"}}
    changed[kind]["policy"] = "no-such-rule"
    monkeypatch.setattr(properties, "PROPERTIES", changed)
    found = schema.problems("aws")
    assert found.stale[kind] == ("gone",)
    assert "policy: no-such-rule" in found.unknown_rules[kind]


def test_the_sdk_reading_finds_deprecated_spellings_and_enums() -> None:
    """The inline S3 spellings (deprecated beside their split resources) are inputs of the Bucket like any other;
    the enum of a canned ACL comes from the SDK's enum class."""
    bucket = schema.properties("aws:s3/bucket:Bucket")
    assert {"policy", "replicationConfiguration", "serverSideEncryptionConfiguration", "versioning", "logging"} <= set(
        bucket
    )
    assert bucket["acl"].shape == "enum" and "public-read" in bucket["acl"].choices
    assert (
        schema.properties("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")[
            "rules"
        ].shape
        == "list-of-objects"
    )
    assert schema.properties("azure-native:storage:StorageAccount")["allowBlobPublicAccess"].shape == "bool"


def test_every_judged_claim_is_a_read_the_packs_make() -> None:
    """Honesty: each property classified under a rule is read by that rule (traced over the example stacks and one
    probe resource per kind with every input set)."""
    reads, _, crashed = schema_report.trace(schema_report.example_previews(), all_tokens=False)
    assert crashed == []
    untraced = [line for package in PACKAGES for line in schema_report.untraced_claims(package, reads)]
    assert untraced == []
    newly_read = [line for package in PACKAGES for line in schema_report.read_but_not_judged(package, reads)]
    print(f"\nproperties now read but classified inert/unjudged: {len(newly_read)}")
    for line in newly_read:
        print("  " + line)


BUCKET, BUCKET_V2 = "aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"
# Deprecated inline spellings of S3 settings -> the split resource's property of the same meaning.
DEPRECATED_TWINS: dict[tuple[str, str], tuple[str, str]] = {
    (BUCKET, "policy"): ("aws:s3/bucketPolicy:BucketPolicy", "policy"),
    (BUCKET_V2, "policy"): ("aws:s3/bucketPolicy:BucketPolicy", "policy"),
    (BUCKET, "acl"): ("aws:s3/bucketAcl:BucketAcl", "acl"),
    (BUCKET_V2, "acl"): ("aws:s3/bucketAcl:BucketAcl", "acl"),
    (BUCKET, "serverSideEncryptionConfiguration"): (
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        "rules",
    ),
    (BUCKET_V2, "serverSideEncryptionConfigurations"): (
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        "rules",
    ),
    (BUCKET, "versioning"): ("aws:s3/bucketVersioning:BucketVersioning", "versioningConfiguration"),
    (BUCKET_V2, "versionings"): ("aws:s3/bucketVersioning:BucketVersioning", "versioningConfiguration"),
    (BUCKET, "logging"): ("aws:s3/bucketLogging:BucketLogging", "targetBucket"),
    (BUCKET_V2, "loggings"): ("aws:s3/bucketLogging:BucketLogging", "targetBucket"),
    (BUCKET, "lifecycleRules"): ("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", "rules"),
    (BUCKET_V2, "lifecycleRules"): ("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", "rules"),
}


def deprecated_spellings_judged_apart() -> dict[tuple[str, str], tuple[str, ...]]:
    """Deprecated spellings -> the rules of their split twin that do not judge them (the same meaning must meet
    the same rules)."""
    table = schema.classified("aws")
    found = {}
    for (kind, wire), (twin, twin_wire) in DEPRECATED_TWINS.items():
        mine = set(schema.rules_of(table.get(kind, {}).get(wire, "inert:")))
        theirs = set(schema.rules_of(table.get(twin, {}).get(twin_wire, "inert:")))
        if missing := theirs - mine:
            found[(kind, wire)] = tuple(sorted(missing))
    return found


def test_the_deprecated_twins_name_real_properties() -> None:
    for (kind, wire), (twin, twin_wire) in DEPRECATED_TWINS.items():
        assert wire in schema.properties(kind) and twin_wire in schema.properties(twin)


# Every deprecated spelling is read: the inline `policy` (the access graph and no-public-buckets, like BucketPolicy),
# `acl`; the inline encryption, versioning, logging and lifecycle blocks as their split twins
# (policies/aws/inline_buckets.py); the inline `logging(s)` and `replicationConfiguration(s)` destinations are placed
# by the access graph (replication's split twin, BucketReplicationConfig, is no kind of a security concept, so it is
# not compared here).
KNOWN_APART: dict[tuple[str, str], tuple[str, ...]] = {}


def test_deprecated_spellings_are_judged_like_their_split_resources() -> None:
    """Each deprecated spelling meets every rule of its split twin, except the known gaps above; a reader that closes
    a gap (or a classification that opens one) fails here until KNOWN_APART says so."""
    apart = deprecated_spellings_judged_apart()
    print("\n" + "\n".join(f"{kind} {wire}: not judged by {rules}" for (kind, wire), rules in apart.items()))
    assert apart == KNOWN_APART
