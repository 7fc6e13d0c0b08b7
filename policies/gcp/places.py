"""Placing GCP names in projects for the access graph (policies/gcp/access.py): what the stack itself creates
(its buckets, keys, the project numbers of its own service agents, its workload identity pools, its custom roles),
and a bucket, key, service account or project named by an id, a global name or an email."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..access import IDENTITY, KEY, OBJECTS, OWN, Party, Placement
from ..common import as_list
from ..readers import get, items_at, name_of
from .iam import StackFacts, project_account, service_account_party

BUCKET = "gcp:storage/bucket:Bucket"
CRYPTO_KEY = "gcp:kms/cryptoKey:CryptoKey"
SERVICE_IDENTITY = "gcp:projects/serviceIdentity:ServiceIdentity"
POOL = "gcp:iam/workloadIdentityPool:WorkloadIdentityPool"
CUSTOM_ROLES = ("gcp:projects/iAMCustomRole:IAMCustomRole", "gcp:organizations/iAMCustomRole:IAMCustomRole")
PROJECT_IN = re.compile(r"(?:^|/)projects/([^/]+)(?:/|$)")


_facts: dict[int, tuple[Any, StackFacts]] = {}


def stack_facts(placement: Placement) -> StackFacts | None:
    """The stack's own buckets, keys, project numbers, pools and custom roles (None for a resource-level check)."""
    stack = placement.stack
    if stack is None:
        return None
    cached = _facts.get(id(stack))
    if cached is None or cached[0] is not stack:
        _facts.clear()  # one stack at a time; the entry holds the stack, so its id is not reused while cached
        cached = _facts[id(stack)] = (stack, _read_facts(stack.resources, placement.own))
    return cached[1]


def text_at(node: Any, *path: str) -> str | None:
    value = get(node, *path)
    return value if isinstance(value, str) and value else None


def known_text(node: Any, *path: str) -> str | None:
    """text_at, None for a value unknown during preview (pulumi-policy raises on reading one): a fact the stack
    cannot give yet is left out, so what it would have placed stays unplaced (fail closed)."""
    try:
        return text_at(node, *path)
    except Exception:  # noqa: BLE001  # pulumi_policy's UnknownValueError
        return None


def _permissions(props: Any) -> tuple[str, ...] | None:
    try:
        return tuple(str(p) for p in as_list(props.get("permissions")))
    except Exception:  # noqa: BLE001  # unknown during preview: the role stays unjudged (admin)
        return None


def _read_facts(resources: Sequence[Any], own: frozenset[str]) -> StackFacts:
    buckets, bucket_urns, keys, key_urns, numbers, pools = set(), set(), set(), set(), set(), set()
    # A project number listed among the side's accounts (the runner adds account.projectNumber) is its own name.
    numbers |= {account for account in own if account.isdigit()}
    roles: dict[str, tuple[str, ...]] = {}
    for resource in resources:
        kind, props = resource.resource_type, resource.props
        if kind == BUCKET:
            buckets |= {v for v in (known_text(props, "name"), known_text(props, "id")) if v}
            bucket_urns.add(resource.urn)
        elif kind == CRYPTO_KEY:
            keys |= {v for v in (known_text(props, "id"), known_text(props, "name")) if v}
            key_urns.add(resource.urn)
        elif kind == SERVICE_IDENTITY:
            # The agent the stack creates in its own project: service-<project number>@gcp-sa-<service>.
            found = re.match(r"^service-([0-9]+)@", known_text(props, "email") or "")
            if found:
                numbers.add(found.group(1))
        elif kind == POOL:
            pools |= {v for v in (known_text(props, "workloadIdentityPoolId"),) if v}
        elif kind in CUSTOM_ROLES:
            permissions = _permissions(props)
            if permissions is None:
                continue
            role_id, scope = known_text(props, "roleId"), known_text(props, "project") or known_text(props, "orgId")
            names = {known_text(props, "name"), known_text(props, "id")}
            if role_id and "projects" in kind:
                # A role without `project` is in the provider's project: one of the stack's own.
                names |= {f"projects/{project}/roles/{role_id}" for project in ([scope] if scope else own)}
            elif role_id:
                names.add(f"organizations/{scope}/roles/{role_id}")
            roles |= {n: permissions for n in names if n}
    return StackFacts(
        frozenset(buckets), frozenset(bucket_urns), frozenset(keys), frozenset(key_urns), frozenset(numbers),
        frozenset(pools), roles,
    )  # fmt: skip


# --- placing names ----------------------------------------------------------------------------------------------


def linked(resource: Any, prop: str, urns: frozenset[str]) -> bool:
    """The engine's property dependencies tie `prop` to one of these resources (a value unknown in preview)."""
    deps = getattr(resource, "property_dependencies", None) or {}
    return any(getattr(d, "urn", None) in urns for d in deps.get(prop, []))


def party_in(ref: str, project: str | None, facts: StackFacts | None, kind: str, placement: Placement) -> Party:
    """A party in the project named by id or number (None: the provider's, this stack's)."""
    if project is None:
        return Party(ref, OWN, kind)
    account, why = project_account(project.removeprefix("projects/"), facts, ref)
    return Party(ref, account, kind, why, needs_stack=account is None and placement.stack is None)


def named_project(value: str | None, resource: Any = None) -> str | None:
    """The project an id names ("projects/P/..."), else the resource's own `project`, else None (the provider's)."""
    found = PROJECT_IN.search(value or "")
    if found and found.group(1) not in ("_", "-"):
        return found.group(1)
    return text_at(resource.props, "project") if resource is not None else None


def bucket_party(
    name: str | None, placement: Placement, facts: StackFacts | None, resource: Any = None, prop: str = "bucket"
) -> Party:
    """A bucket by its global name: the stack's own, a configured side's store, else unplaced. Placed from the
    stack's Bucket resources, not from every resource naming it (a grant names buckets it does not own).

    Judged alone (a resource-level check, no stack), a bucket that is no configured store is taken as the stack's
    own: if it is, that is right; if it is not, the stack-level check fails it as unplaced whatever the edge. So a
    crossing found on that assumption is one either way (serving given write on a training-stack bucket is caught
    while the resource binds), and one missed is left to the stack-level check, never passed."""
    name = (name or "").removeprefix("gs://").removeprefix("b/").split("/", 1)[0] or None
    ref = f"bucket {name or '?'}"
    if facts is not None and ((name is not None and name in facts.buckets) or (
        resource is not None and linked(resource, prop, facts.bucket_urns)
    )):  # fmt: skip
        return Party(ref, OWN, OBJECTS)
    if name is not None and name in placement.stores:
        return Party(ref, placement.stores[name], OBJECTS)
    if placement.stack is None:
        return Party(ref, OWN, OBJECTS)
    why = f"bucket {name!r} is not created by this stack and is in neither trainingStores nor servingStores"
    return Party(ref, None, OBJECTS, why)


def key_party(value: Any, placement: Placement, facts: StackFacts | None, resource: Any, prop: str) -> Party:
    """A Cloud KMS key by its resource name (projects/P/locations/L/keyRings/R/cryptoKeys/K) or by one of the
    stack's own keys' ids (judged alone, an id naming no project is taken as the stack's own, as bucket_party)."""
    text = value if isinstance(value, str) else ""
    ref = f"key {text or '?'}"
    if facts is not None and (text in facts.keys or linked(resource, prop, facts.key_urns)):
        return Party(ref, OWN, KEY)
    found = PROJECT_IN.search(text)
    if found:
        return party_in(ref, found.group(1), facts, KEY, placement)
    if placement.stack is None:
        return Party(ref, OWN, KEY)
    why = f"key {text!r} names no project and is not one of this stack's keys"
    return Party(ref, None, KEY, why)


def _email_of(value: str) -> str:
    """A service account as an email, whether written plainly, as a member or as projects/P/serviceAccounts/E."""
    value = value.strip()
    if value.lower().startswith("serviceaccount:"):
        value = value.split(":", 1)[1]
    return value.rsplit("/serviceAccounts/", 1)[-1]


def account_party(value: str, placement: Placement, facts: StackFacts | None) -> Party:
    email = _email_of(value)
    if email == "default":  # the project's default Compute Engine account
        return Party("serviceAccount:default", OWN, IDENTITY)
    if "@" not in email:
        return Party(f"serviceAccount:{email}", None, IDENTITY, "a service account named by a unique id, not an email")
    return service_account_party(email, facts, needs_stack=placement.stack is None)


def values_at(node: Any, path: Sequence[str]) -> list[Any]:
    """Every value at a path of keys; a step ending in "[]" walks each item of a list."""
    nodes = [node]
    for step in path:
        many = step.endswith("[]")
        key = step.removesuffix("[]")
        nodes = [
            n for parent in nodes for n in (items_at(parent, key) if many else [get(parent, key)]) if n is not None
        ]
    return nodes


def label_of(resource: Any) -> str:
    """How an edge names the resource that creates it: its kind and name."""
    return f"{resource.resource_type.rsplit(':', 1)[-1]} {name_of(resource)}"
