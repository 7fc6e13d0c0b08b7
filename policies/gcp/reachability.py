"""GCP's reader of the reachability view (policies/reachability.py): which of its resources link VPC networks
across projects (network peering, shared VPC service projects, Private Service Connect endpoints into another
project's service attachment, service attachments other projects may connect to, VPN tunnels and
interconnect attachments, Network Connectivity Center spokes) and what the internet reaches (an external
load balancer's HTTP(S) proxy, its front door; a forwarding rule that puts backends on the internet without
one; a node with an external IP that a firewall rule opens to the internet). Self links carry their project
(`projects/<id>/...`), which places each end."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..access import ANY, OWN, Party, Placement
from ..common import as_list, truthy
from ..links import of_type_once, refers_to_any
from ..reachability import (
    ENDPOINT,
    EXPOSES,
    FRONT_DOOR,
    INTERNET,
    NODE,
    PEERING,
    SHARED_NETWORK,
    TRANSIT,
    TUNNEL,
    Link,
    cloud_service,
    each,
    far_end_selectors,
    internet_through_tunnel,
    is_stacks,
    own_network,
    placed,
    ranges_at,
    value,
)
from ..readers import is_public_range, items_at, name_of
from . import readers

NETWORK_PEERING = "gcp:compute/networkPeering:NetworkPeering"
SHARED_VPC_SERVICE = "gcp:compute/sharedVPCServiceProject:SharedVPCServiceProject"
SHARED_VPC_HOST = "gcp:compute/sharedVPCHostProject:SharedVPCHostProject"
FORWARDING_RULE = "gcp:compute/forwardingRule:ForwardingRule"
GLOBAL_FORWARDING_RULE = readers.FORWARDING_RULE
SERVICE_ATTACHMENT = "gcp:compute/serviceAttachment:ServiceAttachment"
VPN_TUNNEL = "gcp:compute/vPNTunnel:VPNTunnel"
INTERCONNECT_ATTACHMENT = "gcp:compute/interconnectAttachment:InterconnectAttachment"
SPOKE = "gcp:networkconnectivity/spoke:Spoke"
ROUTE = "gcp:compute/route:Route"
ROUTER_PEER = "gcp:compute/routerPeer:RouterPeer"
SERVICE_NETWORKING = "gcp:servicenetworking/connection:Connection"
PROXIES = ("gcp:compute/targetHttpsProxy:TargetHttpsProxy", "gcp:compute/targetHttpProxy:TargetHttpProxy")

PROJECT = re.compile(r"(?:^|/)projects/([a-z][a-z0-9-]{4,28}[a-z0-9])(?:/|$)")
# PSC endpoints for Google APIs target a bundle, not a producer (https://cloud.google.com/vpc/docs/configure-private-service-connect-apis).
GOOGLE_API_BUNDLES = frozenset({"all-apis", "vpc-sc"})


def project_of(self_link: Any) -> str | None:
    """`projects/acme-serve/global/networks/n` (or its https URL) -> acme-serve."""
    match = PROJECT.search(str(self_link or ""))
    return match.group(1) if match else None


def _placed_link(resource: Any, prop: str, link: Any, placement: Placement, what: str) -> Party:
    project = project_of(link)
    if project is not None:
        return Party(str(link), project)
    if is_stacks(resource, prop, link, placement):
        return Party(str(link or what), OWN)
    return placed(str(link or what), None, f"{what} {link!r} names no project the pack can read")


def _network(resource: Any, key: str = "network") -> Party:
    return own_network(f"network {value(resource.props, key) or name_of(resource)}")


def _peerings(resource: Any, placement: Placement) -> Iterable[Link]:
    kind, props, name = resource.resource_type, resource.props, name_of(resource)
    if kind == NETWORK_PEERING:
        peer = _placed_link(resource, "peerNetwork", value(props, "peerNetwork"), placement, "peer network")
        yield Link(_network(resource), PEERING, peer, resource.urn, f"network peering {name}")
    elif kind == SHARED_VPC_SERVICE:
        # The service project's machines run in the host project's networks (its subnets are shared with it).
        host = value(props, "hostProject")
        service = value(props, "serviceProject")
        source = placed(f"project {service}", str(service) if service else None, "the service project is unnamed")
        target = placed(f"networks of host project {host}", str(host) if host else None, "the host project is unnamed")
        yield Link(source, SHARED_NETWORK, target, resource.urn, f"shared VPC service project {name}")
    elif kind == SERVICE_NETWORKING:
        service = cloud_service(str(value(props, "service") or "servicenetworking.googleapis.com"))
        yield Link(_network(resource), PEERING, service, resource.urn, f"private services access {name}")
    elif kind == VPN_TUNNEL:
        gateway = value(props, "peerGcpGateway")
        if gateway:
            peer = _placed_link(resource, "peerGcpGateway", gateway, placement, "peer VPN gateway")
            yield Link(own_network(f"VPN tunnel {name}"), PEERING, peer, resource.urn, f"VPN tunnel {name}")
        else:
            far = placed("the tunnel's far end", None, "a VPN to an external gateway ends outside every project")
            yield Link(own_network(f"VPN tunnel {name}"), TUNNEL, far, resource.urn, f"VPN tunnel {name}")
        # The far end's traffic selectors (pulumi_gcp/compute/vpn_tunnel.py `remote_traffic_selectors`), whichever
        # gateway it is; `localTrafficSelectors` are the stack's own side.
        selectors = far_end_selectors(ranges_at(props, "remoteTrafficSelectors"))
        networks = f"the networks on VPN tunnel {name}"
        yield from internet_through_tunnel(networks, resource.urn, f"VPN tunnel {name}", selectors)
    elif kind == INTERCONNECT_ATTACHMENT:
        far = placed("the attachment's far end", None, "an interconnect ends in a network outside every project")
        yield Link(own_network(f"router {value(props, 'router')}"), TUNNEL, far, resource.urn, f"interconnect {name}")
    elif kind == SPOKE:
        hub = _placed_link(resource, "hub", value(props, "hub"), placement, "hub")
        yield Link(
            own_network(f"spoke {name}"), TRANSIT, hub, resource.urn, f"Network Connectivity Center spoke {name}"
        )


def _psc_target(resource: Any, placement: Placement) -> Party | None:
    """The service a Private Service Connect endpoint reaches (None when the rule is no PSC endpoint)."""
    target = value(resource.props, "target")
    if isinstance(target, str) and target in GOOGLE_API_BUNDLES:
        return cloud_service(f"Google APIs ({target})")
    if isinstance(target, str) and "/serviceAttachments/" in target:
        return _placed_link(resource, "target", target, placement, "service attachment")
    return None


def _endpoints(resource: Any, placement: Placement) -> Iterable[Link]:
    kind, props, name = resource.resource_type, resource.props, name_of(resource)
    if kind in (FORWARDING_RULE, GLOBAL_FORWARDING_RULE):
        service = _psc_target(resource, placement)
        if service is not None:
            yield Link(_network(resource), ENDPOINT, service, resource.urn, f"Private Service Connect endpoint {name}")
    elif kind == SERVICE_ATTACHMENT:
        attachment = Party(f"service attachment {name}", OWN)
        if str(value(props, "connectionPreference") or "") == "ACCEPT_AUTOMATIC":
            yield Link(
                Party("every project's networks", ANY), ENDPOINT, attachment, resource.urn, f"{name} (ACCEPT_AUTOMATIC)"
            )
            return
        for consumer in items_at(props, "consumerAcceptLists"):
            project = consumer.get("projectIdOrNum")
            network = consumer.get("networkUrl")
            where = project_of(network) or (str(project) if project and not str(project).isdigit() else None)
            source = placed(
                f"consumer {project or network}", where, f"consumer {project or network!r} names no project id"
            )
            yield Link(
                source, ENDPOINT, attachment, resource.urn, f"service attachment {name} accepting {project or network}"
            )


def _far_end_ranges(resource: Any) -> Iterable[Link]:
    """Ranges a VPN's (or interconnect's) far end answers for, beyond the private ranges, let the internet in through
    it: a route whose next hop is a VPN tunnel (`dest_range`, pulumi_gcp/compute/route.py; a classic VPN's routes,
    https://cloud.google.com/network-connectivity/docs/vpn/concepts/choosing-networks-routing), and a BGP peer's
    custom learned ranges, which the Cloud Router installs as if the peer advertised them (`custom_learned_ip_ranges`,
    pulumi_gcp/compute/router_peer.py; https://cloud.google.com/network-connectivity/docs/router/how-to/configure-custom-learned-routes).
    A peer's `advertisedIpRanges` are the stack's own side; what the peer advertises over BGP no export shows (as on
    OCI, the tunnel itself is refused across sides)."""
    kind, props, name = resource.resource_type, resource.props, name_of(resource)
    if kind == ROUTE:
        tunnel = value(props, "nextHopVpnTunnel")
        # Only a tunnel goes there: a reference the engine records (its id unknown during preview) is one too.
        if tunnel or (getattr(resource, "property_dependencies", None) or {}).get("nextHopVpnTunnel"):
            ranges = [("route destination", r) for r in ranges_at(props, "destRange")]
            networks = f"the networks of {value(props, 'network') or name}"
            yield from internet_through_tunnel(networks, resource.urn, f"route {name} to VPN tunnel {tunnel}", ranges)
    elif kind == ROUTER_PEER:
        ranges = [
            ("custom learned range", r) for i in items_at(props, "customLearnedIpRanges") for r in ranges_at(i, "range")
        ]
        networks = f"the networks on router {value(props, 'router') or name}"
        yield from internet_through_tunnel(networks, resource.urn, f"BGP peer {name}", ranges)


def _one(resource: Any, placement: Placement) -> Iterable[Link]:
    yield from _peerings(resource, placement)
    yield from _endpoints(resource, placement)
    yield from _far_end_ranges(resource)


# --- the internet ---------------------------------------------------------------------------------


def _front_door(rule: Any, resources: Sequence[Any]) -> bool:
    """A forwarding rule whose target is an HTTP(S) proxy: TLS, the URL map and Cloud Armor apply there."""
    target = str(rule.props.get("target") or "")
    if "/targetHttpsProxies/" in target or "/targetHttpProxies/" in target:
        return True
    return refers_to_any(rule, "target", of_type_once(resources, *PROXIES), keys=("id", "selfLink", "name"))


def _exposed_by_rules(resources: Sequence[Any], placement: Placement) -> Iterable[Link]:
    for rule in resources:
        if rule.resource_type not in (FORWARDING_RULE, GLOBAL_FORWARDING_RULE) or _psc_target(rule, placement):
            continue
        # EXTERNAL is the API's default scheme for both kinds (compute.forwardingRules.insert).
        if str(rule.props.get("loadBalancingScheme") or "EXTERNAL") not in readers.EXTERNAL:
            continue
        ports = str(
            rule.props.get("portRange") or ",".join(str(p) for p in as_list(rule.props.get("ports"))) or "all ports"
        )
        if rule.resource_type == GLOBAL_FORWARDING_RULE and _front_door(rule, resources):
            door = Party(f"forwarding rule {name_of(rule)}", OWN, FRONT_DOOR)
            yield Link(INTERNET, EXPOSES, door, rule.urn, f"forwarding rule {name_of(rule)}", ports)
        else:
            backends = Party(f"the backends of {name_of(rule)}", OWN, NODE)
            what = f"external forwarding rule {name_of(rule)} (no HTTPS proxy in front)"
            yield Link(INTERNET, EXPOSES, backends, rule.urn, what, ports)


def _applies(firewall: Any, node_props: Any) -> bool:
    """A firewall rule applies to a node: no target tags or service accounts (every instance), or a shared tag."""
    targets = {str(t) for t in as_list(firewall.props.get("targetTags"))}
    if not targets and not as_list(firewall.props.get("targetServiceAccounts")):
        return True
    return bool(targets & {str(t) for t in as_list(node_props.get("tags"))})


def _exposed_nodes(resources: Sequence[Any]) -> Iterable[Link]:
    open_rules = [
        (f, readers.internet_rules(f, is_public_range)) for f in resources if f.resource_type == readers.FIREWALL
    ]
    open_rules = [(f, rules) for f, rules in open_rules if rules]
    for node in resources:
        if node.resource_type not in readers.NODE_KINDS:
            continue
        public = any(
            as_list(i.get(key))
            for i in items_at(node.props, "networkInterfaces")
            for key in ("accessConfigs", "ipv6AccessConfigs")
        )
        if not public:
            continue
        for firewall, rules in open_rules:
            if truthy(firewall.props.get("disabled")) or not _applies(firewall, node.props):
                continue
            for shown, source in rules:
                yield Link(
                    INTERNET,
                    EXPOSES,
                    Party(f"{name_of(node)} (an external IP)", OWN, NODE),
                    node.urn,
                    f"{name_of(node)}: an external IP and firewall {name_of(firewall)}",
                    f"{shown} from {source}",
                )


def links(resources: Sequence[Any], placement: Placement) -> Iterable[Link]:
    """The links GCP's kinds make: networks to other networks and services, and the internet to what it reaches."""
    yield from each(resources, placement, _one)
    yield from _exposed_by_rules(resources, placement)
    yield from _exposed_nodes(resources)
