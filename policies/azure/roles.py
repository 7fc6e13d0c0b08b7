"""What an Azure role lets its holder do, as access-graph levels: built-in roles by id, custom roles by their
actions, and how far a role assignment's ABAC condition narrows blob reads.

Levels follow the graph's rules (policies/access.py): reading data or metadata is read; creating, changing or
deleting data is write; anything that changes who can do what, or hands out the account's keys, is admin;
anything that yields another identity's token is become. A role or action the table cannot classify is admin,
never read (fail closed).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..access import ADMIN, BECOME, IDENTITY, KEY, OBJECTS, READ, RESOURCE, WRITE, stronger


@dataclass(frozen=True)
class Role:
    """A role's name and what it grants: (access, target kind) pairs. An IDENTITY grant is a become of the
    identities under the assignment's scope."""

    name: str
    grants: tuple[tuple[str, str], ...]


def _role(name: str, *grants: tuple[str, str]) -> Role:
    return Role(name, grants)


# Built-in role definition ids, the same in every tenant
# (https://learn.microsoft.com/azure/role-based-access-control/built-in-roles). Why each level:
# - Owner, User Access Administrator, Role Based Access Control Administrator write role assignments.
# - Contributor, Storage Account Contributor, Reader and Data Access, Key Operator can list the account keys
#   (Microsoft.Storage/storageAccounts/listKeys/action): a key is every blob, and every SAS.
# - Managed Identity Operator assigns an identity to a resource it controls (…/userAssignedIdentities/*/assign/
#   action); Managed Identity Contributor also writes federated credentials; Virtual Machine Contributor runs
#   commands on machines (runCommand), and VM login roles sign in to them: each yields the worn identities' tokens
#   from the instance metadata service.
# - Key Vault Crypto Service Release User exports key material (release), so it is admin, not use.
BUILT_IN_ROLES: dict[str, Role] = {
    "8e3af657-a8ff-443c-a75c-2fe8c4bcb635": _role("Owner", (ADMIN, RESOURCE), (BECOME, IDENTITY)),
    "b24988ac-6180-42a0-ab88-20f7382dd24c": _role("Contributor", (ADMIN, RESOURCE), (BECOME, IDENTITY)),
    "18d7d88d-d35e-4fb5-a5c3-7773c20a72d9": _role("User Access Administrator", (ADMIN, RESOURCE)),
    "f58310d9-a9f6-439a-9e8d-f62e7b41a168": _role("Role Based Access Control Administrator", (ADMIN, RESOURCE)),
    "acdd72a7-3385-48ef-bd42-f606fba81ae7": _role("Reader", (READ, RESOURCE)),
    "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1": _role("Storage Blob Data Reader", (READ, OBJECTS)),
    "ba92f5b4-2d11-453d-a403-e96b0029c9fe": _role("Storage Blob Data Contributor", (WRITE, OBJECTS)),
    "b7e6dc6d-f1e8-4753-8033-0f276bb0955b": _role("Storage Blob Data Owner", (ADMIN, OBJECTS)),
    "db58b8e5-c6ad-4a2a-8342-4190687cbf4a": _role("Storage Blob Delegator", (READ, RESOURCE)),
    "17d1049b-9a84-46fb-8f53-869881c3d3ab": _role("Storage Account Contributor", (ADMIN, RESOURCE)),
    "81a9662b-bebf-436f-a333-f67b29880f12": _role("Storage Account Key Operator Service Role", (ADMIN, RESOURCE)),
    "c12c1c16-33a1-487b-954d-41c89c60f349": _role("Reader and Data Access", (ADMIN, RESOURCE)),
    "00482a5a-887f-4fb3-b363-3b7fe8e74483": _role("Key Vault Administrator", (ADMIN, RESOURCE)),
    "14b46e9e-c2b7-41b4-b07b-48a6ebf60603": _role("Key Vault Crypto Officer", (ADMIN, KEY)),
    "12338af0-0e69-4776-bea7-57ae8d297424": _role("Key Vault Crypto User", (READ, KEY)),
    "e147488a-f6f5-4113-8e2d-b22465e65bf6": _role("Key Vault Crypto Service Encryption User", (READ, KEY)),
    "08bbd89e-9f13-488c-ac41-acfcb10c90ab": _role("Key Vault Crypto Service Release User", (ADMIN, KEY)),
    "b86a8fe4-44ce-4948-aee5-eccb2c155cd7": _role("Key Vault Secrets Officer", (ADMIN, RESOURCE)),
    "4633458b-17de-408a-b874-0445c86b69e6": _role("Key Vault Secrets User", (READ, RESOURCE)),
    "a4417e6f-fecd-4de8-b567-7b0420556985": _role("Key Vault Certificates Officer", (ADMIN, RESOURCE)),
    "db79e9a7-68ee-4b58-9aeb-b90e7c24fcba": _role("Key Vault Certificate User", (READ, RESOURCE)),
    "21090545-7ca7-4776-b22c-e363652d74d2": _role("Key Vault Reader", (READ, RESOURCE)),
    "f1a07417-d97a-45cb-824c-7a7467783830": _role("Managed Identity Operator", (BECOME, IDENTITY)),
    "e40ec5ca-96e0-45a2-b4ff-59039f2c2b59": _role(
        "Managed Identity Contributor", (ADMIN, RESOURCE), (BECOME, IDENTITY)
    ),
    "9980e02c-c2be-4d73-94e8-173b1dc7cf3c": _role("Virtual Machine Contributor", (ADMIN, RESOURCE), (BECOME, IDENTITY)),
    "1c0163c0-47e6-4577-8991-ea5c82e286e4": _role("Virtual Machine Administrator Login", (BECOME, IDENTITY)),
    "fb879df8-f326-4884-b1cf-06f3ad86be52": _role("Virtual Machine User Login", (BECOME, IDENTITY)),
    "4d97b98b-1d4f-4787-a291-c67834d212e7": _role("Network Contributor", (ADMIN, RESOURCE)),
    # Receiving settles (removes) messages: a write of the queue, not a read.
    "4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0": _role("Azure Service Bus Data Receiver", (WRITE, RESOURCE)),
    "69a216fc-b8fb-44d8-bc22-1f3c2cd27a39": _role("Azure Service Bus Data Sender", (WRITE, RESOURCE)),
    "090c5cfd-751d-490a-894a-3ce6f1109419": _role("Azure Service Bus Data Owner", (ADMIN, RESOURCE)),
    "7f951dda-4ed3-4680-a7ca-43fe172d538d": _role("AcrPull", (READ, RESOURCE)),
    "8311e382-0749-4cb8-b61a-304f252e45ec": _role("AcrPush", (WRITE, RESOURCE)),
    "43d0d8ad-25c7-4714-9337-8ba259a9fe05": _role("Monitoring Reader", (READ, RESOURCE)),
    "3913510d-42f4-4e42-8a64-420c390055eb": _role("Monitoring Metrics Publisher", (WRITE, RESOURCE)),
    # Writes diagnostic settings: where the logs go.
    "749f88d5-cbae-40b8-bcfc-e573ddc772fa": _role("Monitoring Contributor", (ADMIN, RESOURCE)),
    # Submits jobs to computes, which run as the identities they wear.
    "f6c7c914-8db3-469d-8ca1-694a8f32e121": _role("AzureML Data Scientist", (WRITE, RESOURCE), (BECOME, IDENTITY)),
    "e503ece1-11d0-4e8e-8e2c-7a6c3bf38815": _role("AzureML Compute Operator", (ADMIN, RESOURCE)),
}

# Control-plane reads a blob reader needs beside its data actions (list containers, a user delegation key, which
# signs SAS no wider than the signer's own data roles): folded into the objects edge.
_BLOB_METADATA = (
    "microsoft.storage/storageaccounts/blobservices/containers/read",
    "microsoft.storage/storageaccounts/blobservices/generateuserdelegationkey/action",
)
# Actions that hand out the account's keys, or a SAS signed with one: the whole account.
_KEY_ACTIONS = ("/listkeys/action", "/regeneratekey/action", "/listaccountsas/action", "/listservicesas/action")
# Actions that yield a worn identity's token: assigning it to a resource the caller controls, writing its federated
# credentials, running commands on (or extensions into) a machine wearing it, logging in to one.
_BECOME_ACTIONS = (
    "microsoft.managedidentity/userassignedidentities/*/assign/action",
    "microsoft.managedidentity/userassignedidentities/assign/action",
    "microsoft.managedidentity/userassignedidentities/federatedidentitycredentials/write",
    "microsoft.compute/virtualmachines/runcommand/action",
    "microsoft.compute/virtualmachines/runcommands/write",
    "microsoft.compute/virtualmachines/extensions/write",
    "microsoft.compute/virtualmachinescalesets/extensions/write",
    "microsoft.compute/virtualmachinescalesets/virtualmachines/runcommand/action",
    "microsoft.compute/virtualmachines/login/action",
    "microsoft.compute/virtualmachines/loginasadmin/action",
)


def action_access(action: str) -> str:
    """One control-plane action's level (https://learn.microsoft.com/azure/role-based-access-control/role-definitions
    #actions-format: `{Company}.{ProviderName}/{resourceType}/{action}`, `*` wildcards)."""
    text = action.strip().lower()
    if text in _BECOME_ACTIONS or (text.startswith("microsoft.managedidentity/") and "*" in text):
        return BECOME
    if text.startswith("microsoft.authorization/") or text.startswith("*"):
        # Writing role assignments or definitions, policy, locks: who can do what (reads stay reads).
        return READ if text.endswith("/read") and "*" not in text.rsplit("/", 1)[0] else ADMIN
    if any(text.endswith(k) for k in _KEY_ACTIONS):
        return ADMIN
    if text.endswith("/read"):
        return READ if not text.startswith("*") else ADMIN
    if "*" in text:
        return ADMIN  # a wildcard the pack cannot bound (it covers listKeys, role writes, runCommand)
    return WRITE


def data_action_access(action: str) -> str:
    """One data action's level: reads are read, a wildcard or a permissions change is admin, the rest write."""
    text = action.strip().lower()
    if "*" in text or "modifypermissions" in text or "manageownership" in text:
        return ADMIN
    return READ if text.endswith("/read") else WRITE


def custom_grants(actions: Iterable[str], data_actions: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """A custom role's (access, kind) pairs from its permissions' actions and dataActions (notActions are ignored:
    they subtract, and ignoring them can only widen what the pack judges)."""
    control: str | None = None
    become = False
    for action in actions:
        if action.strip().lower() in _BLOB_METADATA:
            continue
        level = action_access(action)
        if level == BECOME:
            become = True
        else:
            control = level if control is None else stronger(control, level)
    by_kind: dict[str, str] = {}
    for action in data_actions:
        lowered = action.strip().lower()
        kind = (
            OBJECTS
            if lowered.startswith("microsoft.storage/storageaccounts/blobservices/")
            else KEY
            if lowered.startswith("microsoft.keyvault/vaults/keys/")
            else RESOURCE
        )
        level = data_action_access(action)
        by_kind[kind] = stronger(by_kind[kind], level) if kind in by_kind else level
    grants = [(level, kind) for kind, level in by_kind.items()]
    if control is not None:
        grants.append((control, RESOURCE))
    if become:
        grants.append((BECOME, IDENTITY))
    return tuple(grants)


# --- ABAC conditions on blob reads ------------------------------------------------------------------------------
# Grammar: https://learn.microsoft.com/azure/role-based-access-control/conditions-format: a condition is AND-ed
# groups `((!(ActionMatches{'<action>'} [AND [NOT] SubOperationMatches{'<sub>'}])) OR (<expression>))`; when the
# request is the action, the expression must hold. Blob attributes:
# https://learn.microsoft.com/azure/storage/blobs/storage-auth-abac-attributes (`containers:name`, `blobs:path`).
BLOB_PATH = "@resource[microsoft.storage/storageaccounts/blobservices/containers/blobs:path]"
CONTAINER_NAME = "@resource[microsoft.storage/storageaccounts/blobservices/containers:name]"
_BLOB_READ = "microsoft.storage/storageaccounts/blobservices/containers/blobs/read"
_COMPARISON = re.compile(r"^\s*(@\w+\[[^\]]+\])\s+([A-Za-z:]+)\s+'([^']*)'\s*$")


@dataclass(frozen=True)
class ReadScope:
    """What a condition leaves of a blob read: the blob path prefix ("" for every blob), the container it is
    limited to (None: every container in scope), and what the pack could not judge ("" when nothing)."""

    prefix: str
    container: str | None = None
    unplaced: str = ""


def _strip(text: str) -> str:
    text = text.strip()
    while text.startswith("(") and _closing(text, 0) == len(text) - 1:
        text = text[1:-1].strip()
    return text


def _closing(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _split(text: str, operator: str) -> list[str]:
    """`text` split at `operator` (AND / OR) outside parentheses, braces and quotes."""
    parts, depth, quoted, start, i = [], 0, False, 0, 0
    token = f" {operator} "
    upper = text.upper()
    while i < len(text):
        char = text[i]
        if char == "'":
            quoted = not quoted
        elif not quoted and char in "({":
            depth += 1
        elif not quoted and char in ")}":
            depth -= 1
        elif not quoted and depth == 0 and upper.startswith(token, i):
            parts.append(text[start:i])
            start = i + len(token)
            i = start
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _limits_blob_reads(guard: str) -> bool:
    """A guard `!(ActionMatches{...})` that covers reading blob content (not only listing them)."""
    lowered = guard.lower()
    if _BLOB_READ not in lowered and "blobs/*" not in lowered:
        return False
    listing_only = (
        "suboperationmatches{'blob.list'}" in lowered and "not suboperationmatches{'blob.list'}" not in lowered
    )
    return not listing_only


def read_scope(condition: object) -> ReadScope:
    """How far an ABAC condition narrows blob reads. No condition (or one the pack cannot see narrowing reads)
    leaves every blob: prefix "". A negated or set comparison on the path (StringNotStartsWith, ForAllValues:...)
    is not placed: it can admit every path the pack does not list."""
    if not isinstance(condition, str) or not condition.strip():
        return ReadScope("")
    prefixes: list[str] = []
    container: str | None = None
    for group in _split(_strip(condition), "AND"):
        alternatives = _split(_strip(group), "OR")
        guards = [a for a in alternatives if _strip(a).startswith("!")]
        if not guards or not any(_limits_blob_reads(g) for g in guards):
            continue
        allowed: list[str] = []
        for alternative in (a for a in alternatives if a not in guards):
            path: str | None = None
            for atom in _split(_strip(alternative), "AND"):
                atom = _strip(atom)
                if " OR " in atom.upper():
                    return ReadScope("", None, f"a nested OR in the condition's read clause ({atom[:80]!r})")
                match = _COMPARISON.match(atom)
                if match is None:
                    continue
                attribute, operator, value = match.group(1).lower(), match.group(2), match.group(3)
                if attribute == BLOB_PATH:
                    if operator in ("StringStartsWith", "StringEquals"):
                        path = value
                    elif operator == "StringLike":
                        path = re.split(r"[*?]", value, maxsplit=1)[0]
                    else:
                        return ReadScope("", None, f"the condition's operator {operator} on the blob path")
                elif attribute == CONTAINER_NAME and operator == "StringEquals":
                    container = value
            allowed.append(path if path is not None else "")
        if allowed:
            # Blob prefixes are strings, not path components ('models/a' and 'models/ab' share 'models/a').
            prefixes.append(os.path.commonprefix(allowed))  # noqa: RUF071
    # AND-ed groups each narrow reads: the longest prefix is what all of them leave.
    return ReadScope(max(prefixes, key=len) if prefixes else "", container)
