"""What mocks cannot see, made testable: creation order and replacement order on the exports.

Under mocks every create succeeds at once, so two classes of real `pulumi up` failures are invisible:

1. A create-time API that checks ANOTHER resource's state (FSx CreateFileSystem checks the security
   group's port-988 rules; CreateDataRepositoryAssociation checks the bucket; ELB checks it may write
   its access logs). Pulumi orders creates only along dependencies, so each such pair must be a
   dependency edge, or the two calls race. `CREATE_TIME_PREREQUISITES` lists the pairs by rule, and
   the test checks every matching resource of every stack variant.
2. A replacement of a resource whose replace-forcing input is also unique in the cloud (an FSx path,
   an alias name, a fixed private address, one volume per attachment, one web ACL per load balancer).
   Pulumi replaces create-first by default, and the new one collides with the old one. `DELETE_FIRST`
   lists the types (and which instances) that must be replaced delete-first.

Each rule names the API behaviour it encodes; the guards check that every rule matched something, so
a renamed type cannot make a rule vacuous.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from accelstack.engine.capture import Capture, Registration, capture, config_for_pulumi
from accelstack.spec.loader import apply_overrides, read_stack_file

REPO = Path(__file__).resolve().parents[2]
MAIN = REPO / "__main__.py"

LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
DRA = "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"
BUCKET = "aws:s3/bucket:Bucket"
BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
VERSIONING = "aws:s3/bucketVersioning:BucketVersioning"
LIFECYCLE = "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
LOAD_BALANCER = "aws:lb/loadBalancer:LoadBalancer"
GROUP = "aws:autoscaling/group:Group"
INSTANCE = "aws:ec2/instance:Instance"
COMPUTE_ENVIRONMENT = "aws:batch/computeEnvironment:ComputeEnvironment"
INSTANCE_PROFILE = "aws:iam/instanceProfile:InstanceProfile"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
ROLE_POLICY_ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
VOLUME_ATTACHMENT = "aws:ec2/volumeAttachment:VolumeAttachment"
ALIAS = "aws:kms/alias:Alias"
WEB_ACL_ASSOCIATION = "aws:wafv2/webAclAssociation:WebAclAssociation"
VPC_ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
SCHEDULE = "aws:autoscaling/schedule:Schedule"
FLOW_LOG = "aws:ec2/flowLog:FlowLog"
WAF_LOGGING = "aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration"

CAPACITY_BLOCK = (
    "training.nodes.capacity=capacity-block",
    "training.nodes.reservationId=cr-0123456789abcdef0",
    "training.network.availabilityZone=us-east-1a",
)
# Every shipped stack, and the variants that build other resources (Batch, legacy Lustre link, a
# Capacity Block, no scheduler).
VARIANTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "training": ("aws-training", ()),
    "training, AWS Batch": ("aws-training", ("training.scheduler.kind=managed",)),
    "training, scratch Lustre (legacy import path)": (
        "aws-training",
        ("training.storage.lustre.tier=SCRATCH_2", "training.storage.lustre.throughputPerTiB=null"),
    ),
    "training, Capacity Block": ("aws-training", CAPACITY_BLOCK),
    "training, no scheduler": ("aws-training", ("training.scheduler.kind=none",)),
    "fine-tuning": ("aws-finetune", ()),
    "serving": ("aws-serving", ()),
}


@cache
def export(variant: str) -> Capture:
    stack, overrides = VARIANTS[variant]
    raw = apply_overrides(read_stack_file(REPO / "stacks" / f"Pulumi.{stack}.yaml"), list(overrides))
    return capture(MAIN, config_for_pulumi(raw), stack=stack)


def waits_for(cap: Capture, resource: Registration) -> set[str]:
    """Every URN Pulumi finishes creating before it creates `resource`: its dependencies and
    property dependencies, transitively; depending on a component waits for all its children."""
    by_urn = {r.urn: r for r in cap.resources}
    children: dict[str, list[str]] = {}
    for r in cap.resources:
        children.setdefault(r.parent, []).append(r.urn)
    seen: set[str] = set()
    todo = list(resource.dependencies) + [u for urns in resource.property_dependencies.values() for u in urns]
    while todo:
        urn = todo.pop()
        if urn in seen:
            continue
        seen.add(urn)
        found = by_urn.get(urn)
        if found is None:
            continue
        todo += found.dependencies + [u for urns in found.property_dependencies.values() for u in urns]
        if not found.custom:
            todo += children.get(urn, [])
    return seen


# --- 1. create-time checks of another resource ------------------------------------------------------


def _lustre_group_rules(cap: Capture, fs: Registration) -> list[Registration]:
    """FSx CreateFileSystem: the file system's security groups must allow Lustre traffic (988,
    1018-1023) among themselves, or it fails with InvalidNetworkSettings (FSx User Guide, "Creating
    an FSx for Lustre file system fails"; aws-parallelcluster #6181, fixed by PR #1198 with this edge).
    The rules of those groups that stay within them (or leave to anywhere) are what it checks."""
    groups = set(fs.inputs["securityGroupIds"])
    return [
        rule
        for rule in cap.by_type(INGRESS) + cap.by_type(EGRESS)
        if rule.inputs.get("securityGroupId") in groups
        and rule.inputs.get("referencedSecurityGroupId", next(iter(groups))) in groups
    ]


def _bucket_named(cap: Capture, uri: str | None) -> list[Registration]:
    """The bucket this stack creates for an s3:// URI (none when the operator's bucket is used)."""
    if not uri:
        return []
    name = uri.removeprefix("s3://").split("/", 1)[0]
    return [b for b in cap.by_type(BUCKET) if b.inputs.get("bucket") == name]


def _repository_bucket(cap: Capture, dra: Registration) -> list[Registration]:
    """FSx CreateDataRepositoryAssociation checks the bucket (it exists, FSx may list it)."""
    return _bucket_named(cap, dra.inputs.get("dataRepositoryPath"))


def _legacy_import_bucket(cap: Capture, fs: Registration) -> list[Registration]:
    """The legacy link (importPath on a scratch/PERSISTENT_1 file system) is checked at CreateFileSystem."""
    return _bucket_named(cap, fs.inputs.get("importPath"))


def _access_log_bucket_policy(cap: Capture, lb: Registration) -> list[Registration]:
    """ELB tests write access to the access-log bucket when logging is enabled ("Access Denied for
    bucket ... Please check S3bucket permission"), so the bucket policy must be in place first."""
    logs = lb.inputs.get("accessLogs") or {}
    if not logs.get("enabled"):
        return []
    buckets = [b for b in cap.by_type(BUCKET) if b.outputs.get("bucket", b.inputs.get("bucket")) == logs["bucket"]]
    bucket_ids = {b.id for b in buckets}
    return [p for p in cap.by_type(BUCKET_POLICY) if p.inputs.get("bucket") in bucket_ids]


def _launch_role_policies(cap: Capture, launcher: Registration) -> list[Registration]:
    """What launches instances as soon as it is created (an Auto Scaling group, an instance, a Batch
    compute environment) waits for every policy of its instances' role: nodes read the munge key,
    datasets and weights, and complete lifecycle hooks, at first boot, with that role."""
    waited = waits_for(cap, launcher)
    profiles = [p for p in cap.by_type(INSTANCE_PROFILE) if p.urn in waited]
    roles = {urn for p in profiles for urn in p.property_dependencies.get("role", [])}
    return [
        policy
        for policy in cap.by_type(ROLE_POLICY) + cap.by_type(ROLE_POLICY_ATTACHMENT)
        if set(policy.property_dependencies.get("role", [])) & roles
    ]


@dataclass(frozen=True)
class Prerequisite:
    dependent: str  # the type whose create (or first boot) checks another resource
    what: str
    prerequisites: Callable[[Capture, Registration], list[Registration]]


CREATE_TIME_PREREQUISITES = [
    Prerequisite(LUSTRE, "its security groups' rules", _lustre_group_rules),
    Prerequisite(LUSTRE, "the legacy import bucket", _legacy_import_bucket),
    Prerequisite(DRA, "its data repository bucket", _repository_bucket),
    Prerequisite(LOAD_BALANCER, "the access-log bucket policy", _access_log_bucket_policy),
    Prerequisite(GROUP, "its instances' role policies", _launch_role_policies),
    Prerequisite(INSTANCE, "its role policies", _launch_role_policies),
    Prerequisite(COMPUTE_ENVIRONMENT, "its instances' role policies", _launch_role_policies),
]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_create_time_check_has_its_dependency(variant: str) -> None:
    cap = export(variant)
    missing = []
    for rule in CREATE_TIME_PREREQUISITES:
        for resource in cap.by_type(rule.dependent):
            waited = waits_for(cap, resource)
            for prerequisite in rule.prerequisites(cap, resource):
                if prerequisite.urn not in waited:
                    missing.append(f"{resource.name} is created without waiting for {rule.what}: {prerequisite.name}")
    assert missing == []


def test_every_prerequisite_rule_applies_somewhere() -> None:
    """Guards the guard: each rule finds prerequisites in at least one variant."""
    for rule in CREATE_TIME_PREREQUISITES:
        found = [
            p
            for variant in VARIANTS
            for resource in export(variant).by_type(rule.dependent)
            for p in rule.prerequisites(export(variant), resource)
        ]
        assert found, f"{rule.dependent}: {rule.what} matched nothing"


def test_the_check_sees_a_missing_edge() -> None:
    """The Lustre rule on a file system that waited for nothing reports every cluster rule."""
    cap = export("training")
    fs = cap.one(LUSTRE)
    detached = Registration(**{**fs.__dict__, "dependencies": [], "property_dependencies": {}})
    assert waits_for(cap, detached) == set()
    assert {r.name for r in _lustre_group_rules(cap, fs)} == {
        "aws-training-net-cluster-from-self",
        "aws-training-net-cluster-to-self",
        "aws-training-net-cluster-egress",
    }


# --- 2. replace-forcing inputs that are unique in the cloud ------------------------------------------


@dataclass(frozen=True)
class DeleteFirst:
    type: str
    why: str
    applies: Callable[[Registration], bool] = lambda r: True


DELETE_FIRST = [
    DeleteFirst(DRA, "fileSystemPath/dataRepositoryPath are ForceNew and unique per file system and bucket prefix"),
    DeleteFirst(ALIAS, "name is ForceNew and unique per account and Region"),
    DeleteFirst(
        INSTANCE, "a fixed privateIp is ForceNew and unique in the subnet", lambda r: bool(r.inputs.get("privateIp"))
    ),
    DeleteFirst(VOLUME_ATTACHMENT, "instanceId/volumeId are ForceNew and a volume attaches to one instance"),
    DeleteFirst(WEB_ACL_ASSOCIATION, "webAclArn/resourceArn are ForceNew and a load balancer has one web ACL"),
    DeleteFirst(
        VPC_ENDPOINT, "serviceName/vpcId are ForceNew; private DNS names and gateway routes are unique in a VPC"
    ),
    DeleteFirst(SCHEDULE, "scheduledActionName is ForceNew and unique per group"),
    DeleteFirst(
        FLOW_LOG, "every input is ForceNew and EC2 refuses a second flow log of one resource to one destination"
    ),
    DeleteFirst(
        WAF_LOGGING, "resourceArn/logDestinationConfigs are ForceNew and a web ACL has one logging configuration"
    ),
]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_unique_replace_forcing_inputs_replace_delete_first(variant: str) -> None:
    cap = export(variant)
    wrong = [
        f"{r.name} ({rule.type.split(':')[-1]}): {rule.why}, but it would be replaced create-first"
        for rule in DELETE_FIRST
        for r in cap.by_type(rule.type)
        if rule.applies(r) and not r.delete_before_replace
    ]
    assert wrong == []


def test_every_delete_first_rule_applies_somewhere() -> None:
    present = {
        rule.type for rule in DELETE_FIRST for v in VARIANTS for r in export(v).by_type(rule.type) if rule.applies(r)
    }
    assert present == {rule.type for rule in DELETE_FIRST}


# --- versioned buckets -------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["training", "fine-tuning", "serving"])
def test_every_versioned_bucket_expires_noncurrent_versions(variant: str) -> None:
    """A versioned bucket keeps (and bills) every overwritten or deleted version unless a lifecycle
    rule expires them (S3 User Guide, "Retaining multiple versions of objects with S3 Versioning")."""
    cap = export(variant)
    versioned = {v.inputs["bucket"] for v in cap.by_type(VERSIONING)}
    expiring = {
        config.inputs["bucket"]
        for config in cap.by_type(LIFECYCLE)
        if any(
            "noncurrentVersionExpiration" in rule and rule.get("status") == "Enabled" for rule in config.inputs["rules"]
        )
    }
    assert versioned and versioned <= expiring, versioned - expiring
