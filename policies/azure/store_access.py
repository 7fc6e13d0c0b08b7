"""How the separation pack reads the ways into an Azure storage account that go around role assignments and their
ABAC conditions (serving's read path is a condition-limited Storage Blob Data Reader assignment:
policies/azure/roles.py): Shared Key, and SFTP's local users.

- Shared Key: whoever holds an account key, or an account or service SAS signed with one, reads and writes every
  container with no role and no condition. `allowSharedKeyAccess` left out is on: "The default value is null, which
  is equivalent to true" (Microsoft.Storage REST API, StorageAccountPropertiesCreateParameters). Off, every request,
  SAS included, must carry an Entra ID token (https://learn.microsoft.com/azure/storage/common/shared-key-authorization-prevent).
  It is on only where a consumer in the stack needs it: Azure Managed Lustre's Blob integration ("Access keys - The
  storage account must have the storage account key access setting set to Enabled", amlfs-prerequisites#blob-integration-prerequisites-optional),
  read from the file system's `hsm.settings` containers. A `sasPolicy` bounds how long a SAS lives; it opens
  nothing by itself and closes nothing either, so it is read as inert here.
- SFTP (`isSftpEnabled`) and local users (`isLocalUserEnabled`, `storage:LocalUser`) authenticate with passwords
  and SSH keys the account stores; "SFTP doesn't support Azure RBAC or ABAC" (secure-file-transfer-protocol-support
  #authorization). Refused on the artifact account (policy config `artifactStores`).
Ours; Checkov's CKV2_AZURE_40 asks for Shared Key off on every account, which Managed Lustre's import cannot meet.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from pulumi_policy.proxy import UnknownValueError

from ..common import truthy
from ..links import of_kind_once, targets_of
from .readers import AML_FILESYSTEM, CONTAINER, STORAGE_ACCOUNT, _kind, get, name_of
from .separation import account_names, is_artifact_account

LOCAL_USER = "azure-native:storage:LocalUser"
_ACCOUNT_IN_ID = re.compile(r"/storageaccounts/([^/]+)", re.IGNORECASE)
# The file system's Blob integration settings that name a container of the account it reads with the key.
HSM_CONTAINERS = ("container", "loggingContainer")


def shared_key_on(account: Any) -> bool:
    value = account.props.get("allowSharedKeyAccess")
    return value is None or truthy(value)


def _accounts_named(container_ids: Iterable[Any]) -> set[str]:
    found = set()
    for container_id in container_ids:
        match = _ACCOUNT_IN_ID.search(str(container_id or ""))
        if match:
            found.add(match.group(1).lower())
    return found


def key_consumers(resources: Sequence[Any], account: Any) -> list[str]:
    """The stack's resources that need `account`'s Shared Key: Managed Lustre file systems whose Blob integration
    names a container in it, by the ids in `hsm.settings` or, while those are unknown, by what the setting depends
    on (the container, then its account)."""
    names = account_names(account)
    return [consumer for consumer, named in _blob_integrations(resources) if names & named]


# The last stack's file systems with the accounts each names (held with the list, so its id stays its own): asked once
# per storage account, they are read once per stack.
_last_integrations: list[tuple[Sequence[Any], list[tuple[str, set[str]]]]] = []


def _blob_integrations(resources: Sequence[Any]) -> list[tuple[str, set[str]]]:
    """Each Managed Lustre file system of the stack, and the storage accounts its Blob integration names."""
    if _last_integrations and _last_integrations[0][0] is resources:
        return _last_integrations[0][1]
    accounts = of_kind_once(resources, *STORAGE_ACCOUNT)
    containers = of_kind_once(resources, *CONTAINER)
    found = []
    for file_system in of_kind_once(resources, AML_FILESYSTEM):
        try:
            settings = get(file_system.props, "hsm", "settings")
            named = _accounts_named(get(settings, key) for key in HSM_CONTAINERS)
        except UnknownValueError:
            named = set()
        if not named:
            for container in targets_of(file_system, "hsm", containers, keys=("containerName", "name", "id")):
                for target in targets_of(container, "accountName", accounts, keys=("accountName", "name")):
                    named |= account_names(target)
        found.append((f"Azure Managed Lustre {name_of(file_system)} (Blob integration)", named))
    _last_integrations[:] = [(resources, found)]
    return found


def key_access_problems(resources: Sequence[Any], ctx: Any) -> Iterable[tuple[str, str]]:
    """Shared Key only where a consumer in the stack needs it; no SFTP or local users on the artifact account."""
    local_users = [r for r in resources if _kind(r) == LOCAL_USER]
    for account in (r for r in resources if _kind(r) in STORAGE_ACCOUNT):
        try:
            keyed = shared_key_on(account)
            artifact = is_artifact_account(account, ctx)
            sftp = truthy(account.props.get("isSftpEnabled")) or truthy(account.props.get("isLocalUserEnabled"))
        except UnknownValueError:
            continue
        which = "the artifact account serving reads from" if artifact else "storage account"
        if keyed and not key_consumers(resources, account):
            yield (
                account.urn,
                f"{which} {name_of(account)} accepts Shared Key (allowSharedKeyAccess "
                f"{account.props.get('allowSharedKeyAccess')!r}; left out it is on): account keys and the SAS they "
                "sign read and write every container past role assignments and their conditions, and nothing in "
                "the stack needs them (only Azure Managed Lustre's Blob integration does); set it false",
            )
        if artifact and sftp:
            yield (
                account.urn,
                f"{which} {name_of(account)} enables SFTP or local users (isSftpEnabled / isLocalUserEnabled): "
                "they sign in with stored passwords and SSH keys, which no role condition limits",
            )
        if artifact:
            names = account_names(account)
            for user in local_users:
                if str(user.props.get("accountName") or "").lower() in names:
                    yield (
                        user.urn,
                        f"local user {name_of(user)} on the artifact account {name_of(account)}: it signs in with "
                        "a stored password or SSH key, past role assignments and their conditions",
                    )
