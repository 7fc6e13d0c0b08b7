"""Guardrails for what an incident responder needs afterwards: VPC flow logs, closed default security
groups, S3 server access logs on data buckets, WAF logging and AWS's known-bad-inputs rule group,
detailed monitoring, encrypted log groups kept long enough.

Each rule is one small pure function naming the Checkov check it mirrors; Checkov itself runs on the
Terraform plan view of every shipped stack (`make scan`, `accelstack export --format terraform-plan`).
Links between resources (a VPC and its flow log, a bucket and its logging) follow the engine's
property dependencies first (`refers_to`), so they hold while ids are unknown during preview.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..aws.inline_buckets import with_inline_settings
from ..common import Context, as_list, of_type, refers_to, resource_policy, stack_policy, truthy, urn_name
from ..links import any_referrer, each_referrer, each_target, referrers_of

VPC = "aws:ec2/vpc:Vpc"
FLOW_LOG = "aws:ec2/flowLog:FlowLog"
DEFAULT_SG = "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"
# Every way to put a rule on a group: separate rule resources would reopen the default group too.
SG_RULE_TYPES = (
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
    "aws:ec2/securityGroupRule:SecurityGroupRule",
)
BUCKET = "aws:s3/bucket:Bucket"
# Buckets that take server access logging (a directory bucket does not: S3 Express logs through CloudTrail).
LOGGED_BUCKETS = (BUCKET, "aws:s3/bucketV2:BucketV2")
BUCKET_LOGGING_TYPES = ("aws:s3/bucketLogging:BucketLogging", "aws:s3/bucketLoggingV2:BucketLoggingV2")
WEB_ACL = "aws:wafv2/webAcl:WebAcl"
WEB_ACL_LOGGING = "aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration"
LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
INSTANCE = "aws:ec2/instance:Instance"

KNOWN_BAD_INPUTS = "AWSManagedRulesKnownBadInputsRuleSet"
WAF_LOG_PREFIX = "aws-waf-logs-"  # WAF refuses any other destination name (PutLoggingConfiguration)
MIN_LOG_RETENTION_DAYS = 365  # Checkov CKV_AWS_338; 0 (never expire) also passes
CREDENTIAL_HEADERS = ("authorization",)

CONFIG = {
    "accessLoggedBucketPattern": {
        "type": "string",
        "default": "checkpoint|artifact|model|dataset",
        "description": "Regex on a bucket's resource or bucket name: buckets that must have S3 server access logs.",
    },
}


def _name(resource: Any) -> str:
    return resource.name or urn_name(resource.urn)


# --- network ---------------------------------------------------------------------------------------


def check_vpc_flow_logs(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Every VPC the stack creates has a flow log on the VPC itself (Checkov CKV2_AWS_11, AWS Security
    Hub EC2.6) of ALL traffic: without one, nobody can say afterwards what talked to what, and one of only ACCEPT
    or REJECT (trafficType) records half of it."""
    flow_logs = of_type(resources, FLOW_LOG)
    for vpc in of_type(resources, VPC):
        linked = referrers_of(vpc, flow_logs, "vpcId", keys=("id",))
        if not linked:
            yield vpc.urn, f"VPC {_name(vpc)} has no flow log (aws.ec2.FlowLog with vpc_id)"
        elif not any(str(f.props.get("trafficType") or "ALL").upper() == "ALL" for f in linked):
            for flow_log in linked:  # the finding lands on what narrowed it
                kind = flow_log.props.get("trafficType")
                yield flow_log.urn, f"{_name(flow_log)} records only {kind} traffic of VPC {_name(vpc)}; log ALL"


def check_default_security_group_closed(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Every VPC the stack creates adopts its default security group with no rules (Checkov
    CKV2_AWS_12, Security Hub EC2.2): AWS creates it allowing all traffic within itself and all egress,
    and anything launched without a group lands in it. Rules added later as separate resources count
    as rules too."""
    defaults = of_type(resources, DEFAULT_SG)
    rules = of_type(resources, *SG_RULE_TYPES)
    for vpc in of_type(resources, VPC):
        if not any_referrer(vpc, defaults, "vpcId", keys=("id",)):
            yield (
                vpc.urn,
                (
                    f"VPC {_name(vpc)} leaves its default security group open; adopt it with "
                    "aws.ec2.DefaultSecurityGroup(vpc_id=..., ingress=[], egress=[])"
                ),
            )
    for group in defaults:
        inline = [kind for kind in ("ingress", "egress") if as_list(group.props.get(kind))]
        if inline:
            yield group.urn, f"default security group {_name(group)} has {' and '.join(inline)} rules; leave both empty"
        for rule in each_referrer(group, rules, "securityGroupId", keys=("id",)):
            yield rule.urn, f"{_name(rule)} adds a rule to the default security group {_name(group)}"


# --- storage ---------------------------------------------------------------------------------------


def _matches(pattern: str, bucket: Any) -> bool:
    names = [urn_name(bucket.urn), str(bucket.props.get("bucket") or "")]
    return any(re.search(pattern, name, re.IGNORECASE) for name in names)


def check_bucket_access_logging(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Data buckets (datasets, checkpoints, artifacts, models: `accessLoggedBucketPattern`) log every
    request to another bucket (Checkov CKV_AWS_18, Security Hub S3.9): who read or deleted which
    object. A bucket logging into itself is refused too (each log write would log again)."""
    pattern = ctx.config.get("accessLoggedBucketPattern") or CONFIG["accessLoggedBucketPattern"]["default"]
    loggings = of_type(with_inline_settings(resources), *BUCKET_LOGGING_TYPES)
    for bucket in of_type(resources, *LOGGED_BUCKETS):
        linked = referrers_of(bucket, loggings, "bucket")
        for logging in linked:
            if refers_to(logging, "targetBucket", bucket, keys=("bucket", "id")):
                yield (
                    logging.urn,
                    f"{_name(logging)} logs bucket {_name(bucket)} into itself; use a separate log bucket",
                )
        if _matches(pattern, bucket) and not linked:
            yield bucket.urn, f"data bucket {_name(bucket)} has no S3 server access logging (aws.s3.BucketLogging)"


# --- edge ------------------------------------------------------------------------------------------


def _managed_groups(rule: Any) -> list[Any]:
    statement = rule.get("statement") or {}
    group = statement.get("managedRuleGroupStatement")
    return [group] if group else []


def check_waf_known_bad_inputs(resource: Any, ctx: Context) -> Iterable[str]:
    """A web ACL runs AWS's known-bad-inputs rule group and lets it block (Checkov CKV_AWS_192: Log4j
    JNDI lookups among others): an override to `count`, or its Log4JRCE rules overridden to count,
    only watches the exploit go through."""
    if resource.resource_type != WEB_ACL:
        return
    found = False
    for rule in as_list(resource.props.get("rules")):
        for group in _managed_groups(rule):
            if group.get("name") != KNOWN_BAD_INPUTS or group.get("vendorName") != "AWS":
                continue
            found = True
            override = rule.get("overrideAction") or {}
            if override.get("count") is not None:
                yield f"web ACL {_name(resource)} counts {KNOWN_BAD_INPUTS} instead of blocking (overrideAction count)"
            for action in as_list(group.get("ruleActionOverrides")):
                if (
                    str(action.get("name", "")).startswith("Log4JRCE")
                    and (action.get("actionToUse") or {}).get("count") is not None
                ):
                    yield f"web ACL {_name(resource)} overrides {action.get('name')} to count"
    if not found:
        yield f"web ACL {_name(resource)} does not use the AWS managed rule group {KNOWN_BAD_INPUTS}"


def check_waf_logging(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Every web ACL has a logging configuration (Checkov CKV2_AWS_31) to a destination WAF accepts
    (named `aws-waf-logs-*`: WAF developer guide, "Logging destinations"), with the Authorization
    header redacted: API credentials must not end up in log storage (ours)."""
    configs = of_type(resources, WEB_ACL_LOGGING)
    groups = of_type(resources, LOG_GROUP)
    for acl in of_type(resources, WEB_ACL):
        linked = referrers_of(acl, configs, "resourceArn", keys=("arn",))
        if not linked:
            yield acl.urn, f"web ACL {_name(acl)} has no logging configuration (aws.wafv2.WebAclLoggingConfiguration)"
        for config in linked:
            for group in each_target(config, "logDestinationConfigs", groups, keys=("arn",)):
                name = str(group.props.get("name") or "")
                if not name.startswith(WAF_LOG_PREFIX):
                    yield (
                        group.urn,
                        f"log group {name or _name(group)} receives WAF logs but is not named {WAF_LOG_PREFIX}*",
                    )
            redacted = {
                str((field.get("singleHeader") or {}).get("name", "")).lower()
                for field in as_list(config.props.get("redactedFields"))
            }
            # A filter that drops by default logs only what a KEEP filter names: logging off in another field
            # (https://docs.aws.amazon.com/waf/latest/developerguide/logging-management.html#logging-filters).
            behavior = str((config.props.get("loggingFilter") or {}).get("defaultBehavior") or "KEEP").upper()
            if behavior != "KEEP":
                yield (
                    config.urn,
                    f"{_name(config)} drops requests from the WAF log by default (loggingFilter.defaultBehavior {behavior})",
                )
            missing = [header for header in CREDENTIAL_HEADERS if header not in redacted]
            if missing:
                yield (
                    config.urn,
                    f"{_name(config)} logs the {', '.join(missing)} header in clear; add it to redacted_fields",
                )


# --- monitoring ------------------------------------------------------------------------------------


def check_instance_detailed_monitoring(resource: Any, ctx: Context) -> Iterable[str]:
    """Standalone instances (the Slurm controller) have one-minute CloudWatch metrics (Checkov
    CKV_AWS_126); five-minute metrics hide a stuck controller for too long."""
    if resource.resource_type == INSTANCE and not truthy(resource.props.get("monitoring")):
        yield f"instance {_name(resource)} has no detailed monitoring (monitoring=True)"


def check_log_group_retention_and_key(resource: Any, ctx: Context) -> Iterable[str]:
    """Log groups are encrypted with a customer key (Checkov CKV_AWS_158) and keep a year or more
    (CKV_AWS_66 any retention, CKV_AWS_338 at least a year; 0 means never expire)."""
    if resource.resource_type != LOG_GROUP:
        return
    if not resource.props.get("kmsKeyId"):
        yield f"log group {_name(resource)} is not encrypted with a KMS key (kms_key_id)"
    days = resource.props.get("retentionInDays")
    if days is None:
        yield f"log group {_name(resource)} has no retention; set retention_in_days >= {MIN_LOG_RETENTION_DAYS}"
    elif 0 < int(days) < MIN_LOG_RETENTION_DAYS:
        yield f"log group {_name(resource)} keeps logs {int(days)} days; keep at least {MIN_LOG_RETENTION_DAYS}"


POLICIES = [
    stack_policy("vpc-flow-logs", "Every VPC has flow logs (CKV2_AWS_11).", check_vpc_flow_logs),
    stack_policy(
        "default-security-group-closed",
        "Every VPC's default security group has no rules (CKV2_AWS_12).",
        check_default_security_group_closed,
    ),
    stack_policy(
        "bucket-access-logging",
        "Data buckets have S3 server access logs (CKV_AWS_18).",
        check_bucket_access_logging,
        config=CONFIG,
    ),
    resource_policy(
        "waf-known-bad-inputs",
        "Web ACLs block AWS's known bad inputs (CKV_AWS_192).",
        check_waf_known_bad_inputs,
        types=[WEB_ACL],
    ),
    stack_policy("waf-logging", "Web ACLs log, credentials redacted (CKV2_AWS_31).", check_waf_logging),
    resource_policy(
        "instance-detailed-monitoring",
        "Instances have detailed monitoring (CKV_AWS_126).",
        check_instance_detailed_monitoring,
        types=[INSTANCE],
    ),
    resource_policy(
        "log-group-retention-and-key",
        "Log groups are KMS-encrypted and kept a year (CKV_AWS_158, CKV_AWS_338).",
        check_log_group_retention_and_key,
        types=[LOG_GROUP],
    ),
]
