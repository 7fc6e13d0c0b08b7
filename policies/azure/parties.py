"""Azure's parties of the access graph: where an ARM id, a user-assigned identity or an Entra object id sits (its
subscription, this stack's own, or nowhere the pack can place: it then fails closed). Read by policies/azure/access.py."""

from __future__ import annotations

import re
from typing import Any

from pulumi_policy.proxy import UnknownValueError

from .. import concepts
from ..access import ANY, IDENTITY, OWN, RESOURCE, Party, Placement
from ..common import urn_name
from ..readers import get, name_of
from ..vendor import tokens_of
from .concepts import AZURE

IDENTITY_KIND = tokens_of(AZURE, "identity")

_SUBSCRIPTION = re.compile(r"^/subscriptions/([0-9a-f-]{36})(?:/|$)", re.IGNORECASE)  # ARM ids ignore case
_MANAGEMENT_GROUP = re.compile(r"^/providers/microsoft\.management/managementgroups/([^/]+)", re.IGNORECASE)
IDENTITY_ID = re.compile(r"/providers/microsoft\.managedidentity/userassignedidentities/[^/]+$", re.IGNORECASE)
VAULT_HOST = re.compile(r"^https://([a-z0-9-]+)\.vault\.azure\.net", re.IGNORECASE)


def kind_of(resource: Any) -> str:
    return concepts.canonical(resource.resource_type)


def text_of(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def subscription_of(resource_id: Any) -> str | None:
    match = _SUBSCRIPTION.match(str(resource_id or ""))
    return match.group(1).lower() if match else None


def last_segment(resource_id: str) -> str:
    return resource_id.rstrip("/").rsplit("/", 1)[-1]


# --- parties ------------------------------------------------------------------------------------------------------


def resource_party(resource_id: str, placement: Placement, kind: str = RESOURCE, what: str = "") -> Party:
    """A resource named by its ARM id: in the subscription the id names; a management group or the tenant root is
    every subscription under it. Anything else is placed only when it is this stack's own id."""
    ref = f"{what} {resource_id}".strip()
    group = _MANAGEMENT_GROUP.match(resource_id)
    if resource_id.strip() == "/" or group:
        where = f"management group {group.group(1)}" if group else "the tenant root"
        return Party(f"{ref} ({where}: every subscription under it)", ANY, kind)
    subscription = subscription_of(resource_id)
    if subscription is not None:
        return Party(ref, subscription, kind)
    if placement.stack is not None and placement.stack.owns(resource_id):
        return Party(ref, OWN, kind)
    return Party(
        ref,
        None,
        kind,
        f"{resource_id!r} is no subscription, management group or resource id of this stack",
        needs_stack=placement.stack is None,
    )


def identity_party(resource_id: str, placement: Placement) -> Party:
    """A user-assigned identity by its ARM id (the one spelling both a wearer and a principal lookup reach)."""
    subscription = subscription_of(resource_id)
    ref = f"managed identity {last_segment(resource_id)}"
    if subscription is not None:
        return Party(ref, subscription, IDENTITY)
    return resource_party(resource_id, placement, IDENTITY, "managed identity")


def _principals_of(placement: Placement) -> dict[str, list[Party]]:
    """principalId (lowercased) -> the identities of this stack that carry it: user-assigned identities and the
    system-assigned identities of resources (`identity.principalId`). Read once per stack."""
    stack = placement.stack
    if stack is None:
        return {}
    cached = _PRINCIPALS.get(id(stack))
    if cached is not None and cached[0] is stack:
        return cached[1]
    found: dict[str, list[Party]] = {}
    for resource in stack.resources:
        try:
            if kind_of(resource) in IDENTITY_KIND:
                principal = text_of(resource.props.get("principalId"))
                resource_id = text_of(resource.props.get("id")) or urn_name(resource.urn)
                party = identity_party(resource_id, placement)
            elif concepts.cloud_of(resource.resource_type) == "azure-native":
                principal = text_of(get(resource.props, "identity", "principalId"))
                party = Party(f"system-assigned identity of {name_of(resource)}", OWN, IDENTITY)
            else:
                continue
        except UnknownValueError:
            continue
        if principal is not None:
            found.setdefault(principal.lower(), []).append(party)
    _PRINCIPALS.clear()
    _PRINCIPALS[id(stack)] = (stack, found)
    return found


_PRINCIPALS: dict[int, tuple[Any, dict[str, list[Party]]]] = {}


def principal_parties(object_id: Any, principal_type: Any, placement: Placement) -> list[Party]:
    """Who an Entra object id is: an identity this stack creates, a configured service principal, else unplaced."""
    oid = text_of(object_id)
    if oid is None:
        return []  # unknown during preview: the stack-level check reads the final value
    ref = f"principal {oid}"
    if str(principal_type or "") == "ForeignGroup":
        return [Party(ref, None, IDENTITY, "a group of another tenant (principalType ForeignGroup)")]
    configured = placement.stores.get(oid.lower())
    if configured is not None:
        return [Party(f"service principal {oid}", configured, IDENTITY)]
    if placement.stack is None:
        # Judged alone, the principal is given its most lenient placement (this stack's own identity): what is
        # refused then is refused whoever it is (a write of the other side's store); the stack-level check places it.
        return [Party(ref, OWN, IDENTITY)]
    matches = _principals_of(placement).get(oid.lower())
    if matches:
        return list(dict.fromkeys(matches))
    return [
        Party(
            ref,
            None,
            IDENTITY,
            f"object id {oid} is no identity this stack creates and no configured service principal "
            "(servicePrincipals); an object id does not say whose side it acts for",
        )
    ]


_RESOURCE_GROUP = re.compile(r"^/subscriptions/[^/]+/resourcegroups/([^/]+)$", re.IGNORECASE)


def identities_under(scope: str, placement: Placement) -> list[Party]:
    """The stack's user-assigned identities inside `scope` (a subscription or resource group holds every identity
    in it): an assignment there lets its principal become each of them, and through them reach what they reach.
    Matched by the identity's ARM id under the scope, or, while that is unknown, by its resource group's name."""
    if placement.stack is None:
        return []
    prefix = scope.rstrip("/").lower() + "/"
    group = _RESOURCE_GROUP.match(scope.rstrip("/"))
    found = []
    for resource in placement.stack.resources:
        if kind_of(resource) not in IDENTITY_KIND:
            continue
        try:
            resource_id = text_of(resource.props.get("id"))
            group_name = text_of(resource.props.get("resourceGroupName"))
        except UnknownValueError:
            continue
        if resource_id is not None and resource_id.lower().startswith(prefix):
            found.append(identity_party(resource_id, placement))
        elif resource_id is None and group is not None and (group_name or "").lower() == group.group(1).lower():
            found.append(identity_party(urn_name(resource.urn), placement))
    return found
