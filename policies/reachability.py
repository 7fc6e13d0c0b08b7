"""The reachability view: which networks and machines can reach which, on every cloud, in one form.

Where the access graph (policies/access.py) says who may act on what, this says what can open a connection
to what: the internet to a load balancer's listeners or to a node with a public address and a rule that
admits it; one network to another through peering, transit gateways, VPN and interconnect attachments,
shared VPCs; a network to a service through PrivateLink endpoints, Azure private endpoints and Private
Service Connect; another account's networks to the stack's own endpoint services; the internet to the
networks behind a VPN whose far end answers for ranges beyond the private ones (`internet_through_tunnel`,
every cloud alike). Each end is placed in an account with the access graph's conventions (`access.OWN`,
`access.SERVICE`, `access.ANY`, None when the reader cannot place it: then `unplaced` says why, and the end
fails closed), so the separation pack places each end on a side with `access_rules.side_of` exactly as it
places a grant.

A vendor's `LinkReader(resource, placement) -> Iterable[Link]` reads its own kinds only (`Vendor.reachability`).
The view is built once per stack (`graph_of`), however many rules ask. Two rules read it: separation's
`no-network-path-across-sides` (policies/separation/reachability_rules.py) and guardrails'
`internet-reaches-only-the-front-door` (policies/guardrails/exposure.py). Modelled on Cartography's one
asset graph across clouds (read, not copied).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pulumi_policy.proxy import UnknownValueError

from .access import ANY, OWN, SERVICE, Party, Placement, Stack, once_per_stack, unplaced
from .common import as_list
from .concepts import canonical

# What a node is.
INTERNET_KIND = "internet"
FRONT_DOOR = "front door"  # a listener (or frontend) of an internet-facing load balancer
NETWORK = "network"  # a VPC / VNet / VPC network (or a subnet of one)
NODE = "node"  # a machine, or the group / template that launches machines
ENDPOINT_SERVICE = "endpoint service"  # a service published into other networks (PrivateLink, PSC, Private Link)

INTERNET = Party("the internet", ANY, INTERNET_KIND)

# How a link is made.
EXPOSES = "exposes"  # the internet reaches the target (a listener, a public address and an admitting rule)
PEERING = "peering"  # two networks route to each other (VPC / VNet / network peering)
TRANSIT = "transit"  # a hub both attach to (transit gateway, Virtual WAN hub, NCC hub)
ENDPOINT = "endpoint"  # a network reaches a service published from another network
SHARED_NETWORK = "shared network"  # another account's machines run in the network (shared VPC)
TUNNEL = "tunnel"  # VPN or interconnect: the far end is a network the pack cannot see
NETWORK_LINKS = frozenset({PEERING, TRANSIT, ENDPOINT, SHARED_NETWORK, TUNNEL})


@dataclass(frozen=True)
class Link:
    """`source` can open connections to `target` (on `ports`, "" when any), because of `origin` (a URN);
    `what` names the construct for messages ("VPC peering connection train-to-serve")."""

    source: Party
    via: str
    target: Party
    origin: str
    what: str
    ports: str = ""


# A vendor's link reader: the stack's resources -> the links its own kinds make (it skips every other kind).
LinkReader = Callable[[Sequence[Any], Placement], Iterable[Link]]


def value(props: Any, key: str) -> Any:
    """props[key], None when missing or unknown during preview (pulumi-policy raises on unknowns)."""
    try:
        return props.get(key) if hasattr(props, "get") else None
    except UnknownValueError:
        return None


# The private ranges (RFC 1918, IPv6 unique local fc00::/7): a VPN's far end that answers for any other range answers
# for internet addresses. Stricter than readers.NON_PUBLIC on purpose: shared address space (RFC 6598) is no one's
# private range.
PRIVATE_RANGES = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"))
BEYOND_PRIVATE = "is beyond the private ranges (the far end answers for internet addresses)"


def beyond_private(cidr: Any) -> bool:
    """A range outside the private ranges (one that cannot be parsed counts as outside)."""
    try:
        network = ipaddress.ip_network(str(cidr).strip(), strict=False)
    except ValueError:
        return True
    return not any(network.version == block.version and network.subnet_of(block) for block in PRIVATE_RANGES)  # type: ignore[arg-type]


UNREAD = "(unknown until deployed)"


def ranges_at(props: Any, *path: str) -> list[Any]:
    """The ranges at `props.a.b...`, one or a list ([] when unset). A value unknown during preview is UNREAD, which
    parses as no range: it fails closed (a VPN is refused across sides anyway, so nothing legitimate waits on it)."""
    found = props
    try:
        for key in path:
            found = found.get(key) if hasattr(found, "get") else None
    except UnknownValueError:
        return [UNREAD]
    if found is None or isinstance(found, str) or not isinstance(found, Sequence):
        return as_list(found)
    items = []
    for index in range(len(found)):
        try:
            items.append(found[index])
        except UnknownValueError:
            items.append(UNREAD)
    return [item for item in items if item is not None]


# A traffic selector matching every address narrows nothing (each cloud's default: AWS's `localIpv4NetworkCidr`, the
# 0.0.0.0/0 selectors GCP's route-based tunnels require, an Azure route-based connection): what such a tunnel carries
# is decided by its routes, which are judged themselves. A selector naming a range is the far end claiming it.
def matches_all(cidr: Any) -> bool:
    """0.0.0.0/0 or ::/0, however spelled (`0::/0`)."""
    try:
        return ipaddress.ip_network(str(cidr).strip(), strict=False).prefixlen == 0
    except ValueError:
        return False


def far_end_selectors(ranges: Iterable[Any]) -> list[tuple[str, Any]]:
    """(label, range) of the far end's traffic selectors that name a range (the match-all ones narrow nothing)."""
    return [("far-end traffic selector", r) for r in ranges if not matches_all(r)]


def internet_through_tunnel(networks: str, origin: str, what: str, ranges: Iterable[tuple[str, Any]]) -> Iterable[Link]:
    """The internet reaching `networks` through a VPN whose far end answers for one of `ranges` ((what it is, the
    range): a static route, a route through the tunnel, a far-end selector) beyond the private ranges, or for a
    range the pack cannot read (fails closed). One link per range, so every range is named, not only the first."""
    target = Party(networks, OWN, NETWORK)
    for label, found in ranges:
        if not beyond_private(found):
            continue
        try:
            ipaddress.ip_network(str(found).strip(), strict=False)
            why = BEYOND_PRIVATE
        except ValueError:
            why = "is no range the pack can read (fails closed: the far end may answer for internet addresses)"
        yield Link(INTERNET, EXPOSES, target, origin, f"{what}: {label} {found} {why}")


def names_kind(resource: Any, prop: str, found: Any, placement: Placement, kinds: Iterable[str]) -> bool:
    """The value of `resource.prop` names a resource of this stack of one of `kinds` (a VPN gateway, a tunnel):
    through the engine's property dependencies, else by the resource's id."""
    stack, wanted = placement.stack, frozenset(kinds)
    if stack is None:
        return False
    deps = getattr(resource, "property_dependencies", None) or {}
    for dependency in deps.get(prop, []):
        target = stack.by_urn.get(str(getattr(dependency, "urn", "")))
        if target is not None and canonical(target.resource_type) in wanted:
            return True
    return isinstance(found, str) and any(
        canonical(r.resource_type) in wanted and value(r.props, "id") == found for r in stack.resources
    )


def own_network(ref: str) -> Party:
    return Party(ref, OWN, NETWORK)


def cloud_service(ref: str) -> Party:
    """A service the cloud itself runs (S3 through a gateway endpoint, Google APIs, servicenetworking)."""
    return Party(ref, SERVICE, ENDPOINT_SERVICE)


def everyone(ref: str) -> Party:
    return Party(ref, ANY, NETWORK)


def placed(ref: str, account: str | None, why: str, kind: str = NETWORK) -> Party:
    """A party in `account`, or unplaced with `why` when the reader found none."""
    return Party(ref, account, kind) if account else unplaced(ref, why, kind)


def is_stacks(resource: Any, prop: str, found: Any, placement: Placement) -> bool:
    """The value of `resource.prop` names a resource of this stack: through the engine's property
    dependencies (known while ids are not), else by one of the stack's ids, names or ARNs."""
    stack = placement.stack
    if stack is None:
        return False
    deps = getattr(resource, "property_dependencies", None) or {}
    if any(getattr(d, "urn", None) in stack.by_urn for d in deps.get(prop, [])):
        return True
    return isinstance(found, str) and stack.owns(found)


@dataclass
class ReachGraph:
    links: list[Link] = field(default_factory=list)

    def from_internet(self) -> list[Link]:
        return [link for link in self.links if link.source.kind == INTERNET_KIND]

    def between_networks(self) -> list[Link]:
        return [link for link in self.links if link.via in NETWORK_LINKS]

    def reachable(self, start: Party) -> set[Party]:
        """Every party `start` reaches, following links transitively (itself excluded)."""
        onward: dict[Party, list[Party]] = {}
        for link in self.links:
            onward.setdefault(link.source, []).append(link.target)
        seen: set[Party] = set()
        frontier = list(onward.get(start, ()))
        while frontier:
            party = frontier.pop()
            if party in seen or party == start:
                continue
            seen.add(party)
            frontier.extend(onward.get(party, ()))
        return seen


def each(
    resources: Sequence[Any], placement: Placement, read: Callable[[Any, Placement], Iterable[Link]]
) -> Iterable[Link]:
    """`read` over every resource; a resource with a value unknown during preview is left to the final
    state's run (pulumi-policy raises on reading one)."""
    for resource in resources:
        try:
            yield from list(read(resource, placement))
        except UnknownValueError:
            continue


def build(resources: Sequence[Any], readers: Sequence[LinkReader], placement: Placement) -> ReachGraph:
    graph = ReachGraph()
    for reader in readers:
        try:
            graph.links.extend(reader(resources, placement))
        except UnknownValueError:
            continue  # a stack-wide value unknown during preview: the final state's run judges it
    return graph


_cache: list[tuple[Sequence[Any], Any, ReachGraph]] = []


def graph_of(
    resources: Sequence[Any], readers: Sequence[LinkReader], own: frozenset[str], stores: Mapping[str, str]
) -> ReachGraph:
    """The stack's view, built once however many rules ask with the same resource list and placement."""
    key = (own, tuple(sorted(stores.items())), tuple(readers))
    return once_per_stack(
        _cache, resources, key, lambda: build(resources, readers, Placement(own, stores, Stack.of(resources)))
    )


__all__ = [
    "ENDPOINT",
    "ENDPOINT_SERVICE",
    "EXPOSES",
    "FRONT_DOOR",
    "INTERNET",
    "NETWORK",
    "NETWORK_LINKS",
    "NODE",
    "PEERING",
    "SHARED_NETWORK",
    "TRANSIT",
    "TUNNEL",
    "Link",
    "LinkReader",
    "Placement",
    "ReachGraph",
    "Stack",
    "beyond_private",
    "build",
    "each",
    "far_end_selectors",
    "graph_of",
    "internet_through_tunnel",
    "matches_all",
    "names_kind",
    "ranges_at",
]
