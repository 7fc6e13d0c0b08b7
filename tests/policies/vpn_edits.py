"""Site-to-site VPNs added to each cloud's shipped training stack, their far end given address ranges in every
spelling the cloud has (shared by tests/policies/test_vpn_far_end_ranges.py and the five-cloud red-team suite).

A spelling is a route (the stack sends the range to the far end: a static route, a route through the gateway or
tunnel, an address space or learned range the cloud installs as routes) or a selector (the far end's traffic
selector). A match-all selector (0.0.0.0/0, ::/0) narrows nothing, every cloud's default, so only a route carries a
default route through the tunnel (policies/reachability.py `far_end_selectors`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from red_team_edits import Doc, Edit, add, both, entry

ROUTE, SELECTOR = "route", "selector"

# --- AWS: a virtual private gateway, a customer gateway and a static-routed connection ----------------------------
A_VGW = ("aws-training-vgw", "aws:ec2/vpnGateway:VpnGateway")
A_CGW = ("aws-training-onprem", "aws:ec2/customerGateway:CustomerGateway")
A_VPN = ("aws-training-vpn", "aws:ec2/vpnConnection:VpnConnection")
A_VPC = ("aws-training-net-vpc", "aws:ec2/vpc:Vpc")
A_ROUTES = ("aws-training-net-cluster", "aws:ec2/routeTable:RouteTable")


def _v6(cidr: str) -> bool:
    return ":" in cidr


def aws_vpn(selectors: list[str] | None = None) -> Edit:
    """The gateways and a connection (`selectors`: the customer side's CIDRs, one per address family)."""
    connection: dict[str, Any] = {
        "customerGatewayId": "aws-training-onprem-id",
        "vpnGatewayId": "aws-training-vgw-id",
        "type": "ipsec.1",
        "staticRoutesOnly": True,
    }
    for cidr in selectors or []:
        connection["localIpv6NetworkCidr" if _v6(cidr) else "localIpv4NetworkCidr"] = cidr
    return both(
        add(A_VGW[1], A_VGW[0], {"vpcId": "vpc", "amazonSideAsn": "64512"}, depends={"vpcId": A_VPC}),
        add(A_CGW[1], A_CGW[0], {"bgpAsn": "65010", "ipAddress": "198.51.100.7", "type": "ipsec.1"}),
        add(A_VPN[1], A_VPN[0], connection, depends={"customerGatewayId": A_CGW, "vpnGatewayId": A_VGW}),
    )


def aws_static_routes(ranges: list[str]) -> Edit:
    routes = [
        add(
            "aws:ec2/vpnConnectionRoute:VpnConnectionRoute",
            f"aws-training-vpn-route-{i}",
            {"destinationCidrBlock": cidr, "vpnConnectionId": "aws-training-vpn-id"},
            depends={"vpnConnectionId": A_VPN},
        )
        for i, cidr in enumerate(ranges)
    ]
    return both(aws_vpn(), *routes)


def aws_routes_to_gateway(ranges: list[str]) -> Edit:
    routes = [
        add(
            "aws:ec2/route:Route",
            f"aws-training-to-onprem-{i}",
            {
                "routeTableId": "rtb",
                "gatewayId": "aws-training-vgw-id",
                ("destinationIpv6CidrBlock" if _v6(cidr) else "destinationCidrBlock"): cidr,
            },
            depends={"routeTableId": A_ROUTES, "gatewayId": A_VGW},
        )
        for i, cidr in enumerate(ranges)
    ]
    return both(aws_vpn(), *routes)


def aws_route_table_routes(ranges: list[str]) -> Edit:
    """A route table's inline routes to the gateway, beside its own default route to an internet gateway (a route
    to the internet gateway is no VPN's: it must not be read as one)."""
    routes: list[dict[str, Any]] = [{"cidrBlock": "0.0.0.0/0", "gatewayId": "igw-0123456789abcdef0"}]
    routes += [
        {("ipv6CidrBlock" if _v6(cidr) else "cidrBlock"): cidr, "gatewayId": "aws-training-vgw-id"} for cidr in ranges
    ]
    table = add(
        "aws:ec2/routeTable:RouteTable",
        "aws-training-onprem-routes",
        {"vpcId": "vpc", "routes": routes},
        depends={"vpcId": A_VPC, "routes": A_VGW},
    )
    return both(aws_vpn(), table)


def aws_selectors(ranges: list[str]) -> Edit:
    return aws_vpn(ranges)


# --- Azure: a route-based VPN gateway, a local network gateway (the site) and an IPsec connection -----------------
Z_VNET = ("azure-training-net-vnet", "azure-native:network:VirtualNetwork")
Z_GATEWAY = ("azure-training-vpn-gateway", "azure-native:network:VirtualNetworkGateway")
Z_SITE = ("azure-training-onprem", "azure-native:network:LocalNetworkGateway")
Z_CONNECTION = ("azure-training-vpn", "azure-native:network:VirtualNetworkGatewayConnection")
SITE_PREFIXES = ["192.168.50.0/24"]  # the site's own (private) network, where a spelling gives the ranges elsewhere


def _group(doc: Doc) -> str:
    """`/subscriptions/<training>/resourceGroups/<rg>` of the stack's VNet."""
    return str(entry(doc, *Z_VNET)["outputs"]["id"]).split("/providers/")[0]


def azure_vpn(site_prefixes: list[str], connection_extra: dict[str, Any] | None = None) -> Edit:
    def apply(doc: Doc) -> None:
        group = _group(doc)
        network = f"{group}/providers/Microsoft.Network"
        common = {"resourceGroupName": group.rsplit("/", 1)[-1], "location": "eastus"}
        gateway = {
            **common,
            "virtualNetworkGatewayName": Z_GATEWAY[0],
            "gatewayType": "Vpn",
            "vpnType": "RouteBased",
            "sku": {"name": "VpnGw2AZ", "tier": "VpnGw2AZ"},
            "ipConfigurations": [
                {
                    "name": "default",
                    "subnet": {"id": f"{network}/virtualNetworks/{Z_VNET[0]}/subnets/GatewaySubnet"},
                    "publicIPAddress": {"id": f"{network}/publicIPAddresses/azure-training-vpn-ip"},
                }
            ],
        }
        site = {
            **common,
            "localNetworkGatewayName": Z_SITE[0],
            "gatewayIpAddress": "198.51.100.7",
            "localNetworkAddressSpace": {"addressPrefixes": site_prefixes},
        }
        connection = {
            **common,
            "virtualNetworkGatewayConnectionName": Z_CONNECTION[0],
            "connectionType": "IPsec",
            "virtualNetworkGateway1": {"id": f"{network}/virtualNetworkGateways/{Z_GATEWAY[0]}"},
            "localNetworkGateway2": {"id": f"{network}/localNetworkGateways/{Z_SITE[0]}"},
            "sharedKey": "not-a-real-key",
            **(connection_extra or {}),
        }
        add(Z_GATEWAY[1], Z_GATEWAY[0], gateway)(doc)
        add(Z_SITE[1], Z_SITE[0], site)(doc)
        add(Z_CONNECTION[1], Z_CONNECTION[0], connection, depends={"virtualNetworkGateway1": Z_GATEWAY})(doc)

    return apply


def azure_site_prefixes(ranges: list[str]) -> Edit:
    return azure_vpn(ranges)


def azure_selectors(ranges: list[str]) -> Edit:
    policy = {"localAddressRanges": ["10.0.0.0/16"], "remoteAddressRanges": ranges}
    return azure_vpn(SITE_PREFIXES, {"trafficSelectorPolicies": [policy], "usePolicyBasedTrafficSelectors": True})


def azure_routes_to_gateway(ranges: list[str]) -> Edit:
    routes = [
        add(
            "azure-native:network:Route",
            f"azure-training-to-onprem-{i}",
            {
                "resourceGroupName": "azure-training-rg",
                "routeTableName": "azure-training-nodes-routes",
                "routeName": f"to-onprem-{i}",
                "addressPrefix": prefix,
                "nextHopType": "VirtualNetworkGateway",
            },
        )
        for i, prefix in enumerate(ranges)
    ]
    return both(azure_vpn(SITE_PREFIXES), *routes)


# --- GCP: a classic VPN (routes through the tunnel), or an HA VPN with a Cloud Router BGP peer --------------------
G_REGION = "projects/acme-train/regions/us-central1"
G_NETWORK = "projects/acme-train/global/networks/gcp-training-net"
G_TUNNEL = ("gcp-training-vpn", "gcp:compute/vPNTunnel:VPNTunnel")


def gcp_classic_vpn(remote_selectors: list[str]) -> Edit:
    """A classic VPN gateway and a tunnel to a peer address (`remote_selectors`: 0.0.0.0/0 for a route-based one,
    the ranges GCP requires of it)."""
    tunnel = {
        "name": G_TUNNEL[0],
        "project": "acme-train",
        "region": "us-central1",
        "targetVpnGateway": f"{G_REGION}/targetVpnGateways/gcp-training-vpn-gateway",
        "peerIp": "198.51.100.7",
        "sharedSecret": "not-a-real-secret",
        "ikeVersion": 2,
        "localTrafficSelectors": ["0.0.0.0/0"] if remote_selectors == ["0.0.0.0/0"] else ["10.0.0.0/16"],
        "remoteTrafficSelectors": remote_selectors,
    }
    gateway = {"name": "gcp-training-vpn-gateway", "project": "acme-train", "region": "us-central1"}
    return both(
        add("gcp:compute/vPNGateway:VPNGateway", "gcp-training-vpn-gateway", {**gateway, "network": G_NETWORK}),
        add(G_TUNNEL[1], G_TUNNEL[0], tunnel),
    )


def gcp_routes_through_tunnel(ranges: list[str]) -> Edit:
    routes = [
        add(
            "gcp:compute/route:Route",
            f"gcp-training-to-onprem-{i}",
            {
                "name": f"gcp-training-to-onprem-{i}",
                "project": "acme-train",
                "network": G_NETWORK,
                "destRange": cidr,
                "priority": 1000,
                "nextHopVpnTunnel": f"{G_REGION}/vpnTunnels/{G_TUNNEL[0]}",
            },
            depends={"nextHopVpnTunnel": G_TUNNEL},
        )
        for i, cidr in enumerate(ranges)
    ]
    return both(gcp_classic_vpn(["0.0.0.0/0"]), *routes)


def gcp_selectors(ranges: list[str]) -> Edit:
    return gcp_classic_vpn(ranges)


def gcp_learned_ranges(ranges: list[str]) -> Edit:
    """An HA VPN tunnel to an external gateway on the stack's Cloud Router, whose BGP peer gets custom learned
    ranges (routes the router installs as if the peer advertised them)."""
    common = {"project": "acme-train", "region": "us-central1"}
    tunnel = {
        **common,
        "name": G_TUNNEL[0],
        "vpnGateway": f"{G_REGION}/vpnGateways/gcp-training-ha-vpn",
        "vpnGatewayInterface": 0,
        "peerExternalGateway": "projects/acme-train/global/externalVpnGateways/gcp-training-onprem",
        "peerExternalGatewayInterface": 0,
        "router": "gcp-training-router",
        "sharedSecret": "not-a-real-secret",
    }
    peer = {
        **common,
        "name": "gcp-training-onprem-peer",
        "router": "gcp-training-router",
        "interface": "gcp-training-vpn-if",
        "peerAsn": 65010,
        "peerIpAddress": "169.254.0.2",
        "customLearnedIpRanges": [{"range": cidr} for cidr in ranges],
    }
    onprem = {
        "name": "gcp-training-onprem",
        "project": "acme-train",
        "redundancyType": "SINGLE_IP_INTERNALLY_REDUNDANT",
    }
    return both(
        add("gcp:compute/haVpnGateway:HaVpnGateway", "gcp-training-ha-vpn", {**common, "network": G_NETWORK}),
        add(
            "gcp:compute/externalVpnGateway:ExternalVpnGateway",
            "gcp-training-onprem",
            {**onprem, "interfaces": [{"id": 0, "ipAddress": "198.51.100.7"}]},
        ),
        add(G_TUNNEL[1], G_TUNNEL[0], tunnel),
        add("gcp:compute/routerPeer:RouterPeer", "gcp-training-onprem-peer", peer),
    )


# --- OCI: a DRG joined to the VCN, and an IPSec connection with static routes --------------------------------------
O_TRAIN = "ocid1.compartment.oc1..aaaaaaaaacmetrain"
O_VCN = ("oci-training-vcn", "oci:Core/vcn:Vcn")
O_DRG = ("oci-training-drg", "oci:Core/drg:Drg")


def oci_vpn(routes: list[str]) -> Edit:
    """A DRG of the training stack, joined to its VCN, with an IPSec connection to a customer-premises network."""
    return both(
        add("oci:Core/drg:Drg", O_DRG[0], {"compartmentId": O_TRAIN, "displayName": "training"}),
        add(
            "oci:Core/drgAttachment:DrgAttachment",
            "oci-training-vcn-on-drg",
            {"drgId": "oci-training-drg-id", "vcnId": "vcn"},
            depends={"drgId": O_DRG, "vcnId": O_VCN},
        ),
        add(
            "oci:Core/ipsec:Ipsec",
            "oci-training-vpn",
            {
                "compartmentId": O_TRAIN,
                "cpeId": "ocid1.cpe.oc1.iad.aaaaaaaaonpremises",
                "drgId": "oci-training-drg-id",
                "staticRoutes": routes,
            },
            depends={"drgId": O_DRG},
        ),
    )


@dataclass(frozen=True)
class Spelling:
    """One way a cloud gives a VPN's far end ranges: `build(ranges)` adds the VPN (named `vpn`) to `stack`, and
    each range appears in a verdict as `label <range>`."""

    cloud: str
    name: str
    stack: str
    form: str  # ROUTE or SELECTOR
    label: str
    build: Callable[[list[str]], Edit]
    vpn: str

    @property
    def id(self) -> str:
        return f"{self.cloud}-{self.name}"


SPELLINGS = (
    Spelling("aws", "static-route", "aws-training", ROUTE, "static route", aws_static_routes, A_VPN[0]),
    Spelling("aws", "route-to-vgw", "aws-training", ROUTE, "route destination", aws_routes_to_gateway, A_VPN[0]),
    Spelling("aws", "route-table", "aws-training", ROUTE, "route destination", aws_route_table_routes, A_VPN[0]),
    Spelling("aws", "customer-side", "aws-training", SELECTOR, "far-end traffic selector", aws_selectors, A_VPN[0]),
    Spelling("azure", "site-prefixes", "azure-training", ROUTE, "address prefix", azure_site_prefixes, Z_CONNECTION[0]),
    Spelling(
        "azure",
        "route-to-gateway",
        "azure-training",
        ROUTE,
        "route to the VPN gateway",
        azure_routes_to_gateway,
        Z_CONNECTION[0],
    ),
    Spelling(
        "azure", "selector", "azure-training", SELECTOR, "far-end traffic selector", azure_selectors, Z_CONNECTION[0]
    ),
    Spelling(
        "gcp", "route-via-tunnel", "gcp-training", ROUTE, "route destination", gcp_routes_through_tunnel, G_TUNNEL[0]
    ),
    Spelling("gcp", "learned-range", "gcp-training", ROUTE, "custom learned range", gcp_learned_ranges, G_TUNNEL[0]),
    Spelling("gcp", "selector", "gcp-training", SELECTOR, "far-end traffic selector", gcp_selectors, G_TUNNEL[0]),
    Spelling("oci", "static-route", "oci-training", ROUTE, "static route", oci_vpn, "oci-training-vpn"),
)
