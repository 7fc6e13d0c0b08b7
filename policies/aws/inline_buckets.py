"""S3 settings written inline on a bucket, read as the split resource of the same meaning.

pulumi-aws still takes a bucket's encryption, versioning, server access logging and lifecycle inline
(`aws:s3/bucket:Bucket`'s singular blocks, `aws:s3/bucketV2:BucketV2`'s lists), deprecated in favour of
BucketServerSideEncryptionConfiguration, BucketVersioning, BucketLogging and BucketLifecycleConfiguration. The
same meaning must meet the same rules: each inline block becomes a view shaped like its split twin, linked to
its bucket (`property_dependencies["bucket"]`, as the engine links a split resource), and the rules that judge
the split resources judge the views too. Field shapes: the installed SDK's `pulumi_aws/s3/_inputs.py`
(BucketServerSideEncryptionConfigurationArgs has one `rule`; BucketV2's has `rules` whose defaults are a list).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..common import as_list, truthy
from ..vendor import tokens_of
from .concepts import AWS

BUCKETS = tokens_of(AWS, "bucket")
SSE_TWIN = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
VERSIONING_TWIN = "aws:s3/bucketVersioning:BucketVersioning"
LOGGING_TWIN = "aws:s3/bucketLogging:BucketLogging"
LIFECYCLE_TWIN = "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"


@dataclass(frozen=True)
class InlineSetting:
    """A bucket's inline block, shaped like the split resource `resource_type`. Findings land on the bucket's URN."""

    resource_type: str
    urn: str
    name: str
    props: dict[str, Any]
    property_dependencies: dict[str, list[Any]] = field(default_factory=dict)


def _blocks(props: Any, singular: str, plural: str) -> list[Any]:
    """The inline blocks under either spelling (Bucket's one object, BucketV2's list)."""
    found = [b for b in as_list(props.get(plural)) if hasattr(b, "get")]
    one = props.get(singular)
    if hasattr(one, "get"):
        found.append(one)
    return found


def _sse_rules(block: Any) -> list[dict[str, Any]]:
    rules = []
    for rule in [block.get("rule"), *as_list(block.get("rules"))]:
        if not hasattr(rule, "get"):
            continue
        defaults = [
            rule.get("applyServerSideEncryptionByDefault"),
            *as_list(rule.get("applyServerSideEncryptionByDefaults")),
        ]
        defaults = [d for d in defaults if hasattr(d, "get")] or [None]
        for default in defaults:
            rules.append(
                {"applyServerSideEncryptionByDefault": default, "bucketKeyEnabled": rule.get("bucketKeyEnabled")}
            )
    return rules


def _lifecycle_rule(rule: Any) -> dict[str, Any]:
    expirations = [rule.get("expiration"), *as_list(rule.get("expirations"))]
    expiration = next((e for e in expirations if hasattr(e, "get")), None)
    noncurrent = [rule.get("noncurrentVersionExpiration"), *as_list(rule.get("noncurrentVersionExpirations"))]
    kept = next((n for n in noncurrent if hasattr(n, "get")), None)
    return {
        "noncurrentVersionExpiration": {"noncurrentDays": kept.get("days")} if kept is not None else None,
        "id": rule.get("id"),
        # Inline rules say `enabled`; the split resource says `status`.
        "status": "Enabled" if truthy(rule.get("enabled")) else "Disabled",
        "expiration": expiration,
    }


def settings_of(bucket: Any) -> Iterator[InlineSetting]:
    """The inline blocks of one bucket, each as its split twin (nothing for any other kind)."""
    if bucket.resource_type not in BUCKETS:
        return
    props, name = bucket.props, bucket.name or ""
    linked = {"bucket": [bucket]}

    def view(kind: str, what: str, values: dict[str, Any]) -> InlineSetting:
        return InlineSetting(
            kind, bucket.urn, f"{name} (inline {what})", {"bucket": props.get("bucket"), **values}, linked
        )

    for block in _blocks(props, "serverSideEncryptionConfiguration", "serverSideEncryptionConfigurations"):
        yield view(SSE_TWIN, "server-side encryption", {"rules": _sse_rules(block)})
    for block in _blocks(props, "versioning", "versionings"):
        if block.get("enabled") is not None:
            status = "Enabled" if truthy(block.get("enabled")) else "Suspended"
            yield view(VERSIONING_TWIN, "versioning", {"versioningConfiguration": {"status": status}})
    for block in _blocks(props, "logging", "loggings"):
        yield view(LOGGING_TWIN, "logging", {"targetBucket": block.get("targetBucket")})
    rules = [_lifecycle_rule(r) for r in as_list(props.get("lifecycleRules")) if hasattr(r, "get")]
    if rules:
        yield view(LIFECYCLE_TWIN, "lifecycle rules", {"rules": rules})


def with_inline_settings(resources: Sequence[Any]) -> list[Any]:
    """`resources` and, after them, every bucket's inline blocks as their split twins."""
    return [*resources, *(s for r in resources if r.resource_type in BUCKETS for s in settings_of(r))]


def inline_of(resources: Iterable[Any], kind: str) -> list[InlineSetting]:
    return [s for r in resources for s in settings_of(r) if s.resource_type == kind]
