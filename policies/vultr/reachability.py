"""Vultr's reader of the reachability view (policies/reachability.py): the internet reaches the load balancer's
frontends (the front door), and an instance whose firewall group admits a public source, or that names no firewall
group at all (then Vultr filters nothing on its public interface). VPCs link nothing across accounts: a Vultr VPC
belongs to the API key's account alone."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..access import OWN, Party, Placement
from ..common import refers_to
from ..reachability import EXPOSES, FRONT_DOOR, INTERNET, NODE, Link
from ..readers import items_at, name_of
from . import readers


def links(resources: Sequence[Any], placement: Placement) -> Iterable[Link]:
    for resource in resources:
        if resource.resource_type == readers.LOAD_BALANCER:
            for rule in items_at(resource.props, "forwardingRules"):
                yield Link(
                    INTERNET,
                    EXPOSES,
                    Party(f"{name_of(resource)} frontend {rule.get('frontendPort')}", OWN, FRONT_DOOR),
                    resource.urn,
                    f"load balancer {name_of(resource)}",
                    str(rule.get("frontendPort") or ""),
                )
        elif resource.resource_type in readers.NODES:
            node = Party(f"{name_of(resource)} (its public address)", OWN, NODE)
            group = resource.props.get("firewallGroupId")
            if not group:
                yield Link(INTERNET, EXPOSES, node, resource.urn, f"{name_of(resource)}: no firewall group")
                continue
            balancers = [r for r in resources if r.resource_type == readers.LOAD_BALANCER]
            for rule in resources:
                if rule.resource_type != readers.FIREWALL_RULE or rule.props.get("firewallGroupId") != group:
                    continue
                why = _admits_the_internet(rule, balancers)
                if why is not None:
                    yield Link(
                        INTERNET,
                        EXPOSES,
                        node,
                        resource.urn,
                        f"{name_of(resource)}: firewall rule {name_of(rule)}{why}",
                        f"{rule.props.get('protocol')} {rule.props.get('port') or ''} from {readers.rule_source(rule)}",
                    )


def _admits_the_internet(rule: Any, balancers: Sequence[Any]) -> str | None:
    """An empty reason when the rule admits a public source; a reason when its `source` names a load balancer this stack does not
    create (the pack cannot place what that one admits: fail closed); None when it admits this stack's own."""
    if readers.public_rule(rule):
        return ""
    source = str(rule.props.get("source") or "")
    if source and not any(refers_to(rule, "source", balancer, keys=("id",)) for balancer in balancers):
        return f" (source {source!r} is no load balancer of this stack: the pack cannot place whom it admits)"
    return None
