"""A serving stack's reader on another cloud (accelstack.spec.handoff), judged resource by resource: what it declares
in the training account through the reader's provider is its federated reader only, the reader reads only the
artifact prefixes of the named stores, and each federated trust names its subject and audience exactly. The access
graph places the reader in the training account, which the reader's provider makes this stack's own there; these
rules keep "own" from meaning more than the reader. Ours, after the cross-account rules (access_rules)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..common import Context, canonical_account, is_provider_type
from .copy_rules import UNKNOWN, clocks_of, copy_config, copy_pars, lifetime_seconds, read

CLOCK = "time:index/static:Static"  # the replica's clock (pulumiverse-time), a PAR's expiry is counted from
# What a serving stack may declare in another cloud's training account: its one federated reader, and its grant.
HANDOFF_READER_KINDS = {
    "aws": {
        "aws:iam/role:Role",
        "aws:iam/rolePolicy:RolePolicy",
        "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
    },
    "gcp": {
        "gcp:iam/workloadIdentityPool:WorkloadIdentityPool",
        "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider",
        "gcp:storage/bucketIAMMember:BucketIAMMember",
    },
    "azure": {
        "azure-native:resources:ResourceGroup",
        "azure-native:managedidentity:UserAssignedIdentity",
        "azure-native:managedidentity:FederatedIdentityCredential",
        "azure-native:authorization:RoleAssignment",
    },
    "oci": {"oci:ObjectStorage/preauthrequest:Preauthrequest"},  # a Vultr replica's PAR (no identity to trust)
}
# Vultr replicas reading Cloud Storage: a reader service account (no key) and its conditioned bucket grant; each
# replica's access token is minted outside the provider (GCP_ACCESS_TOKEN, judged by check_handoff_tokens).
PER_REPLICA_READER_KINDS = {
    ("gcp", "vultr"): {"gcp:serviceaccount/account:Account", "gcp:storage/bucketIAMMember:BucketIAMMember"},
}
GCP_ACCESS_TOKEN = "pulumi-python:dynamic/handoff:GcpAccessToken"  # components/gcp/handoff_token.py
AWS_SESSION = "pulumi-python:dynamic/handoff:AwsSession"  # components/aws/handoff_session.py
CREDENTIAL_KINDS = {GCP_ACCESS_TOKEN, AWS_SESSION}  # minted per replica outside any provider
GCS_READ_ONLY_SCOPE = "https://www.googleapis.com/auth/devstorage.read_only"
TOKEN_MOST_SECONDS = 3600  # generateAccessToken's limit without iam.allowServiceAccountCredentialLifetimeExtension
OCI_PAR = "oci:ObjectStorage/preauthrequest:Preauthrequest"
# Object Storage PAR access types that only read (docs.oracle.com/iaas/Content/Object/Tasks/usingpreauthenticatedrequests.htm):
# ObjectRead opens one object, AnyObjectRead every object under object_name; the *Write ones upload or overwrite.
OCI_READ_ACCESS = {"ObjectRead", "AnyObjectRead"}
# A PAR crossing into the training tenancy lives at most this long after its replica's clock.
PAR_MOST_SECONDS = 24 * 3600

STORAGE_BLOB_DATA_READER = "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1"
ENTRA_EXCHANGE_AUDIENCE = "api://AzureADTokenExchange"
AWS_READ_ACTIONS = {"s3:getobject", "s3:listbucket", "kms:decrypt"}
WILDCARD = re.compile(r"[*?]")


# What a serving stack may declare in another cloud's training account for a copy into its own store (copy_rules):
# OCI, the copy's PAR; Azure, nothing (the deployer reads with its own token).
COPY_READER_KINDS = {"oci": {OCI_PAR}}


def reader_kinds(handoff: Mapping[str, Any]) -> set[str]:
    """The kinds the serving stack may declare under the reader's provider, for its pair of clouds."""
    pair = (str(handoff.get("cloud")), str(handoff.get("servingCloud")))
    return PER_REPLICA_READER_KINDS.get(pair) or HANDOFF_READER_KINDS.get(pair[0], set())


def kinds_under_reader(ctx: Context) -> set[str]:
    """The kinds the serving stack may declare under the resource's provider, pinned to a training account: its
    reader's (artifactHandoff), or its copies' source credential (artifactCopies)."""
    handoff = handoff_of(ctx)
    if handoff is None:
        return set()
    if handoff.get("copy") is True:
        return COPY_READER_KINDS.get(str(handoff.get("cloud")), set())
    return reader_kinds(handoff)


def reader_email_domain(handoff: Mapping[str, Any]) -> str:
    """Where the reader service account of a Vultr stack reading Cloud Storage lives: the training project."""
    return f"@{handoff.get('account')}.iam.gserviceaccount.com"


def handoff_of(ctx: Context) -> Mapping[str, Any] | None:
    """The configured handoff (a reader, artifactHandoff; or a copy's source, artifactCopies), when the resource's
    provider is its reader's: the training cloud's package pinned to exactly the named training account."""
    if ctx.workload != "serving" or ctx.provider is None:
        return None
    handoff = ctx.config.get("artifactHandoff")
    if isinstance(handoff, Mapping) and handoff and _pinned_to(handoff, ctx):
        return handoff
    copies = copy_config(ctx)
    return copies if copies is not None and _pinned_to(copies, ctx) else None


def _pinned_to(handoff: Mapping[str, Any], ctx: Context) -> bool:
    facts = ctx.provider
    if facts is None:
        return False
    package = {"aws": "aws", "gcp": "gcp", "azure": "azure-native", "oci": "oci"}.get(str(handoff.get("cloud")))
    if package == "oci":  # an oci provider signs for a tenancy, not a compartment: pinned to the training one
        return facts.package == package and bool(facts.tenancy) and facts.tenancy == handoff.get("tenancy")
    account = canonical_account(str(handoff.get("account")))
    return facts.package == package and set(facts.accounts) == {account}


def _decoded(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _under(path: str, handoff: Mapping[str, Any]) -> bool:
    return any(path.startswith(str(p)) for p in handoff.get("prefixes") or []) and not WILDCARD.search(path.rstrip("*"))


def aws_problems(resource: Any, handoff: Mapping[str, Any]) -> Iterable[str]:
    kind, props, name = resource.resource_type, resource.props, resource.name
    if kind == "aws:iam/role:Role" and handoff.get("servingCloud") == "vultr":
        yield from _deployer_trust_problems(name, _decoded(props.get("assumeRolePolicy")), handoff)
    elif kind == "aws:iam/role:Role":
        trust = _decoded(props.get("assumeRolePolicy"))
        for statement in _list(trust.get("Statement") if isinstance(trust, dict) else None):
            if not isinstance(statement, dict):
                yield f"role {name}: its trust policy cannot be read; fail closed"
                continue
            if statement.get("Action") != "sts:AssumeRoleWithWebIdentity" or "Federated" not in (
                statement.get("Principal") or {}
            ):
                yield f"role {name}: its trust admits only a federated web identity (sts:AssumeRoleWithWebIdentity)"
                continue
            conditions = statement.get("Condition") or {}
            exact = conditions.get("StringEquals") or {}
            loose = [op for op in conditions if op != "StringEquals"]
            subjects = [v for k, v in exact.items() if k.endswith(":sub")]
            audiences = [v for k, v in exact.items() if k.endswith((":aud", ":oaud"))]
            if loose or not subjects or not audiences or any(WILDCARD.search(str(v)) for v in exact.values()):
                yield (
                    f"role {name}: a federated trust names its subject and audience exactly (StringEquals on :sub "
                    f"and :aud, no wildcard, no other operator); found {json.dumps(conditions)}"
                )
    elif kind == "aws:iam/rolePolicy:RolePolicy":
        stores = {str(s) for s in handoff.get("stores") or []}
        for statement in (_decoded(props.get("policy")) or {}).get("Statement", []) or []:
            actions = {str(a).lower() for a in _list(statement.get("Action"))}
            if statement.get("Effect", "Allow") != "Allow":
                continue
            extra = sorted(actions - AWS_READ_ACTIONS)
            if extra:
                yield f"role policy {name}: only s3:GetObject, s3:ListBucket, kms:Decrypt cross; found {', '.join(extra)}"
            for arn in _list(statement.get("Resource")):
                if "s3:getobject" in actions:
                    bucket, _, key = str(arn).removeprefix("arn:aws:s3:::").partition("/")
                    if bucket not in stores or not _under(key, handoff):
                        yield f"role policy {name}: reads {arn}, outside the artifact prefixes {handoff.get('prefixes')}"
            if "s3:listbucket" in actions:
                listed = ((statement.get("Condition") or {}).get("StringLike") or {}).get("s3:prefix")
                if not listed or not all(_under(str(p), handoff) for p in _list(listed)):
                    yield f"role policy {name}: a listing limited to the artifact prefixes (s3:prefix), found {listed}"
            if "kms:decrypt" in actions and "kms:ViaService" not in json.dumps(statement.get("Condition") or {}):
                yield f"role policy {name}: kms:Decrypt only through S3 (kms:ViaService)"


def _deployer_trust_problems(name: str, trust: Any, handoff: Mapping[str, Any]) -> Iterable[str]:
    """AWS -> Vultr: the reader role is assumed (sts:AssumeRole) by the configured deployer only, named exactly by
    aws:PrincipalArn under its account's root; no other principal, action, operator or wildcard."""
    deployer = str(handoff.get("deployer") or "")
    account = deployer.split(":")[4] if deployer.count(":") >= 5 else ""
    statements = _list(trust.get("Statement") if isinstance(trust, dict) else None)
    for statement in statements:
        if not isinstance(statement, dict):
            yield f"role {name}: its trust policy cannot be read; fail closed"
            continue
        if statement.get("Effect", "Allow") != "Allow":
            continue
        principals = _list(
            (statement.get("Principal") or {}).get("AWS") if isinstance(statement.get("Principal"), dict) else None
        )
        conditions = statement.get("Condition") or {}
        if not isinstance(conditions, dict):
            yield f"role {name}: its trust's condition cannot be read ({conditions!r}); fail closed"
            continue
        exact = conditions.get("ArnEquals") or {}
        if (
            statement.get("Action") != "sts:AssumeRole"
            or principals not in ([f"arn:aws:iam::{account}:root"], [deployer])
            or set(conditions) - {"ArnEquals"}
            or (principals != [deployer] and exact != {"aws:PrincipalArn": deployer})
            or WILDCARD.search(json.dumps(statement))
        ):
            yield (
                f"role {name}: only the deployer ({deployer or 'serving.artifactDeployer'}) may assume it (sts:AssumeRole, "
                f"aws:PrincipalArn exactly); found {json.dumps(statement)}"
            )


def gcp_problems(resource: Any, handoff: Mapping[str, Any]) -> Iterable[str]:
    kind, props, name = resource.resource_type, resource.props, resource.name
    if kind == "gcp:storage/bucketIAMMember:BucketIAMMember":
        if props.get("role") != "roles/storage.objectViewer":
            yield f"bucket grant {name}: only roles/storage.objectViewer crosses; found {props.get('role')}"
        if props.get("bucket") not in (handoff.get("stores") or []):
            yield f"bucket grant {name}: bucket {props.get('bucket')} is not the artifacts' ({handoff.get('stores')})"
        expression = str((props.get("condition") or {}).get("expression") or "")
        literals = re.findall(r'startsWith\("([^"]*)"\)', expression)
        paths = [re.sub(r"^projects/_/buckets/[^/]+/objects/", "", lit) for lit in literals]
        if not paths or not all(_under(p, handoff) for p in paths):
            yield f"bucket grant {name}: an IAM condition limits it to the artifact prefixes; found {expression!r}"
        member = str(props.get("member") or "")
        if handoff.get("servingCloud") == "vultr" and not (
            member.startswith("serviceAccount:") and member.endswith(reader_email_domain(handoff))
        ):
            yield (
                f"bucket grant {name}: only the reader service account of the training project "
                f"(serviceAccount:<id>{reader_email_domain(handoff)}) reads for Vultr replicas; found {member!r}"
            )
    elif kind == "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider":
        condition = str(props.get("attributeCondition") or "")
        if "==" not in condition or WILDCARD.search(condition) or "||" in condition:
            yield f"pool provider {name}: its attributeCondition names one identity exactly; found {condition!r}"
        issuer = (props.get("oidc") or {}).get("issuerUri")
        if issuer is not None and issuer not in (handoff.get("issuers") or []):
            yield f"pool provider {name}: issuer {issuer} is not the serving replicas' ({handoff.get('issuers')})"


def azure_problems(resource: Any, handoff: Mapping[str, Any]) -> Iterable[str]:
    kind, props, name = resource.resource_type, resource.props, resource.name
    if kind == "azure-native:managedidentity:FederatedIdentityCredential":
        subject = str(props.get("subject") or "")
        if not subject or WILDCARD.search(subject):
            yield f"federated credential {name}: names the replicas' subject exactly; found {subject!r}"
        if list(props.get("audiences") or []) != [ENTRA_EXCHANGE_AUDIENCE]:
            yield f"federated credential {name}: audience {ENTRA_EXCHANGE_AUDIENCE} only; found {props.get('audiences')}"
    elif kind == "azure-native:authorization:RoleAssignment":
        role = str(props.get("roleDefinitionId") or "")
        if not role.endswith(STORAGE_BLOB_DATA_READER):
            yield f"role assignment {name}: only Storage Blob Data Reader crosses; found {role}"
        condition = str(props.get("condition") or "")
        prefixes = re.findall(r"StringStartsWith '([^']*)'", condition)
        accounts = re.findall(r"storageAccounts:name\] StringEquals '([^']*)'", condition)
        if (
            not prefixes
            or not all(_under(p, handoff) for p in prefixes)
            or not accounts
            or not set(accounts) <= set(handoff.get("storageAccounts") or [])
        ):
            yield f"role assignment {name}: a condition limits reads to the artifact prefixes of the named accounts"


def oci_problems(resource: Any, handoff: Mapping[str, Any]) -> Iterable[str]:
    """A PAR in the training tenancy: read-only, on the artifact prefix of the named bucket and namespace (never the
    bucket, whose PAR with no object name opens every object). Its expiry is judged against its clock by
    `check_handoff_pars_expire` (the clock is another resource)."""
    if resource.resource_type != OCI_PAR:
        return
    props, name = resource.props, resource.name
    access = props.get("accessType")
    if access not in OCI_READ_ACCESS:
        yield f"pre-authenticated request {name}: only {' or '.join(sorted(OCI_READ_ACCESS))} crosses; found {access}"
    target = props.get("objectName", props.get("object"))
    if not isinstance(target, str) or not target or not _under(target, handoff):
        yield (
            f"pre-authenticated request {name}: object_name limits it to the artifact prefixes "
            f"{handoff.get('prefixes')}; found {target!r} (an empty one opens the whole bucket)"
        )
    if props.get("bucket") not in (handoff.get("stores") or []):
        yield f"pre-authenticated request {name}: bucket {props.get('bucket')} is not the artifacts' ({handoff.get('stores')})"
    if props.get("namespace") not in (handoff.get("namespaces") or []):
        yield (
            f"pre-authenticated request {name}: namespace {props.get('namespace')} is not the artifacts' "
            f"({handoff.get('namespaces')})"
        )


JUDGES = {"aws": aws_problems, "gcp": gcp_problems, "azure": azure_problems, "oci": oci_problems}


def _instant(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def check_handoff_pars_expire(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Every PAR the serving stack declares in the training tenancy expires within a day of the clock it is
    declared from (a time_static its timeExpires depends on): a PAR is a bearer URL until it expires. A copy's PAR
    (copy_rules: the one its source_url comes from) expires from the copy's own clock, within the copy's URL
    lifetime (serving.artifactUrlLifetimeMinutes, 15..1440 min). Unknown values (a preview, before the clock exists)
    are judged once known; a PAR with no clock, or expiring after its bound, or before its clock, is a violation.
    Ours."""
    handoff = ctx.config.get("artifactHandoff") or {}
    copies = copy_config(ctx) or {}
    if ctx.workload != "serving" or "oci" not in (handoff.get("cloud"), copies.get("cloud")):
        return
    by_urn = {r.urn: r for r in resources}
    of_copy = copy_pars(resources, by_urn)
    for par in (r for r in resources if r.resource_type == OCI_PAR):
        copy = of_copy.get(par.urn)
        expires = read(par.props, "timeExpires")
        clocks = [by_urn[u] for u in sorted(clocks_of(par, "timeExpires", by_urn))]
        if copy is not None and {c.urn for c in clocks} != clocks_of(copy, "clock", by_urn):
            yield (
                par.urn,
                f"pre-authenticated request {par.name}: its timeExpires comes from clocks "
                f"{[c.name for c in clocks]}, not its copy {copy.name}'s own clock; a copy's PAR expires from it",
            )
            continue
        if expires is UNKNOWN or (expires is None and copy is None):
            continue  # unknown in a preview: judged once the clock exists
        end = _instant(expires)
        if end is None:
            yield par.urn, f"pre-authenticated request {par.name}: timeExpires {expires!r} is not RFC 3339; fail closed"
            continue
        if not clocks:
            yield (
                par.urn,
                f"pre-authenticated request {par.name}: its timeExpires ({expires}) comes from no replica clock "
                f"({CLOCK}); a PAR's expiry is its replica's clock + the URL lifetime, at most 24 h",
            )
            continue
        most = lifetime_seconds(copies, copy) if copy is not None else PAR_MOST_SECONDS
        for clock in clocks:
            start = _instant(read(clock.props, "rfc3339"))
            if start is None:
                continue  # the clock's instant is unknown until it is created
            seconds = (end - start).total_seconds()
            if not 0 < seconds <= most:
                yield (
                    par.urn,
                    f"pre-authenticated request {par.name}: expires {expires}, {seconds / 60:.0f} min after its clock "
                    f"{clock.name} ({read(clock.props, 'rfc3339')}); allowed: within {most / 60:.0f} min after it"
                    + (" (its copy's URL lifetime, serving.artifactUrlLifetimeMinutes)" if copy is not None else ""),
                )


def check_handoff_tokens(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Each Vultr replica's access token of the Cloud Storage reader (a dynamic resource minting it at create): of the
    reader service account this stack declares in the training project, for devstorage.read_only only, living at most
    the configured lifetime (<= 1 h) and minted from the replica's clock (its `clock` input depends on a time_static).
    Anywhere else such a token fails closed: the packs know it only as that reader's. Ours."""
    handoff = ctx.config.get("artifactHandoff") or {}
    tokens = [r for r in resources if r.resource_type == GCP_ACCESS_TOKEN]
    if not tokens:
        return
    if ctx.workload != "serving" or (handoff.get("cloud"), handoff.get("servingCloud")) != ("gcp", "vultr"):
        for token in tokens:
            yield (
                token.urn,
                f"access token {token.name}: a bearer token of a service account, declared only as a Vultr serving "
                "stack's reader of Cloud Storage weights (gs:// in serving.model.weightsUri)",
            )
        return
    by_urn = {r.urn: r for r in resources}
    readers = {
        str(r.props.get("email") or f"{r.props.get('accountId')}{reader_email_domain(handoff)}")
        for r in resources
        if r.resource_type == "gcp:serviceaccount/account:Account"
        and str(r.props.get("accountId") or "") != ""
        and str(r.props.get("project") or handoff.get("account")) == handoff.get("account")
    }
    most = min(TOKEN_MOST_SECONDS, int(handoff.get("lifetimeMinutes") or 60) * 60)
    for token in tokens:
        props, name = token.props, token.name
        email = props.get("service_account")
        if isinstance(email, str) and (email not in readers or not email.endswith(reader_email_domain(handoff))):
            yield (
                token.urn,
                f"access token {name}: of {email}, not the reader service account this stack declares in the "
                f"training project ({', '.join(sorted(readers)) or 'none'})",
            )
        scope = props.get("scope")
        if scope != GCS_READ_ONLY_SCOPE:
            yield token.urn, f"access token {name}: scope {scope!r}; allowed: {GCS_READ_ONLY_SCOPE} only"
        lifetime = props.get("lifetime_seconds")
        if not isinstance(lifetime, (int, float)) or not 0 < lifetime <= most:
            yield token.urn, f"access token {name}: lives {lifetime!r} s; allowed: 1..{most} (the configured lifetime)"
        if not _from_a_clock(token, "clock", by_urn):
            yield (
                token.urn,
                f"access token {name}: minted from no replica clock ({CLOCK}); a token is minted when its replica's "
                "clock is created, so an unchanged `up` keeps it",
            )


def check_handoff_reader_reads_only_the_prefix(resource: Any, ctx: Context) -> Iterable[str]:
    """Under the reader's provider: read of the artifact prefixes only, a trust naming its subject and audience.
    Ours: the cross-account read path of the access graph (cross-account-read-only), narrowed to the one prefix
    the serving stack names."""
    if is_provider_type(resource.resource_type):
        return
    handoff = handoff_of(ctx)
    if handoff is None:
        if resource.resource_type == OCI_PAR:  # fail closed: known to the packs only as the handoff's reader
            yield (
                f"pre-authenticated request {resource.name}: a bearer URL to a bucket's objects, declared only as a "
                "Vultr serving stack's reader of OCI weights or a serving stack's copy's source (serving.model."
                "copyFrom), under the oci provider pinned to the training tenancy (serving.artifactTenancy)"
            )
        return
    judge = JUDGES.get(str(handoff.get("cloud")))
    if judge is None:
        yield f"{resource.resource_type} {resource.name}: the handoff's cloud {handoff.get('cloud')!r} is not one the pack knows; fail closed"
        return
    yield from judge(resource, handoff)


def _from_a_clock(resource: Any, key: str, by_urn: Mapping[str, Any]) -> bool:
    """Whether `key` of `resource` depends on a replica clock (a time_static)."""
    deps = (getattr(resource, "property_dependencies", None) or {}).get(key) or []
    return any(getattr(d, "resource_type", "") == CLOCK for d in deps) or any(
        u in by_urn and by_urn[u].resource_type == CLOCK for u in (getattr(d, "urn", d) for d in deps)
    )


class _Policy:
    """A session policy judged as the reader role's policy is (aws_problems on a RolePolicy)."""

    resource_type = "aws:iam/rolePolicy:RolePolicy"

    def __init__(self, name: str, policy: Any):
        self.name, self.props = name, {"policy": policy}


def check_handoff_sessions(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Each Vultr replica's STS session of the S3 reader role (a dynamic resource starting it at create): of the reader
    role this stack declares in the training account, narrowed by a session policy to the reads of the artifact
    prefix, lasting at most the configured lifetime (<= 1 h, role chaining) and started from the replica's clock.
    Anywhere else such a session fails closed: the packs know it only as that reader's. Ours."""
    handoff = ctx.config.get("artifactHandoff") or {}
    sessions = [r for r in resources if r.resource_type == AWS_SESSION]
    if not sessions:
        return
    if ctx.workload != "serving" or (handoff.get("cloud"), handoff.get("servingCloud")) != ("aws", "vultr"):
        for session in sessions:
            yield (
                session.urn,
                f"STS session {session.name}: bearer credentials of a role, declared only as a Vultr serving stack's "
                "reader of AWS weights (an S3 URL in serving.model.weightsUri)",
            )
        return
    by_urn = {r.urn: r for r in resources}
    roles = {
        f"arn:aws:iam::{handoff.get('account')}:role/{r.props.get('name')}"
        for r in resources
        if r.resource_type == "aws:iam/role:Role" and r.props.get("name")
    }
    most = min(TOKEN_MOST_SECONDS, int(handoff.get("lifetimeMinutes") or 60) * 60)
    for session in sessions:
        props, name = session.props, session.name
        role = props.get("role_arn")
        if isinstance(role, str) and role not in roles:
            yield (
                session.urn,
                f"STS session {name}: of {role}, not the reader role this stack declares ({sorted(roles)})",
            )
        for problem in aws_problems(_Policy(name, props.get("policy")), handoff):
            yield session.urn, f"STS session {name}: its session policy: {problem}"
        duration = props.get("duration_seconds")
        if not isinstance(duration, (int, float)) or not 900 <= duration <= most:
            yield (
                session.urn,
                f"STS session {name}: lasts {duration!r} s; allowed: 900..{most} (the configured lifetime)",
            )
        if props.get("region") != handoff.get("region"):
            yield session.urn, f"STS session {name}: region {props.get('region')}; allowed: {handoff.get('region')}"
        if not _from_a_clock(session, "clock", by_urn):
            yield (
                session.urn,
                f"STS session {name}: started from no replica clock ({CLOCK}); an unchanged `up` keeps it",
            )


def check_handoff_credentials_expire(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Per-replica credentials in another cloud's training account: PARs (check_handoff_pars_expire), access
    tokens (check_handoff_tokens) and STS sessions (check_handoff_sessions). Ours."""
    yield from check_handoff_pars_expire(resources, ctx)
    yield from check_handoff_tokens(resources, ctx)
    yield from check_handoff_sessions(resources, ctx)
