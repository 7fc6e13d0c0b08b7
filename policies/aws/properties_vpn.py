"""AWS's VPN kinds, property by property (policies/schema.py "vpn"): judged by the named pack rules (as traced by
`python -m accelstack.engine.schema_report --trace`), or inert with the reason. A site-to-site VPN is refused across
sides whatever it carries (its far end is in no account); the ranges its far end answers for are judged besides
(policies/aws/reachability.py), the rest is how the tunnel runs."""

from __future__ import annotations

NAMING = "inert: naming and display only"
REGION = "allowed-regions"
TAGS = "workload-tags"
PATHS = "internet-reaches-only-the-front-door, no-network-path-across-sides"
TUNNEL = "inert: how the tunnel runs (IKE, crypto, dead-peer detection, rekeying, logging): the VPN itself is refused"
SECRET = "inert: the tunnel's pre-shared key (a secret output): it authenticates the far end, it places nothing"
OWN_GATEWAY = "inert: which of the stack's gateways the VPN ends on: the VPN is refused whatever it ends on"
BGP = "inert: BGP settings; what the far end advertises over BGP no export shows (as on OCI, the VPN itself is refused)"
ATTACH = "inert: which VPC a virtual private gateway joins: a gateway alone links nothing (its VPNs are refused, its routes judged)"


def _tunnel(number: int) -> dict[str, str]:
    """The per-tunnel options of a VPN connection (tunnel1*, tunnel2*: pulumi_aws/ec2/vpn_connection.py)."""
    options = [
        "DpdTimeoutAction",
        "DpdTimeoutSeconds",
        "EnableTunnelLifecycleControl",
        "IkeVersions",
        "LogOptions",
        "Phase1DhGroupNumbers",
        "Phase1EncryptionAlgorithms",
        "Phase1IntegrityAlgorithms",
        "Phase1LifetimeSeconds",
        "Phase2DhGroupNumbers",
        "Phase2EncryptionAlgorithms",
        "Phase2IntegrityAlgorithms",
        "Phase2LifetimeSeconds",
        "RekeyFuzzPercentage",
        "RekeyMarginTimeSeconds",
        "ReplayWindowSize",
        "StartupAction",
    ]
    found = {f"tunnel{number}{option}": TUNNEL for option in options}
    inside = (
        "inert: the tunnel's inside addresses (a /30 or /126 for the BGP session), no range the far end answers for"
    )
    found |= {f"tunnel{number}InsideCidr": inside, f"tunnel{number}InsideIpv6Cidr": inside}
    return found | {f"tunnel{number}PresharedKey": SECRET}


PROPERTIES: dict[str, dict[str, str]] = {
    "aws:ec2/vpnConnection:VpnConnection": {
        "customerGatewayId": PATHS,
        # The customer gateway's side (the far end's ranges); `remote*` are the AWS side's, the stack's own.
        "localIpv4NetworkCidr": PATHS,
        "localIpv6NetworkCidr": PATHS,
        "remoteIpv4NetworkCidr": "inert: the AWS side's range (the stack's own networks), no far end's",
        "remoteIpv6NetworkCidr": "inert: the AWS side's range (the stack's own networks), no far end's",
        "staticRoutesOnly": "inert: static routes (judged as VpnConnectionRoute) or BGP (what the far end advertises, "
        "which no export shows; the VPN itself is refused)",
        "transitGatewayId": OWN_GATEWAY,
        "vpnGatewayId": OWN_GATEWAY,
        "vpnConcentratorId": OWN_GATEWAY,
        "transportTransitGatewayAttachmentId": "inert: the Direct Connect attachment a private-IP VPN rides on: the "
        "VPN is refused whatever carries it",
        "outsideIpAddressType": "inert: public or private outside addresses of the tunnel endpoints: the far end is "
        "refused either way",
        "enableAcceleration": "inert: Global Accelerator on the tunnel endpoints: performance only",
        "presharedKeyStorage": "inert: where AWS keeps the pre-shared keys (Standard or Secrets Manager)",
        "tunnelBandwidth": "inert: the tunnels' bandwidth tier: performance only",
        "tunnelInsideIpVersion": TUNNEL,
        "type": "inert: the only VPN type, ipsec.1",
        "region": REGION,
        "tags": TAGS,
        **_tunnel(1),
        **_tunnel(2),
    },
    "aws:ec2/vpnConnectionRoute:VpnConnectionRoute": {
        "destinationCidrBlock": PATHS,
        "vpnConnectionId": PATHS,
        "region": REGION,
    },
    "aws:ec2/vpnGateway:VpnGateway": {
        "amazonSideAsn": BGP,
        "availabilityZone": "inert: placement only",
        "vpcId": ATTACH,
        "region": REGION,
        "tags": TAGS,
    },
    "aws:ec2/vpnGatewayAttachment:VpnGatewayAttachment": {
        "vpcId": ATTACH,
        "vpnGatewayId": ATTACH,
        "region": REGION,
    },
    # Propagation carries no range of its own: it installs the connections' static routes (judged as
    # VpnConnectionRoute) and what the far end advertises over BGP, which no export shows.
    "aws:ec2/vpnGatewayRoutePropagation:VpnGatewayRoutePropagation": {
        "routeTableId": "inert: which route table gets the gateway's routes: the ranges are judged where they are given",
        "vpnGatewayId": "inert: whose routes propagate: the ranges are judged where they are given",
        "region": REGION,
    },
    "aws:ec2/customerGateway:CustomerGateway": {
        "ipAddress": "inert: the far end's outside (IKE) address, no range it answers for",
        "bgpAsn": BGP,
        "bgpAsnExtended": BGP,
        "certificateArn": "inert: the certificate that authenticates the far end: it places nothing",
        "deviceName": NAMING,
        "type": "inert: the only customer gateway type, ipsec.1",
        "region": REGION,
        "tags": TAGS,
    },
}

UNJUDGED: dict[str, dict[str, str]] = {}
