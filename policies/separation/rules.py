"""Separation pack: a training stack and a serving stack can never reach into each other's account.

Training and serving live in separate accounts so a training run cannot consume the quota (GPUs,
ENIs, EIPs) production depends on; these rules make that separation checkable on every change.
The workload comes from the provider's `accelstack:workload` default tag (or `workload` config); the
account sets and region allowlist from config (accelstack's runner fills them from the stack's
`accelstack:separation` block; with the Pulumi CLI pass `--policy-pack-config`, see
`accelstack policy STACK --emit-config`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from policies.common import (
    CLOUD_PACKAGES,
    REQUIRED_TAGS,
    TAG_DIGEST,
    TAG_WORKLOAD,
    WORKLOADS,
    Context,
    actions_of,
    as_list,
    aws_principals,
    is_allow,
    is_cloud_type,
    is_provider_type,
    principal_account,
    resource_policy,
    stack_policy,
    statements,
    truthy,
)

PACK_NAME = "accelstack-separation"
PACK_DESCRIPTION = "Training and serving stay in disjoint accounts, regions and resource kinds."

# Kinds that belong to the other side (type token -> why).
SERVING_ONLY = {
    "aws:sqs/queue:Queue": "an SQS queue (the serving admission queue)",
    "aws:wafv2/webAcl:WebAcl": "a WAF web ACL (serving's front door)",
}
TRAINING_ONLY = {
    "aws:fsx/lustreFileSystem:LustreFileSystem": "an FSx for Lustre file system (training storage)",
    "aws:ec2/placementGroup:PlacementGroup": "a placement group (training's EFA fabric)",
}
EFA_INTERFACE_TYPES = ("efa", "efa-only")
READ_ACTION_PREFIXES = ("s3:Get", "s3:List")

# AWS-owned accounts that deliver ALB/ELB access logs into a bucket (legacy regions use an account
# principal instead of the logdelivery.elasticloadbalancing.amazonaws.com service principal).
# Source: https://docs.aws.amazon.com/elasticloadbalancing/latest/application/enable-access-logging.html
# (as of 2025-06).
ELB_LOG_DELIVERY_ACCOUNTS = frozenset({
    "127311923021", "033677994240", "027434742980", "797873946194",  # us-east-1/2, us-west-1/2
    "098369216593", "754344448648", "718504428378", "383597477331",  # af-south-1, ap-east-1, ap-south-1, ap-northeast-3
    "600734575887", "114774131450", "783225319266", "582318560864",  # ap-northeast-2, ap-southeast-1/2, ap-northeast-1
    "985666609251", "054676820928", "156460612806", "652711504416",  # ca-central-1, eu-central-1, eu-west-1/2
    "635631232127", "009996457667", "897822967062", "076674570225",  # eu-south-1, eu-west-3, eu-north-1, me-south-1
    "507241528517", "048591011584", "190560391635", "638102146993",  # sa-east-1, us-gov-west-1/east-1, cn-north-1
    "037604701340",  # cn-northwest-1
})
CONFIG = {
    "trustedAccounts": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Extra accounts (neither side's) a grant may name, e.g. a log archive account.",
    },
}


def _account_problems(provider_name: str, accounts: Sequence[str], ctx: Context) -> Iterable[str]:
    if ctx.workload is None:
        return
    mine, theirs = ctx.workload_accounts, ctx.other_accounts
    for account in accounts:
        if account in theirs:
            yield (
                f"provider {provider_name} targets account {account}, which is a {ctx.other} account; "
                f"a {ctx.workload} stack may only deploy to {', '.join(sorted(mine)) or 'its own accounts'}"
            )
        elif mine and account not in mine:
            yield (
                f"provider {provider_name} targets account {account}, which is not a {ctx.workload} account "
                f"({', '.join(sorted(mine))})"
            )


def check_explicit_provider(resource: Any, ctx: Context) -> Iterable[str]:
    """Every cloud resource uses the stack's explicit provider, never a default provider.

    Ours. A default provider takes its account and region from ambient credentials, so the same
    program could land in either side's account; Pulumi's own guidance for multi-account stacks
    (https://www.pulumi.com/docs/iac/concepts/resources/providers/#disabling-default-providers).
    """
    if is_provider_type(resource.resource_type) or not is_cloud_type(resource.resource_type):
        return
    if resource.provider is None:
        yield f"{resource.resource_type} {resource.name} has no explicit provider; pass the stack's provider"
    elif ctx.provider is not None and ctx.provider.is_default:
        yield (
            f"{resource.resource_type} {resource.name} uses the default provider {ctx.provider.name}; "
            "pass the stack's explicit provider"
        )


def check_provider_account(resource: Any, ctx: Context) -> Iterable[str]:
    """A provider pins its account (allowedAccountIds) and every account it reaches (allowedAccountIds,
    assumed-role ARNs) belongs to this stack's side.

    Ours; mirrors the AWS provider's `allowed_account_ids` safeguard and AWS's multi-account guidance
    (https://docs.aws.amazon.com/whitepapers/latest/organizing-your-aws-environment/).
    """
    facts = ctx.provider
    if facts is None or facts.package != "aws":
        return
    if not facts.allowed_accounts:
        yield f"provider {facts.name} does not pin its account: set allowedAccountIds to the stack's account"
    yield from _account_problems(facts.name, facts.accounts, ctx)


def check_disjoint_accounts(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """The training and serving account sets are disjoint. Ours (the whole point of the separation)."""
    shared = sorted(ctx.training_accounts & ctx.serving_accounts)
    if shared:
        stack = next((r.urn for r in resources if r.resource_type == "pulumi:pulumi:Stack"), "")
        yield stack, f"trainingAccounts and servingAccounts must be disjoint; both list {', '.join(shared)}"


def check_allowed_regions(resource: Any, ctx: Context) -> Iterable[str]:
    """Providers (and resources with their own `region`, aws v7) stay in the allowed regions.

    Mirrors AWS Control Tower's region deny control
    (https://docs.aws.amazon.com/controltower/latest/userguide/region-deny.html).
    """
    if not ctx.allowed_regions:
        return
    if is_provider_type(resource.resource_type):
        if ctx.provider is None or ctx.provider.package not in CLOUD_PACKAGES:
            return  # e.g. pulumi-random: makes no cloud calls, has no region
        region, what = ctx.provider.region, f"provider {resource.name}"
        if region is None:
            yield f"{what} sets no region; allowed: {', '.join(ctx.allowed_regions)}"
            return
    else:
        region, what = resource.props.get("region"), f"{resource.resource_type} {resource.name}"
    if region is not None and region not in ctx.allowed_regions:
        yield f"{what} is in region {region}; allowed: {', '.join(ctx.allowed_regions)}"


def _efa_interfaces(resource: Any) -> bool:
    interfaces = as_list(resource.props.get("networkInterfaces"))
    return any(i.get("interfaceType") in EFA_INTERFACE_TYPES for i in interfaces if hasattr(i, "get"))


def check_workload_kinds(resource: Any, ctx: Context) -> Iterable[str]:
    """Resource kinds belong to the stack's workload: no internet-facing load balancer or serving queue
    in training; no Lustre, placement group or EFA interfaces in serving. Ours."""
    kind = resource.resource_type
    if ctx.workload == "training":
        if kind == "aws:lb/loadBalancer:LoadBalancer" and not truthy(resource.props.get("internal")):
            yield (
                f"internet-facing load balancer {resource.name} in a training stack: "
                "serving load balancers belong in the serving account"
            )
        elif kind in SERVING_ONLY:
            yield f"{SERVING_ONLY[kind]} {resource.name} in a training stack: it belongs in the serving account"
    elif ctx.workload == "serving":
        if kind in TRAINING_ONLY:
            yield f"{TRAINING_ONLY[kind]} {resource.name} in a serving stack: it belongs in the training account"
        elif kind in ("aws:ec2/launchTemplate:LaunchTemplate", "aws:ec2/instance:Instance") and _efa_interfaces(resource):
            yield f"{kind} {resource.name} attaches EFA interfaces in a serving stack: EFA fabric is training's"


GRANT_TYPES = {
    "aws:s3/bucketPolicy:BucketPolicy": "policy",
    "aws:iam/role:Role": "assumeRolePolicy",
    "aws:kms/key:Key": "policy",
    "aws:kms/keyPolicy:KeyPolicy": "policy",
    "aws:sqs/queuePolicy:QueuePolicy": "policy",
}


def check_cross_account_grants(resource: Any, ctx: Context) -> Iterable[str]:
    """Cross-account grants only let serving READ training's artifacts: a training bucket or key policy
    may grant a serving account Get/List/Decrypt only, a role may not trust the other side, and nothing
    is granted to an account outside both sides.

    Mirrors Checkov CKV_AWS_70 / Trivy AVD-AWS-0093 in spirit (no broad grants); the read-only direction
    is ours. A role or key granting Principal `*` without a condition reaches every account (Checkov
    CKV_AWS_60 for role trust, CKV_AWS_33 for key policies, Trivy AVD-AWS-0097's public queue policies). KMS keys may grant kms:Decrypt/DescribeKey so serving can read SSE-KMS objects. AWS's own
    ELB log-delivery accounts and configured `trustedAccounts` are neither side but allowed.
    """
    prop = GRANT_TYPES.get(resource.resource_type)
    if prop is None or ctx.workload is None:
        return
    own = ctx.workload_accounts | ({ctx.provider.accounts[0]} if ctx.provider and ctx.provider.accounts else set())
    trusted = ELB_LOG_DELIVERY_ACCOUNTS | frozenset(ctx.config.get("trustedAccounts") or [])
    for statement in statements(resource.props.get(prop)):
        if not is_allow(statement):
            continue
        for principal in aws_principals(statement):
            if principal == "*" and resource.resource_type != "aws:s3/bucketPolicy:BucketPolicy":
                # Every account, so outside both sides. (Public bucket policies are no-public-buckets'.)
                if not statement.get("Condition"):
                    yield f"{resource.name} grants every AWS account (Principal *); name the accounts or roles"
                continue
            account = principal_account(principal)
            if account is None or account in own or (account in trusted and account not in ctx.other_accounts):
                continue
            if account in ctx.other_accounts:
                if prop == "assumeRolePolicy":
                    yield f"role {resource.name} trusts {principal} from the {ctx.other} account {account}"
                    continue
                if ctx.workload == "serving":
                    yield f"{resource.name} grants {principal} ({ctx.other} account {account}) access; grants go training -> serving only"
                    continue
                writes = [a for a in actions_of(statement) if not _is_read(a)]
                if writes:
                    yield (
                        f"{resource.name} grants serving account {account} {', '.join(writes)}; "
                        "serving may only read training's artifacts (s3:Get*/s3:List*, kms:Decrypt)"
                    )
            elif ctx.training_accounts or ctx.serving_accounts:
                yield f"{resource.name} grants {principal}: account {account} is neither a training nor a serving account"


def _is_read(action: str) -> bool:
    return action.startswith(READ_ACTION_PREFIXES) or action in ("kms:Decrypt", "kms:DescribeKey")


def check_cross_account_grants_final(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Stack-level repeat of `cross-account-read-only` on the stack's final state, so it binds on `up`
    even when a policy document was unknown during preview (it is usually built from ARNs)."""
    for resource in resources:
        if resource.resource_type in GRANT_TYPES:
            for message in check_cross_account_grants(resource, ctx):
                yield resource.urn, message


def _tag_values(tags: Any) -> dict[str, str]:
    """`tags` maps key -> value; autoscaling groups list {key, value, propagateAtLaunch}."""
    if hasattr(tags, "items"):
        return {str(k): str(v) for k, v in tags.items()}
    found = {}
    for tag in as_list(tags):
        if hasattr(tag, "get") and tag.get("key") is not None:
            found[str(tag.get("key"))] = str(tag.get("value"))
    return found


def check_workload_tags(resource: Any, ctx: Context) -> Iterable[str]:
    """Every resource carries the workload and stack tags: the provider stamps them through
    `defaultTags`, resources never override them, and the places default tags do not reach (launch
    template tag specifications, autoscaling group tags) carry them explicitly. The config digest
    is not a default tag (it would update every resource on every config edit): autoscaling groups
    carry it, and propagate it to the instances they launch.

    Mirrors Checkov CKV_AWS_153-style tagging checks and the AWS tagging best practices whitepaper
    (https://docs.aws.amazon.com/whitepapers/latest/tagging-best-practices/).
    """
    facts = ctx.provider
    if is_provider_type(resource.resource_type):
        if facts is None or facts.package != "aws":
            return
        missing = [t for t in REQUIRED_TAGS if t != TAG_DIGEST and not facts.default_tags.get(t)]
        if missing:
            yield f"provider {facts.name} defaultTags lack {', '.join(missing)}"

        workload = facts.default_tags.get(TAG_WORKLOAD)
        if workload and workload not in WORKLOADS:
            yield f"provider {facts.name} tags {TAG_WORKLOAD}={workload}; allowed: {', '.join(WORKLOADS)}"
        configured = ctx.config.get("workload")
        if workload and configured in WORKLOADS and workload != configured:
            yield f"provider {facts.name} tags {TAG_WORKLOAD}={workload} but the policy config says {configured}"
        return
    if not is_cloud_type(resource.resource_type) or facts is None:
        return
    expected = dict(facts.default_tags)
    own = _tag_values(resource.props.get("tags"))
    for key in REQUIRED_TAGS:
        if key in own and key in expected and own[key] != expected[key]:
            yield f"{resource.name} overrides tag {key}={own[key]} (the stack's is {expected[key]})"
    if resource.resource_type == "aws:autoscaling/group:Group":
        missing = [k for k in REQUIRED_TAGS if k in expected and own.get(k) != expected[k]]
        missing += [TAG_DIGEST] if not own.get(TAG_DIGEST) else []
        if missing:
            yield f"autoscaling group {resource.name} must tag {', '.join(missing)} (default tags do not apply to it)"
    if resource.resource_type == "aws:ec2/launchTemplate:LaunchTemplate":
        # The digest is not required here: tag specifications belong to a template version, and a
        # digest in them would roll a serving fleet on every config edit; groups propagate it.
        stable = [k for k in REQUIRED_TAGS if k != TAG_DIGEST]
        specs = {s.get("resourceType"): _tag_values(s.get("tags")) for s in as_list(resource.props.get("tagSpecifications"))}
        for kind in ("instance", "volume"):
            tags = specs.get(kind, {})
            missing = [k for k in stable if k in expected and tags.get(k) != expected[k]]
            if missing:
                yield (
                    f"launch template {resource.name} tagSpecifications[{kind}] lack {', '.join(missing)} "
                    "(instances an autoscaling group launches do not get the provider's default tags)"
                )


POLICIES = [
    resource_policy("explicit-provider", "Cloud resources use the stack's explicit provider.", check_explicit_provider),
    resource_policy(
        "provider-account",
        "The provider pins an account of this stack's side (training or serving).",
        check_provider_account,
        types=["pulumi:providers:aws"],
    ),
    stack_policy("disjoint-accounts", "Training and serving account sets are disjoint.", check_disjoint_accounts),
    resource_policy("allowed-regions", "Resources stay in the allowed regions.", check_allowed_regions),
    resource_policy(
        "workload-resource-kinds", "Resource kinds belong to the stack's workload.", check_workload_kinds
    ),
    resource_policy(
        "cross-account-read-only",
        "Cross-account grants only let serving read training's artifacts.",
        check_cross_account_grants,
        types=list(GRANT_TYPES),
        config=CONFIG,
    ),
    stack_policy(
        "cross-account-read-only-final",
        "Cross-account grants only let serving read training's artifacts (final state).",
        check_cross_account_grants_final,
        config=CONFIG,
    ),
    resource_policy(
        "workload-tags", "Resources carry the workload and stack tags; groups the config digest.", check_workload_tags
    ),
]
ENFORCEMENT_LEVEL = EnforcementLevel.MANDATORY
