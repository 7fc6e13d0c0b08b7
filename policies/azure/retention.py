"""How the guardrails read Azure's logs and soft delete: diagnostic settings of the gateways (policy
`service-logs`), blob and container soft delete and Key Vault soft delete (policy `soft-delete-retention`).
Blob versioning and lifecycle deletion are judged in storage.py; purge protection in readers.py (encryption)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..common import truthy, urn_name
from ..links import referrers_of
from ..readers import count_of, get, items_at, name_of
from .readers import APP_GATEWAY, CONTAINER, KEY_VAULT, STORAGE_ACCOUNT, _kind, _public_frontends
from .storage import BLOB_SERVICE, MANAGEMENT_POLICY, _account_of

DIAGNOSTIC_SETTINGS = ("azure-native:monitor:DiagnosticSetting", "azure-native:insights:DiagnosticSetting")
# Where a diagnostic setting can send logs (https://learn.microsoft.com/azure/azure-monitor/essentials/diagnostic-settings#destinations).
DESTINATIONS = ("storageAccountId", "workspaceId", "eventHubAuthorizationRuleId", "marketplacePartnerId")
# The gateway's access and WAF logs (https://learn.microsoft.com/azure/application-gateway/application-gateway-diagnostics);
# the allLogs category group holds both.
GATEWAY_LOGS = ("ApplicationGatewayAccessLog", "ApplicationGatewayFirewallLog")
ALL_LOGS = "alllogs"
VAULT_AUDIT = frozenset({"auditevent", "audit", ALL_LOGS})


def _enabled_logs(setting: Any) -> set[str]:
    return {
        str(entry.get("category") or entry.get("categoryGroup") or "").lower()
        for entry in items_at(setting.props, "logs")
        if truthy(entry.get("enabled", True))
    }


def service_log_problems(resources: Sequence[Any], front_door: bool = True) -> Iterable[tuple[str, str]]:
    """No diagnostic setting turns a log category off or sends it nowhere (a setting without a destination keeps
    nothing), a Key Vault's diagnostics keep its AuditEvent log, and every internet-facing Application Gateway sends
    its access and firewall logs somewhere (who sent which request, and what the WAF did with it). Ours, after Microsoft's
    https://learn.microsoft.com/azure/azure-monitor/essentials/diagnostic-settings."""
    settings = [r for r in resources if r.resource_type in DIAGNOSTIC_SETTINGS]
    for setting in settings:
        off = [
            str(e.get("category") or e.get("categoryGroup"))
            for e in items_at(setting.props, "logs")
            if not truthy(e.get("enabled", True))
        ]
        if off:
            yield setting.urn, f"diagnostic setting {name_of(setting)} turns off {', '.join(off)}"
        if not any(setting.props.get(key) for key in DESTINATIONS):
            yield (
                setting.urn,
                f"diagnostic setting {name_of(setting)} sends its logs nowhere ({' / '.join(DESTINATIONS)})",
            )
    # A vault's diagnostics carry its audit log: who read which key or secret (AuditEvent, in the audit and allLogs
    # category groups: https://learn.microsoft.com/azure/key-vault/general/logging).
    for vault in (r for r in resources if _kind(r) == KEY_VAULT):
        linked = referrers_of(vault, settings, "resourceUri", keys=("id",))
        enabled = set().union(*(_enabled_logs(s) for s in linked)) if linked else set()
        if linked and not enabled & VAULT_AUDIT:
            yield vault.urn, f"key vault {name_of(vault)} has diagnostic settings without its AuditEvent log"
    # The gateway's own logs, unless the stack turns its access logs off (`front_door`).
    for gateway in (r for r in resources if front_door and _kind(r) == APP_GATEWAY and _public_frontends(r)):
        linked = referrers_of(gateway, settings, "resourceUri", keys=("id",))
        enabled = set().union(*(_enabled_logs(s) for s in linked)) if linked else set()
        missing = [c for c in GATEWAY_LOGS if c.lower() not in enabled and ALL_LOGS not in enabled]
        if missing:
            yield (
                gateway.urn,
                f"application gateway {name_of(gateway)} sends no {', '.join(missing)} (a diagnostic setting on it)",
            )


def _named(resource: Any, pattern: str, name_key: str) -> bool:
    names = (urn_name(resource.urn), str(resource.props.get(name_key) or ""))
    return any(re.search(pattern, n, re.IGNORECASE) for n in names)


def _short(policy: Any, min_days: int) -> str:
    """Why a soft-delete policy keeps deleted data less than `min_days` ("" when it keeps enough)."""
    if not truthy(get(policy, "enabled")):
        return "is off"
    # Soft-deleted versions and snapshots may then be purged at once (pulumi_azure_native storage
    # DeleteRetentionPolicyArgs.allow_permanent_delete): soft delete that a caller can skip keeps nothing.
    if truthy(get(policy, "allowPermanentDelete")):
        return "allows permanent delete (allowPermanentDelete)"
    days = count_of(get(policy, "days"))
    return f"keeps {days} days" if days is not None and days < min_days else ""


def retention_problems(resources: Sequence[Any], min_days: int, kept: str, logs: str) -> Iterable[tuple[str, str]]:
    """Deleted blobs and containers stay recoverable for `min_days`: the blob service of an account holding
    checkpoints/artifacts (`versionedBucketPattern`) turns on deleteRetentionPolicy and
    containerDeleteRetentionPolicy (https://learn.microsoft.com/azure/storage/blobs/soft-delete-blob-overview), and
    no blob service but a log account's keeps less; Key Vaults keep soft delete on with softDeleteRetentionInDays
    >= `min_days` (7-90: https://learn.microsoft.com/azure/key-vault/general/soft-delete-overview); no management
    policy of an account but a log account deletes previous versions or snapshots sooner (actions.version /
    actions.snapshot delete: a versioned blob's overwrites live on as versions). Ours."""
    accounts = [r for r in resources if _kind(r) in STORAGE_ACCOUNT]
    services = [r for r in resources if _kind(r) == BLOB_SERVICE]
    containers = [r for r in resources if _kind(r) in CONTAINER]
    for account in accounts:
        linked = referrers_of(account, services, "accountName", keys=("accountName", "name"))
        holds = referrers_of(account, containers, "accountName", keys=("accountName", "name"))
        if any(_named(c, kept, "containerName") for c in holds) and not linked:
            yield (
                account.urn,
                f"storage account {name_of(account)} holds checkpoints/artifacts but has no blob soft delete",
            )
        if _named(account, logs, "accountName"):
            continue
        for service in linked:
            for key in ("deleteRetentionPolicy", "containerDeleteRetentionPolicy"):
                why = _short(service.props.get(key), min_days)
                if why and (service.props.get(key) is not None or any(_named(c, kept, "containerName") for c in holds)):
                    yield service.urn, f"{name_of(service)} {key} {why}; keep deleted data at least {min_days} days"
    for vault in (r for r in resources if _kind(r) == KEY_VAULT):
        props = get(vault.props, "properties")
        soft = get(props, "enableSoftDelete")
        if soft is not None and not truthy(soft):
            yield vault.urn, f"key vault {name_of(vault)} turns soft delete off (properties.enableSoftDelete)"
        days = count_of(get(props, "softDeleteRetentionInDays"))
        if days is not None and days < min_days:
            yield vault.urn, f"key vault {name_of(vault)} keeps deleted keys {days} days; keep at least {min_days}"
    for policy in (r for r in resources if _kind(r) == MANAGEMENT_POLICY):
        targets = _account_of(policy, accounts)
        if targets and all(_named(a, logs, "accountName") and not _named(a, kept, "accountName") for a in targets):
            continue
        for rule in items_at(get(policy.props, "policy"), "rules"):
            if str(rule.get("enabled", True)) == "False":
                continue
            for kind in ("version", "snapshot"):
                days = count_of(get(rule, "definition", "actions", kind, "delete", "daysAfterCreationGreaterThan"))
                if days is not None and days < min_days:
                    yield (
                        policy.urn,
                        f"{name_of(policy)} rule {rule.get('name')} deletes blob {kind}s after {days} days; "
                        f"keep them at least {min_days}",
                    )
