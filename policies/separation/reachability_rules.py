"""No network path between the training side's networks and the serving side's, judged over the
reachability view (policies/reachability.py).

Training and serving share nothing but serving reading training's artifacts through the storage API: no
route between their networks at all. A peering, a transit gateway or hub both attach to, an endpoint into a
service the other side publishes (or a service of ours the other side may connect to), a shared VPC with
the other side's project, a private endpoint into the other subscription: each is a path a compromised
node could take past every grant. Each end is placed on a side as the access graph's ends are
(`access_rules.side_of`); an end the reader cannot place (a peer named only by an id, a VPN's far end, an
endpoint service whose owner its name does not carry) fails closed. Ours (AWS's multi-account guidance keeps
environments in separate, unconnected VPCs: https://docs.aws.amazon.com/whitepapers/latest/building-scalable-secure-multi-vpc-network-infrastructure/welcome.html).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .. import reachability, vendors
from ..common import Context
from ..reachability import Link
from .access_rules import CLOUD, EVERYONE, OTHER_SIDE, OWN_SIDE, TRUSTED, _trusted, placement, side_of

POLICY_NAME = "no-network-path-across-sides"
DESCRIPTION = (
    "No network path (peering, transit, endpoints, shared VPC, private endpoints, VPN) links a training "
    "account's networks and a serving account's; a peer the pack cannot place fails."
)


def readers() -> list[reachability.LinkReader]:
    return [reader for vendor in vendors.VENDORS if (reader := vendor.reachability) is not None]


def view(resources: Sequence[Any], ctx: Context) -> reachability.ReachGraph:
    """The stack's reachability view, built once for both packs."""
    where = placement(ctx)
    return reachability.graph_of(resources, readers(), where.own, where.stores)


def _where(side: str, account: str | None, ctx: Context) -> str:
    if side == OWN_SIDE:
        return f"this {ctx.workload} stack's account"
    if side == OTHER_SIDE:
        return f"the {ctx.other} account {account}"
    if side == EVERYONE:
        return "any account"
    return f"account {account}, which is neither a training nor a serving account"


def judge(link: Link, ctx: Context, trusted: frozenset[str]) -> str | None:
    """Why a network link breaks the separation (None when both ends are this side's, the cloud's or trusted)."""
    for party, role in ((link.source, "source"), (link.target, "peer")):
        if party.account is None:
            why = f": {party.unplaced}" if party.unplaced else ""
            return f"{link.what}: the pack cannot place the {role} {party.shown()!r} in an account{why}; fail closed"
    source, target = side_of(link.source, ctx, trusted), side_of(link.target, ctx, trusted)
    if {source, target} <= {OWN_SIDE, CLOUD, TRUSTED}:
        return None
    return (
        f"{link.what}: a network path ({link.via}) from {link.source.shown()} "
        f"({_where(source, link.source.account, ctx)}) to {link.target.shown()} "
        f"({_where(target, link.target.account, ctx)}); training and serving networks never connect"
    )


def check_no_network_path(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    if ctx.workload is None:
        return
    trusted = _trusted(ctx)
    found: dict[tuple[str, str], None] = {}
    for link in view(resources, ctx).between_networks():
        if (message := judge(link, ctx, trusted)) is not None:
            found[(link.origin, message)] = None
    yield from found


check_no_network_path.__doc__ = __doc__
