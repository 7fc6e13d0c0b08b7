"""How the guardrails read Azure storage's data protection: blob versioning and lifecycle deletion."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..common import truthy, urn_name
from ..links import referrers_of, targets_of
from .readers import CONTAINER, STORAGE_ACCOUNT, _kind, get, items_at, name_of

BLOB_SERVICE = "azure-native:storage:BlobServiceProperties"
MANAGEMENT_POLICY = "azure-native:storage:ManagementPolicy"


def _account_of(resource: Any, accounts: Sequence[Any]) -> list[Any]:
    return targets_of(resource, "accountName", accounts, keys=("accountName", "name"))


def versioning_problems(resources: Sequence[Any], pattern: str) -> Iterable[tuple[str, str]]:
    """Containers holding checkpoints/artifacts (`versionedBucketPattern`) live in an account whose
    blob service keeps versions (isVersioningEnabled:
    https://learn.microsoft.com/azure/storage/blobs/versioning-overview), and no blob service turns
    versioning off."""
    accounts = [r for r in resources if _kind(r) in STORAGE_ACCOUNT]
    services = [r for r in resources if _kind(r) == BLOB_SERVICE]
    for container in (r for r in resources if _kind(r) in CONTAINER):
        names = [urn_name(container.urn), str(container.props.get("containerName") or "")]
        if not any(re.search(pattern, n, re.IGNORECASE) for n in names):
            continue
        for account in _account_of(container, accounts):
            linked = _account_of_services(services, account)
            if not any(truthy(s.props.get("isVersioningEnabled")) for s in linked):
                yield (
                    container.urn,
                    f"blob container {name_of(container)} holds checkpoints/artifacts but its account keeps no versions",
                )
    for service in services:
        value = service.props.get("isVersioningEnabled")
        if value is not None and not truthy(value):
            yield service.urn, f"{name_of(service)} turns blob versioning off"


def _account_of_services(services: Sequence[Any], account: Any) -> list[Any]:
    return referrers_of(account, services, "accountName", keys=("accountName", "name"))


def lifecycle_problems(resources: Sequence[Any], log_pattern: str) -> Iterable[tuple[str, str]]:
    """No management policy deletes current blobs (actions.baseBlob.delete) in a data account (log
    accounts, `logBucketPattern`, may): https://learn.microsoft.com/azure/storage/blobs/lifecycle-management-overview. Ours."""
    accounts = [r for r in resources if _kind(r) in STORAGE_ACCOUNT]
    for policy in (r for r in resources if _kind(r) == MANAGEMENT_POLICY):
        targets = _account_of(policy, accounts)
        names = [n for a in targets for n in (urn_name(a.urn), str(a.props.get("accountName") or ""))]
        if targets and all(re.search(log_pattern, n, re.IGNORECASE) for n in names):
            continue
        for rule in items_at(get(policy.props, "policy"), "rules"):
            if (
                get(rule, "definition", "actions", "baseBlob", "delete") is not None
                and str(rule.get("enabled", True)) != "False"
            ):
                yield (
                    policy.urn,
                    f"{name_of(policy)} rule {rule.get('name')} deletes current blobs (actions.baseBlob.delete)",
                )
