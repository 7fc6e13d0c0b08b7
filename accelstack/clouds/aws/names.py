"""What an AWS stack's name becomes, and each service's naming rule: the one place the AWS components and the
spec rules take names from (`accelstack.clouds.naming`).

Most AWS resources are Pulumi auto-names (the logical name, "-" and 7 random characters): listed here where their
service limits what the stack name may be (S3 buckets, ELB names); names the components fix themselves (the
replica group, the Slurm config parameter, the WAF log group, the KMS alias) are derived here.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelstack.clouds.naming import DerivedName, NameRule
from accelstack.spec.catalog_rules import stack_names
from accelstack.spec.models import ServingStack, TrainingStack

# docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html (general purpose buckets): 3-63 lowercase
# letters, digits, dots and hyphens, a letter or digit at each end; reserved prefixes and suffixes.
S3_BUCKET = NameRule(
    "S3 bucket name",
    r"[a-z0-9][a-z0-9.-]*[a-z0-9]",
    max_length=63,
    min_length=3,
    source="S3 user guide, bucket naming rules",
    summary="lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit",
    forbidden_prefixes=("xn--", "sthree-", "amzn-s3-demo-"),
    forbidden_suffixes=("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"),
    forbidden_words=("..",),
)
# Elastic Load Balancing API, CreateLoadBalancer / CreateTargetGroup `Name`: 32 letters, digits and hyphens, not
# starting or ending with a hyphen; a load balancer's may not start with "internal-".
ELB_NAME = NameRule(
    "ELB name",
    r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?",
    max_length=32,
    source="Elastic Load Balancing API reference, CreateLoadBalancer and CreateTargetGroup",
    summary="letters, digits and hyphens, not starting or ending with a hyphen",
    lowercase=False,
)
LOAD_BALANCER_NAME = NameRule(
    "load balancer name",
    ELB_NAME.pattern,
    max_length=ELB_NAME.max_length,
    source=ELB_NAME.source,
    summary=ELB_NAME.summary,
    forbidden_prefixes=("internal-",),
    lowercase=False,
)
# IAM API, CreateRole `RoleName`: 64 characters of [\w+=,.@-].
IAM_ROLE = NameRule("IAM role name", r"[\w+=,.@-]+", max_length=64, source="IAM API reference, CreateRole")
# SQS developer guide, queue name: up to 80 letters, digits, hyphens and underscores.
SQS_QUEUE = NameRule("SQS queue name", r"[A-Za-z0-9_-]+", max_length=80, source="SQS developer guide, quotas")
# Auto Scaling API, CreateAutoScalingGroup `AutoScalingGroupName`: 1-255 characters.
AUTO_SCALING_GROUP = NameRule("Auto Scaling group name", r"[A-Za-z0-9._-]+", max_length=255)
# Systems Manager parameter names: letters, digits and _.-/, at most 1011 characters, not starting "aws" or "ssm".
SSM_PARAMETER = NameRule(
    "SSM parameter name",
    r"/[A-Za-z0-9_./-]+",
    max_length=1011,
    source="Systems Manager user guide, parameter naming",
    forbidden_prefixes=("/aws", "/ssm"),
)
# CloudWatch Logs log group: 512 characters of [.\-_/#A-Za-z0-9]; WAF logs only to groups named aws-waf-logs-*.
WAF_LOG_GROUP = NameRule("WAF log group name", r"aws-waf-logs-[A-Za-z0-9._/#-]+", max_length=512)
# KMS CreateAlias `AliasName`: alias/ and up to 256 characters of [a-zA-Z0-9/_-], not alias/aws/.
KMS_ALIAS = NameRule(
    "KMS alias", r"alias/[A-Za-z0-9/_-]+", max_length=256, forbidden_prefixes=("alias/aws/",), lowercase=False
)

SLURM_CONFIG_PARAMETER = "/accelstack/{stack}/slurm-config"  # the head writes it, nodes read it at boot
# The serving components' logical names for the load balancer and its target group (auto-named, so ELB's 32
# characters bound the stack name).
LOAD_BALANCER_SUFFIX = "-alb"
TARGET_GROUP_SUFFIX = "-replicas"


def replica_group_name(stack: str) -> str:
    """Fixed, not auto-named: the boot script and the IAM grant for the lifecycle hook need it before
    the group exists."""
    return f"accelstack-{stack}-replicas"


def slurm_config_parameter(stack: str) -> str:
    return SLURM_CONFIG_PARAMETER.format(stack=stack)


def waf_log_group(stack: str) -> str:
    return f"aws-waf-logs-{stack}"


def storage_key_alias(stack: str) -> str:
    return f"alias/accelstack/{stack}"


@stack_names(workload="training")
def training_names(spec: TrainingStack) -> Iterator[DerivedName]:
    stack = spec.stack
    storage = spec.training.storage
    created = storage.datasets.create or (storage.checkpoints is not None and storage.checkpoints.create)
    if created:
        yield DerivedName("the S3 access-log bucket", f"{stack}-storage-access-logs", S3_BUCKET, autonamed=True)
    if spec.training.network.vpc_id is None:
        yield DerivedName("the VPC flow-log bucket", f"{stack}-net-flow-logs", S3_BUCKET, autonamed=True)
    for role in ("head", "node"):
        yield DerivedName(f"the {role} IAM role", f"{stack}-{role}", IAM_ROLE, autonamed=True)
    yield DerivedName("the Slurm config parameter", slurm_config_parameter(stack), SSM_PARAMETER)
    yield DerivedName("the storage key's alias", storage_key_alias(stack), KMS_ALIAS)


@stack_names(workload="serving")
def serving_names(spec: ServingStack) -> Iterator[DerivedName]:
    stack = spec.stack
    yield DerivedName("the load balancer", f"{stack}{LOAD_BALANCER_SUFFIX}", LOAD_BALANCER_NAME, autonamed=True)
    yield DerivedName("the target group", f"{stack}{TARGET_GROUP_SUFFIX}", ELB_NAME, autonamed=True)
    if spec.serving.load_balancer.access_logs:
        yield DerivedName("the ALB access-log bucket", f"{stack}-alb-logs", S3_BUCKET, autonamed=True)
    if spec.serving.network.vpc_id is None:
        yield DerivedName("the VPC flow-log bucket", f"{stack}-net-flow-logs", S3_BUCKET, autonamed=True)
    yield DerivedName("the replica IAM role", f"{stack}-replica", IAM_ROLE, autonamed=True)
    for queue in ("requests", "responses", "dead-letters"):
        yield DerivedName(f"the {queue} queue", f"{stack}-{queue}", SQS_QUEUE, autonamed=True)
    yield DerivedName("the replica group", replica_group_name(stack), AUTO_SCALING_GROUP)
    yield DerivedName("the WAF log group", waf_log_group(stack), WAF_LOG_GROUP)
