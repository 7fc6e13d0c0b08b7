"""S3 buckets, KMS key and FSx for Lustre: the stateful part of a stack.

`SecureBucket` is reusable (training datasets/checkpoints, serving access logs, ...): every bucket
we create is private (public access block, owner-enforced ownership), SSE-KMS with a customer key,
TLS-only, aborts stale multipart uploads, and is protected from `pulumi destroy` by default.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

from accelstack.clouds.aws import names
from accelstack.components.aws.kms import service_host, stack_key_policy
from accelstack.planner.training_plan import PlannedFileSystem
from accelstack.spec.models import TrainingStorage as TrainingStorageSpec
from accelstack.spec.uris import split_bucket_uri

# A bucket-policy hook: given the bucket ARN, the extra statements to add beside the TLS-only deny.
PolicyStatements = Callable[[pulumi.Output[str]], pulumi.Input[Sequence[dict[str, Any]]]]


def tls_only_statement(bucket_arn: str) -> dict[str, Any]:
    """Deny any request made without TLS (AWS Security Hub control S3.5)."""
    return {
        "Sid": "DenyInsecureTransport",
        "Effect": "Deny",
        "Principal": "*",
        "Action": "s3:*",
        "Resource": [bucket_arn, f"{bucket_arn}/*"],
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }


def bucket_policy_document(bucket_arn: str, extra_statements: Sequence[dict[str, Any]] = ()) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [tls_only_statement(bucket_arn), *extra_statements]})


class SecureBucket(pulumi.ComponentResource):
    """A private, encrypted, TLS-only S3 bucket.

    `bucket_name` fixes the bucket's name (e.g. from an `s3://name` URI); without it Pulumi
    auto-names it from `name`. SSE-KMS with `kms_key_arn` (the stack's customer key) is the
    default; pass `sse_algorithm="AES256"` (and no key) only where AWS cannot use a KMS key, e.g.
    ALB access logs. `policy_statements` is a hook receiving the bucket ARN and returning extra
    policy statements (e.g. cross-account artifact reads); the TLS-only deny is always present.
    `noncurrent_version_days` (versioned buckets) expires overwritten/deleted versions that many
    days after they stop being current; current versions never expire unless `expiration_days`
    is set (log buckets: each log object expires that many days after it was written).
    """

    bucket: aws.s3.Bucket
    name_out: pulumi.Output[str]
    arn: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        kms_key_arn: pulumi.Input[str] | None,
        bucket_name: pulumi.Input[str] | None = None,
        versioning: bool = True,
        abort_multipart_days: int = 7,
        noncurrent_version_days: int | None = None,
        protect: bool = True,
        force_destroy: bool = False,
        policy_statements: PolicyStatements | None = None,
        sse_algorithm: str = "aws:kms",
        expiration_days: int | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("accelstack:aws:SecureBucket", name, None, opts)
        if sse_algorithm == "aws:kms" and kms_key_arn is None:
            raise ValueError(f"SecureBucket {name}: SSE-KMS needs kms_key_arn")
        child = pulumi.ResourceOptions(parent=self)
        self.bucket = aws.s3.Bucket(
            name,
            bucket=bucket_name,
            force_destroy=force_destroy,
            # retain_on_delete: after an unprotect, `pulumi destroy` (or removing the stack) forgets the
            # bucket and leaves its data in the account instead of deleting it.
            opts=pulumi.ResourceOptions(parent=self, protect=protect, retain_on_delete=protect),
        )
        bucket_id = self.bucket.id
        self.name_out = self.bucket.bucket
        self.arn = self.bucket.arn

        # Public access block and ownership first: a policy must never land on an unblocked bucket.
        access_block = aws.s3.BucketPublicAccessBlock(
            f"{name}-public-access",
            bucket=bucket_id,
            block_public_acls=True,
            block_public_policy=True,
            ignore_public_acls=True,
            restrict_public_buckets=True,
            opts=child,
        )
        ownership = aws.s3.BucketOwnershipControls(
            f"{name}-ownership",
            bucket=bucket_id,
            rule=aws.s3.BucketOwnershipControlsRuleArgs(object_ownership="BucketOwnerEnforced"),
            opts=child,
        )
        if noncurrent_version_days is not None and not versioning:
            raise ValueError(f"SecureBucket {name}: noncurrent_version_days needs versioning")
        versioning_config = None
        if versioning:
            versioning_config = aws.s3.BucketVersioning(
                f"{name}-versioning",
                bucket=bucket_id,
                versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(status="Enabled"),
                opts=child,
            )
        default = aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
            sse_algorithm=sse_algorithm,
            kms_master_key_id=kms_key_arn if sse_algorithm == "aws:kms" else None,
        )
        self.encryption = aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-encryption",
            bucket=bucket_id,
            rules=[
                aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                    apply_server_side_encryption_by_default=default,
                    # S3 Bucket Keys cut KMS request volume (and cost) by ~99% for many small objects.
                    bucket_key_enabled=sse_algorithm == "aws:kms",
                )
            ],
            opts=child,
        )
        rules = [
            aws.s3.BucketLifecycleConfigurationRuleArgs(
                id="abort-incomplete-multipart-uploads",
                status="Enabled",
                filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
                abort_incomplete_multipart_upload=(
                    aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
                        days_after_initiation=abort_multipart_days
                    )
                ),
            )
        ]
        if noncurrent_version_days is not None:
            rules.append(
                aws.s3.BucketLifecycleConfigurationRuleArgs(
                    # Old versions of rewritten objects (e.g. a `latest` checkpoint) would otherwise
                    # be kept, and billed, forever. No `expiration.days`: current versions stay.
                    id="expire-noncurrent-versions",
                    status="Enabled",
                    filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
                    noncurrent_version_expiration=(
                        aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                            noncurrent_days=noncurrent_version_days
                        )
                    ),
                    # Delete markers left with no versions behind them once those expire (a marker
                    # is not data; this never touches an object's current version).
                    expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(expired_object_delete_marker=True),
                )
            )
        if expiration_days is not None:
            # Its own rule: S3 refuses `days` and `expired_object_delete_marker` in one expiration.
            rules.append(
                aws.s3.BucketLifecycleConfigurationRuleArgs(
                    id="expire-current-versions",
                    status="Enabled",
                    filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
                    expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(days=expiration_days),
                )
            )
        aws.s3.BucketLifecycleConfiguration(
            f"{name}-lifecycle",
            bucket=bucket_id,
            rules=rules,
            # Versioning first: S3 evaluates noncurrent-version rules against the bucket's versioning
            # state, and the provider docs order the two this way.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[versioning_config] if versioning_config else []),
        )
        extra = policy_statements(self.arn) if policy_statements else []
        self.policy = aws.s3.BucketPolicy(
            f"{name}-policy",
            bucket=bucket_id,
            policy=pulumi.Output.all(self.arn, extra).apply(lambda args: bucket_policy_document(args[0], args[1])),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[access_block, ownership]),
        )
        self.register_outputs({"bucket": self.name_out, "arn": self.arn})


# ---------------------------------------------------------------------------------------------
# Training storage: the stack's KMS key, datasets + checkpoints buckets, FSx for Lustre.
# ---------------------------------------------------------------------------------------------

# Data repository associations (per-path links with import AND export policies) exist only on
# PERSISTENT_2; older deployment types link one bucket with import_path/export_path.
DRA_DEPLOYMENT_TYPES = frozenset({"PERSISTENT_2"})
PERSISTENT_DEPLOYMENT_TYPES = frozenset({"PERSISTENT_1", "PERSISTENT_2"})
LUSTRE_VERSION = "2.15"  # supported by every deployment type; AWS recommends it for new file systems
DATASET_IMPORT_EVENTS = ("NEW", "CHANGED", "DELETED")
# Never DELETED: deleting a checkpoint on Lustre (e.g. rotation) must not delete it in S3.
CHECKPOINT_EXPORT_EVENTS = ("NEW", "CHANGED")
CHECKPOINT_IMPORT_EVENTS = ("NEW", "CHANGED", "DELETED")
# Overwritten/deleted dataset object versions are kept this long, then expire (current versions never).
DATASET_NONCURRENT_VERSION_DAYS = 30


def parse_s3_uri(uri: str, config_path: str) -> tuple[str, str]:
    """`s3://bucket/some/prefix` -> ("bucket", "some/prefix")."""
    bucket, prefix = split_bucket_uri(uri)
    if not uri.startswith("s3://") or not bucket:
        raise ValueError(f"{config_path}: {uri!r} is not an S3 URI; expected s3://bucket[/prefix]")
    return bucket, prefix.strip("/")


def lustre_relative_path(path: str, mount_path: str, config_path: str) -> str:
    """A node path under the Lustre mount (`/fsx/checkpoints`) -> the file system path (`/checkpoints`)."""
    mount = mount_path.rstrip("/") or "/"
    if mount != "/" and not (path == mount or path.startswith(mount + "/")):
        raise ValueError(f"{config_path}: {path!r} must be under the Lustre mount path {mount_path!r}")
    relative = "/" + path[len(mount) :].strip("/") if mount != "/" else "/" + path.strip("/")
    if relative == "/":
        raise ValueError(f"{config_path}: {path!r} is the Lustre root; use a subdirectory such as {mount}/checkpoints")
    return relative


def dra_paths_overlap(first: str, second: str) -> bool:
    """FSx rejects a DRA whose file system path is the same as, or nested in, another's."""
    a, b = first.rstrip("/") + "/", second.rstrip("/") + "/"
    return a.startswith(b) or b.startswith(a)


def kms_key_policy(account_id: str, region: str, artifact_readers: Sequence[str]) -> dict[str, Any]:
    """EBS (Auto Scaling launches) and S3 (FSx data repository links, bucket keys) use the key for
    principals in this account; artifact-reader accounts may only decrypt through S3."""
    readers = [
        {
            "Sid": "ArtifactReadersDecryptThroughS3",
            "Effect": "Allow",
            "Principal": {"AWS": [f"arn:aws:iam::{reader}:root" for reader in artifact_readers]},
            "Action": ["kms:Decrypt", "kms:DescribeKey"],
            "Resource": "*",
            "Condition": {"StringEquals": {"kms:ViaService": service_host("s3", region)}},
        }
    ]
    return stack_key_policy(
        account_id,
        region,
        ["ec2", "s3"],
        sid="UseThroughEbsAndS3InThisAccount",
        extra_statements=readers if artifact_readers else (),
    )


# Log buckets (S3 server access logs, VPC flow logs): a year of logs, old versions of a log object
# (there should be none: log objects are written once) gone after a month.
LOG_RETENTION_DAYS = 365
LOG_NONCURRENT_VERSION_DAYS = 30


def log_bucket(
    name: str,
    statements: PolicyStatements,
    opts: pulumi.ResourceOptions,
    *,
    kms_key_arn: pulumi.Input[str] | None = None,
) -> SecureBucket:
    """A bucket AWS log delivery writes to. S3 server access logs need SSE-S3 (S3 user guide,
    "Enabling Amazon S3 server access logging": "only SSE-S3 is supported" for the destination
    bucket); VPC flow logs take SSE-KMS with a customer managed key whose policy lets the log
    delivery service use it (`kms_key_arn`, see network.flow_log_key_policy). Protected like the
    ALB log bucket: logs are audit evidence."""
    return SecureBucket(
        name,
        kms_key_arn=kms_key_arn,
        sse_algorithm="AES256" if kms_key_arn is None else "aws:kms",
        noncurrent_version_days=LOG_NONCURRENT_VERSION_DAYS,
        expiration_days=LOG_RETENTION_DAYS,
        policy_statements=statements,
        opts=opts,
    )


def server_access_log_statements(
    log_bucket_arn: str, source_bucket_arns: Sequence[str], account_id: str
) -> list[dict[str, Any]]:
    """What S3 server access log delivery needs on a bucket with ACLs disabled (BucketOwnerEnforced):
    the logging service principal, limited to our source buckets and account (S3 user guide,
    "Permissions for log delivery", bucket policy for the logging.s3.amazonaws.com principal)."""
    return [
        {
            "Sid": "S3ServerAccessLogDelivery",
            "Effect": "Allow",
            "Principal": {"Service": "logging.s3.amazonaws.com"},
            "Action": "s3:PutObject",
            "Resource": f"{log_bucket_arn}/*",
            "Condition": {
                "ArnLike": {"aws:SourceArn": list(source_bucket_arns)},
                "StringEquals": {"aws:SourceAccount": account_id},
            },
        }
    ]


def artifact_reader_statements(bucket_arn: str, prefix: str, readers: Sequence[str]) -> list[dict[str, Any]]:
    """Read-only, prefix-limited access for serving accounts; nothing here grants write or delete."""
    if not readers:
        return []
    principals = {"AWS": [f"arn:aws:iam::{reader}:root" for reader in readers]}
    key_prefix = prefix.lstrip("/")
    return [
        {
            "Sid": "ArtifactReadersGetObjects",
            "Effect": "Allow",
            "Principal": principals,
            "Action": "s3:GetObject",
            "Resource": f"{bucket_arn}/{key_prefix}*",
        },
        {
            "Sid": "ArtifactReadersListPrefix",
            "Effect": "Allow",
            "Principal": principals,
            "Action": "s3:ListBucket",
            "Resource": bucket_arn,
            "Condition": {"StringLike": {"s3:prefix": [f"{key_prefix}*"]}},
        },
    ]


class TrainingStorage(pulumi.ComponentResource):
    """The stack key, datasets/checkpoints buckets and the Lustre file system staging them.

    Outputs: kms_key_arn, dataset_bucket(_arn), checkpoint_bucket(_arn) (None without
    checkpoints), lustre_dns_name / lustre_mount_name (None without Lustre). Resources: kms_key,
    file_system (the Lustre file system, None without Lustre).
    """

    def __init__(
        self,
        name: str,
        spec: Any,  # StackSpec (training workload)
        *,
        file_system: PlannedFileSystem | None,
        subnet_id: pulumi.Input[str],
        security_group_id: pulumi.Input[str],
        security_group_rules: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("accelstack:aws:TrainingStorage", name, None, opts)
        # CreateFileSystem checks the security group's rules (port 988 within the group) and fails
        # with InvalidNetworkSettings if they are not there yet; the group id alone does not wait
        # for them (FSx guide "Creating an FSx for Lustre file system fails"; ParallelCluster #6181).
        self._security_group_rules = list(security_group_rules)
        # The buckets this stack creates: FSx checks a data repository's bucket at creation, and
        # the association names the bucket by its spec URI, a plain string that carries no dependency.
        self._datasets_bucket: pulumi.Resource | None = None
        self._checkpoints_bucket: pulumi.Resource | None = None
        training = spec.training
        storage = training.storage
        child = pulumi.ResourceOptions(parent=self)

        policy = kms_key_policy(spec.account.id, spec.account.region, training.artifact_readers)
        self.kms_key = aws.kms.Key(
            f"{name}-key",
            description=f"accelstack {spec.stack}: datasets, checkpoints, Lustre and EBS volumes",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            policy=json.dumps(policy),
            # Retained on destroy: scheduling the key's deletion would make every retained bucket unreadable.
            opts=pulumi.ResourceOptions(parent=self, protect=True, retain_on_delete=True),
        )
        aws.kms.Alias(
            f"{name}-key",
            name=names.storage_key_alias(spec.stack),
            target_key_id=self.kms_key.key_id,
            # Alias names are unique per account and Region: a replacement must free the name first.
            opts=pulumi.ResourceOptions(parent=self, delete_before_replace=True),
        )
        self.kms_key_arn: pulumi.Output[str] = self.kms_key.arn

        datasets_bucket, _ = parse_s3_uri(storage.datasets.uri, "training.storage.datasets.uri")
        created: list[tuple[str, SecureBucket]] = []  # the buckets this stack owns, whose access it logs
        if storage.datasets.create:
            datasets = SecureBucket(
                f"{name}-datasets",
                kms_key_arn=self.kms_key_arn,
                bucket_name=datasets_bucket,
                # Versioned: an overwritten or deleted object stays recoverable for a while, and is
                # not kept (and billed) forever.
                noncurrent_version_days=DATASET_NONCURRENT_VERSION_DAYS,
                opts=child,
            )
            self._datasets_bucket = datasets
            created.append((f"{name}-datasets", datasets))
            self.dataset_bucket: pulumi.Output[str] = datasets.name_out
            self.dataset_bucket_arn: pulumi.Output[str] = datasets.arn
        else:
            # The operator's existing bucket: referenced by name, never managed (or deleted) here.
            self.dataset_bucket = pulumi.Output.from_input(datasets_bucket)
            self.dataset_bucket_arn = pulumi.Output.from_input(f"arn:aws:s3:::{datasets_bucket}")

        self.checkpoint_bucket: pulumi.Output[str] | None = None
        self.checkpoint_bucket_arn: pulumi.Output[str] | None = None
        checkpoints = storage.checkpoints
        if checkpoints is not None:
            checkpoint_bucket, _ = parse_s3_uri(checkpoints.uri, "training.storage.checkpoints.uri")
            if checkpoints.create:
                readers, prefix = list(training.artifact_readers), training.artifact_prefix
                bucket = SecureBucket(
                    f"{name}-checkpoints",
                    kms_key_arn=self.kms_key_arn,
                    bucket_name=checkpoint_bucket,
                    noncurrent_version_days=checkpoints.noncurrent_version_days,
                    policy_statements=lambda arn: arn.apply(lambda a: artifact_reader_statements(a, prefix, readers)),
                    opts=child,
                )
                self.checkpoint_bucket = bucket.name_out
                self.checkpoint_bucket_arn = bucket.arn
                self._checkpoints_bucket = bucket
                created.append((f"{name}-checkpoints", bucket))
            else:
                if training.artifact_readers:
                    pulumi.log.warn(
                        "training.artifactReaders: the checkpoints bucket is not created by this stack "
                        "(training.storage.checkpoints.create=false); grant read access in its own policy",
                        resource=self,
                    )
                self.checkpoint_bucket = pulumi.Output.from_input(checkpoint_bucket)
                self.checkpoint_bucket_arn = pulumi.Output.from_input(f"arn:aws:s3:::{checkpoint_bucket}")

        self._server_access_logs(name, spec.account.id, created)

        self.lustre_dns_name: pulumi.Output[str] | None = None
        self.lustre_mount_name: pulumi.Output[str] | None = None
        self.file_system: aws.fsx.LustreFileSystem | None = None
        if file_system is not None:
            self._lustre(name, storage, file_system, subnet_id, security_group_id)

        self.register_outputs(
            {
                "kmsKeyArn": self.kms_key_arn,
                "datasetBucket": self.dataset_bucket,
                "checkpointBucket": self.checkpoint_bucket,
                "lustreDnsName": self.lustre_dns_name,
                "lustreMountName": self.lustre_mount_name,
            }
        )

    def _server_access_logs(self, name: str, account_id: str, buckets: list[tuple[str, SecureBucket]]) -> None:
        """Every request to the datasets and checkpoints buckets (who read or deleted what) lands in
        one access-log bucket, under a prefix per source bucket (Checkov CKV_AWS_18). The operator's
        own buckets are not touched."""
        if not buckets:
            return
        sources = pulumi.Output.all(*[bucket.arn for _, bucket in buckets])
        logs = log_bucket(
            f"{name}-access-logs",
            lambda arn: pulumi.Output.all(arn, sources).apply(
                lambda args: server_access_log_statements(args[0], args[1], account_id)
            ),
            pulumi.ResourceOptions(parent=self),
        )
        for bucket_name, bucket in buckets:
            aws.s3.BucketLogging(
                f"{bucket_name}-access-logging",
                bucket=bucket.bucket.id,
                target_bucket=logs.name_out,
                target_prefix=bucket.name_out.apply(lambda b: f"{b}/"),
                # Date-partitioned keys (s3://logs/SOURCE/ACCOUNT/REGION/SOURCE/YYYY/MM/DD/...) keep
                # Athena scans of one day cheap.
                target_object_key_format=aws.s3.BucketLoggingTargetObjectKeyFormatArgs(
                    partitioned_prefix=aws.s3.BucketLoggingTargetObjectKeyFormatPartitionedPrefixArgs(
                        partition_date_source="EventTime"
                    )
                ),
                # S3 checks at PutBucketLogging that log delivery may write: the policy goes first.
                opts=pulumi.ResourceOptions(parent=self, depends_on=[logs.policy]),
            )

    def _lustre(
        self,
        name: str,
        storage: TrainingStorageSpec,
        lustre: PlannedFileSystem,
        subnet_id: pulumi.Input[str],
        security_group_id: pulumi.Input[str],
    ) -> None:
        # Omitted capacityGiB/throughputPerTiB are the planner's numbers (the plan), the same `accelstack preview` shows.
        deployment = lustre.tier  # the FSx deployment type (the spec's neutral `tier`, default PERSISTENT_2)
        use_dra = deployment in DRA_DEPLOYMENT_TYPES
        datasets_uri = storage.datasets.uri.rstrip("/")
        legacy_link: dict[str, Any] = {}
        if not use_dra:
            # Legacy link: the whole datasets bucket at the file system root; export goes back to
            # the same bucket (AWS requires it), so checkpoints are NOT exported on these types.
            legacy_link = {"import_path": datasets_uri, "auto_import_policy": "NEW_CHANGED_DELETED"}
            if storage.checkpoints is not None:
                pulumi.log.warn(
                    f"training.storage.lustre.tier: {deployment} cannot link the checkpoints bucket "
                    "(data repository associations need PERSISTENT_2); checkpoints will not be exported to S3",
                    resource=self,
                )
        file_system = aws.fsx.LustreFileSystem(
            f"{name}-lustre",
            deployment_type=deployment,
            storage_capacity=lustre.capacity_gib,
            per_unit_storage_throughput=(
                lustre.throughput_per_tib if deployment in PERSISTENT_DEPLOYMENT_TYPES else None
            ),
            subnet_ids=subnet_id,  # one subnet: a Lustre file system lives in one AZ, next to the nodes
            security_group_ids=[security_group_id],
            kms_key_id=self.kms_key_arn if deployment in PERSISTENT_DEPLOYMENT_TYPES else None,
            file_system_type_version=LUSTRE_VERSION,
            data_compression_type="LZ4",
            # FSx backs up only persistent file systems NOT linked to S3 ("File system backups
            # aren't supported on file systems that are linked to an Amazon S3 data repository"), and
            # ours always is (datasets). Say 0 rather than inherit a default; durability comes from
            # the versioned buckets the DRAs export to.
            automatic_backup_retention_days=0 if deployment in PERSISTENT_DEPLOYMENT_TYPES else None,
            # Import/export failures (a checkpoint that never reached S3) go to CloudWatch Logs
            # (/aws/fsx/lustre) instead of nowhere (FSx's default is DISABLED).
            log_configuration=aws.fsx.LustreFileSystemLogConfigurationArgs(level="WARN_ERROR"),
            tags={"Name": f"{name}-lustre"},
            **legacy_link,
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=True,
                retain_on_delete=True,  # unexported files survive a destroy; delete it by hand (docs/deploying.md)
                depends_on=[
                    *self._security_group_rules,
                    *([self._datasets_bucket] if legacy_link and self._datasets_bucket else []),
                ],
            ),
        )
        self.file_system = file_system
        self.lustre_dns_name = file_system.dns_name
        self.lustre_mount_name = file_system.mount_name
        if not use_dra:
            return
        aws.fsx.DataRepositoryAssociation(
            f"{name}-datasets",
            file_system_id=file_system.id,
            file_system_path=lustre.import_path,
            data_repository_path=datasets_uri,
            # Lists every object's metadata at creation so jobs see the full dataset at once
            # (contents are lazy-loaded on first read).
            batch_import_meta_data_on_create=True,
            s3=aws.fsx.DataRepositoryAssociationS3Args(
                auto_import_policy=aws.fsx.DataRepositoryAssociationS3AutoImportPolicyArgs(
                    events=list(DATASET_IMPORT_EVENTS)
                ),
            ),
            opts=self._association_options(self._datasets_bucket),
        )
        checkpoints = storage.checkpoints
        if checkpoints is None:
            return
        checkpoint_path = lustre_relative_path(checkpoints.path, lustre.mount_path, "training.storage.checkpoints.path")
        if dra_paths_overlap(checkpoint_path, lustre.import_path):
            raise ValueError(
                f"training.storage.checkpoints.path {checkpoints.path!r} overlaps training.storage.lustre.importPath "
                f"{lustre.import_path!r}; data repository associations need disjoint paths"
            )
        aws.fsx.DataRepositoryAssociation(
            f"{name}-checkpoints",
            file_system_id=file_system.id,
            file_system_path=checkpoint_path,
            data_repository_path=checkpoints.uri.rstrip("/"),
            s3=aws.fsx.DataRepositoryAssociationS3Args(
                auto_export_policy=aws.fsx.DataRepositoryAssociationS3AutoExportPolicyArgs(
                    events=list(CHECKPOINT_EXPORT_EVENTS)
                ),
                # Resuming on a fresh file system sees checkpoints already in S3.
                auto_import_policy=aws.fsx.DataRepositoryAssociationS3AutoImportPolicyArgs(
                    events=list(CHECKPOINT_IMPORT_EVENTS)
                ),
            ),
            opts=self._association_options(self._checkpoints_bucket),
        )

    def _association_options(self, bucket: pulumi.Resource | None) -> pulumi.ResourceOptions:
        """Delete-first replacement: FSx refuses two associations sharing a file system path or a
        bucket prefix (API CreateDataRepositoryAssociation: "Each data repository association must
        have a unique Amazon FSx file system directory and a unique S3 bucket or prefix"), and
        Pulumi's default create-first replacement of a changed path or URI would collide with the
        old association. Deleting an association keeps the files (delete_data_in_filesystem is
        false). It waits for the bucket the stack creates (and its encryption and policy)."""
        return pulumi.ResourceOptions(
            parent=self, delete_before_replace=True, depends_on=[bucket] if bucket is not None else []
        )
