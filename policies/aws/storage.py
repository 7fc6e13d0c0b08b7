"""How the guardrails read AWS storage: encryption, public buckets, versioning, scheduled deletion, queues'
dead-letter queues. Each check names the trusted rule it mirrors (Checkov CKV_AWS_xx, Trivy AVD-AWS-xxxx, an
AWS doc) or says it is ours."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..common import (
    actions_of,
    as_list,
    aws_principals,
    decode,
    is_allow,
    of_type,
    statements,
    truthy,
    urn_name,
)
from ..links import any_referrer, referrers_of, targets_of
from ..readers import name_of as _name
from ..vendor import tokens_of
from .concepts import AWS
from .inline_buckets import SSE_TWIN, inline_of, with_inline_settings

BUCKET = tokens_of(AWS, "bucket")
BUCKET_SSE = tokens_of(AWS, "bucket-encryption")
BUCKET_PAB = tokens_of(AWS, "bucket-public-access-block")
BUCKET_VERSIONING = tokens_of(AWS, "bucket-versioning")
BUCKET_ACL = tokens_of(AWS, "bucket-acl")
BUCKET_POLICY = tokens_of(AWS, "bucket-policy")
BUCKET_LIFECYCLE = tokens_of(AWS, "bucket-lifecycle")
FILE_SYSTEM_LINKS = tokens_of(AWS, "file-system-link")
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
QUEUE = "aws:sqs/queue:Queue"
QUEUE_REDRIVE = "aws:sqs/redrivePolicy:RedrivePolicy"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
VOLUME = "aws:ebs/volume:Volume"
DATABASE = ("aws:rds/instance:Instance", "aws:rds/cluster:Cluster")
KMS_ALGORITHMS = ("aws:kms", "aws:kms:dsse")
EBS_DEFAULT_ENCRYPTION = "aws:ebs/encryptionByDefault:EncryptionByDefault"


# --- encryption at rest --------------------------------------------------------------------------


def _sse_algorithms(config: Any) -> list[Any]:
    return [
        (r.get("applyServerSideEncryptionByDefault") or {}).get("sseAlgorithm")
        for r in as_list(config.props.get("rules"))
    ]


def check_encryption_at_rest(resource: Any) -> Iterable[str]:
    """Data at rest is encrypted: S3 SSE rules name an algorithm (Checkov CKV_AWS_19, Trivy AVD-AWS-0088),
    persistent Lustre uses a customer KMS key (https://docs.aws.amazon.com/fsx/latest/LustreGuide/encryption-at-rest.html),
    SQS queues use SSE (Checkov CKV_AWS_27, Trivy AVD-AWS-0096), EBS volumes and launch-template / instance
    disks are encrypted (Checkov CKV_AWS_3 / CKV_AWS_8, Trivy AVD-AWS-0026 / AVD-AWS-0131), and EBS encryption by
    default is never turned off (Checkov CKV_AWS_106)."""
    kind, props, name = resource.resource_type, resource.props, _name(resource)
    if kind in BUCKET:
        for inline in inline_of([resource], SSE_TWIN):
            yield from check_encryption_at_rest(inline)
    elif kind in BUCKET_SSE:
        if not any(_sse_algorithms(resource)):
            yield f"{name}: no default encryption algorithm (aws:kms, aws:kms:dsse or AES256)"
    elif kind == LUSTRE:
        deployment = str(props.get("deploymentType") or "")
        # SCRATCH file systems are always encrypted with an AWS-owned key and cannot take kmsKeyId.
        if not deployment.startswith("SCRATCH") and not props.get("kmsKeyId"):
            yield f"Lustre file system {name} has no kmsKeyId: encrypt it with the stack's customer KMS key"
    elif kind == EBS_DEFAULT_ENCRYPTION:
        # The account-wide default every new volume takes (https://docs.aws.amazon.com/ebs/latest/userguide/encryption-by-default.html).
        if props.get("enabled") is not None and not truthy(props.get("enabled")):
            yield f"{name} turns EBS encryption by default off for the region's new volumes (enabled false)"
    elif kind == QUEUE:
        if not truthy(props.get("sqsManagedSseEnabled")) and not props.get("kmsMasterKeyId"):
            yield f"queue {name} is not encrypted: set sqsManagedSseEnabled or kmsMasterKeyId"
    elif kind in DATABASE:  # Checkov CKV_AWS_16 / CKV_AWS_96, Trivy AVD-AWS-0080
        if not truthy(props.get("storageEncrypted")):
            yield f"RDS database {name} is not encrypted: set storageEncrypted (and kmsKeyId, the stack's key)"
    elif kind == VOLUME:
        if not truthy(props.get("encrypted")):
            yield f"EBS volume {name} is not encrypted"
    elif kind == LAUNCH_TEMPLATE:
        for mapping in as_list(props.get("blockDeviceMappings")):
            ebs = mapping.get("ebs")
            if ebs is not None and not truthy(ebs.get("encrypted")):
                yield f"launch template {name}: EBS volume {mapping.get('deviceName')} is not encrypted"
    elif kind == INSTANCE:
        disks = [props.get("rootBlockDevice"), *as_list(props.get("ebsBlockDevices"))]
        for disk in disks:
            if disk is not None and not truthy(disk.get("encrypted")):
                yield f"instance {name}: EBS volume {disk.get('deviceName', 'root')} is not encrypted"


def check_bucket_encryption(resources: Sequence[Any], pattern: str) -> Iterable[tuple[str, str]]:
    """Every bucket has a server-side encryption configuration (Checkov CKV_AWS_19, Trivy
    AVD-AWS-0088), and buckets holding data (datasets, checkpoints, artifacts: `kmsBucketPattern`) use
    a KMS key (Checkov CKV_AWS_145, Trivy AVD-AWS-0132): SSE-S3 would drop the key policy that limits
    who can read them. Log buckets may keep SSE-S3 (ALB access logs only support it)."""
    configs = of_type(with_inline_settings(resources), *BUCKET_SSE)
    for bucket in of_type(resources, *BUCKET):
        linked = referrers_of(bucket, configs, "bucket")
        if not linked:
            yield bucket.urn, f"bucket {_name(bucket)} has no server-side encryption configuration"
        if not bucket_named(pattern, bucket):
            continue
        for config in linked:
            # A rule without an algorithm is encryption-at-rest's finding, not a weak algorithm.
            weak = [a for a in _sse_algorithms(config) if a and a not in KMS_ALGORITHMS]
            if weak:
                yield (
                    config.urn,
                    (
                        f"{_name(config)} encrypts data bucket {_name(bucket)} with {', '.join(map(str, weak))}; "
                        "use aws:kms with the stack's key"
                    ),
                )
            # aws:kms without a key id (or naming alias/aws/s3) is the AWS managed key, whose key policy the stack
            # cannot narrow (https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingKMSEncryption.html).
            for rule in as_list(config.props.get("rules")):
                default = rule.get("applyServerSideEncryptionByDefault") or {}
                key = str(default.get("kmsMasterKeyId") or "")
                if default.get("sseAlgorithm") in KMS_ALGORITHMS and (not key or key.endswith("alias/aws/s3")):
                    yield (
                        config.urn,
                        f"{_name(config)} encrypts data bucket {_name(bucket)} with the AWS managed key aws/s3; "
                        "name the stack's KMS key (kmsMasterKeyId)",
                    )


# --- public exposure -----------------------------------------------------------------------------

PUBLIC_ACLS = ("public-read", "public-read-write", "authenticated-read")
PAB_FLAGS = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")


def check_no_public_buckets(resource: Any) -> Iterable[str]:
    """No public bucket: all four public access block flags (Checkov CKV_AWS_53/54/55/56, Trivy
    AVD-AWS-0086/0087/0091/0093), no public ACL (CKV_AWS_20, AVD-AWS-0092), no policy granting `*`
    without a condition (CKV_AWS_70)."""
    kind, props, name = resource.resource_type, resource.props, _name(resource)
    if kind in BUCKET_PAB:
        off = [flag for flag in PAB_FLAGS if not truthy(props.get(flag))]
        if off:
            yield f"public access block {name} leaves {', '.join(off)} off; all four must be true"
    elif kind in BUCKET_ACL + BUCKET:
        acl = props.get("acl")
        if acl in PUBLIC_ACLS:
            yield f"{name} uses the public ACL {acl}"
    if kind in BUCKET_POLICY + BUCKET:
        yield from _public_policy(resource)
    if kind in DATABASE and truthy(props.get("publiclyAccessible")):  # Checkov CKV_AWS_17, Trivy AVD-AWS-0082
        yield f"RDS database {name} is publicly accessible: set publiclyAccessible false"


def _public_policy(resource: Any) -> Iterable[str]:
    """A bucket policy, or a bucket's own inline `policy` (the deprecated spelling of the same document),
    allowing `*` without a condition."""
    label = "bucket policy" if resource.resource_type in BUCKET_POLICY else "inline bucket policy of"
    for statement in statements(resource.props.get("policy")):
        if is_allow(statement) and "*" in aws_principals(statement) and not statement.get("Condition"):
            yield f"{label} {_name(resource)} allows {', '.join(actions_of(statement))} to everyone (Principal *)"


def check_public_bucket_policies_final(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """Stack-level repeat of `no-public-buckets` for bucket policy documents (built from bucket ARNs,
    so often unknown during preview); access block flags and ACLs are literals and stay per resource."""
    for resource in of_type(resources, *BUCKET_POLICY, *BUCKET):
        for message in _public_policy(resource):
            yield resource.urn, message


def check_bucket_public_access_block(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """Every bucket has its own public access block (Checkov CKV2_AWS_6, Trivy AVD-AWS-0094)."""
    blocks = of_type(resources, *BUCKET_PAB)
    for bucket in of_type(resources, *BUCKET):
        if not any_referrer(bucket, blocks, "bucket"):
            yield bucket.urn, f"bucket {_name(bucket)} has no public access block"


# --- state ---------------------------------------------------------------------------------------


# How messages name a stateful kind (protect-stateful; the concept otherwise).
STATEFUL_NAMES = {
    "aws:s3/bucket:Bucket": "bucket",
    "aws:s3/bucketV2:BucketV2": "bucket",
    "aws:fsx/lustreFileSystem:LustreFileSystem": "Lustre file system",
    "aws:kms/key:Key": "KMS key",
    "aws:ebs/volume:Volume": "EBS volume",
}


def bucket_named(pattern: str, bucket: Any) -> bool:
    names = [urn_name(bucket.urn), str(bucket.props.get("bucket") or "")]
    return any(re.search(pattern, n, re.IGNORECASE) for n in names)


def check_bucket_versioning(resources: Sequence[Any], pattern: str) -> Iterable[tuple[str, str]]:
    """Checkpoint and artifact buckets are versioned (an overwritten checkpoint is recoverable):
    Checkov CKV_AWS_21, Trivy AVD-AWS-0090."""
    versionings = of_type(with_inline_settings(resources), *BUCKET_VERSIONING)
    buckets = of_type(resources, *BUCKET)
    for bucket in buckets:
        if not bucket_named(pattern, bucket):
            continue
        linked = referrers_of(bucket, versionings, "bucket")
        enabled = [v for v in linked if (v.props.get("versioningConfiguration") or {}).get("status") == "Enabled"]
        # Two settings of one bucket (the inline block and BucketVersioning) overwrite each other on every
        # update: one that suspends is versioning suspended, whatever the other says.
        if not enabled or len(enabled) < len(linked):
            state = "suspended" if linked else "off"
            yield bucket.urn, f"bucket {_name(bucket)} holds checkpoints/artifacts but versioning is {state}"
    # Suspending versioning on ANY bucket is a step toward losing data (the pattern only decides which
    # buckets must turn it on): once suspended, overwrites and deletes are final.
    for versioning in versionings:
        status = (versioning.props.get("versioningConfiguration") or {}).get("status")
        if status is not None and status != "Enabled":
            targets = targets_of(versioning, "bucket", buckets)
            if not any(bucket_named(pattern, b) for b in targets):
                yield (
                    versioning.urn,
                    f"{_name(versioning)} sets versioning {status}; versioning is never suspended on a stateful bucket",
                )


def _expires_current_versions(rule: Any) -> bool:
    expiration = rule.get("expiration") if hasattr(rule, "get") else None
    if expiration is None or not hasattr(expiration, "get") or str(rule.get("status", "Enabled")) != "Enabled":
        return False
    return expiration.get("days") not in (None, 0, 0.0) or bool(expiration.get("date"))


def check_no_scheduled_data_loss(resources: Sequence[Any], logs: str) -> Iterable[tuple[str, str]]:
    """Nothing in the stack deletes data on a schedule or on the way out: no lifecycle rule expires
    current object versions on a data bucket (log buckets, `logBucketPattern`, may), no file-system
    link exports deletions to S3 (a file removed on Lustre deletes the object: FSx DRA autoExportPolicy
    DELETED, https://docs.aws.amazon.com/fsx/latest/LustreGuide/autoexport-data-repo-dra.html), no
    bucket is `forceDestroy` (a destroy empties it). Ours; Checkov CKV_AWS_93-style protection of state."""
    buckets = of_type(resources, *BUCKET)
    for lifecycle in of_type(with_inline_settings(resources), *BUCKET_LIFECYCLE):
        targets = targets_of(lifecycle, "bucket", buckets)
        if targets and all(bucket_named(logs, b) for b in targets):
            continue
        for rule in as_list(lifecycle.props.get("rules")):
            if _expires_current_versions(rule):
                yield (
                    lifecycle.urn,
                    (
                        f"{_name(lifecycle)} rule {rule.get('id')} expires current object versions; "
                        "expire only noncurrent versions on data buckets"
                    ),
                )
    for link in of_type(resources, *FILE_SYSTEM_LINKS):
        s3 = link.props.get("s3") or {}
        events = (
            [str(e) for e in as_list((s3.get("autoExportPolicy") or {}).get("events"))] if hasattr(s3, "get") else []
        )
        if "DELETED" in events:
            yield (
                link.urn,
                f"{_name(link)} exports deletions to {link.props.get('dataRepositoryPath')} (autoExportPolicy DELETED)",
            )
    # A database is deleted only on purpose and never without its last snapshot (Checkov CKV_AWS_293, Trivy
    # AVD-AWS-0177); its automated backups are kept (backupRetentionPeriod 0 turns them off, CKV_AWS_133).
    for database in of_type(resources, *DATABASE):
        props, name = database.props, _name(database)
        if not truthy(props.get("deletionProtection")):
            yield database.urn, f"RDS database {name} has no deletionProtection"
        if truthy(props.get("skipFinalSnapshot")):
            yield database.urn, f"RDS database {name} skips its final snapshot (skipFinalSnapshot)"
        if props.get("backupRetentionPeriod") in (0, "0"):
            yield database.urn, f"RDS database {name} keeps no automated backups (backupRetentionPeriod 0)"


def check_queue_dlq(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """Every queue has a dead-letter queue, or is one: poison requests must not loop forever.
    AWS SQS best practices (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html); ours."""
    queues = of_type(resources, QUEUE)
    redrives = of_type(resources, QUEUE_REDRIVE)
    for queue in queues:
        policy = decode(queue.props.get("redrivePolicy"))
        if isinstance(policy, Mapping) and policy.get("deadLetterTargetArn"):
            continue
        if any_referrer(queue, redrives, "queueUrl", keys=("url", "id")):
            continue
        is_dlq = any(q is not queue for q in referrers_of(queue, queues, "redrivePolicy", keys=())) or any(
            _targets(q, queue) for q in queues if q is not queue
        )
        if not is_dlq:
            yield queue.urn, f"queue {_name(queue)} has no dead-letter queue (redrivePolicy.deadLetterTargetArn)"


def _targets(source: Any, queue: Any) -> bool:
    policy = decode(source.props.get("redrivePolicy"))
    arn = queue.props.get("arn")
    return isinstance(policy, Mapping) and arn is not None and policy.get("deadLetterTargetArn") == arn
