"""A day-2 `pulumi up` never loses a stateful thing.

Each shipped stack is captured as deployed, then again with a change an operator makes on day 2
(more nodes, a newer GPU, spot, Slurm partitions, serving replicas, adapters, ...). For every
stateful resource of the first capture (buckets with data and their versioning/encryption, Lustre
and its data repository associations, KMS keys, the Slurm state volume, the munge key, the SQS
queues) the second capture must register the same URN (Pulumi updates it, never creates-new and
deletes-old), keep `protect`, and leave every input that forces the provider to REPLACE it unchanged.

The mock cloud answers as the engine would for a stack that already exists: a resource keeps its old
values for properties it lists in `ignoreChanges`, and a resource whose replace-forcing input changed
gets a new id, so a replacement upstream (a VPC, a subnet) shows up downstream (Lustre's subnet).
The negative cases show the check can fail: a change that does replace Lustre or a bucket is seen,
and those resources are protected, so `pulumi up` refuses instead of deleting data.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pulumi
import pytest

from accelstack.components.aws.mocks import AwsMocks
from accelstack.engine.capture import Capture, Registration, capture, config_for_pulumi
from accelstack.engine.replacement import ExistingStackCloud as _ExistingStackCloud
from accelstack.engine.replacement import replacing_changes as _replacing_changes
from accelstack.spec.loader import apply_overrides, read_stack_file

REPO = Path(__file__).resolve().parents[2]
MAIN = REPO / "__main__.py"

BUCKET = "aws:s3/bucket:Bucket"
VERSIONING = "aws:s3/bucketVersioning:BucketVersioning"
ENCRYPTION = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
DRA = "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"
KEY = "aws:kms/key:Key"
VOLUME = "aws:ebs/volume:Volume"
SECRET = "aws:secretsmanager/secret:Secret"
SECRET_VERSION = "aws:secretsmanager/secretVersion:SecretVersion"
RANDOM_BYTES = "random:index/randomBytes:RandomBytes"
QUEUE = "aws:sqs/queue:Queue"
VPC = "aws:ec2/vpc:Vpc"
SUBNET = "aws:ec2/subnet:Subnet"
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"

# The replace-forcing inputs per type (from the provider's schema) live in accelstack.engine.replacement,
# shared with `accelstack diff`.
# Serving and the Slurm head: not stateful, but replacing them is an outage.
GROUP = "aws:autoscaling/group:Group"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"

STATEFUL = (BUCKET, VERSIONING, ENCRYPTION, LUSTRE, DRA, KEY, VOLUME, SECRET, SECRET_VERSION, RANDOM_BYTES, QUEUE)

# GPU types are offered in only some AZs of a region, and a newer type in fewer than an older one. This table
# makes the newer types miss the region's first AZ: the case where "pick the first AZ that offers the type"
# would pick a different AZ on day 2 than on day 1.
OFFERED_ZONES = {
    "p5en.48xlarge": ["us-east-1b", "us-east-1c"],
    "g6e.48xlarge": ["us-east-1b", "us-east-1c"],
    "g6e.2xlarge": ["us-east-1b", "us-east-1c"],
}


class ExistingStackCloud(_ExistingStackCloud):
    """The package's existing-stack mock cloud, with newer GPU types missing the region's first AZ."""

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list | None]:
        if args.token == "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings":
            wanted = [
                v for f in args.args.get("filters") or [] if f.get("name") == "instance-type" for v in f["values"]
            ]
            if wanted and wanted[0] in OFFERED_ZONES:
                zones = OFFERED_ZONES[wanted[0]]
                return {"locations": zones, "locationTypes": ["availability-zone"] * len(zones)}, []
        return super().call(args)


def _capture(stack: str, overrides: tuple[str, ...], cloud: ExistingStackCloud) -> Capture:
    raw = apply_overrides(read_stack_file(REPO / "stacks" / f"Pulumi.{stack}.yaml"), list(overrides))
    return capture(MAIN, config_for_pulumi(raw), stack=stack, mocks=cloud)


@cache
def deployed(stack: str) -> tuple[Capture, ExistingStackCloud]:
    """The stack as its first `pulumi up` created it."""
    cloud = ExistingStackCloud(AwsMocks())
    return _capture(stack, (), cloud), cloud


@cache
def updated(stack: str, overrides: tuple[str, ...]) -> Capture:
    """The same stack after the change: the mock cloud remembers what the first deployment created."""
    base, base_cloud = deployed(stack)
    return _capture(stack, overrides, ExistingStackCloud(AwsMocks(), base_cloud.previous_for_edit(base)))


def stateful(cap: Capture) -> dict[str, Registration]:
    return {r.urn: r for r in cap.resources if r.type in STATEFUL}


def losses(stack: str, overrides: tuple[str, ...]) -> list[str]:
    """Every way the change would lose (or try to replace) a stateful resource, as readable lines."""
    before = stateful(deployed(stack)[0])
    after = stateful(updated(stack, overrides))
    problems = []
    for urn, old in before.items():
        new = after.get(urn)
        if new is None:
            problems.append(f"{old.type} {old.name}: no longer registered (pulumi up deletes it)")
            continue
        if old.protect and not new.protect:
            problems.append(f"{old.type} {old.name}: protect dropped")
        changed = _replacing_changes(old.type, old.inputs, new.inputs, new.ignore_changes)
        for prop in changed:
            problems.append(
                f"{old.type} {old.name}: replace-forcing `{prop}` changed "
                f"{json.dumps(old.inputs.get(prop))} -> {json.dumps(new.inputs.get(prop))}"
            )
    return problems


TRAINING_CHANGES = {
    "nodes 4 -> 64": ("training.nodes.count=64",),
    "p5 -> p5en": ("training.nodes.instanceType=p5en.48xlarge",),
    "on-demand -> spot": ("training.nodes.capacity=spot",),
    "partitions edited": (
        "training.scheduler.partitions=[{name: gpu, maxTime: '7-00:00:00', default: true}, "
        "{name: long, maxTime: '14-00:00:00'}, {name: debug, maxTime: '02:00:00'}]",
    ),
    "head node type": ("training.scheduler.headNode.instanceType=m7i.4xlarge",),
    "Slurm maxTime": ("training.scheduler.partitions.0.maxTime=14-00:00:00",),
    "artifact reader added": (
        "separation.servingAccounts=['222222222222', '333333333333']",
        "training.artifactReaders=['222222222222', '333333333333']",
    ),
    "Lustre grows": ("training.storage.lustre.capacityGiB=9600",),
    "Lustre throughput tier": ("training.storage.lustre.throughputPerTiB=500",),
}
FINETUNE_CHANGES = {
    "nodes 1 -> 4": ("training.nodes.count=4",),
    "bigger GPU box": ("training.nodes.instanceType=g6e.48xlarge",),
    "spot -> on-demand": ("training.nodes.capacity=on-demand",),
    "head node type": ("training.scheduler.headNode.instanceType=m7i.2xlarge",),
    "Slurm maxTime": ("training.scheduler.partitions.0.maxTime=5-00:00:00",),
}
SERVING_CHANGES = {
    "replicas min/max": ("serving.replicas.min=2", "serving.replicas.max=32"),
    "serving instance type": ("serving.replicas.instanceType=g6e.2xlarge",),
    "new weights": ("serving.model.weightsUri=s3://acme-train-checkpoints/models/llama-3.1-8b-instruct-v2/",),
    "adapter added": (
        "serving.model.adapters=[{name: acme-support, uri: 's3://acme-train-checkpoints/models/adapters/acme-support/', rank: 16}, "
        "{name: globex-legal, uri: 's3://acme-train-checkpoints/models/adapters/globex-legal/', rank: 32}, "
        "{name: initech-sales, uri: 's3://acme-train-checkpoints/models/adapters/initech-sales/', rank: 16}]",
    ),
    "admission TTL": ("serving.admission.ttlSeconds=600",),
    "SLO numbers": ("serving.slo.targetSeconds=5", "serving.slo.serviceSeconds=0.5"),
}
# What changes the served model: weights size and so the planner's cold start, the precision, a
# measured cold start. They must roll the fleet (a new template version), never replace the group.
SERVING_MODEL_CHANGES = {
    "another model": (
        "serving.model.name=meta-llama/Llama-3.1-70B-Instruct",
        "serving.model.weightsUri=s3://acme-train-checkpoints/models/llama-3.1-70b-instruct/",
        "serving.model.preset=llama-3.1-70b",
        "serving.replicas.instanceType=p5.48xlarge",
        "serving.model.adapters=[]",
    ),
    "precision bf16 -> fp8": ("serving.model.precision=fp8",),
    "measured cold start": ("serving.replicas.coldStartSeconds=1800",),
    "context length": ("serving.model.contextLength=32768",),
}
SERVING_CHANGES.update(SERVING_MODEL_CHANGES)
# Day-2 edits with nothing to do with Slurm: the head (slurmctld) must not be rebuilt for them.
UNRELATED_TO_SLURM = {
    "checkpoint version days": ("training.storage.checkpoints.noncurrentVersionDays=31",),
    "artifact reader added": TRAINING_CHANGES["artifact reader added"],
    "Lustre grows": TRAINING_CHANGES["Lustre grows"],
    "Lustre throughput tier": TRAINING_CHANGES["Lustre throughput tier"],
    "head node type": TRAINING_CHANGES["head node type"],
    "allowed regions": ("separation.allowedRegions=[us-east-1, us-west-2, eu-west-1]",),
}
TRAINING_CHANGES["on-demand -> Capacity Block"] = (
    "training.nodes.capacity=capacity-block",
    "training.nodes.reservationId=cr-0123456789abcdef0",
    "training.network.availabilityZone=us-east-1a",  # where the deployed cluster subnet is
)
CASES = [
    pytest.param(stack, overrides, id=f"{stack}: {label}")
    for stack, table in (
        ("aws-training", TRAINING_CHANGES),
        ("aws-finetune", FINETUNE_CHANGES),
        ("aws-serving", SERVING_CHANGES),
    )
    for label, overrides in table.items()
]


def replacements(stack: str, overrides: tuple[str, ...]) -> list[str]:
    """Every resource (any type with known replace-forcing inputs) the change would replace."""
    before = {r.urn: r for r in deployed(stack)[0].resources}
    found = []
    for new in updated(stack, overrides).resources:
        old = before.get(new.urn)
        if old is None:
            continue
        for prop in _replacing_changes(old.type, old.inputs, new.inputs, new.ignore_changes):
            found.append(f"{old.type} {old.name}: `{prop}` changed")
    return found


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


def test_the_replacement_check_sees_a_slurm_edit() -> None:
    """Guards the guard: a Slurm change does rebuild the head (its user data carries slurm.conf)."""
    assert any(INSTANCE in r for r in replacements("aws-training", TRAINING_CHANGES["Slurm maxTime"]))


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
            RANDOM_BYTES,
        },
        "aws-finetune": {BUCKET, VERSIONING, ENCRYPTION, KEY, VOLUME, SECRET, SECRET_VERSION, RANDOM_BYTES},
        "aws-serving": {BUCKET, VERSIONING, ENCRYPTION, KEY, QUEUE},
    }[stack]
    assert types == expected
    # What holds data nobody can recreate is protected from the start.
    for registration in stateful(cap).values():
        if registration.type in (BUCKET, LUSTRE, KEY, VOLUME):
            assert registration.protect, f"{registration.name} is not protected"


@pytest.mark.parametrize(("stack", "overrides"), CASES)
def test_a_day_2_change_keeps_every_stateful_resource(stack: str, overrides: tuple[str, ...]) -> None:
    assert losses(stack, overrides) == []


def test_the_change_table_changes_something() -> None:
    """Each day-2 change must reach the program (a typo'd override would make the case vacuous)."""
    for stack, table in (
        ("aws-training", TRAINING_CHANGES),
        ("aws-finetune", FINETUNE_CHANGES),
        ("aws-serving", SERVING_CHANGES),
    ):
        base = {r.urn: r.inputs for r in deployed(stack)[0].resources}
        for label, overrides in table.items():
            after = {r.urn: r.inputs for r in updated(stack, overrides).resources}
            assert after != base, f"{stack}: {label} changed nothing"


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
