"""How the separation pack reads azure-native resources: role assignments and definitions outside the
stack's subscriptions, storage firewalls admitting other subscriptions' networks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..common import as_list
from .readers import (
    ROLE_ASSIGNMENT,
    ROLE_DEFINITION,
    STORAGE_ACCOUNT,
    _kind,
    get,
    items_at,
    name_of,
    role_of,
    subscription_of,
)

# What may cross to the other side: reading (Reader, Storage Blob Data Reader).
READER_ROLES = {
    "acdd72a7-3385-48ef-bd42-f606fba81ae7": "Reader",
    "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1": "Storage Blob Data Reader",
}


def cross_subscription_problems(resource: Any, own: frozenset[str], ctx: Any) -> Iterable[str]:
    """Role assignments and role definitions stay in the stack's subscriptions, except the documented
    read path: a serving stack may assign a reader role (Reader, Storage Blob Data Reader) on a
    scope in a training subscription (serving reads training's artifacts). Ours."""
    kind, props, name = _kind(resource), resource.props, name_of(resource)
    own_lower = {s.lower() for s in own}
    training = {s.lower() for s in ctx.training_accounts}
    if kind == ROLE_ASSIGNMENT:
        raw_scope = props.get("scope")
        scope = subscription_of(raw_scope)
        if scope is None and isinstance(raw_scope, str) and raw_scope:
            # A management group or the tenant root ("/") reaches every subscription under it, the other side's too.
            yield f"role assignment {name} is scoped to {raw_scope!r}, above any one subscription; scope it in this stack's"
            return
        if scope is None or scope in own_lower:
            return
        role = role_of(props)
        if ctx.workload == "serving" and scope in training and role in READER_ROLES:
            return
        side = f"the {ctx.other} subscription" if scope in {s.lower() for s in ctx.other_accounts} else "subscription"
        yield (
            f"role assignment {name} grants role {READER_ROLES.get(role, role)} on {side} {scope}; only a serving "
            "stack may read (Reader, Storage Blob Data Reader) in a training subscription"
        )
    elif kind == ROLE_DEFINITION:
        for scope in as_list(props.get("assignableScopes")):
            sub = subscription_of(scope)
            if sub is None and isinstance(scope, str) and scope:
                yield f"role definition {name} is assignable at {scope!r}, above any one subscription"
            elif sub is not None and sub not in own_lower:
                yield f"role definition {name} is assignable in subscription {sub}, outside this stack's"


def _admitted_ids(account_props: Any) -> list[tuple[str, str]]:
    """(what, resource id) of everything a storage account's firewall lets in by identity of origin: subnets
    (virtualNetworkRules, the SDK's `virtualNetworkResourceId` or the API's `id`) and resource instances
    (resourceAccessRules)."""
    rules = get(account_props, "networkRuleSet") or {}
    admitted = [
        ("subnet", str(rule.get("virtualNetworkResourceId") or rule.get("id") or ""))
        for rule in items_at(rules, "virtualNetworkRules")  # the API's only action is Allow
    ]
    admitted += [
        ("resource instance", str(rule.get("resourceId") or "")) for rule in items_at(rules, "resourceAccessRules")
    ]
    return admitted


def network_admission_problems(resource: Any, own: frozenset[str], ctx: Any) -> Iterable[str]:
    """A storage account's firewall admits subnets and resource instances of the stack's own subscriptions
    only, except the documented read path: a training stack's account may admit a serving subscription's
    subnet (its replicas read the published models; training.artifactReaderSubnets). Anything else (another
    subscription, a wildcard `/subscriptions/*`, a training network in a serving stack) carries that
    subscription's traffic past the separation. The network half of cross-account-read-only. Ours."""
    if _kind(resource) not in STORAGE_ACCOUNT:
        return
    own_lower = {s.lower() for s in own}
    serving = {s.lower() for s in ctx.serving_accounts}
    for what, resource_id in _admitted_ids(resource.props):
        subscription = subscription_of(resource_id)
        if subscription is not None and subscription in own_lower:
            continue
        if what == "subnet" and ctx.workload == "training" and subscription in serving:
            continue
        where = f"subscription {subscription}" if subscription else f"{resource_id!r} (no single subscription)"
        yield (
            f"storage account {name_of(resource)} admits a {what} of {where} through its firewall; only the stack's "
            "own subscriptions, and a training account's serving readers, may reach it"
        )
