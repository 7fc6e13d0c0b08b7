"""Vultr's reader of the reachability view (policies/reachability.py): the internet reaches the load balancer's
frontends (the front door), and an instance whose firewall group admits a public source, or that names no firewall
group at all (then Vultr filters nothing on its public interface). VPCs link nothing across accounts: a Vultr VPC
belongs to the API key's account alone."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..access import OWN, Party, Placement
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
            for rule in resources:
                if readers.public_rule(rule) and rule.props.get("firewallGroupId") == group:
                    yield Link(
                        INTERNET,
                        EXPOSES,
                        node,
                        resource.urn,
                        f"{name_of(resource)}: firewall rule {name_of(rule)}",
                        f"{rule.props.get('protocol')} {rule.props.get('port') or ''} from {readers.rule_source(rule)}",
                    )
