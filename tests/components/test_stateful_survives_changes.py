"""A day-2 `pulumi up` never loses a stateful thing: the AWS specifics.

The check itself (for every day-2 change of every cloud's example stacks, each stateful resource keeps
its URN, `protect` and every replace-forcing input) is in tests/conformance/test_day_2.py; the captures
and the change tables are shared through tests/stack_edits.py. Here: what an AWS edit does to the
Slurm head, the serving fleet and the subnets, and the negative cases that show the check can fail: a
change that does replace Lustre or a bucket is seen, and those resources are protected, so `pulumi up`
refuses instead of deleting data.
"""

from __future__ import annotations

import pytest
from stack_edits import (
    SERVING_CHANGES,
    SERVING_MODEL_CHANGES,
    TRAINING_CHANGES,
    deployed,
    losses,
    replacements,
    stateful,
    updated,
)

from accelstack.engine.replacement import replacing_changes as _replacing_changes

BUCKET = "aws:s3/bucket:Bucket"
VERSIONING = "aws:s3/bucketVersioning:BucketVersioning"
ENCRYPTION = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
DRA = "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"
KEY = "aws:kms/key:Key"
VOLUME = "aws:ebs/volume:Volume"
SECRET = "aws:secretsmanager/secret:Secret"
SECRET_VERSION = "aws:secretsmanager/secretVersion:SecretVersion"
# Slurm's configuration files (a SecureString): updated in place, so a day-2 edit never replaces it.
PARAMETER = "aws:ssm/parameter:Parameter"
RANDOM_BYTES = "random:index/randomBytes:RandomBytes"
QUEUE = "aws:sqs/queue:Queue"
SUBNET = "aws:ec2/subnet:Subnet"
# Serving and the Slurm head: not stateful, but replacing them is an outage.
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"

# Day-2 edits with nothing to do with Slurm: the head (slurmctld) must not be rebuilt for them.
UNRELATED_TO_SLURM = {
    "checkpoint version days": ("training.storage.checkpoints.noncurrentVersionDays=31",),
    "artifact reader added": TRAINING_CHANGES["artifact reader added"],
    "Lustre grows": TRAINING_CHANGES["Lustre grows"],
    "Lustre throughput tier": TRAINING_CHANGES["Lustre throughput tier"],
    "head node type": TRAINING_CHANGES["head node type"],
    "allowed regions": ("separation.allowedRegions=[us-east-1, us-west-2, eu-west-1]",),
}


@pytest.mark.parametrize("overrides", list(SERVING_MODEL_CHANGES.values()), ids=list(SERVING_MODEL_CHANGES))
def test_a_model_change_replaces_nothing_in_serving(overrides: tuple[str, ...]) -> None:
    """M6: a new model, precision or cold start must roll the replicas (a new launch template
    version and an instance refresh), not replace the group delete-first."""
    assert replacements("aws-serving", overrides) == []
    before = {r.name: r for r in deployed("aws-serving")[0].resources if r.type == LAUNCH_TEMPLATE}
    after = {r.name: r for r in updated("aws-serving", overrides).resources if r.type == LAUNCH_TEMPLATE}
    assert any(before[n].inputs != after[n].inputs for n in before)  # the fleet does roll


@pytest.mark.parametrize("overrides", list(UNRELATED_TO_SLURM.values()), ids=list(UNRELATED_TO_SLURM))
def test_an_edit_unrelated_to_slurm_keeps_the_head(overrides: tuple[str, ...]) -> None:
    """M2: the head's user data (slurm.conf and its setup) must not change for an edit Slurm does
    not see; with user_data_replace_on_change it would rebuild the controller."""
    [head_before] = deployed("aws-training")[0].by_type(INSTANCE)
    [head_after] = updated("aws-training", overrides).by_type(INSTANCE)
    assert head_after.inputs["userData"] == head_before.inputs["userData"]
    assert [r for r in replacements("aws-training", overrides) if INSTANCE in r] == []


SLURM_EDITS = ("nodes 4 -> 64", "p5 -> p5en", "partitions edited", "Slurm maxTime")


@pytest.mark.parametrize("label", SLURM_EDITS)
def test_a_slurm_edit_updates_the_configuration_parameter_not_the_head(label: str) -> None:
    """slurm.conf and gres.conf follow these edits; they reach slurmctld through the SSM parameter (updated in
    place; the head applies it with `scontrol reconfigure`), never through the head's user data."""
    overrides = TRAINING_CHANGES[label]
    [head_before] = deployed("aws-training")[0].by_type(INSTANCE)
    [head_after] = updated("aws-training", overrides).by_type(INSTANCE)
    assert head_after.inputs["userData"] == head_before.inputs["userData"]
    assert [r for r in replacements("aws-training", overrides) if INSTANCE in r or PARAMETER in r] == []
    [config_before] = deployed("aws-training")[0].by_type(PARAMETER)
    [config_after] = updated("aws-training", overrides).by_type(PARAMETER)
    assert config_after.inputs["value"] != config_before.inputs["value"]


def test_the_replacement_check_sees_a_head_setup_edit() -> None:
    """Guards the guards: an edit of what the head's own setup carries (the checkpoint directory its login shells
    export) does rebuild it, and the check sees that."""
    overrides = ("training.storage.checkpoints.path=/fsx/ckpt",)
    assert any(INSTANCE in r for r in replacements("aws-training", overrides))


@pytest.mark.parametrize("stack", ["aws-training", "aws-finetune", "aws-serving"])
def test_the_stateful_set_is_what_we_think_it_is(stack: str) -> None:
    """Guards the guard: if a stack stopped registering its stateful things, every check would pass."""
    cap = deployed(stack)[0]
    types = {r.type for r in stateful(cap).values()}
    expected = {
        "aws-training": {
            BUCKET,
            VERSIONING,
            ENCRYPTION,
            LUSTRE,
            DRA,
            KEY,
            VOLUME,
            SECRET,
            SECRET_VERSION,
            PARAMETER,
            RANDOM_BYTES,
        },
        "aws-finetune": {BUCKET, VERSIONING, ENCRYPTION, KEY, VOLUME, SECRET, SECRET_VERSION, PARAMETER, RANDOM_BYTES},
        "aws-serving": {BUCKET, VERSIONING, ENCRYPTION, KEY, QUEUE},
    }[stack]
    assert types == expected
    # What holds data nobody can recreate is protected from the start.
    for registration in stateful(cap).values():
        if registration.type in (BUCKET, LUSTRE, KEY, VOLUME):
            assert registration.protect, f"{registration.name} is not protected"


def test_a_newer_gpu_offered_elsewhere_does_not_move_the_cluster_subnet() -> None:
    """The cluster's AZ is picked once (the first AZ offering the node type): Lustre, the Slurm state
    volume and the placement group live there, so a later pick for another type must not move it."""
    overrides = TRAINING_CHANGES["p5 -> p5en"]
    subnet = next(
        r
        for r in updated("aws-training", overrides).resources
        if r.name == "aws-training-net-cluster" and r.type == SUBNET
    )
    assert "availabilityZone" in subnet.ignore_changes
    volume = next(r for r in updated("aws-training", overrides).resources if r.type == VOLUME)
    assert volume.inputs["availabilityZone"] == "us-east-1a"  # where the deployed subnet is


def test_serving_subnets_stay_in_their_zones_when_the_replica_type_changes() -> None:
    """Same for serving: a subnet cannot change AZ in place, and a replacement with the same CIDR collides."""
    overrides = SERVING_CHANGES["serving instance type"]
    subnets = [r for r in updated("aws-serving", overrides).resources if r.type == SUBNET]
    assert subnets and all("availabilityZone" in s.ignore_changes for s in subnets)


# A change that really does replace stateful things: the check sees it, and the resource is protected,
# so `pulumi up` stops with "resource is protected" instead of deleting the file system or the bucket.
REPLACING = [
    pytest.param(
        "aws-training",
        ("training.storage.lustre.tier=PERSISTENT_1", "training.storage.lustre.throughputPerTiB=200"),
        {(LUSTRE, "deploymentType")},
        id="Lustre PERSISTENT_2 -> PERSISTENT_1",
    ),
    pytest.param(
        "aws-training",
        ("training.network.vpcCidr=10.40.0.0/16",),
        {(LUSTRE, "subnetIds"), (LUSTRE, "securityGroupIds")},
        id="new vpcCidr moves the subnet",
    ),
    pytest.param(
        "aws-training",
        # A smaller dataset is what lets the spec accept a smaller file system.
        ("training.storage.datasets.sizeGiB=100", "training.storage.lustre.capacityGiB=2400"),
        {(LUSTRE, "storageCapacity")},
        id="Lustre shrinks",
    ),
    pytest.param(
        "aws-training",
        ("training.storage.checkpoints.uri=s3://acme-train-checkpoints-v2",),
        {(BUCKET, "bucket")},
        id="checkpoint bucket renamed",
    ),
]


@pytest.mark.parametrize(("stack", "overrides", "expected"), REPLACING)
def test_a_replacing_change_is_seen_and_protect_is_what_saves_the_data(
    stack: str, overrides: tuple[str, ...], expected: set[tuple[str, str]]
) -> None:
    problems = losses(stack, overrides)
    before = stateful(deployed(stack)[0])
    after = {r.urn: r for r in updated(stack, overrides).resources}
    seen = set()
    for urn, old in before.items():
        new = after.get(urn)
        if new is None:
            continue
        for prop in _replacing_changes(old.type, old.inputs, new.inputs, new.ignore_changes):
            seen.add((old.type, prop))
            if old.type in (LUSTRE, BUCKET):
                assert new.protect, f"{old.name} would be replaced and is not protected"
    assert expected <= seen, problems
    # The conformance suite's day-2 check (`losses`) reports each of them.
    for resource_type, prop in expected:
        assert any(line.startswith(resource_type) and f"`{prop}`" in line for line in problems), problems
