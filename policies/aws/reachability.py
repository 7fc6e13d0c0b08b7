"""AWS's reader of the reachability view (policies/reachability.py): which of its resources link networks
across accounts (VPC peering, transit gateway attachments, VPN, PrivateLink endpoints and endpoint services)
and what the internet reaches (internet-facing load balancers' listeners; nodes with a public address
whose security group admits a public source)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..access import ANY, OWN, Party, Placement
from ..common import account_of_arn, as_list, canonical_account, of_type, refers_to, truthy
from ..links import any_referrer, of_type_once, refers_to_any, targets_of
from ..reachability import (
    ENDPOINT,
    ENDPOINT_SERVICE,
    EXPOSES,
    FRONT_DOOR,
    INTERNET,
    NODE,
    PEERING,
    TRANSIT,
    TUNNEL,
    Link,
    cloud_service,
    each,
    far_end_selectors,
    internet_through_tunnel,
    is_stacks,
    names_kind,
    own_network,
    placed,
    ranges_at,
    value,
)
from ..readers import name_of
from ..vendor import tokens_of
from . import network
from .concepts import AWS

PEERING_CONNECTION = "aws:ec2/vpcPeeringConnection:VpcPeeringConnection"
PEERING_ACCEPTER = "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter"
TGW_VPC_ATTACHMENT = "aws:ec2transitgateway/vpcAttachment:VpcAttachment"
TGW_VPC_ATTACHMENT_ACCEPTER = "aws:ec2transitgateway/vpcAttachmentAccepter:VpcAttachmentAccepter"
TGW_PEERING = "aws:ec2transitgateway/peeringAttachment:PeeringAttachment"
TGW_PEERING_ACCEPTER = (
    "aws:ec2transitgateway/peeringAttachmentAccepter:PeeringAttachmentAccepter",
    "aws:ec2/transitGatewayPeeringAttachmentAccepter:TransitGatewayPeeringAttachmentAccepter",  # the SDK's alias
)
TRANSIT_GATEWAY = "aws:ec2transitgateway/transitGateway:TransitGateway"
VPN_CONNECTION = "aws:ec2/vpnConnection:VpnConnection"
VPN_CONNECTION_ROUTE = "aws:ec2/vpnConnectionRoute:VpnConnectionRoute"
VPN_GATEWAY = "aws:ec2/vpnGateway:VpnGateway"
ROUTE = "aws:ec2/route:Route"
ROUTE_TABLES = ("aws:ec2/routeTable:RouteTable", "aws:ec2/defaultRouteTable:DefaultRouteTable")
# The customer gateway's side of a VPN connection (pulumi_aws/ec2/vpn_connection.py: `local*` is "CIDR on the
# customer gateway (on-premises) side", `remote*` "on the AWS side", the stack's own).
FAR_END_SELECTORS = ("localIpv4NetworkCidr", "localIpv6NetworkCidr")
# A route's destinations (pulumi_aws/ec2/route.py; a route table's inline `routes` spell them `cidrBlock`,
# `ipv6CidrBlock`, `destinationPrefixListId`: pulumi_aws/ec2/_inputs.py RouteTableRouteArgs). A prefix list id is
# no range the pack reads: it fails closed.
ROUTE_DESTINATIONS = ("destinationCidrBlock", "destinationIpv6CidrBlock", "destinationPrefixListId")
INLINE_DESTINATIONS = ("cidrBlock", "ipv6CidrBlock", "destinationPrefixListId")
VPC_ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
ENDPOINT_SERVICE_KIND = "aws:ec2/vpcEndpointService:VpcEndpointService"
ENDPOINT_PRINCIPAL = "aws:ec2/vpcEndpointServiceAllowedPrinciple:VpcEndpointServiceAllowedPrinciple"
ENDPOINT_ACCEPTER = "aws:ec2/vpcEndpointConnectionAccepter:VpcEndpointConnectionAccepter"
LOAD_BALANCERS = tokens_of(AWS, "load-balancer")
LISTENERS = tokens_of(AWS, "listener")
FIREWALLS = tokens_of(AWS, "firewall")
FIREWALL_RULES = tokens_of(AWS, "firewall-rule")
PUBLIC_ADDRESSES = tokens_of(AWS, "public-address")

# AWS's own services: `com.amazonaws.<region>.<service>` and `aws.<...>` (SageMaker, API services). An
# endpoint service a customer publishes is `com.amazonaws.vpce.<region>.vpce-svc-<id>` and names no owner
# (https://docs.aws.amazon.com/vpc/latest/privatelink/privatelink-share-your-services.html).
CUSTOMER_SERVICE = re.compile(r"^com\.amazonaws\.vpce\.")
AWS_SERVICE = re.compile(r"^(com\.amazonaws\.|aws\.)")
# A security group of another account, as a rule references it across a peering (`ACCOUNT/sg-ID`:
# https://docs.aws.amazon.com/vpc/latest/peering/vpc-peering-security-groups.html).
GROUP_IN_ACCOUNT = re.compile(r"^(\d{12})/(sg-[0-9a-zA-Z]+)$")
# Where each kind names the groups its rules admit or reach (the installed SDK's ec2/vpc rule args).
GROUP_REFERENCES = {
    "aws:ec2/securityGroupRule:SecurityGroupRule": ("sourceSecurityGroupId",),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": ("referencedSecurityGroupId",),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": ("referencedSecurityGroupId",),
}


def _vpc(resource: Any, key: str = "vpcId") -> Party:
    return own_network(f"VPC {value(resource.props, key) or name_of(resource)}")


def _peer_account(resource: Any, key: str) -> str:
    """The peer's account: the input, else the requester's own (the API's default for a same-account peer)."""
    found = value(resource.props, key)
    return canonical_account(str(found)) if found else OWN


def _peering(resource: Any, placement: Placement) -> Iterable[Link]:
    kind, props, name = resource.resource_type, resource.props, name_of(resource)
    if kind == PEERING_CONNECTION:
        # peerOwnerId defaults to the requester's account (CreateVpcPeeringConnection's PeerOwnerId).
        peer = Party(f"VPC {value(props, 'peerVpcId')}", _peer_account(resource, "peerOwnerId"))
        yield Link(_vpc(resource), PEERING, peer, resource.urn, f"VPC peering connection {name}")
    elif kind == PEERING_ACCEPTER:
        connection = value(props, "vpcPeeringConnectionId")
        if is_stacks(resource, "vpcPeeringConnectionId", connection, placement):
            return  # the stack's own request, judged there
        # The requester's account is an output (known once accepted); before that the peer is unknown.
        requester = value(props, "peerOwnerId")
        peer = placed(
            f"VPC {value(props, 'peerVpcId') or '(requester)'}",
            canonical_account(str(requester)) if requester else None,
            f"peering connection {connection} was requested outside this stack, from an account it does not name",
        )
        yield Link(peer, PEERING, _vpc(resource), resource.urn, f"VPC peering accepter {name}")


def _transit(resource: Any, placement: Placement) -> Iterable[Link]:
    kind, props, name = resource.resource_type, resource.props, name_of(resource)
    if kind == TGW_VPC_ATTACHMENT:
        gateway = value(props, "transitGatewayId")
        # A transit gateway shared by another account (RAM) names no owner in its id.
        hub = placed(
            f"transit gateway {gateway}",
            OWN if is_stacks(resource, "transitGatewayId", gateway, placement) else None,
            f"transit gateway {gateway} is not created by this stack (one shared from another account names no owner)",
        )
        yield Link(_vpc(resource), TRANSIT, hub, resource.urn, f"transit gateway attachment {name}")
    elif kind == TGW_PEERING:
        peer = Party(
            f"transit gateway {value(props, 'peerTransitGatewayId')}", _peer_account(resource, "peerAccountId")
        )
        hub = own_network(f"transit gateway {value(props, 'transitGatewayId')}")
        yield Link(hub, PEERING, peer, resource.urn, f"transit gateway peering attachment {name}")
    elif kind == TGW_VPC_ATTACHMENT_ACCEPTER or kind in TGW_PEERING_ACCEPTER:
        attachment = value(props, "transitGatewayAttachmentId")
        if is_stacks(resource, "transitGatewayAttachmentId", attachment, placement):
            return
        owner = value(props, "vpcOwnerId") or value(props, "peerAccountId")
        peer = placed(
            "attaching network",
            canonical_account(str(owner)) if owner else None,
            f"attachment {attachment} was made outside this stack, from an account it does not name",
        )
        yield Link(
            peer, TRANSIT, own_network(f"transit gateway of {name}"), resource.urn, f"transit gateway accepter {name}"
        )
    elif kind == VPN_CONNECTION:
        far = placed(
            f"customer gateway {value(props, 'customerGatewayId')}",
            None,
            "a VPN's far end is a network outside every account the pack can place",
        )
        yield Link(own_network(f"gateway of {name}"), TUNNEL, far, resource.urn, f"VPN connection {name}")
        selectors = far_end_selectors(r for key in FAR_END_SELECTORS for r in ranges_at(props, key))
        yield from internet_through_tunnel(
            f"the networks on VPN connection {name}", resource.urn, f"VPN connection {name}", selectors
        )
    elif kind == VPN_CONNECTION_ROUTE:
        yield from _vpn_route(resource, placement)


def _vpn_route(resource: Any, placement: Placement) -> Iterable[Link]:
    """A static route of a VPN connection: the far end answers for `destinationCidrBlock`
    (pulumi_aws/ec2/vpn_connection_route.py; https://docs.aws.amazon.com/vpn/latest/s2svpn/VPNRoutingTypes.html).
    On a connection made outside the stack it is that VPN's path too, placed nowhere."""
    props, name = resource.props, name_of(resource)
    connection = value(props, "vpnConnectionId")
    routes = [("static route", r) for r in ranges_at(props, "destinationCidrBlock")]
    if not is_stacks(resource, "vpnConnectionId", connection, placement):
        far = placed(
            f"VPN connection {connection}", None, "a VPN connection made outside this stack ends outside every account"
        )
        yield Link(
            own_network(f"VPN connection {connection}"), TUNNEL, far, resource.urn, f"VPN connection route {name}"
        )
    networks = f"the networks on VPN connection {connection}"
    yield from internet_through_tunnel(networks, resource.urn, f"VPN connection route {name}", routes)


def _routes_to_vpn(resource: Any, placement: Placement) -> Iterable[Link]:
    """A route table's routes whose target is a virtual private gateway (a `vgw-` id, or the stack's VpnGateway): the
    VPC sends those destinations to the VPN's far end, which answers for them. Route propagation from the gateway
    (VpnGatewayRoutePropagation, `propagatingVgws`) carries no range of its own: it installs the connections' static
    routes, read above, and what the far end advertises over BGP, which no export shows (as on OCI, the VPN itself is
    refused across sides)."""
    kind, props, name = resource.resource_type, resource.props, name_of(resource)
    if kind == ROUTE:
        entries, keys, where = [(props, "gatewayId")], ROUTE_DESTINATIONS, "gatewayId"
    elif kind in ROUTE_TABLES:
        entries, keys, where = (
            [(r, "gatewayId") for r in as_list(value(props, "routes")) if hasattr(r, "get")],
            INLINE_DESTINATIONS,
            "",  # by id only
        )
    else:
        return
    for entry, key in entries:
        gateway = value(entry, key)
        # An inline route is matched by the gateway's id: the engine's dependencies cover the whole `routes` list,
        # not one entry (during preview a new gateway's id is unknown: the final state's run judges it).
        if not (
            str(gateway or "").startswith("vgw-") or names_kind(resource, where, gateway, placement, (VPN_GATEWAY,))
        ):
            continue
        ranges = [("route destination", r) for k in keys for r in ranges_at(entry, k)]
        networks = f"the networks routed by {name}"
        yield from internet_through_tunnel(networks, resource.urn, f"route {name} to VPN gateway {gateway}", ranges)


def _service_party(resource: Any, placement: Placement, services: Sequence[Any]) -> Party:
    props = resource.props
    service = value(props, "serviceName")
    for key in ("resourceConfigurationArn", "serviceNetworkArn"):  # VPC Lattice endpoints name an ARN
        arn = value(props, key)
        if arn:
            return placed(str(arn), account_of_arn(arn) if not is_stacks(resource, key, arn, placement) else OWN, "")
    if not isinstance(service, str):
        return placed("endpoint service", None, "the endpoint names no service the pack can read")
    if refers_to_any(resource, "serviceName", services, keys=("serviceName", "id")):
        return Party(service, OWN, ENDPOINT_SERVICE)
    if CUSTOMER_SERVICE.match(service):
        return placed(
            service,
            None,
            f"endpoint service {service} is not published by this stack, and its name carries no owner account",
            ENDPOINT_SERVICE,
        )
    if AWS_SERVICE.match(service):
        return cloud_service(service)
    return placed(service, None, f"endpoint service {service} is neither AWS's nor this stack's", ENDPOINT_SERVICE)


def _principal_account(principal: str) -> str | None:
    if principal.strip() == "*":
        return ANY
    account = account_of_arn(principal)
    if account is None and re.fullmatch(r"\d{12}", principal.strip()):
        account = principal.strip()
    return canonical_account(account) if account else None


def _endpoints(resource: Any, placement: Placement, resources: Sequence[Any]) -> Iterable[Link]:
    kind, props, name = resource.resource_type, resource.props, name_of(resource)
    if kind == VPC_ENDPOINT:
        target = _service_party(resource, placement, of_type_once(resources, ENDPOINT_SERVICE_KIND))
        yield Link(_vpc(resource), ENDPOINT, target, resource.urn, f"VPC endpoint {name}")
    elif kind in (ENDPOINT_SERVICE_KIND, ENDPOINT_PRINCIPAL):
        # Who may connect an interface endpoint to the stack's service (AllowedPrincipals).
        key = "allowedPrincipals" if kind == ENDPOINT_SERVICE_KIND else "principalArn"
        service = Party(f"endpoint service {name}", OWN, ENDPOINT_SERVICE)
        for principal in as_list(value(props, key)):
            account = _principal_account(str(principal))
            source = placed(f"networks of {principal}", account, f"principal {principal!r} names no account")
            yield Link(source, ENDPOINT, service, resource.urn, f"endpoint service {name} allowing {principal}")
    elif kind == ENDPOINT_ACCEPTER:
        endpoint = value(props, "vpcEndpointId")
        if not is_stacks(resource, "vpcEndpointId", endpoint, placement):
            source = placed(
                f"endpoint {endpoint}",
                None,
                f"endpoint {endpoint} was created outside this stack, by an account it does not name",
            )
            service = Party(f"endpoint service {value(props, 'vpcEndpointServiceId')}", OWN, ENDPOINT_SERVICE)
            yield Link(source, ENDPOINT, service, resource.urn, f"endpoint connection accepter {name}")


# --- the internet ---------------------------------------------------------------------------------


def _open_groups(resources: Sequence[Any]) -> dict[str, list[str]]:
    """Security group URN -> the internet-open rules on it (inline or as rule resources), as shown."""
    groups = of_type(resources, *FIREWALLS)
    found: dict[str, list[str]] = {}
    for resource in resources:
        rules = network._internet_rules(resource)
        if not rules:
            continue
        owners = (
            [resource]
            if resource.resource_type in FIREWALLS
            else targets_of(resource, "securityGroupId", groups, keys=("id",))
        )
        for group in owners:
            for protocol, ports, source in rules:
                shown = "all ports" if protocol == "-1" or ports is None else f"{protocol} {ports[0]}-{ports[1]}"
                found.setdefault(group.urn, []).append(f"{shown} from {source} ({name_of(resource)})")
    return found


def _node_groups(node: Any, props: Any, groups: Sequence[Any]) -> list[Any]:
    return [
        g
        for g in groups
        for key in ("vpcSecurityGroupIds", "securityGroups", "securityGroupIds")
        if refers_to(node, key, g, keys=("id", "name"))
        or (props is not node.props and {str(v) for v in as_list(props.get(key))} & {g.props.get("id")} - {None})
    ]


def _public_nodes(resources: Sequence[Any]) -> Iterable[tuple[Any, Any, str]]:
    """(node, the props that carry its security groups, how it gets a public address)."""
    addresses = of_type(resources, *PUBLIC_ADDRESSES)
    bound = {
        (a.props.get("instance") or a.props.get("instanceId"))
        for a in addresses
        if a.props.get("instance") or a.props.get("instanceId")
    }
    for resource in resources:
        props = resource.props
        if resource.resource_type == network.INSTANCE:
            # From the addresses' index, once per instance (not a scan of every address per instance).
            eip = props.get("id") in bound or any(
                any_referrer(resource, addresses, key, keys=("id",)) for key in ("instance", "instanceId")
            )
            if truthy(props.get("associatePublicIpAddress")) or eip:
                yield resource, props, "an elastic IP" if eip else "a public IP"
        elif resource.resource_type == network.LAUNCH_TEMPLATE:
            for interface in as_list(props.get("networkInterfaces")):
                if hasattr(interface, "get") and truthy(interface.get("associatePublicIpAddress")):
                    yield resource, interface, "a public IP"


def _internet(resources: Sequence[Any]) -> Iterable[Link]:
    public_lbs = [lb for lb in of_type(resources, *LOAD_BALANCERS) if not truthy(lb.props.get("internal"))]
    for listener in of_type(resources, *LISTENERS):
        if refers_to_any(listener, "loadBalancerArn", public_lbs, keys=("arn", "id")):
            port = listener.props.get("port")
            port = int(port) if isinstance(port, (int, float)) else port
            ports = f"{listener.props.get('protocol') or 'HTTP'} {port}"
            door = Party(f"listener {name_of(listener)}", OWN, FRONT_DOOR)
            yield Link(INTERNET, EXPOSES, door, listener.urn, f"listener {name_of(listener)}", ports)
    open_rules = _open_groups(resources)
    groups = [g for g in of_type(resources, *FIREWALLS) if g.urn in open_rules]
    for node, props, address in _public_nodes(resources):
        for group in _node_groups(node, props, groups):
            for rule in open_rules[group.urn]:
                yield Link(
                    INTERNET,
                    EXPOSES,
                    Party(f"{name_of(node)} ({address})", OWN, NODE),
                    node.urn,
                    f"{name_of(node)}: {address} and security group {name_of(group)}",
                    rule,
                )


def _group_references(resource: Any) -> Iterable[Link]:
    """A rule that admits (or reaches) another account's security group: that account's machines reach this
    stack's network (or the other way round), whatever peering carries it."""
    props, name = resource.props, name_of(resource)
    found = [(k, value(props, k)) for k in GROUP_REFERENCES.get(resource.resource_type, ())]
    if resource.resource_type in FIREWALLS:  # inline ingress/egress blocks name groups in `securityGroups`
        found += [
            (f"{direction}.securityGroups", group)
            for direction in ("ingress", "egress")
            for block in as_list(props.get(direction))
            if hasattr(block, "get")
            for group in as_list(block.get("securityGroups"))
        ]
    for key, group in found:
        if isinstance(group, str) and (match := GROUP_IN_ACCOUNT.match(group.strip())):
            other = Party(f"security group {group}", canonical_account(match.group(1)))
            yield Link(other, PEERING, own_network(f"security group rule {name}"), resource.urn, f"{name} ({key})")


def _one(resource: Any, placement: Placement) -> Iterable[Link]:
    yield from _group_references(resource)
    yield from _peering(resource, placement)
    yield from _transit(resource, placement)
    yield from _routes_to_vpn(resource, placement)
    stack = placement.stack
    yield from _endpoints(resource, placement, stack.resources if stack is not None else [resource])


def links(resources: Sequence[Any], placement: Placement) -> Iterable[Link]:
    """The links AWS's kinds make: networks to other networks and services, and the internet to what it
    reaches (a listener's load balancer, a node's security groups and their rules: read across the stack)."""
    yield from each(resources, placement, _one)
    yield from _internet(resources)
