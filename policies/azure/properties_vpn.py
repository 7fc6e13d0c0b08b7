"""Azure's VPN kinds, property by property (policies/schema.py "vpn"): judged by the named pack rules (as traced by
`python -m accelstack.engine.schema_report --trace`), inert with the reason, or unjudged with why it matters. A
gateway connection to a site is refused across sides whatever it carries (its far end is in no subscription); the
ranges the far end answers for are judged besides (policies/azure/reachability.py), the rest is how the tunnel runs."""

from __future__ import annotations

NAMING = "inert: naming and display only"
REGION = "allowed-regions"
TAGS = "workload-tags"
ARM_ID = "cross-account-read-only-final"
PATHS = "internet-reaches-only-the-front-door, no-network-path-across-sides"
TUNNEL = (
    "inert: how the tunnel runs (IKE, crypto, dead-peer detection, NAT of addresses): the connection itself is refused"
)
SECRET = "inert: a shared key or authorization key (a secret): it authenticates the far end, it places nothing"
BGP = "inert: BGP settings; what the far end advertises over BGP no export shows (as on OCI, the VPN itself is refused)"
SIZING = "inert: sizing, SKU or availability of the gateway: performance only"

PROPERTIES: dict[str, dict[str, str]] = {
    "azure-native:network:VirtualNetworkGatewayConnection": {
        "connectionType": PATHS,
        "virtualNetworkGateway1": PATHS,
        # The site inline (its address prefixes) and the far end's side of each traffic selector policy.
        "localNetworkGateway2": PATHS,
        "trafficSelectorPolicies": PATHS,
        "usePolicyBasedTrafficSelectors": "inert: policy-based selectors are built from the local network gateway's "
        "prefixes (judged) and the VNet's own",
        "peer": "inert: the ExpressRoute circuit an ExpressRoute connection joins: refused across sides whatever it names",
        "authorizationKey": SECRET,
        "sharedKey": SECRET,
        "connectionMode": TUNNEL,
        "connectionProtocol": TUNNEL,
        "dpdTimeoutSeconds": TUNNEL,
        "ipsecPolicies": TUNNEL,
        "egressNatRules": TUNNEL,
        "ingressNatRules": TUNNEL,
        "useLocalAzureIpAddress": TUNNEL,
        "enableBgp": BGP,
        "gatewayCustomBgpIpAddresses": BGP,
        "enablePrivateLinkFastPath": "inert: an ExpressRoute data-path optimisation: performance only",
        "expressRouteGatewayBypass": "inert: an ExpressRoute data-path optimisation: performance only",
        "routingWeight": "inert: route preference between the gateway's connections",
        "id": ARM_ID,
        "location": REGION,
        "tags": TAGS,
        "resourceGroupName": NAMING,
        "virtualNetworkGatewayConnectionName": NAMING,
    },
    "azure-native:network:LocalNetworkGateway": {
        "localNetworkAddressSpace": PATHS,
        "gatewayIpAddress": "inert: the site's outside (IKE) address, no range it answers for",
        "fqdn": "inert: the site's outside (IKE) address by name, no range it answers for",
        "bgpSettings": BGP,
        "id": ARM_ID,
        "location": REGION,
        "tags": TAGS,
        "resourceGroupName": NAMING,
        "localNetworkGatewayName": NAMING,
    },
    "azure-native:network:VirtualNetworkGateway": {
        # Forced tunnelling: 0.0.0.0/0 goes to this site.
        "gatewayDefaultSite": PATHS,
        "customRoutes": "inert: the stack's own prefixes advertised to point-to-site clients, no far end's",
        "allowRemoteVnetTraffic": "inert: transit between the gateway's own connections, each judged itself",
        "allowVirtualWanTraffic": "inert: transit between the gateway's own connections, each judged itself",
        "bgpSettings": BGP,
        "enableBgp": BGP,
        "enableBgpRouteTranslationForNat": BGP,
        "natRules": TUNNEL,
        "disableIPSecReplayProtection": TUNNEL,
        "virtualNetworkGatewayPolicyGroups": TUNNEL,
        "ipConfigurations": "inert: the gateway's own subnet and public (IKE) address",
        "enablePrivateIpAddress": "inert: the gateway's own private address for ExpressRoute-carried tunnels",
        "enableDnsForwarding": "inert: DNS forwarding for point-to-site clients",
        "activeActive": SIZING,
        "adminState": "inert: the gateway's administrative state (failover testing)",
        "autoScaleConfiguration": SIZING,
        "resiliencyModel": SIZING,
        "sku": SIZING,
        "vpnGatewayGeneration": SIZING,
        "vpnType": "inert: route- or policy-based: the ranges are judged on the connection and the site either way",
        "gatewayType": "inert: VPN or ExpressRoute: the connections on it are judged either way",
        "extendedLocation": "inert: placement only",
        "vNetExtendedLocationResourceId": "inert: placement only",
        "identity": ARM_ID,
        "id": ARM_ID,
        "location": REGION,
        "tags": TAGS,
        "resourceGroupName": NAMING,
        "virtualNetworkGatewayName": NAMING,
    },
}

UNJUDGED: dict[str, dict[str, str]] = {
    "azure-native:network:VirtualNetworkGatewayConnection": {
        "virtualNetworkGateway2": "network path: the VNet-to-VNet peer gateway (read by no-network-path-across-sides "
        "when connectionType is Vnet2Vnet, placed by its subscription; the probe's IPsec connection does not, so "
        "untraced)",
    },
    "azure-native:network:VirtualNetworkGateway": {
        "vpnClientConfiguration": "network exposure: point-to-site clients (internet hosts holding a certificate or "
        "an Entra ID token) reach the VNet through the gateway",
    },
}
