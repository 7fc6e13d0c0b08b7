"""How the reachability view reads a network security group's inbound rules as Azure evaluates them: by priority,
lowest number first, the first rule that matches a flow deciding it ("Once traffic matches a rule, processing
stops": https://learn.microsoft.com/azure/virtual-network/network-security-groups-overview#security-rules). An
internet-open Allow is shadowed only where an earlier Deny surely covers every flow it admits (same or any
protocol, a source that contains the Allow's, every destination port and address it names); anything the
reader cannot compare is left open (the view over-reports, never under-reports). Ours."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from typing import Any

from ..common import as_list
from ..readers import is_public_range, items_at
from . import readers
from .readers import NSG, SECURITY_RULE, _kind

ANY_PORT = frozenset({"*", "0-65535"})


def _sources(rule: Any) -> list[str]:
    return [
        str(s).strip() for s in as_list(rule.get("sourceAddressPrefix")) + as_list(rule.get("sourceAddressPrefixes"))
    ]


def _destinations(rule: Any) -> list[str]:
    values = as_list(rule.get("destinationAddressPrefix")) + as_list(rule.get("destinationAddressPrefixes"))
    return [str(d).strip().lower() for d in values]


def _port_range(port: str) -> tuple[int, int] | None:
    text = port.strip()
    if text in ANY_PORT:
        return (0, 65535)
    low, _, high = text.partition("-")
    try:
        return (int(low), int(high or low))
    except ValueError:
        return None


def _ports(rule: Any) -> list[str]:
    return [str(p) for p in as_list(rule.get("destinationPortRange")) + as_list(rule.get("destinationPortRanges"))]


def _ports_covered(deny: Any, allow: Any) -> bool:
    denied = [r for p in _ports(deny) if (r := _port_range(p)) is not None]
    allowed = [_port_range(p) for p in _ports(allow)] or [(0, 65535)]
    return all(a is not None and any(d[0] <= a[0] and a[1] <= d[1] for d in denied) for a in allowed)


def _source_covered(deny_sources: Sequence[str], source: str) -> bool:
    """Whether the Deny's sources contain the Allow's `source`: any address, the Internet tag (every address
    outside the VNet's and Azure's private space) over the tag itself or a global range, or a containing range."""
    lowered = {s.lower() for s in deny_sources}
    if lowered & {"*", "any", "0.0.0.0/0"}:
        return True
    if not _is_cidr(source):
        return source.lower() == "internet" and "internet" in lowered
    inner = ipaddress.ip_network(source, strict=False)
    if "internet" in lowered and inner.is_global:
        return True
    for prefix in deny_sources:
        if _is_cidr(prefix):
            outer = ipaddress.ip_network(prefix, strict=False)
            if outer.version == inner.version and inner.subnet_of(outer):  # type: ignore[arg-type]
                return True
    return False


def _is_cidr(value: str) -> bool:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return True


def _shadows(deny: Any, allow: Any, source: str) -> bool:
    """Whether `deny` (evaluated earlier) surely matches every flow `allow` admits from `source`."""
    protocol = str(deny.get("protocol") or "*").lower()
    if protocol not in ("*", str(allow.get("protocol") or "*").lower()):
        return False
    denied_to = _destinations(deny)
    if not (set(denied_to) & {"*", "any"} or (denied_to and set(_destinations(allow)) <= set(denied_to))):
        return False
    return _source_covered(_sources(deny), source) and _ports_covered(deny, allow)


def _priority(rule: Any) -> float:
    try:
        return float(rule.get("priority"))
    except (TypeError, ValueError):
        return float("inf")  # unread: judged as evaluated last, so it shadows nothing


def inbound_rules(nsg: Any, rule_resources: Iterable[Any]) -> list[Any]:
    """One NSG's inbound rules, inline and as SecurityRule resources, in evaluation order."""
    rules = [*items_at(nsg.props, "securityRules"), *(r.props for r in rule_resources)]
    inbound = [r for r in rules if str(r.get("direction") or "") == "Inbound"]
    return sorted(inbound, key=_priority)


def open_rules(nsg: Any, rule_resources: Iterable[Any]) -> list[tuple[str, list[str], str]]:
    """(protocol, ports, source) of each internet-open inbound Allow no earlier Deny shadows."""
    if _kind(nsg) != NSG:
        return []
    ordered = inbound_rules(nsg, [r for r in rule_resources if _kind(r) == SECURITY_RULE])
    found = []
    for position, rule in enumerate(ordered):
        if str(rule.get("access") or "") != "Allow":
            continue
        earlier = [
            r for r in ordered[:position] if str(r.get("access") or "") == "Deny" and _priority(r) < _priority(rule)
        ]
        for protocol, ports, source in readers.internet_rules(_Rule(rule), is_public_range):
            if not any(_shadows(deny, rule, source) for deny in earlier):
                found.append((protocol, ports, source))
    return found


class _Rule:
    """One rule as `readers.internet_rules` reads a SecurityRule resource."""

    resource_type = SECURITY_RULE

    def __init__(self, props: Any) -> None:
        self.props = props
