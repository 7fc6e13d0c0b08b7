"""GCP IAM for the access graph (policies/gcp/access.py): where a member lives, what a role lets it do, and how
far an IAM condition narrows a grant on a bucket's objects.

A member is placed in a project where its identifier names one (a user-managed service account's email), in the
cloud itself (Google's service agents), in every account (allUsers), in an organisation's domain (Google
Workspace / Cloud Identity users and groups: in no project, so neither side's unless `trustedAccounts` names the
domain), or nowhere: consumer accounts, deleted principals, workload and workforce identity pools, and any form
this module does not know fail closed (https://cloud.google.com/iam/docs/principal-identifiers).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..access import ADMIN, ANY, BECOME, IDENTITY, OWN, READ, SERVICE, WRITE, Party, stronger

PROJECT_ID = r"[a-z][a-z0-9-]{4,28}[a-z0-9]"
SA_EMAIL = re.compile(rf"^[^@\s]+@({PROJECT_ID})\.iam\.gserviceaccount\.com$")
# A project's App Engine default account is named after its project
# (cloud.google.com/appengine/docs/standard/configure-service-accounts#default-service-account).
APP_ENGINE = re.compile(rf"^({PROJECT_ID})@appspot\.gserviceaccount\.com$")
# Default accounts named by project number: Compute Engine's (<number>-compute@developer) and Cloud Build's legacy
# one (<number>@cloudbuild): accounts in that project that users' workloads run as, not service agents
# (https://cloud.google.com/compute/docs/access/service-accounts#default_service_account).
NUMBERED = re.compile(r"^([0-9]+)(?:-compute@developer|@cloudbuild)\.gserviceaccount\.com$")
# Service agents: service-[org-|folder-]<number>@gcp-sa-<service>.iam.gserviceaccount.com, the older per-service
# domains, and the Google APIs agent <number>@cloudservices (https://cloud.google.com/iam/docs/service-agents).
# Only these exact forms are taken as agents: a user may name an account "service-123" in a project of theirs.
AGENT_LOCAL = re.compile(r"^service-(?:org-|folder-)?[0-9]+$")
LEGACY_AGENT_PROJECTS = frozenset(
    {
        "compute-system",
        "gs-project-accounts",
        "container-engine-robot",
        "cloud-filer",
        "containerregistry",
        "serverless-robot-prod",
        "dataflow-service-producer-prod",
        "cloudcomposer-accounts",
        "cloud-redis",
    }
)
CLOUD_SERVICES = re.compile(r"^[0-9]+@cloudservices\.gserviceaccount\.com$")
CONSUMER_DOMAINS = frozenset({"gmail.com", "googlemail.com"})
# principal:// and principalSet:// identifiers (https://cloud.google.com/iam/docs/principal-identifiers).
POOL_SUBJECT = re.compile(
    r"^principal://iam\.googleapis\.com/projects/([0-9]+)/locations/global/workloadIdentityPools/([^/]+)/subject/.+$"
)
POOL_SET = re.compile(
    r"^principalSet://iam\.googleapis\.com/projects/([0-9]+)/locations/global/workloadIdentityPools/([^/]+)/attribute\.[a-z_]+/[^*]+$"
)
PROJECT_SERVICE_ACCOUNTS = re.compile(
    r"^principalSet://cloudresourcemanager\.googleapis\.com/projects/([0-9]+)/type/ServiceAccount$"
)


@dataclass
class StackFacts:
    """What the stack creates, for placing names that carry no project: its buckets and keys, the project numbers
    of its own service agents, its workload identity pools, its custom roles' permissions."""

    buckets: frozenset[str] = frozenset()
    bucket_urns: frozenset[str] = frozenset()
    keys: frozenset[str] = frozenset()  # ids and names of its CryptoKeys
    key_urns: frozenset[str] = frozenset()
    numbers: frozenset[str] = frozenset()
    pools: frozenset[str] = frozenset()
    roles: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def project_account(value: str, facts: StackFacts | None, what: str) -> tuple[str | None, str]:
    """A project named by id (itself) or by number (the stack's own when one of its service agents carries the
    number; otherwise unplaceable offline). Returns (account, why it could not be placed)."""
    if not value.isdigit():
        return value, ""
    if facts is not None and value in facts.numbers:
        return OWN, ""
    return None, f"{what} names project number {value}, which no resource of this stack carries"


def service_account_party(email: str, facts: StackFacts | None, needs_stack: bool) -> Party:
    """A service account by email: user-managed in its project, a service agent in the cloud itself."""
    ref = f"serviceAccount:{email}"
    lowered = email.strip().lower()
    local, _, domain = lowered.partition("@")
    managed = SA_EMAIL.match(lowered)
    if CLOUD_SERVICES.match(lowered) or (
        managed is not None
        and (
            managed.group(1).startswith("gcp-sa-")
            or (managed.group(1) in LEGACY_AGENT_PROJECTS and AGENT_LOCAL.match(local))
        )
    ):
        return Party(ref, SERVICE, IDENTITY)
    if managed is not None:
        return Party(ref, managed.group(1), IDENTITY)
    if app_engine := APP_ENGINE.match(lowered):
        return Party(ref, app_engine.group(1), IDENTITY)
    if numbered := NUMBERED.match(lowered):
        account, why = project_account(numbered.group(1), facts, f"service account {email}")
        return Party(ref, account, IDENTITY, why, needs_stack=account is None and needs_stack)
    return _unplaced(ref, f"a service account of domain {domain or '?'}, which names no project")


def _unplaced(ref: str, why: str) -> Party:
    return Party(ref, None, IDENTITY, why)


def member_party(member: str, facts: StackFacts | None, needs_stack: bool) -> Party:
    """Where an IAM member lives (https://cloud.google.com/iam/docs/principal-identifiers)."""
    text = member.strip()
    prefix, _, value = text.partition(":")
    kind = prefix.lower()
    if text.lower() in ("allusers", "allauthenticatedusers"):
        return Party(text, ANY, IDENTITY)
    if kind in ("user", "group"):
        domain = value.rpartition("@")[2].lower()
        if domain in CONSUMER_DOMAINS:
            return _unplaced(text, f"a consumer Google account ({domain}), in no organisation or project")
        return Party(text, f"domain:{domain}", IDENTITY) if domain else _unplaced(text, "no email domain")
    if kind == "domain":
        return Party(text, f"domain:{value.lower()}", IDENTITY)
    if kind == "serviceaccount" and value.split("[", 1)[0].endswith(".svc.id.goog"):
        # PROJECT.svc.id.goog[NAMESPACE/KSA]: a fleet's pool also holds other projects' clusters' workloads
        # (https://cloud.google.com/kubernetes-engine/docs/concepts/workload-identity#identity_sameness).
        return _unplaced(text, "a GKE workload identity: a fleet's pool holds workloads of other projects' clusters")
    if kind == "serviceaccount":
        return service_account_party(value, facts, needs_stack)
    if kind in ("projectowner", "projecteditor", "projectviewer"):
        # Bucket IAM's convenience values: the owners/editors/viewers of a project.
        account, why = project_account(value, facts, text)
        return Party(text, account, IDENTITY, why)
    if subject := POOL_SUBJECT.match(text):
        if facts is not None and subject.group(2) in facts.pools:
            return Party(text, OWN, IDENTITY)
        why = f"one identity of workload identity pool {subject.group(2)}, which this stack does not create"
        return Party(text, None, IDENTITY, why, needs_stack=needs_stack and facts is None)
    if attribute := POOL_SET.match(text):
        if facts is not None and attribute.group(2) in facts.pools:
            return Party(text, OWN, IDENTITY)  # the identities of the stack's own pool with one attribute value
        why = f"identities of workload identity pool {attribute.group(2)}, which this stack does not create"
        return Party(text, None, IDENTITY, why, needs_stack=needs_stack and facts is None)
    if every := PROJECT_SERVICE_ACCOUNTS.match(text):
        account, why = project_account(every.group(1), facts, "every service account of a project")
        return Party(text, account, IDENTITY, why, needs_stack=account is None and needs_stack)
    if kind in ("principal", "principalset"):
        return _unplaced(text, "workload or workforce identities federated from outside Google Cloud")
    if kind == "deleted":
        return _unplaced(text, "a deleted principal (its binding outlives it)")
    return _unplaced(text, "a member form the pack does not know")


# --- roles -------------------------------------------------------------------------------------------------------

# Roles lending another identity: actAs, access and ID tokens, keys, workload identity
# (https://cloud.google.com/iam/docs/service-account-permissions). The basic roles hold actAs too
# (https://cloud.google.com/iam/docs/roles-overview#basic).
BECOME_ROLES = {
    "roles/iam.serviceAccountUser": READ,
    "roles/iam.serviceAccountTokenCreator": READ,
    "roles/iam.serviceAccountOpenIdTokenCreator": READ,
    "roles/iam.workloadIdentityUser": READ,
    "roles/iam.serviceAccountKeyAdmin": ADMIN,
    "roles/iam.serviceAccountAdmin": ADMIN,
    "roles/owner": ADMIN,
    "roles/editor": WRITE,
    # Set any IAM policy: grant itself any role on anything in scope.
    "roles/iam.securityAdmin": ADMIN,
    "roles/resourcemanager.projectIamAdmin": ADMIN,
    "roles/resourcemanager.folderIamAdmin": ADMIN,
    "roles/resourcemanager.folderAdmin": ADMIN,
    "roles/resourcemanager.organizationAdmin": ADMIN,
}
# IAM-admin-equivalent predefined roles: each can change who can do what in its scope (setIamPolicy, custom role
# or pool definitions), or destroy protected data (https://cloud.google.com/iam/docs/understanding-roles).
ADMIN_ROLES = frozenset(
    {
        "roles/iam.roleAdmin",
        "roles/iam.organizationRoleAdmin",
        "roles/iam.workloadIdentityPoolAdmin",
        "roles/iam.denyAdmin",
        "roles/orgpolicy.policyAdmin",
        # storage.buckets.setIamPolicy / storage.objects.setIamPolicy
        # (https://cloud.google.com/storage/docs/access-control/iam-roles).
        "roles/storage.admin",
        "roles/storage.objectAdmin",
        "roles/storage.legacyBucketOwner",
        "roles/storage.legacyObjectOwner",
        "roles/cloudkms.admin",
        "roles/secretmanager.admin",
        "roles/pubsub.admin",
        "roles/logging.admin",
        "roles/logging.configWriter",  # sinks: where the logs go
        "roles/compute.admin",
    }
)
WRITE_ROLES = frozenset(
    {
        "roles/storage.objectCreator",
        "roles/storage.objectUser",
        "roles/storage.legacyBucketWriter",
        "roles/pubsub.publisher",
        "roles/pubsub.subscriber",  # acknowledging removes messages
        "roles/pubsub.editor",
        "roles/secretmanager.secretVersionAdder",
        "roles/secretmanager.secretVersionManager",
        "roles/cloudkms.cryptoKeyEncrypter",
        "roles/cloudkms.cryptoKeyEncrypterDecrypter",
        "roles/logging.logWriter",
        "roles/logging.bucketWriter",
        "roles/monitoring.metricWriter",
        "roles/bigquery.dataEditor",
        "roles/bigquery.jobUser",
        "roles/compute.networkUser",
        "roles/artifactregistry.writer",
        "roles/container.defaultNodeServiceAccount",
    }
)
READ_ROLES = frozenset(
    {
        "roles/viewer",
        "roles/browser",
        "roles/iam.securityReviewer",
        "roles/storage.objectViewer",
        "roles/storage.legacyBucketReader",
        "roles/storage.legacyObjectReader",
        "roles/secretmanager.secretAccessor",
        "roles/cloudkms.cryptoKeyDecrypter",
        "roles/artifactregistry.reader",
    }
)
# Predefined roles named "... Viewer" are read-only by Google's naming (https://cloud.google.com/iam/docs/roles-overview).
VIEWER = re.compile(r"^roles/[a-zA-Z0-9]+\.(?:[a-zA-Z0-9]*[vV]iewer)$")

# Custom role permissions (service.resource.verb): what each verb does.
BECOME_PERMISSIONS = frozenset(
    {
        "iam.serviceAccounts.actAs",
        "iam.serviceAccounts.getAccessToken",
        "iam.serviceAccounts.getOpenIdToken",
        "iam.serviceAccounts.signBlob",
        "iam.serviceAccounts.signJwt",
        "iam.serviceAccounts.implicitDelegation",
        "iam.serviceAccounts.setIamPolicy",
        "iam.serviceAccountKeys.create",
        "iam.workloadIdentityPoolProviders.create",
        "iam.workloadIdentityPoolProviders.update",
    }
)
READ_VERBS = frozenset({"get", "list", "getIamPolicy", "access", "search", "read", "view"})
WRITE_VERBS = frozenset(
    {"create", "update", "delete", "patch", "publish", "consume", "attach", "use", "add", "insert", "write", "restore"}
)


@dataclass(frozen=True)
class RoleAccess:
    """What a role lets a member do in the scope it is granted on, and whether it lends the identities there."""

    level: str
    becomes: bool
    note: str = ""
    # A custom role judged without the stack (a resource-level check): the stack-level check reads its permissions.
    needs_stack: bool = False


def permission_level(permission: str) -> tuple[str, bool]:
    if permission in BECOME_PERMISSIONS:
        return ADMIN if permission.endswith("setIamPolicy") else READ, True
    verb = permission.rsplit(".", 1)[-1]
    if verb == "setIamPolicy":
        return ADMIN, False
    if verb in READ_VERBS:
        return READ, False
    if verb in WRITE_VERBS:
        return WRITE, False
    return ADMIN, False  # an action this table does not know is not a read (fail closed)


def role_access(role: str, facts: StackFacts | None) -> RoleAccess:
    """A role's access level: a table of predefined roles, a custom role by the permissions the stack gives it,
    and ADMIN for any role the table does not know (fail closed)."""
    if role in BECOME_ROLES:
        return RoleAccess(BECOME_ROLES[role], True)
    if role in ADMIN_ROLES:
        return RoleAccess(ADMIN, False)
    if role in WRITE_ROLES:
        return RoleAccess(WRITE, False)
    if role in READ_ROLES or VIEWER.match(role):
        return RoleAccess(READ, False)
    custom = role.startswith(("projects/", "organizations/"))
    if custom and facts is None:
        return RoleAccess(ADMIN, False, "a custom role, judged by its permissions with the stack", needs_stack=True)
    permissions = None if facts is None else facts.roles.get(role)
    if permissions is not None:
        level, becomes = READ, False
        for permission in permissions:
            one, lends = permission_level(permission)
            level, becomes = stronger(level, one), becomes or lends
        return RoleAccess(level, becomes)
    why = "a custom role this stack does not define" if custom else "a role the pack's table does not know"
    return RoleAccess(ADMIN, False, f"{why}: judged as admin")


# --- IAM conditions on a bucket's objects -----------------------------------------------------------------------
# Conditions only narrow a binding (https://cloud.google.com/iam/docs/conditions-overview); one this reader cannot
# read narrows nothing it can rely on, so the grant is judged as if it had none (the whole bucket).
_Q = r"""(["'])"""
_STARTS = re.compile(rf"^resource\.name\.startsWith\(\s*{_Q}projects/_/buckets/([^/\"']+)/objects/([^\"']*)\1\s*\)$")
_EQUALS = re.compile(rf"^resource\.name\s*==\s*{_Q}projects/_/buckets/([^/\"']+)/objects/([^\"']*)\1$")
# Listing is judged on the bucket; the list-prefix attribute keeps it to a prefix
# (https://cloud.google.com/storage/docs/access-control/iam#conditions).
_LIST = re.compile(
    rf"^api\.getAttribute\(\s*{_Q}storage\.googleapis\.com/objectListPrefix\1\s*,\s*{_Q}\2\s*\)"
    rf"\.startsWith\(\s*{_Q}([^\"']*)\3\s*\)$"
)


def _split(expression: str, operator: str) -> list[str]:
    """Top-level operands of `operator` (outside parentheses and string literals)."""
    parts, depth, quote, start, i = [], 0, "", 0, 0
    while i < len(expression):
        char = expression[i]
        if quote:
            quote = "" if char == quote and expression[i - 1] != "\\" else quote
        elif char in "\"'":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth == 0 and expression.startswith(operator, i):
            parts.append(expression[start:i])
            start = i + len(operator)
            i += len(operator) - 1
        i += 1
    parts.append(expression[start:])
    return [p.strip() for p in parts]


def _bare(expression: str) -> str:
    """The expression without parentheses that enclose all of it."""
    expression = expression.strip()
    while expression.startswith("(") and expression.endswith(")"):
        depth = 0
        for index, char in enumerate(expression):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0 and index < len(expression) - 1:
                return expression  # the first "(" closes before the end: "(a) && (b)"
        expression = expression[1:-1].strip()
    return expression


def _atom_prefix(atom: str, bucket: str | None) -> str | None:
    for pattern in (_STARTS, _EQUALS):
        found = pattern.match(atom)
        if found is not None:
            return found.group(3) if bucket is None or found.group(2) == bucket else None
    listing = _LIST.match(atom)
    return listing.group(4) if listing is not None else None


def object_prefixes(expression: Any, bucket: str | None) -> list[str] | None:
    """The object-name prefixes a condition limits a bucket grant to, or None when it does not limit it to any
    prefix this reader can read. A disjunction limits it only if every operand does; a conjunction, if any does."""
    if not isinstance(expression, str) or not expression.strip():
        return None
    found: list[str] = []
    for operand in _split(_bare(expression), "||"):
        narrowed = _conjunction_prefixes(_bare(operand), bucket)
        if narrowed is None:
            return None
        found += [p for p in narrowed if p not in found]
    return found


def _conjunction_prefixes(operand: str, bucket: str | None) -> list[str] | None:
    best: list[str] | None = None
    for conjunct in _split(operand, "&&"):
        conjunct = _bare(conjunct)
        if "||" in conjunct and conjunct != operand:
            nested = object_prefixes(conjunct, bucket)
            if nested is not None and best is None:
                best = nested
            continue
        prefix = _atom_prefix(conjunct, bucket)
        if prefix is not None and (best is None or len(best) != 1 or len(prefix) > len(best[0])):
            best = [prefix]
    return best


def condition_of(node: Any) -> tuple[Any, str]:
    """(expression, title) of a binding's condition block (a list of one, as some states hold it, or a mapping)."""
    condition: Any = node.get("condition") if hasattr(node, "get") else None
    if isinstance(condition, list):
        condition = condition[0] if condition else None
    if condition is None or not hasattr(condition, "get"):
        return None, ""
    return condition.get("expression"), str(condition.get("title") or "")


def narrow_attribute_condition(expression: Any) -> bool:
    """A workload identity provider's attributeCondition that admits named identities only: a conjunction of
    equalities on assertion or attribute values (no disjunction, prefix, pattern or inequality)."""
    if not isinstance(expression, str) or not expression.strip() or "||" in expression:
        return False
    equality = re.compile(rf"^(?:assertion|attribute)\.[A-Za-z0-9_.\[\]'\"]+\s*==\s*{_Q}[^\"']+\1$")
    return all(equality.match(_bare(c)) for c in _split(_bare(expression), "&&"))


def strongest(levels: Iterable[str]) -> str:
    best = READ
    for level in levels:
        best = stronger(best, level)
    return best


__all__ = ["BECOME", "RoleAccess", "StackFacts", "member_party", "object_prefixes", "role_access"]
