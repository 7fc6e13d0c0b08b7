"""OCI Object Storage constructs that move data, or let someone move it, without an IAM statement: pre-authenticated
requests (a URL that is its own credential, https://docs.oracle.com/iaas/Content/Object/Tasks/usingpreauthenticatedrequests.htm),
replication policies (the service copies every new object into a bucket of another region,
https://docs.oracle.com/iaas/Content/Object/Using/UsingObjectReplication.htm) and lifecycle policies (the service
deletes objects on a schedule, https://docs.oracle.com/iaas/Content/Object/Tasks/usinglifecyclepolicies.htm).

The first two are edges of the access graph (policies/access.py): whoever holds the URL is any account; a
replication policy's destination bucket is placed like any bucket named by name (the stack's own, or a configured
side's store) and fails closed otherwise. The third is a reader of `no-scheduled-data-loss`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..access import ANY, OBJECTS, OWN, READ, WRITE, Edge, Party, Placement
from ..readers import items_at, name_of

ACCESS_URL = "oci:ObjectStorage/preauthrequest:Preauthrequest"
REPLICATION = "oci:ObjectStorage/replicationPolicy:ReplicationPolicy"
LIFECYCLE = "oci:ObjectStorage/objectLifecyclePolicy:ObjectLifecyclePolicy"
EDGE_TYPES = (ACCESS_URL, REPLICATION)

# accessType values (pulumi_oci objectstorage/preauthrequest.py): the URL reads one object (`Object*`, named by
# `objectName`, or its deprecated spelling `object`) or every object (`AnyObject*`); any value that is not a plain
# read is taken to write (a value the SDK adds later fails toward write, the stronger edge).
_READ_ONLY = frozenset({"ObjectRead", "AnyObjectRead"})


def _plain(props: Any, key: str) -> Any:
    try:
        return props.get(key)
    except Exception:  # noqa: BLE001  # pulumi_policy's UnknownValueError: nothing to read yet
        return None


def _bucket(resource: Any, placement: Placement, key: str = "bucket") -> Party:
    name = str(_plain(resource.props, key) or "")
    return placement.store_party(name, f"objects of bucket {name}", OBJECTS)


def _access_url_edges(resource: Any, placement: Placement) -> Iterator[Edge]:
    access_type = str(_plain(resource.props, "accessType") or "")
    level = READ if access_type in _READ_ONLY else WRITE
    # objectName (or its deprecated spelling `object`) limits every access type: one object for `Object*`, the
    # objects starting with it for `AnyObject*` (pulumi_oci objectstorage/preauthrequest.py: "The object name can be
    # a prefix as well"); without it an `AnyObject*` URL reaches the whole bucket.
    named = [_plain(resource.props, key) for key in ("objectName", "object")]
    prefix = str(next((n for n in named if n), ""))
    if placement.handoff_urls_own():
        holder = Party(f"this stack's replicas, holding pre-authenticated request {name_of(resource)}'s URL", OWN)
    else:
        holder = Party(f"whoever holds pre-authenticated request {name_of(resource)}'s URL", ANY)
    what = (
        f"pre-authenticated request {name_of(resource)} ({access_type or 'no accessType'}"
        f"{', ' + prefix if prefix else ''}): its URL is its own credential"
    )
    yield Edge(holder, level, _bucket(resource, placement), resource.urn, what, prefix)


def _replication_edges(resource: Any, placement: Placement) -> Iterator[Edge]:
    source = str(_plain(resource.props, "bucket") or "")
    target = str(_plain(resource.props, "destinationBucketName") or "")
    region = _plain(resource.props, "destinationRegionName")
    what = f"replication policy {name_of(resource)} (copies bucket {source} to bucket {target} in {region})"
    copier = Party(f"replication of bucket {source}", OWN)
    yield Edge(copier, WRITE, _bucket(resource, placement, "destinationBucketName"), resource.urn, what, "")


def edges(resource: Any, placement: Placement) -> Iterable[Edge]:
    if resource.resource_type == ACCESS_URL:
        yield from _access_url_edges(resource, placement)
    elif resource.resource_type == REPLICATION:
        yield from _replication_edges(resource, placement)


# Lifecycle targets (pulumi_oci objectstorage ObjectLifecyclePolicyRuleArgs.target): a rule without one acts on
# `objects`, the live objects; `previous-object-versions` and `multipart-uploads` leave them.
_LIVE_TARGETS = frozenset({"", "objects"})


def lifecycle_problems(resources: Sequence[Any], log_pattern: str) -> Iterable[tuple[str, str]]:
    """No lifecycle rule deletes live objects of a data bucket (log buckets may, by `logBucketPattern`): an enabled
    DELETE whose target is the objects themselves. Ours, as GCP's and AWS's readers judge theirs."""
    for policy in (r for r in resources if r.resource_type == LIFECYCLE):
        bucket = str(_plain(policy.props, "bucket") or "")
        if log_pattern and re.search(log_pattern, bucket, re.IGNORECASE):
            continue
        for rule in items_at(policy.props, "rules"):
            enabled = rule.get("isEnabled")
            if enabled is False or str(enabled).lower() == "false":
                continue
            if str(rule.get("action") or "").upper() == "DELETE" and str(rule.get("target") or "") in _LIVE_TARGETS:
                yield (
                    policy.urn,
                    f"lifecycle policy {name_of(policy)} rule {rule.get('name')!r} deletes live objects of bucket "
                    f"{bucket} after {rule.get('timeAmount')} {str(rule.get('timeUnit') or '').lower()}",
                )
