"""OCI's reader of the reachability view (policies/reachability.py): what the internet reaches. A node (an instance,
or an instance configuration the cluster network launches) is reachable when its VNIC gets a public address in a
subnet that allows internet ingress and a security list, or a network security group of the VNIC, admits a public
source (https://docs.oracle.com/iaas/Content/Network/Concepts/securityrules.htm: the union of both applies).
accelstack's OCI kinds link no VCN to another (no local peering gateway or DRG attachment is in the concept
table, so one fails closed as an unknown kind)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..access import OWN, Party, Placement
from ..common import as_list, truthy
from ..reachability import EXPOSES, INTERNET, NODE, Link
from ..readers import get, is_public_range, name_of
from . import readers


def _public_address(details: Any) -> bool:
    assign = get(details, "createVnicDetails", "assignPublicIp")
    return assign is None or truthy(assign) or str(assign).lower() == "true"


def _subnet_blocks_ingress(resources: Sequence[Any], subnet_id: Any) -> bool:
    return any(
        r.resource_type == readers.SUBNET
        and r.props.get("id") == subnet_id
        and truthy(r.props.get("prohibitInternetIngress"))
        for r in resources
    )


def _open_rules(resources: Sequence[Any], nsg_ids: list[Any]) -> list[tuple[Any, str, str]]:
    """(rule holder, what, source) of the public ingress rules that apply: every security list's (a list applies
    to its subnets' VNICs), and the rules of the VNIC's own network security groups."""
    found = []
    for resource in resources:
        if resource.resource_type == readers.NSG_RULE and resource.props.get("networkSecurityGroupId") not in nsg_ids:
            continue
        found += [(resource, what, source) for source, what in readers.ingress(resource) if is_public_range(source)]
    return found


def links(resources: Sequence[Any], placement: Placement) -> Iterable[Link]:
    """The internet to each node with a public address that a rule opens to it."""
    for node in resources:
        details = readers.launch_details(node)
        if details is None or not _public_address(details):
            continue
        subnet = get(details, "createVnicDetails", "subnetId") or get(details, "subnetId")
        if _subnet_blocks_ingress(resources, subnet):
            continue
        nsg_ids = as_list(get(details, "createVnicDetails", "nsgIds"))
        for holder, what, source in _open_rules(resources, nsg_ids):
            yield Link(
                INTERNET,
                EXPOSES,
                Party(f"{name_of(node)} (a public address)", OWN, NODE),
                node.urn,
                f"{name_of(node)}: a public address and {name_of(holder)}",
                f"{what} from {source}",
            )
