"""How the guardrails read GCP's logs and soft delete: load balancer request logs and Data Access audit logs
(policy `service-logs`), bucket soft delete and Cloud KMS destruction delays (policy `soft-delete-retention`).
Bucket versioning and lifecycle deletion are judged in readers.py."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..common import as_list, decode, truthy, urn_name
from ..readers import get, items_at, name_of
from ..vendor import tokens_of
from .concepts import GCP
from .waf import BACKEND_SERVICES, EXTERNAL

BUCKET = tokens_of(GCP, "bucket")
AUDIT_CONFIGS = tokens_of(GCP, "audit-config")
IAM_POLICIES = (
    "gcp:projects/iAMPolicy:IAMPolicy",
    "gcp:organizations/iAMPolicy:IAMPolicy",
    "gcp:folder/iAMPolicy:IAMPolicy",
)
CRYPTO_KEY = "gcp:kms/cryptoKey:CryptoKey"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
# Services whose Data Access logs say who read or wrote the stack's data and keys; allServices covers them all.
DATA_SERVICES = frozenset(
    {"allservices", "storage.googleapis.com", "cloudkms.googleapis.com", "secretmanager.googleapis.com"}
)
DATA_ACCESS = ("DATA_READ", "DATA_WRITE")
DAY = 86400


def _audit_configs(resources: Sequence[Any]) -> Iterable[tuple[Any, str, list[Any]]]:
    """(resource, service, auditLogConfigs) of every audit config resource and every auditConfigs entry of an
    authoritative IAM policy."""
    for resource in resources:
        if resource.resource_type in AUDIT_CONFIGS:
            yield resource, str(resource.props.get("service") or ""), items_at(resource.props, "auditLogConfigs")
        elif resource.resource_type in IAM_POLICIES:
            policy = decode(resource.props.get("policyData"))
            for config in items_at(policy, "auditConfigs") if hasattr(policy, "get") else []:
                yield resource, str(config.get("service") or ""), items_at(config, "auditLogConfigs")


def service_log_problems(resources: Sequence[Any], front_door: bool = True) -> Iterable[tuple[str, str]]:
    """External backend services log every request (logConfig.enable with a sample rate above 0:
    https://cloud.google.com/load-balancing/docs/https/https-logging-monitoring); a subnetwork's flow logs, once set,
    sample some flows; Data Access audit logs are not
    narrowed: no audit config exempts members (exemptedMembers: their reads go unlogged) and one for a data service
    (allServices, Cloud Storage, Cloud KMS, Secret Manager) keeps DATA_READ and DATA_WRITE, since an audit config is
    authoritative for its service (https://cloud.google.com/logging/docs/audit/configure-data-access). Ours."""
    for backend in (r for r in resources if front_door and r.resource_type in BACKEND_SERVICES):
        if str(backend.props.get("loadBalancingScheme") or "EXTERNAL") not in EXTERNAL:
            continue
        config = backend.props.get("logConfig")
        rate = _rate(get(config, "sampleRate"))
        if not truthy(get(config, "enable")) or rate is None or rate <= 0:
            yield backend.urn, f"backend service {name_of(backend)} logs no requests (logConfig.enable, sampleRate > 0)"
    for subnet in (r for r in resources if r.resource_type == SUBNETWORK and r.props.get("logConfig") is not None):
        # A subnet that logs flows keeps recording some: flowSampling 0 or a filter that is never true turn
        # them off while the block stays (https://cloud.google.com/vpc/docs/using-flow-logs#log-sampling).
        config = subnet.props.get("logConfig")
        sampling = _rate(get(config, "flowSampling"))
        if sampling is None or sampling <= 0 or str(get(config, "filterExpr") or "true").strip() == "false":
            yield subnet.urn, f"subnetwork {name_of(subnet)} turns its flow logs off (logConfig.flowSampling > 0)"
    for resource, service, configs in _audit_configs(resources):
        exempted = sorted({str(m) for c in configs for m in as_list(c.get("exemptedMembers"))})
        if exempted:
            yield resource.urn, f"{name_of(resource)} exempts {', '.join(exempted)} from {service} audit logs"
        types = {str(c.get("logType") or "") for c in configs}
        missing = [t for t in DATA_ACCESS if t not in types]
        if service.lower() in DATA_SERVICES and missing:
            yield resource.urn, f"{name_of(resource)} leaves {', '.join(missing)} audit logs of {service} off"


def _rate(value: Any) -> float | None:
    """A sample rate as a number (unset: the API's default, 1.0); None when it cannot be read (fails)."""
    if value is None:
        return 1.0
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _named(bucket: Any, pattern: str) -> bool:
    names = (urn_name(bucket.urn), str(bucket.props.get("name") or ""))
    return any(re.search(pattern, n, re.IGNORECASE) for n in names)


def _seconds(value: Any) -> float | None:
    """A duration as the API spells it ("2592000s", "86400", 604800); None when it cannot be read."""
    text = str(value).strip().rstrip("s") if value is not None else ""
    try:
        return float(text)
    except ValueError:
        return None


def retention_problems(resources: Sequence[Any], min_days: int, kept: str, logs: str) -> Iterable[tuple[str, str]]:
    """Deleted objects stay restorable for `min_days`: no bucket but a log bucket (`logBucketPattern`) shortens or
    disables soft delete (softDeletePolicy.retentionDurationSeconds, 0 disables; absent is Google's 7 days:
    https://cloud.google.com/storage/docs/soft-delete) nor deletes noncurrent versions sooner (daysSinceNoncurrentTime),
    and a Cloud KMS key waits at least `min_days` between
    scheduled destruction and destruction (destroyScheduledDuration, default 30 days:
    https://cloud.google.com/kms/docs/destroy-restore). Ours."""
    floor = min_days * DAY
    for bucket in (r for r in resources if r.resource_type in BUCKET):
        if _named(bucket, logs) and not _named(bucket, kept):
            continue
        value = get(bucket.props, "softDeletePolicy", "retentionDurationSeconds")
        seconds = 7 * DAY if value is None else _seconds(value)
        if seconds is None or seconds < floor:
            shown = "off" if seconds == 0 else f"{value}s"
            yield bucket.urn, f"bucket {name_of(bucket)} soft delete is {shown}; keep deleted objects {min_days} days"
        for rule in items_at(bucket.props, "lifecycleRules"):
            # Noncurrent versions are what an overwrite or delete leaves on a versioned bucket.
            days = get(rule, "condition", "daysSinceNoncurrentTime")
            if (
                str(get(rule, "action", "type") or "") == "Delete"
                and isinstance(days, (int, float))
                and days < min_days
            ):
                yield (
                    bucket.urn,
                    f"bucket {name_of(bucket)} deletes noncurrent versions after {days:g} days; keep them {min_days}",
                )
    for key in (r for r in resources if r.resource_type == CRYPTO_KEY):
        value = key.props.get("destroyScheduledDuration")
        seconds = _seconds(value) if value is not None else None
        if value is not None and (seconds is None or seconds < floor):
            yield key.urn, f"Cloud KMS key {name_of(key)} is destroyed {value} after scheduling; wait {min_days} days"
