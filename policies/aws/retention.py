"""How the guardrails read AWS's logs and deletion windows: load balancer access logs (policy `service-logs`),
KMS key deletion windows and S3 Object Lock default retention (policy `soft-delete-retention`). Versioning and
lifecycle expiry are judged in storage.py."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..common import as_list, of_type, truthy
from ..links import referrers_of, targets_of
from ..readers import count_of, get
from ..readers import name_of as _name
from ..vendor import tokens_of
from .concepts import AWS
from .inline_buckets import with_inline_settings
from .storage import bucket_named

LOAD_BALANCERS = tokens_of(AWS, "load-balancer")
BUCKETS = tokens_of(AWS, "bucket")
OBJECT_LOCKS = tokens_of(AWS, "bucket-object-lock")
LIFECYCLES = tokens_of(AWS, "bucket-lifecycle")
KMS_KEY = "aws:kms/key:Key"


def access_log_problems(resources: Sequence[Any], front_door: bool = True) -> Iterable[tuple[str, str]]:
    """Every load balancer writes access logs to a bucket (accessLogs.enabled with a bucket: Checkov CKV_AWS_91,
    https://docs.aws.amazon.com/elasticloadbalancing/latest/application/enable-access-logging.html): who sent
    which request is what an incident asks first. Not required where the stack turns them off (`front_door`)."""
    for balancer in of_type(resources, *LOAD_BALANCERS) if front_door else ():
        logs = balancer.props.get("accessLogs")
        if not truthy(get(logs, "enabled")) or not get(logs, "bucket"):
            yield (
                balancer.urn,
                f"load balancer {_name(balancer)} writes no access logs (accessLogs.enabled with a bucket)",
            )


def _lock_days(rule: Any) -> int | None:
    retention = get(rule, "defaultRetention")
    days, years = count_of(get(retention, "days")), count_of(get(retention, "years"))
    return days if days is not None else (years * 365 if years is not None else None)


def retention_problems(resources: Sequence[Any], min_days: int, kept: str, logs: str) -> Iterable[tuple[str, str]]:
    """A KMS key waits at least `min_days` before deletion (deletionWindowInDays, 7-30, default 30:
    https://docs.aws.amazon.com/kms/latest/developerguide/deleting-keys.html); a bucket with S3 Object Lock keeps a
    default retention of at least `min_days` (once enabled, Object Lock cannot be turned off, so dropping the
    default retention is how it is emptied: https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-lock.html);
    no lifecycle rule of a bucket but a log bucket expires noncurrent versions sooner (noncurrentVersionExpiration:
    on a versioned bucket an overwritten or deleted object lives on as a noncurrent version, S3's soft delete). Ours."""
    for key in of_type(resources, KMS_KEY):
        window = count_of(key.props.get("deletionWindowInDays"))
        if window is not None and window < min_days:
            yield key.urn, f"KMS key {_name(key)} deletes {window} days after it is scheduled; wait at least {min_days}"
    locks = of_type(resources, *OBJECT_LOCKS)
    for bucket in of_type(resources, *BUCKETS):
        inline = bucket.props.get("objectLockConfiguration")
        enabled = truthy(bucket.props.get("objectLockEnabled")) or str(get(inline, "objectLockEnabled")) == "Enabled"
        linked = referrers_of(bucket, locks, "bucket")
        rules = [get(lock.props, "rule") for lock in linked] + ([get(inline, "rule")] if inline else [])
        days = [d for d in (_lock_days(r) for r in rules if r) if d is not None]
        if (enabled or linked) and not days:
            yield bucket.urn, f"bucket {_name(bucket)} has Object Lock but no default retention (rule.defaultRetention)"
        for short in (d for d in days if d < min_days):
            yield bucket.urn, f"bucket {_name(bucket)} locks objects only {short} days; keep at least {min_days}"
    buckets = of_type(resources, *BUCKETS)  # one list: links index it once
    for lifecycle in of_type(with_inline_settings(resources), *LIFECYCLES):
        targets = targets_of(lifecycle, "bucket", buckets)
        if targets and all(bucket_named(logs, b) and not bucket_named(kept, b) for b in targets):
            continue
        for rule in as_list(lifecycle.props.get("rules")):
            if not hasattr(rule, "get") or str(rule.get("status") or "Enabled") != "Enabled":
                continue
            kept_days = count_of(get(rule.get("noncurrentVersionExpiration"), "noncurrentDays"))
            if kept_days is not None and kept_days < min_days:
                yield (
                    lifecycle.urn,
                    f"{_name(lifecycle)} rule {rule.get('id')} deletes noncurrent versions after {kept_days} days; "
                    f"keep them at least {min_days}",
                )
