"""OCI's reader of the reachability view (policies/reachability.py): what the internet reaches. A node (an instance,
or an instance configuration the cluster network launches) is reachable when its VNIC gets a public address in a
subnet that allows internet ingress and a security list, or a network security group of the VNIC, admits a public
source (https://docs.oracle.com/iaas/Content/Network/Concepts/securityrules.htm: the union of both applies).
Between networks: a local peering gateway peers its VCN with another LPG's, a DRG attachment joins a VCN to a
dynamic routing gateway (and through it to whatever else the DRG attaches), a remote peering connection joins a
DRG to one in another region, an IPSec connection to a network outside OCI
(https://docs.oracle.com/iaas/Content/Network/Tasks/managingDRGs.htm). An OCID carries no compartment, so a far
end is placed only when it is a resource of this stack (by its property dependency or id); else it fails closed.
An IPSec connection's `staticRoutes` are the ranges its far end answers for: any beyond the private ranges (RFC 1918,
IPv6 ULA), a default route above all, hands the internet's addresses to a network the pack cannot see, so the
internet reaches the DRG's networks through the tunnel (Oracle's "IPSec VPN Best Practices" even suggest a backup
default route there). accelstack's OCI stacks link no VCN to another."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..access import OWN, Party, Placement
from ..common import as_list, truthy
from ..reachability import (
    EXPOSES,
    INTERNET,
    NODE,
    PEERING,
    TRANSIT,
    TUNNEL,
    Link,
    internet_through_tunnel,
    is_stacks,
    placed,
    ranges_at,
    value,
)
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


LOCAL_PEERING = "oci:Core/localPeeringGateway:LocalPeeringGateway"
REMOTE_PEERING = "oci:Core/remotePeeringConnection:RemotePeeringConnection"
DRG = "oci:Core/drg:Drg"
DRG_ATTACHMENT = "oci:Core/drgAttachment:DrgAttachment"
IPSEC = "oci:Core/ipsec:Ipsec"


def _far_end(resource: Any, prop: str, found: Any, placement: Placement, what: str) -> Party:
    """A far end named by OCID: this stack's own resource, or unplaced (an OCID names no compartment)."""
    if found and is_stacks(resource, prop, found, placement):
        return Party(f"{what} {found}", OWN)
    why = f"{what} {found!r} is no resource of this stack, and an OCID names no compartment"
    return placed(f"{what} {found or '(none)'}", None, why if found else f"{what} is not set")


def network_links(resources: Sequence[Any], placement: Placement) -> Iterable[Link]:
    for resource in resources:
        kind, props, name = resource.resource_type, resource.props, name_of(resource)
        if kind == LOCAL_PEERING and value(props, "peerId"):
            peer = _far_end(resource, "peerId", value(props, "peerId"), placement, "local peering gateway")
            vcn = Party(f"VCN {value(props, 'vcnId')}", OWN)
            yield Link(vcn, PEERING, peer, resource.urn, f"local peering gateway {name}")
        elif kind == REMOTE_PEERING and value(props, "peerId"):
            peer = _far_end(resource, "peerId", value(props, "peerId"), placement, "remote peering connection")
            drg = _far_end(resource, "drgId", value(props, "drgId"), placement, "DRG")
            yield Link(drg, PEERING, peer, resource.urn, f"remote peering connection {name}")
        elif kind == DRG_ATTACHMENT:
            # The attached network: `networkDetails.id` (its type VCN, IPSEC_TUNNEL, ...), or the deprecated `vcnId`.
            detailed = get(props, "networkDetails", "id")
            network, prop = (detailed, "networkDetails") if detailed else (value(props, "vcnId"), "vcnId")
            attached = _far_end(resource, prop, network, placement, "attached network")
            drg = _far_end(resource, "drgId", value(props, "drgId"), placement, "DRG")
            yield Link(attached, TRANSIT, drg, resource.urn, f"DRG attachment {name}")
        elif kind == IPSEC:
            drg = _far_end(resource, "drgId", value(props, "drgId"), placement, "DRG")
            routes = [str(r) for r in ranges_at(props, "staticRoutes")]
            carried = f" routing {', '.join(routes)}" if routes else ""
            far = placed("the IPSec connection's far end", None, "a VPN ends in a network outside every compartment")
            what = f"IPSec connection {name} (customer-premises {value(props, 'cpeId')}){carried}"
            yield Link(drg, TUNNEL, far, resource.urn, what)
            ranges = [("static route", route) for route in routes]
            yield from internet_through_tunnel(
                f"the networks on {drg.shown()}", resource.urn, f"IPSec connection {name}", ranges
            )


def links(resources: Sequence[Any], placement: Placement) -> Iterable[Link]:
    """The internet to each node with a public address that a rule opens to it, and the links between networks."""
    yield from network_links(resources, placement)
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
