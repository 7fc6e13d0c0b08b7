"""The serving edge: security groups, the internet-facing ALB (HTTPS, HTTP redirect), its access logs,
and the WAF web ACL (per-client rate, known bad inputs) with its log group."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_aws as aws

from accelstack.clouds.aws import names
from accelstack.clouds.aws.names import LOAD_BALANCER_SUFFIX, TARGET_GROUP_SUFFIX
from accelstack.components.aws.storage import SecureBucket
from accelstack.planner.serving_plan import HEALTHY_THRESHOLD, UNHEALTHY_THRESHOLD

if TYPE_CHECKING:
    from accelstack.components.aws.serving.service import AwsServingParts


# --- ELB access-log delivery ----------------------------------------------------------------------

# Source: ELB User Guide "Enable access logs for your Application Load Balancer", step 2 (checked
# 2026-12-02): Regions available before August 2022 deliver logs as the regional ELB account; newer
# Regions use the logdelivery.elasticloadbalancing.amazonaws.com service principal (granted always).
ELB_LOG_ACCOUNTS: dict[str, str] = {
    "us-east-1": "127311923021", "us-east-2": "033677994240", "us-west-1": "027434742980",
    "us-west-2": "797873946194", "af-south-1": "098369216593", "ap-east-1": "754344448648",
    "ap-southeast-3": "589379963580", "ap-south-1": "718504428378", "ap-northeast-3": "383597477331",
    "ap-northeast-2": "600734575887", "ap-southeast-1": "114774131450", "ap-southeast-2": "783225319266",
    "ap-northeast-1": "582318560864", "ca-central-1": "985666609251", "eu-central-1": "054676820928",
    "eu-west-1": "156460612806", "eu-west-2": "652711504416", "eu-south-1": "635631232127",
    "eu-west-3": "009996457667", "eu-north-1": "897822967062", "me-south-1": "076674570225",
    "sa-east-1": "507241528517", "us-gov-west-1": "048591011584", "us-gov-east-1": "190560391635",
    "cn-north-1": "638102146993", "cn-northwest-1": "037604701340",
}  # fmt: skip
ACCESS_LOG_PREFIX = "alb"
ACCESS_LOG_NONCURRENT_VERSION_DAYS = 30
WAF_LOG_RETENTION_DAYS = 365  # a year, as the S3 log buckets (Checkov CKV_AWS_338)
# Credentials never reach the logs: WAF writes these headers as REDACTED.
WAF_REDACTED_HEADERS = ("authorization", "cookie", "x-api-key")
KNOWN_BAD_INPUTS = "AWSManagedRulesKnownBadInputsRuleSet"


def elb_log_delivery_statements(bucket_arn: str, account_id: str, region: str, partition: str) -> list[dict[str, Any]]:
    objects = f"{bucket_arn}/{ACCESS_LOG_PREFIX}/AWSLogs/{account_id}/*"
    statements: list[dict[str, Any]] = [
        {
            "Sid": "ElbLogDelivery",
            "Effect": "Allow",
            "Principal": {"Service": "logdelivery.elasticloadbalancing.amazonaws.com"},
            "Action": "s3:PutObject",
            "Resource": objects,
        }
    ]
    if region in ELB_LOG_ACCOUNTS:
        statements.append(
            {
                "Sid": "ElbLogDeliveryLegacyRegion",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:{partition}:iam::{ELB_LOG_ACCOUNTS[region]}:root"},
                "Action": "s3:PutObject",
                "Resource": objects,
            }
        )
    return statements


def waf_log_group_name(stack: str) -> str:
    """WAF logs only to destinations named `aws-waf-logs-*` (WAF developer guide, "Logging
    destinations"): PutLoggingConfiguration refuses any other log group."""
    return names.waf_log_group(stack)


TLS_POLICY = "ELBSecurityPolicy-TLS13-1-2-2021-06"


def security_groups(svc: AwsServingParts, name: str) -> tuple[aws.ec2.SecurityGroup, aws.ec2.SecurityGroup]:
    port = svc.serving.load_balancer.port
    alb_sg = aws.ec2.SecurityGroup(
        f"{name}-alb",
        vpc_id=svc.vpc.vpc_id,
        description="accelstack serving load balancer: HTTPS (and HTTP for the redirect) from anywhere",
        tags={"Name": f"{name}-alb"},
        opts=svc.child,
    )
    replica_sg = aws.ec2.SecurityGroup(
        f"{name}-replicas",
        vpc_id=svc.vpc.vpc_id,
        description="accelstack serving replicas: the inference port from the load balancer only",
        tags={"Name": f"{name}-replicas"},
        opts=svc.child,
    )
    for listen_port in (443, 80):
        aws.vpc.SecurityGroupIngressRule(
            f"{name}-alb-in-{listen_port}",
            security_group_id=alb_sg.id,
            ip_protocol="tcp",
            from_port=listen_port,
            to_port=listen_port,
            cidr_ipv4="0.0.0.0/0",
            description="HTTPS clients" if listen_port == 443 else "HTTP, redirected to HTTPS",
            opts=svc.child,
        )
    aws.vpc.SecurityGroupEgressRule(
        f"{name}-alb-to-replicas",
        security_group_id=alb_sg.id,
        ip_protocol="tcp",
        from_port=port,
        to_port=port,
        referenced_security_group_id=replica_sg.id,
        description="requests and health checks to replicas",
        opts=svc.child,
    )
    aws.vpc.SecurityGroupIngressRule(
        f"{name}-replicas-from-alb",
        security_group_id=replica_sg.id,
        ip_protocol="tcp",
        from_port=port,
        to_port=port,
        referenced_security_group_id=alb_sg.id,
        description="inference server port from the load balancer only",
        opts=svc.child,
    )
    aws.vpc.SecurityGroupEgressRule(
        f"{name}-replicas-egress",
        security_group_id=replica_sg.id,
        ip_protocol="-1",
        cidr_ipv4="0.0.0.0/0",
        description="S3 (endpoint), SQS, container registry (NAT)",
        opts=svc.child,
    )
    return alb_sg, replica_sg


def access_log_bucket(svc: AwsServingParts, name: str) -> SecureBucket:
    account, region, partition = svc.account_id, svc.region, svc.partition
    # ALB log delivery supports SSE-S3 only (not SSE-KMS), so this one bucket is AES256.
    return SecureBucket(
        f"{name}-alb-logs",
        kms_key_arn=None,
        sse_algorithm="AES256",
        # Versioned: a deleted or overwritten log stays recoverable for a while, not forever.
        noncurrent_version_days=ACCESS_LOG_NONCURRENT_VERSION_DAYS,
        policy_statements=lambda arn: arn.apply(lambda a: elb_log_delivery_statements(a, account, region, partition)),
        opts=svc.child,
    )


def load_balancer(svc: AwsServingParts, name: str) -> tuple[aws.lb.LoadBalancer, aws.lb.TargetGroup]:
    lb_spec, plan = svc.serving.load_balancer, svc.plan
    access_logs = None
    depends_on: list[pulumi.Resource] = []
    if lb_spec.access_logs:
        logs = access_log_bucket(svc, name)
        access_logs = aws.lb.LoadBalancerAccessLogsArgs(bucket=logs.name_out, prefix=ACCESS_LOG_PREFIX, enabled=True)
        depends_on = [logs.policy]  # ELB tests write access when logging is enabled
    # Logical names are the auto-name prefixes; the spec checks they fit ELB's 32 characters.
    alb = aws.lb.LoadBalancer(
        f"{name}{LOAD_BALANCER_SUFFIX}",
        load_balancer_type="application",
        internal=False,
        subnets=svc.vpc.public_subnet_ids,
        security_groups=[svc.alb_sg.id],
        drop_invalid_header_fields=True,
        enable_deletion_protection=True,
        idle_timeout=plan.idle_timeout_seconds,
        access_logs=access_logs,
        opts=pulumi.ResourceOptions(parent=svc.parent, depends_on=depends_on),
    )
    target_group = aws.lb.TargetGroup(
        f"{name}{TARGET_GROUP_SUFFIX}",
        port=lb_spec.port,
        protocol="HTTP",
        target_type="instance",
        vpc_id=svc.vpc.vpc_id,
        # Generations vary from milliseconds to minutes: route to the replica with fewest in flight.
        load_balancing_algorithm_type="least_outstanding_requests",
        deregistration_delay=plan.deregistration_delay_seconds,
        health_check=aws.lb.TargetGroupHealthCheckArgs(
            enabled=True,
            path=lb_spec.health_path,
            port="traffic-port",
            protocol="HTTP",
            matcher="200",
            interval=plan.health_check_interval_seconds,
            timeout=plan.health_check_timeout_seconds,
            healthy_threshold=HEALTHY_THRESHOLD,
            unhealthy_threshold=UNHEALTHY_THRESHOLD,
        ),
        opts=svc.child,
    )
    # The scaling policy on requests per target needs the group attached to the ALB through a listener.
    svc.https_listener = aws.lb.Listener(
        f"{name}-https",
        load_balancer_arn=alb.arn,
        port=443,
        protocol="HTTPS",
        ssl_policy=TLS_POLICY,
        certificate_arn=lb_spec.certificate,
        default_actions=[aws.lb.ListenerDefaultActionArgs(type="forward", target_group_arn=target_group.arn)],
        opts=svc.child,
    )
    aws.lb.Listener(
        f"{name}-http-redirect",
        load_balancer_arn=alb.arn,
        port=80,
        protocol="HTTP",
        default_actions=[
            aws.lb.ListenerDefaultActionArgs(
                type="redirect",
                redirect=aws.lb.ListenerDefaultActionRedirectArgs(protocol="HTTPS", port="443", status_code="HTTP_301"),
            )
        ],
        opts=svc.child,
    )
    return alb, target_group


def waf(svc: AwsServingParts, name: str) -> aws.wafv2.WebAcl:
    admission = svc.serving.admission
    metric = name.replace("-", "")

    def visibility(suffix: str) -> aws.wafv2.WebAclVisibilityConfigArgs:
        return aws.wafv2.WebAclVisibilityConfigArgs(
            cloudwatch_metrics_enabled=True, metric_name=f"{metric}{suffix}", sampled_requests_enabled=True
        )

    # The per-client rate rule first (cheapest, stops floods before anything else is evaluated),
    # then AWS's known-bad-inputs group (Log4j JNDI lookups, Java deserialization, localhost Host
    # headers, ...; Checkov CKV_AWS_192). Not the common rule set: its
    # SizeRestrictions_BODY blocks bodies over 8 KB, which long prompts routinely exceed; the
    # known-bad-inputs group has no size rule (WAF developer guide, "Baseline rule groups").
    acl = aws.wafv2.WebAcl(
        f"{name}-edge",
        scope="REGIONAL",
        description="accelstack serving edge admission: per-client request rate, known bad inputs",
        default_action=aws.wafv2.WebAclDefaultActionArgs(allow=aws.wafv2.WebAclDefaultActionAllowArgs()),
        rules=[
            aws.wafv2.WebAclRuleArgs(
                name="rate-per-client-ip",
                priority=0,
                action=aws.wafv2.WebAclRuleActionArgs(block=aws.wafv2.WebAclRuleActionBlockArgs()),
                statement=aws.wafv2.WebAclRuleStatementArgs(
                    rate_based_statement=aws.wafv2.WebAclRuleStatementRateBasedStatementArgs(
                        aggregate_key_type="IP",
                        limit=admission.per_client_rate,
                        evaluation_window_sec=admission.rate_window_seconds,
                    )
                ),
                visibility_config=visibility("RatePerClient"),
            ),
            aws.wafv2.WebAclRuleArgs(
                name="aws-known-bad-inputs",
                priority=1,
                # `none`: the group's own actions (block) apply; `count` would only observe.
                override_action=aws.wafv2.WebAclRuleOverrideActionArgs(
                    none=aws.wafv2.WebAclRuleOverrideActionNoneArgs()
                ),
                statement=aws.wafv2.WebAclRuleStatementArgs(
                    managed_rule_group_statement=aws.wafv2.WebAclRuleStatementManagedRuleGroupStatementArgs(
                        vendor_name="AWS", name=KNOWN_BAD_INPUTS
                    )
                ),
                visibility_config=visibility("KnownBadInputs"),
            ),
        ],
        visibility_config=visibility("Edge"),
        opts=svc.child,
    )
    aws.wafv2.WebAclAssociation(
        f"{name}-edge",
        resource_arn=svc.load_balancer.arn,
        web_acl_arn=acl.arn,
        # One web ACL per load balancer: a create-first replacement would associate the new ACL,
        # then deleting the old association would disassociate the load balancer from any ACL.
        opts=pulumi.ResourceOptions(parent=svc.parent, delete_before_replace=True),
    )
    waf_logging(svc, name, acl)
    return acl


def waf_logging(svc: AwsServingParts, name: str, acl: aws.wafv2.WebAcl) -> None:
    """Every request's WAF verdict (which rule, client, URI; Checkov CKV2_AWS_31) to a
    KMS-encrypted log group kept a year, credentials redacted."""
    group_name = waf_log_group_name(name)
    log_group = aws.cloudwatch.LogGroup(
        f"{name}-waf-logs",
        name=group_name,
        retention_in_days=WAF_LOG_RETENTION_DAYS,
        kms_key_id=svc.key.arn,  # the key policy lets logs.REGION use it for this group only
        opts=svc.child,
    )
    # WAF would add this policy itself at PutLoggingConfiguration (if the deployer may call
    # logs:PutResourcePolicy), outside the stack; written here it is scoped to this group and
    # this account's log deliveries (WAF developer guide, "Permissions to publish logs to
    # CloudWatch Logs"). An account holds at most 10 resource policies per Region.
    partition, region, account = svc.partition, svc.region, svc.account_id
    policy = aws.cloudwatch.LogResourcePolicy(
        f"{name}-waf-logs",
        policy_name=f"accelstack-{name}-waf-logs",
        policy_document=log_group.arn.apply(
            lambda arn: json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "WafLogDelivery",
                            "Effect": "Allow",
                            "Principal": {"Service": "delivery.logs.amazonaws.com"},
                            "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                            "Resource": f"{arn}:*",
                            "Condition": {
                                "StringEquals": {"aws:SourceAccount": account},
                                "ArnLike": {"aws:SourceArn": f"arn:{partition}:logs:{region}:{account}:*"},
                            },
                        }
                    ],
                }
            )
        ),
        opts=svc.child,
    )
    aws.wafv2.WebAclLoggingConfiguration(
        f"{name}-waf-logs",
        resource_arn=acl.arn,
        log_destination_configs=[log_group.arn],
        redacted_fields=[
            aws.wafv2.WebAclLoggingConfigurationRedactedFieldArgs(
                single_header=aws.wafv2.WebAclLoggingConfigurationRedactedFieldSingleHeaderArgs(name=header)
            )
            for header in WAF_REDACTED_HEADERS
        ],
        # logDestinationConfigs/resourceArn are ForceNew and a web ACL has one logging configuration:
        # a create-first replacement's delete would switch the new one off.
        opts=pulumi.ResourceOptions(parent=svc.parent, depends_on=[policy], delete_before_replace=True),
    )
