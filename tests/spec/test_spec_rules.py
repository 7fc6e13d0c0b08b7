"""Each rule, against valid and invalid edits of the shipped training stack.

Invalid cases assert the exact config path, the level, and the part of the message a user acts on
(usually the allowed values).
"""

from __future__ import annotations

import pytest
from spec_helpers import DELETE, TRAINING_STACK, all_problems, edited, training_raw

from accelstack.spec import load_stack, spec_warnings
from accelstack.spec.models import TrainingStack
from accelstack.spec.problems import Level

E, W = Level.ERROR, Level.WARNING
CB = "cr-0123456789abcdef0"
ONE_PARTITION = [{"name": "gpu", "maxTime": "UNLIMITED", "default": True}]


def test_shipped_training_stack_is_valid_without_warnings():
    spec = load_stack(TRAINING_STACK)
    assert isinstance(spec, TrainingStack) and spec.training.nodes.instance_type == "p5.48xlarge"
    assert spec_warnings(spec) == []


# The FSx shape cases check what CreateFileSystem accepts, not whether the example's 70B checkpoints
# and dataset fit (that is tests/spec/test_training_sizing_rules.py), so they drop the stated sizes.
UNSIZED = {"training.model": DELETE, "training.storage.datasets.sizeGiB": DELETE}
# accelstack exports checkpoints from Lustre only on PERSISTENT_2; other types are valid without them.
# Without a checkpoint store there is nothing to share with serving: the artifact readers go too.
NO_CHECKPOINTS = {"training.storage.checkpoints": DELETE, "training.artifactReaders": DELETE}

VALID = {
    "scratch2-smallest": {
        **UNSIZED,
        **NO_CHECKPOINTS,
        "training.storage.lustre": {"tier": "SCRATCH_2", "capacityGiB": 1200, "importPath": "/datasets"},
    },
    "scratch1-root-import": {
        **UNSIZED,
        **NO_CHECKPOINTS,
        "training.storage.lustre": {"tier": "SCRATCH_1", "capacityGiB": 3600, "importPath": "/"},
    },
    "scratch1-2400": {
        **UNSIZED,
        **NO_CHECKPOINTS,
        "training.storage.lustre": {"tier": "SCRATCH_1", "capacityGiB": 2400, "importPath": "/"},
    },
    "persistent1-tier": {
        **UNSIZED,
        **NO_CHECKPOINTS,
        "training.storage.lustre": {"tier": "PERSISTENT_1", "capacityGiB": 2400, "throughputPerTiB": 100},
    },
    "persistent1-default-tier": {
        **UNSIZED,
        **NO_CHECKPOINTS,
        "training.storage.lustre": {"tier": "PERSISTENT_1", "capacityGiB": 1200},
    },
    "persistent2-top-tier": {
        **UNSIZED,
        "training.storage.lustre.throughputPerTiB": 1000,
        "training.storage.lustre.capacityGiB": 1200,
    },
    "persistent2-at-quota": {"training.storage.lustre.capacityGiB": 100_800},
    "capacity-block-64-p5": {
        "training.nodes": {
            "instanceType": "p5.48xlarge",
            "count": 64,
            "capacity": "capacity-block",
            "reservationId": CB,
        },
        "training.network.availabilityZone": "us-east-1b",
    },
    "capacity-block-trn1": {
        "training.nodes": {
            "instanceType": "trn1.32xlarge",
            "count": 8,
            "capacity": "capacity-block",
            "reservationId": CB,
        },
        "training.network.availabilityZone": "us-east-1b",
    },
    "capacity-block-p6": {
        "training.nodes": {
            "instanceType": "p6-b200.48xlarge",
            "count": 2,
            "capacity": "capacity-block",
            "reservationId": CB,
        },
        "training.network.availabilityZone": "us-east-1b",
    },
    "single-node-without-efa": {"training.nodes": {"instanceType": "g5.xlarge", "count": 1}},
    "multi-node-g6e-efa": {"training.nodes": {"instanceType": "g6e.48xlarge", "count": 4}},
    "p5-on-demand-15": {"training.nodes.count": 15},
    "spot-with-checkpoints": {"training.nodes": {"instanceType": "p4d.24xlarge", "count": 64, "capacity": "spot"}},
    "vpc-22": {"training.network.vpcCidr": "10.20.0.0/22"},
    "existing-vpc": {"training.network": {"vpcId": "vpc-00000abc", "subnetId": "subnet-00000abc"}},
    "role-with-path": {"account.deployRole": "arn:aws:iam::111111111111:role/platform/accelstack-deploy"},
    "no-deploy-role": {"account.deployRole": DELETE},
    "govcloud": {
        "account.region": "us-gov-west-1",
        "account.deployRole": "arn:aws-us-gov:iam::111111111111:role/deploy",
        "separation.allowedRegions": ["us-gov-west-1"],
    },
    "checkpoints-at-mount-root-dir": {"training.storage.checkpoints.path": "/fsx/ckpt/"},
    "custom-mount": {"training.storage.lustre.mountPath": "/lustre", "training.storage.checkpoints.path": "/lustre/c"},
    # Without the checkpoints block the example's 900 s write target goes too: its 843 s write would warn.
    "no-checkpoints-on-demand": {**NO_CHECKPOINTS, "training.model": DELETE},
    "bucket-63-chars": {"training.storage.datasets.uri": "s3://" + "a" * 63 + "/prefix/"},
    "bucket-3-chars": {"training.storage.datasets.uri": "s3://a-1"},
    "no-artifact-readers": {"training.artifactReaders": []},
    "one-partition": {"training.scheduler.partitions": ONE_PARTITION},
    "managed-scheduler-no-default": {
        "training.scheduler": {"kind": "managed", "partitions": [{"name": "gpu", "maxTime": "60"}]}
    },
    **{
        f"maxTime-{text}": {"training.scheduler.partitions": [{"name": "gpu", "maxTime": text, "default": True}]}
        for text in ("UNLIMITED", "infinite", "60", "30:00", "12:00:00", "1-0", "2-12:30", "7-00:00:00", "0:59")
    },
}


@pytest.mark.parametrize("edits", VALID.values(), ids=VALID.keys())
def test_valid_edits_have_no_problems(edits):
    assert all_problems(edited(training_raw(), edits)) == []


LUSTRE = "training.storage.lustre"
NODES = "training.nodes"
PARTS = "training.scheduler.partitions"

# id: (edits, path, level, message fragment)
INVALID = {
    # accounts, regions, IAM
    "account-short": ({"account.id": "12345"}, "account.id", E, "12 digits"),
    "account-unquoted": ({"account.id": 111111111111}, "account.id", E, 'write account ids quoted ("111111111111")'),
    "serving-accounts-unquoted": (
        {"separation.servingAccounts": [222222222222]},
        "separation.servingAccounts",
        E,
        "write account ids quoted",
    ),
    "account-letters": ({"account.id": "11111111111a"}, "account.id", E, "not an AWS account id"),
    "region-format": ({"account.region": "us-east"}, "account.region", E, "not an AWS Region name"),
    "region-uppercase": ({"account.region": "US-EAST-1"}, "account.region", E, "not an AWS Region name"),
    "region-unknown": (
        {"account.region": "xx-north-9", "separation.allowedRegions": DELETE},
        "account.region",
        E,
        "not an AWS Region name (accelstack's table",
    ),
    "region-not-allowed": (
        {"account.region": "us-west-2", "separation.allowedRegions": ["us-east-1"]},
        "account.region",
        E,
        "allowed: us-east-1",
    ),
    "allowed-region-format": (
        {"separation.allowedRegions": ["us-east-1", "mars"]},
        "separation.allowedRegions.1",
        E,
        "not an AWS Region name",
    ),
    "role-not-arn": ({"account.deployRole": "accelstack-deploy"}, "account.deployRole", E, "not an IAM role ARN"),
    "role-is-user": (
        {"account.deployRole": "arn:aws:iam::111111111111:user/deploy"},
        "account.deployRole",
        E,
        "not an IAM role ARN",
    ),
    "role-other-account": (
        {"account.deployRole": "arn:aws:iam::333333333333:role/deploy"},
        "account.deployRole",
        E,
        "role is in account 333333333333",
    ),
    "role-wrong-partition": (
        {"account.deployRole": "arn:aws-cn:iam::111111111111:role/deploy"},
        "account.deployRole",
        E,
        "does not match us-east-1",
    ),
    "training-account-format": (
        {"separation.trainingAccounts": ["111111111111", "12"]},
        "separation.trainingAccounts.1",
        E,
        "12 digits",
    ),
    "serving-account-format": (
        {"separation.servingAccounts": ["2222"], "training.artifactReaders": []},
        "separation.servingAccounts.0",
        E,
        "12 digits",
    ),
    "account-not-training-side": (
        {"account.id": "333333333333", "account.deployRole": DELETE},
        "account.id",
        E,
        "not one of separation.trainingAccounts",
    ),
    "artifact-reader-not-serving": (
        {"training.artifactReaders": ["333333333333"]},
        "training.artifactReaders.0",
        E,
        "not one of separation.servingAccounts",
    ),
    "artifact-reader-format": ({"training.artifactReaders": ["x"]}, "training.artifactReaders.0", E, "12 digits"),
    "cloud-not-registered": ({"cloud": "gcpp"}, "cloud", E, "is not a registered cloud; registered: aws"),
    # instances, EFA, capacity
    "instance-unknown": (
        {f"{NODES}.instanceType": "p3.16xlarge"},
        f"{NODES}.instanceType",
        E,
        "allowed: p6-b200.48xlarge, p5en.48xlarge",
    ),
    "multi-node-no-efa": (
        {NODES: {"instanceType": "g5.xlarge", "count": 2}},
        f"{NODES}.instanceType",
        E,
        "g5.xlarge has no EFA",
    ),
    "multi-node-inf2": (
        {NODES: {"instanceType": "inf2.48xlarge", "count": 4}},
        f"{NODES}.instanceType",
        E,
        "use count: 1 or an EFA instance type",
    ),
    "cb-no-reservation": (
        {f"{NODES}.capacity": "capacity-block"},
        f"{NODES}.reservationId",
        E,
        "needs the Capacity Block's reservation id",
    ),
    "cb-bad-reservation": (
        {f"{NODES}.capacity": "capacity-block", f"{NODES}.reservationId": "cr-123"},
        f"{NODES}.reservationId",
        E,
        "cr- followed by 17 hex digits",
    ),
    "cb-uppercase-reservation": (
        {f"{NODES}.capacity": "capacity-block", f"{NODES}.reservationId": CB.upper()},
        f"{NODES}.reservationId",
        E,
        "17 hex digits",
    ),
    "cb-ineligible-type": (
        {NODES: {"instanceType": "g5.48xlarge", "count": 2, "capacity": "capacity-block", "reservationId": CB}},
        f"{NODES}.instanceType",
        E,
        "not offered as a Capacity Block; allowed: p6-b200.48xlarge",
    ),
    "cb-too-many": (
        {NODES: {"instanceType": "p5.48xlarge", "count": 65, "capacity": "capacity-block", "reservationId": CB}},
        f"{NODES}.count",
        E,
        "allowed: 1 to 64",
    ),
    "reservation-spot": (
        {f"{NODES}.reservationId": CB, f"{NODES}.capacity": "spot"},
        f"{NODES}.reservationId",
        E,
        "spot instances cannot launch into a capacity reservation",
    ),
    "odcr-no-zone": (
        {f"{NODES}.reservationId": CB},
        "training.network.availabilityZone",
        E,
        "a capacity reservation lives in one Availability Zone",
    ),
    "cb-no-zone": (
        {f"{NODES}.capacity": "capacity-block", f"{NODES}.reservationId": CB},
        "training.network.availabilityZone",
        E,
        f"describe-capacity-reservations --capacity-reservation-ids {CB}",
    ),
    "cb-managed-scheduler": (
        {
            f"{NODES}.capacity": "capacity-block",
            f"{NODES}.reservationId": CB,
            "training.network.availabilityZone": "us-east-1b",
            "training.scheduler.kind": "managed",
        },
        "training.scheduler.kind",
        E,
        "Batch ignores the launch template's market options",
    ),
    "spot-without-checkpoints": (
        {f"{NODES}.capacity": "spot", "training.storage.checkpoints": DELETE},
        "training.storage.checkpoints",
        E,
        "spot capacity requires a checkpoint",
    ),
    "large-spot": (
        {NODES: {"instanceType": "p4d.24xlarge", "count": 65, "capacity": "spot"}},
        f"{NODES}.count",
        W,
        "interruption",
    ),
    "p5-on-demand-16": (
        {f"{NODES}.count": 16},
        f"{NODES}.count",
        W,
        "insufficient capacity is likely; consider capacity: capacity-block",
    ),
    "p5en-on-demand-32": (
        {f"{NODES}.instanceType": "p5en.48xlarge", f"{NODES}.count": 32},
        f"{NODES}.count",
        W,
        "insufficient capacity",
    ),
    "count-zero": ({f"{NODES}.count": 0}, f"{NODES}.count", E, "greater than or equal to 1"),
    # FSx for Lustre
    "p2-capacity-step": (
        {f"{LUSTRE}.capacityGiB": 3000},
        f"{LUSTRE}.capacityGiB",
        E,
        "allowed: 1200 or a multiple of 2400 GiB",
    ),
    "p2-capacity-600": ({f"{LUSTRE}.capacityGiB": 600}, f"{LUSTRE}.capacityGiB", E, "1200 or a multiple of 2400"),
    "s1-capacity-step": (
        {LUSTRE: {"tier": "SCRATCH_1", "capacityGiB": 4800, "importPath": "/"}},
        f"{LUSTRE}.capacityGiB",
        E,
        "allowed: 1200, 2400 or a multiple of 3600 GiB",
    ),
    "s2-capacity-step": (
        {LUSTRE: {"tier": "SCRATCH_2", "capacityGiB": 3600}},
        f"{LUSTRE}.capacityGiB",
        E,
        "not a valid SCRATCH_2 size",
    ),
    "above-quota": (
        {f"{LUSTRE}.capacityGiB": 103_200},
        f"{LUSTRE}.capacityGiB",
        W,
        "default FSx for Lustre storage quota",
    ),
    "p2-tier": ({f"{LUSTRE}.throughputPerTiB": 300}, f"{LUSTRE}.throughputPerTiB", E, "allowed: 125, 250, 500, 1000"),
    "p1-tier": (
        {LUSTRE: {"tier": "PERSISTENT_1", "capacityGiB": 2400, "throughputPerTiB": 250}},
        f"{LUSTRE}.throughputPerTiB",
        E,
        "allowed: 50, 100, 200",
    ),
    "scratch-tier": (
        {LUSTRE: {"tier": "SCRATCH_2", "capacityGiB": 1200, "throughputPerTiB": 200}},
        f"{LUSTRE}.throughputPerTiB",
        E,
        "SCRATCH_2 has no throughput tiers",
    ),
    "deployment-type": (
        {f"{LUSTRE}.tier": "PERSISTENT_3"},
        f"{LUSTRE}.tier",
        E,
        "allowed: SCRATCH_1, SCRATCH_2, PERSISTENT_1, PERSISTENT_2",
    ),
    "s1-dra": (
        {LUSTRE: {"tier": "SCRATCH_1", "capacityGiB": 3600}},
        f"{LUSTRE}.importPath",
        E,
        "set importPath: / or use SCRATCH_2 or PERSISTENT_2",
    ),
    "import-path-relative": ({f"{LUSTRE}.importPath": "datasets"}, f"{LUSTRE}.importPath", E, "absolute path"),
    # checkpoints
    "ckpt-outside-mount": (
        {"training.storage.checkpoints.path": "/data/ckpt"},
        "training.storage.checkpoints.path",
        E,
        "not under the Lustre mount path /fsx",
    ),
    "ckpt-sibling-prefix": (
        {"training.storage.checkpoints.path": "/fsx2/ckpt"},
        "training.storage.checkpoints.path",
        E,
        "use e.g. /fsx/checkpoints",
    ),
    "ckpt-relative": (
        {"training.storage.checkpoints.path": "ckpt"},
        "training.storage.checkpoints.path",
        E,
        "absolute path",
    ),
    "ckpt-no-lustre": ({LUSTRE: None}, "training.storage.checkpoints.path", W, "node-local"),
    "ckpt-in-dataset-dir": (
        {"training.storage.checkpoints.path": "/fsx/datasets/ckpt"},
        "training.storage.checkpoints.path",
        E,
        "overlaps the dataset link at lustre.importPath /datasets",
    ),
    # S3
    "same-bucket": (
        {"training.storage.checkpoints.uri": "s3://acme-train-datasets/checkpoints/"},
        "training.storage.checkpoints.uri",
        E,
        "uses the dataset bucket 'acme-train-datasets'",
    ),
    "not-s3": (
        {"training.storage.datasets.uri": "gs://acme-train-datasets"},
        "training.storage.datasets.uri",
        E,
        "on aws object URIs start with s3:// (S3); allowed scheme: s3://",
    ),
    "bucket-short": (
        {"training.storage.datasets.uri": "s3://ab"},
        "training.storage.datasets.uri",
        E,
        "must be 3 to 63 characters",
    ),
    "bucket-long": (
        {"training.storage.datasets.uri": "s3://" + "a" * 64},
        "training.storage.datasets.uri",
        E,
        "must be 3 to 63 characters",
    ),
    "bucket-uppercase": (
        {"training.storage.datasets.uri": "s3://Acme-Data"},
        "training.storage.datasets.uri",
        E,
        "only lowercase letters",
    ),
    "bucket-underscore": (
        {"training.storage.checkpoints.uri": "s3://acme_ckpt"},
        "training.storage.checkpoints.uri",
        E,
        "only lowercase letters",
    ),
    "bucket-leading-hyphen": (
        {"training.storage.datasets.uri": "s3://-acme"},
        "training.storage.datasets.uri",
        E,
        "begin and end with a letter or digit",
    ),
    "bucket-double-dot": (
        {"training.storage.datasets.uri": "s3://acme..data"},
        "training.storage.datasets.uri",
        E,
        "two adjacent dots",
    ),
    "bucket-ip": (
        {"training.storage.datasets.uri": "s3://192.168.10.1"},
        "training.storage.datasets.uri",
        E,
        "formatted as an IP address",
    ),
    "bucket-xn": (
        {"training.storage.datasets.uri": "s3://xn--acme"},
        "training.storage.datasets.uri",
        E,
        "reserved prefix 'xn--'",
    ),
    "bucket-s3alias": (
        {"training.storage.datasets.uri": "s3://acme-s3alias"},
        "training.storage.datasets.uri",
        E,
        "reserved suffix '-s3alias'",
    ),
    "bucket-dots": (
        {"training.storage.datasets.uri": "s3://acme.train.data"},
        "training.storage.datasets.uri",
        W,
        "contains dots",
    ),
    # VPC
    "vpc-too-small": (
        {"training.network.vpcCidr": "10.20.0.0/23"},
        "training.network.vpcCidr",
        E,
        "use a /22 or larger block",
    ),
    "vpc-not-network": (
        {"training.network.vpcCidr": "10.20.0.1/16"},
        "training.network.vpcCidr",
        E,
        "not a valid network CIDR",
    ),
    # partitions
    "partition-duplicate": (
        {PARTS: [{"name": "gpu", "default": True}, {"name": "gpu"}]},
        f"{PARTS}.1.name",
        E,
        "duplicate partition name 'gpu'",
    ),
    "partition-two-defaults": (
        {PARTS: [{"name": "a", "default": True}, {"name": "b", "default": True}]},
        PARTS,
        E,
        "exactly one partition must have default: true; found 2 (a, b)",
    ),
    "partition-no-default": ({PARTS: [{"name": "a"}, {"name": "b"}]}, PARTS, E, "found none"),
    "partition-empty": ({PARTS: []}, PARTS, E, "at least one partition"),
    "maxtime-words": (
        {PARTS: [{"name": "gpu", "default": True, "maxTime": "1 day"}]},
        f"{PARTS}.0.maxTime",
        E,
        "allowed formats: UNLIMITED, MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS",
    ),
    "maxtime-seconds": (
        {PARTS: [{"name": "gpu", "default": True, "maxTime": "1:61"}]},
        f"{PARTS}.0.maxTime",
        E,
        "must be 0-59",
    ),
    "maxtime-hours": (
        {PARTS: [{"name": "gpu", "default": True, "maxTime": "2-25"}]},
        f"{PARTS}.0.maxTime",
        E,
        "must be 0-23",
    ),
    "maxtime-unquoted": (
        {PARTS: [{"name": "gpu", "default": True, "maxTime": 3600}]},
        f"{PARTS}.0.maxTime",
        E,
        "quoted string",
    ),
    "partition-name": (
        {PARTS: [{"name": "9gpu", "default": True}]},
        f"{PARTS}.0.name",
        E,
        "is not a Slurm partition name",
    ),
}


@pytest.mark.parametrize(("edits", "path", "level", "fragment"), INVALID.values(), ids=INVALID.keys())
def test_invalid_edits_name_path_and_allowed_values(edits, path, level, fragment):
    problems = all_problems(edited(training_raw(), edits))
    matching = [p for p in problems if p.path == path and fragment in p.message]
    assert matching, f"no problem at {path} mentioning {fragment!r}; got: {[str(p) for p in problems]}"
    assert {p.level for p in matching} == {level}


def test_spot_fleet_warning_is_not_raised_below_threshold():
    problems = all_problems(
        edited(training_raw(), {NODES: {"instanceType": "p4d.24xlarge", "count": 64, "capacity": "spot"}})
    )
    assert problems == []


def test_errors_are_all_reported_at_once():
    raw = edited(
        training_raw(),
        {
            "account.deployRole": "arn:aws:iam::999999999999:role/accelstack-deploy",
            f"{LUSTRE}.capacityGiB": 1000,
            f"{LUSTRE}.throughputPerTiB": 300,
            f"{NODES}.reservationId": "x",
        },
    )
    paths = {p.path for p in all_problems(raw)}
    assert {
        "account.deployRole",
        f"{LUSTRE}.capacityGiB",
        f"{LUSTRE}.throughputPerTiB",
        f"{NODES}.reservationId",
    } <= paths


def test_warnings_become_errors_when_strict():
    from accelstack.spec import parse_spec
    from accelstack.spec.problems import SpecError

    raw = edited(training_raw(), {f"{NODES}.count": 16})
    parse_spec(raw)  # a warning alone does not reject the config
    with pytest.raises(SpecError) as caught:
        parse_spec(raw, strict_warnings=True)
    assert [p.path for p in caught.value.problems] == [f"{NODES}.count"]
