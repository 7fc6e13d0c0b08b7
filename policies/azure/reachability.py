"""Azure's reader of the reachability view (policies/reachability.py): which of its resources link virtual
networks across subscriptions (VNet peering, inline or as its own resource; Virtual WAN hub connections;
gateway connections; private endpoints into another subscription's resource; Private Link services other
subscriptions may see or are auto-approved for) and what the internet reaches (an internet-facing
Application Gateway's listeners; a node with a public IP whose network security group admits the internet).
ARM ids carry their subscription (`/subscriptions/<id>/...`), which places each end."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..access import ANY, OWN, Party, Placement
from ..common import as_list, canonical_account
from ..links import targets_of
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
    each,
    far_end_selectors,
    internet_through_tunnel,
    is_stacks,
    own_network,
    placed,
    ranges_at,
    value,
)
from ..readers import get, items_at, name_of
from . import nsg as nsg_rules
from . import readers
from .readers import _kind, subscription_of

VNET = "azure-native:network:VirtualNetwork"
PEERING_KIND = "azure-native:network:VirtualNetworkPeering"
HUB_CONNECTION = "azure-native:network:HubVirtualNetworkConnection"
GATEWAY_CONNECTION = "azure-native:network:VirtualNetworkGatewayConnection"
PRIVATE_ENDPOINT = "azure-native:network:PrivateEndpoint"
PRIVATE_LINK_SERVICE = "azure-native:network:PrivateLinkService"
NSG = "azure-native:network:NetworkSecurityGroup"
SECURITY_RULE = "azure-native:network:SecurityRule"
LOCAL_NETWORK_GATEWAY = "azure-native:network:LocalNetworkGateway"
VIRTUAL_NETWORK_GATEWAY = "azure-native:network:VirtualNetworkGateway"
ROUTE = "azure-native:network:Route"
ROUTE_TABLE = "azure-native:network:RouteTable"
# The far end's address space: the prefixes Azure routes to a site through the tunnel
# (pulumi_azure_native/network/local_network_gateway.py `local_network_address_space`;
# https://learn.microsoft.com/azure/vpn-gateway/vpn-gateway-about-vpn-gateway-settings#lng).
SITE_PREFIXES = ("localNetworkAddressSpace", "addressPrefixes")


def _placed_id(resource: Any, prop: str, resource_id: Any, placement: Placement, what: str) -> Party:
    """An ARM id's end: its subscription, this stack's when the id comes from one of its resources, else unplaced."""
    subscription = subscription_of(resource_id)
    if subscription is not None:
        return Party(str(resource_id), canonical_account(subscription))
    if is_stacks(resource, prop, resource_id, placement):
        return Party(str(resource_id or what), OWN)
    return placed(str(resource_id or what), None, f"{what} {resource_id!r} names no subscription the pack can read")


def _peerings(resource: Any, placement: Placement) -> Iterable[Link]:
    kind, props, name = _kind(resource), resource.props, name_of(resource)
    if kind == PEERING_KIND:
        vnet = own_network(f"virtual network {value(props, 'virtualNetworkName')}")
        remote = get(props, "remoteVirtualNetwork", "id")
        peer = _placed_id(resource, "remoteVirtualNetwork", remote, placement, "remote virtual network")
        yield Link(vnet, PEERING, peer, resource.urn, f"virtual network peering {name}")
    elif kind == VNET:
        for peering in items_at(props, "virtualNetworkPeerings"):
            remote = get(peering, "remoteVirtualNetwork", "id")
            peer = _placed_id(resource, "virtualNetworkPeerings", remote, placement, "remote virtual network")
            what = f"virtual network {name} peering {peering.get('name') or ''}".rstrip()
            yield Link(own_network(f"virtual network {name}"), PEERING, peer, resource.urn, what)
    elif kind == HUB_CONNECTION:
        remote = get(props, "remoteVirtualNetwork", "id")
        peer = _placed_id(resource, "remoteVirtualNetwork", remote, placement, "remote virtual network")
        hub = own_network(f"virtual hub {value(props, 'virtualHubName')}")
        yield Link(peer, TRANSIT, hub, resource.urn, f"hub virtual network connection {name}")
    elif kind == GATEWAY_CONNECTION:
        gateway = own_network(f"gateway {get(props, 'virtualNetworkGateway1', 'id') or name}")
        if str(value(props, "connectionType") or "") == "Vnet2Vnet":
            remote = get(props, "virtualNetworkGateway2", "id")
            peer = _placed_id(resource, "virtualNetworkGateway2", remote, placement, "remote gateway")
            yield Link(gateway, PEERING, peer, resource.urn, f"VNet-to-VNet connection {name}")
        else:  # IPsec to a local network gateway, ExpressRoute: the far end is no subscription
            far = placed("the connection's far end", None, "a VPN or ExpressRoute's far end is outside every account")
            yield Link(gateway, TUNNEL, far, resource.urn, f"gateway connection {name}")
            # The local network gateway given inline, and the far end's side of each traffic selector policy
            # (pulumi_azure_native/network/_inputs.py TrafficSelectorPolicyArgs `remote_address_ranges`).
            site = [
                ("local network address prefix", r) for r in ranges_at(props, "localNetworkGateway2", *SITE_PREFIXES)
            ]
            selectors = [
                r for p in items_at(props, "trafficSelectorPolicies") for r in ranges_at(p, "remoteAddressRanges")
            ]
            ranges = site + far_end_selectors(selectors)
            what = f"gateway connection {name}"
            yield from internet_through_tunnel(f"the networks on {gateway.shown()}", resource.urn, what, ranges)


def _endpoints(resource: Any, placement: Placement) -> Iterable[Link]:
    kind, props, name = _kind(resource), resource.props, name_of(resource)
    if kind == PRIVATE_ENDPOINT:
        # The endpoint's NIC lives in `subnet`, which may be another subscription's network (an endpoint the
        # stack places in the other side's VNet is that VNet's path in): placed by its id like any far end.
        subnet_id = get(props, "subnet", "id")
        subnet = (
            _placed_id(resource, "subnet", subnet_id, placement, "subnet")
            if subnet_id is not None
            else own_network(f"subnet of private endpoint {name}")
        )
        for key in ("privateLinkServiceConnections", "manualPrivateLinkServiceConnections"):
            for connection in items_at(props, key):
                target = connection.get("privateLinkServiceId")
                service = _placed_id(resource, key, target, placement, "private link resource")
                yield Link(subnet, ENDPOINT, service, resource.urn, f"private endpoint {name}")
    elif kind == PRIVATE_LINK_SERVICE:
        service = Party(f"private link service {name}", OWN, ENDPOINT_SERVICE)
        for key in ("visibility", "autoApproval"):
            for subscription in as_list(get(props, key, "subscriptions")):
                account = ANY if str(subscription).strip() == "*" else canonical_account(str(subscription).strip())
                source = Party(f"networks of subscription {subscription}", account)
                yield Link(source, ENDPOINT, service, resource.urn, f"private link service {name} ({key})")


def _far_end_ranges(resource: Any) -> Iterable[Link]:
    """What a site's far end answers for beyond the private ranges lets the internet in through the tunnel: a local
    network gateway's address prefixes; a VPN gateway's default site (forced tunnelling sends 0.0.0.0/0 to that site:
    `gateway_default_site`, https://learn.microsoft.com/azure/vpn-gateway/vpn-gateway-forced-tunneling-rm); a route
    whose next hop is the VPN gateway (https://learn.microsoft.com/azure/virtual-network/virtual-networks-udr-overview).
    A gateway's `customRoutes` are the stack's own prefixes advertised to point-to-site clients, no far end's."""
    kind, props, name = _kind(resource), resource.props, name_of(resource)
    if kind == LOCAL_NETWORK_GATEWAY:
        ranges = [("address prefix", r) for r in ranges_at(props, *SITE_PREFIXES)]
        networks = f"the networks of the gateways connected to local network gateway {name}"
        yield from internet_through_tunnel(networks, resource.urn, f"local network gateway {name}", ranges)
    elif kind == VIRTUAL_NETWORK_GATEWAY:
        site = get(props, "gatewayDefaultSite", "id")
        if site is not None:
            ranges = [(f"default site {site} (forced tunnelling) routes", "0.0.0.0/0")]
            networks = f"the networks on virtual network gateway {name}"
            yield from internet_through_tunnel(networks, resource.urn, f"virtual network gateway {name}", ranges)
    elif kind in (ROUTE, ROUTE_TABLE):
        routes = [props] if kind == ROUTE else items_at(props, "routes")
        for route in routes:
            if str(value(route, "nextHopType") or "").lower() != "virtualnetworkgateway":
                continue
            ranges = [("route to the VPN gateway", r) for r in ranges_at(route, "addressPrefix")]
            networks = f"the networks on route table {value(props, 'routeTableName') or name}"
            yield from internet_through_tunnel(networks, resource.urn, f"route {value(route, 'name') or name}", ranges)


def _one(resource: Any, placement: Placement) -> Iterable[Link]:
    yield from _peerings(resource, placement)
    yield from _endpoints(resource, placement)
    yield from _far_end_ranges(resource)


# --- the internet ---------------------------------------------------------------------------------


def _matches(reference: Any, candidate: Any, name_key: str) -> bool:
    """An ARM id naming a stack resource: by its id, else by its name (the id's last segment)."""
    if not isinstance(reference, str) or not reference:
        return False
    if reference == candidate.props.get("id"):
        return True
    last = reference.rstrip("/").rsplit("/", 1)[-1]
    return last in {candidate.props.get(name_key), name_of(candidate)}


def _open_nsgs(resources: Sequence[Any]) -> dict[str, list[str]]:
    """NSG URN -> its internet-open inbound Allow rules (inline or as SecurityRule resources) that no earlier Deny
    shadows (policies/azure/nsg.py), as shown."""
    nsgs = [r for r in resources if _kind(r) == NSG]
    rules_of: dict[str, list[Any]] = {}
    for rule in (r for r in resources if _kind(r) == SECURITY_RULE):
        for owner in targets_of(rule, "networkSecurityGroupName", nsgs, keys=("networkSecurityGroupName", "id")):
            rules_of.setdefault(owner.urn, []).append(rule)
    found: dict[str, list[str]] = {}
    for nsg in nsgs:
        for protocol, ports, source in nsg_rules.open_rules(nsg, rules_of.get(nsg.urn, [])):
            found.setdefault(nsg.urn, []).append(f"{protocol} {', '.join(ports) or 'all ports'} from {source}")
    return found


def _nic_nsgs(config: Any, resources: Sequence[Any]) -> list[Any]:
    """The NSGs guarding one NIC configuration: its own, and its subnets'."""
    nsgs = [r for r in resources if _kind(r) == NSG]
    subnets = [r for r in resources if _kind(r) == readers.SUBNET]
    refs = [get(config, "networkSecurityGroup", "id")]
    for ip in items_at(config, "ipConfigurations"):
        subnet_id = get(ip, "subnet", "id")
        refs += [get(s.props, "networkSecurityGroup", "id") for s in subnets if _matches(subnet_id, s, "subnetName")]
    return [n for n in nsgs if any(_matches(ref, n, "networkSecurityGroupName") for ref in refs)]


def _public_configs(resource: Any) -> list[Any]:
    """The NIC configurations of a node that give it a public IP."""
    kind, props = _kind(resource), resource.props
    if kind == readers.SCALE_SET:
        configs = items_at(get(props, "virtualMachineProfile", "networkProfile"), "networkInterfaceConfigurations")
    elif kind == readers.VM:
        configs = items_at(props.get("networkProfile"), "networkInterfaceConfigurations")
    elif kind == readers.NIC:
        configs = [props]
    else:
        return []
    return [
        c
        for c in configs
        if any(
            ip.get("publicIPAddressConfiguration") is not None or ip.get("publicIPAddress") is not None
            for ip in items_at(c, "ipConfigurations")
        )
    ]


def _internet(resources: Sequence[Any]) -> Iterable[Link]:
    for gateway in resources:
        if _kind(gateway) == readers.APP_GATEWAY and readers.internet_facing(gateway):
            for listener in items_at(gateway.props, "httpListeners"):
                door = Party(f"{name_of(gateway)} listener {listener.get('name')}", OWN, FRONT_DOOR)
                yield Link(INTERNET, EXPOSES, door, gateway.urn, f"application gateway {name_of(gateway)}")
    open_rules = _open_nsgs(resources)
    for node in resources:
        for config in _public_configs(node):
            for nsg in _nic_nsgs(config, resources):
                for rule in open_rules.get(nsg.urn, []):
                    yield Link(
                        INTERNET,
                        EXPOSES,
                        Party(f"{name_of(node)} (a public IP)", OWN, NODE),
                        node.urn,
                        f"{name_of(node)}: a public IP and network security group {name_of(nsg)}",
                        rule,
                    )


def links(resources: Sequence[Any], placement: Placement) -> Iterable[Link]:
    """The links Azure's kinds make: VNets to other VNets and services, and the internet to what it reaches."""
    yield from each(resources, placement, _one)
    yield from _internet(resources)
