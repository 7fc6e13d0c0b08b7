"""How the separation pack reads azure-native storage firewalls admitting other subscriptions' networks (the
network half of cross-account-read-only; who may do what is the access graph's: policies/azure/access.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .readers import (
    STORAGE_ACCOUNT,
    _kind,
    get,
    items_at,
    name_of,
    subscription_of,
)


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
    only, except the documented read path: the training stack's artifact account (policy config
    `artifactStores`, the account of training.storage.checkpoints) may admit a serving subscription's subnet
    (its replicas read the published models; training.artifactReaderSubnets). A firewall rule carries no verb:
    "only for read" is the access graph's, which lets serving nothing but the artifact prefix's blob reads there.
    Anything else (serving's subnets on the datasets account, a resource instance of serving's, another
    subscription, a wildcard `/subscriptions/*`, a training network in a serving stack) carries that
    subscription's traffic past the separation. The network half of cross-account-read-only. Ours."""
    if _kind(resource) not in STORAGE_ACCOUNT:
        return
    own_lower = {s.lower() for s in own}
    serving = {s.lower() for s in ctx.serving_accounts}
    artifact = is_artifact_account(resource, ctx)
    for what, resource_id in _admitted_ids(resource.props):
        subscription = subscription_of(resource_id)
        if subscription is not None and subscription in own_lower:
            continue
        if what == "subnet" and ctx.workload == "training" and subscription in serving and artifact:
            continue
        where = f"subscription {subscription}" if subscription else f"{resource_id!r} (no single subscription)"
        only = ", may reach it"
        if what == "subnet" and ctx.workload == "training" and subscription in serving:
            stores = ", ".join(artifact_stores(ctx)) or "none configured"
            only = f" (artifactStores: {stores}), may reach it; serving reads nothing else of training's"
        yield (
            f"storage account {name_of(resource)} admits a {what} of {where} through its firewall; only the stack's "
            f"own subscriptions, and serving's replica subnets on the artifact account{only}"
        )


def artifact_stores(ctx: Any) -> list[str]:
    """The artifact stores the policy config names (`artifactStores`: on Azure, storage account names)."""
    return [str(s) for s in ctx.config.get("artifactStores") or []]


def account_names(resource: Any) -> set[str]:
    """The names a storage account goes by, lowercased (account names are lowercase by rule): its `accountName`
    input, and its resource name (what a reference to it holds under the engine's mocks)."""
    return {n.lower() for n in (resource.props.get("accountName"), name_of(resource)) if isinstance(n, str) and n}


def is_artifact_account(resource: Any, ctx: Any) -> bool:
    stores = {s.lower() for s in artifact_stores(ctx)}
    return bool(stores) and str(resource.props.get("accountName") or "").lower() in stores
