"""GCP's VPN kinds, property by property (policies/schema.py "vpn"): judged by the named pack rules (as traced by
`python -m accelstack.engine.schema_report --trace`), or inert with the reason. A tunnel to an external gateway is
refused across sides whatever it carries (its far end is in no project); the ranges the far end answers for are
judged besides (policies/gcp/reachability.py), the rest is how the tunnel runs."""

from __future__ import annotations

NAMING = "inert: naming and display only"
PROJECT = "pinned-project"
REGION = "allowed-regions"
TAGS = "workload-tags"
PATHS = "internet-reaches-only-the-front-door, no-network-path-across-sides"
TUNNEL = "inert: how the tunnel runs (IKE version, ciphers): the tunnel itself is judged"
SECRET = "inert: a pre-shared or MD5 key (a secret): it authenticates the far end, it places nothing"
OWN_GATEWAY = "inert: which of the stack's gateways or routers the tunnel uses: it is judged whatever it ends on"
FAR_GATEWAY = "inert: the external gateway a tunnel ends on: a tunnel to any external gateway is refused"
REMOVAL = "inert: on removal from the stack, delete or abandon the cloud resource (Pulumi-side setting)"
MANAGER_TAGS = "inert: resource manager tags bound at creation (no grant of the packs names them)"
BGP = "inert: the BGP session's settings; what the peer advertises over BGP no export shows (the tunnel is judged)"

PROPERTIES: dict[str, dict[str, str]] = {
    "gcp:compute/vPNTunnel:VPNTunnel": {
        "peerGcpGateway": PATHS,
        "remoteTrafficSelectors": PATHS,
        "localTrafficSelectors": "inert: the stack's own side of the tunnel, no far end's range",
        "peerExternalGateway": FAR_GATEWAY,
        "peerExternalGatewayInterface": FAR_GATEWAY,
        "peerIp": FAR_GATEWAY,
        "router": OWN_GATEWAY,
        "targetVpnGateway": OWN_GATEWAY,
        "vpnGateway": OWN_GATEWAY,
        "vpnGatewayInterface": OWN_GATEWAY,
        "sharedSecret": SECRET,
        "sharedSecretWo": SECRET,
        "sharedSecretWoVersion": SECRET,
        "cipherSuite": TUNNEL,
        "ikeVersion": TUNNEL,
        "deletionPolicy": REMOVAL,
        "params": MANAGER_TAGS,
        "description": NAMING,
        "name": NAMING,
        "labels": TAGS,
        "project": PROJECT,
        "region": REGION,
    },
    "gcp:compute/haVpnGateway:HaVpnGateway": {
        "network": "inert: the stack's network the gateway serves: a gateway alone links nothing (its tunnels are judged)",
        "vpnInterfaces": "inert: the gateway's own outside (IKE) addresses",
        "gatewayIpVersion": TUNNEL,
        "stackType": TUNNEL,
        "deletionPolicy": REMOVAL,
        "params": MANAGER_TAGS,
        "description": NAMING,
        "name": NAMING,
        "labels": TAGS,
        "project": PROJECT,
        "region": REGION,
    },
    "gcp:compute/vPNGateway:VPNGateway": {
        "network": "inert: the stack's network the gateway serves: a gateway alone links nothing (its tunnels are judged)",
        "deletionPolicy": REMOVAL,
        "params": MANAGER_TAGS,
        "description": NAMING,
        "name": NAMING,
        "project": PROJECT,
        "region": REGION,
    },
    "gcp:compute/externalVpnGateway:ExternalVpnGateway": {
        "interfaces": "inert: the far end's outside (IKE) addresses, no range it answers for",
        "redundancyType": "inert: how many interfaces the far end has",
        "deletionPolicy": REMOVAL,
        "params": MANAGER_TAGS,
        "description": NAMING,
        "name": NAMING,
        "labels": TAGS,
        "project": PROJECT,
    },
    "gcp:compute/routerPeer:RouterPeer": {
        # Ranges the router installs as if the peer advertised them: the far end answers for them.
        "customLearnedIpRanges": PATHS,
        "router": PATHS,
        "customLearnedRoutePriority": "inert: the preference of the custom learned ranges (judged themselves)",
        "zeroCustomLearnedRoutePriority": "inert: the preference of the custom learned ranges (judged themselves)",
        "advertisedIpRanges": "inert: the stack's own ranges advertised to the peer, no far end's",
        "advertisedGroups": "inert: the stack's own ranges advertised to the peer, no far end's",
        "advertiseMode": "inert: the stack's own ranges advertised to the peer, no far end's",
        "advertisedRoutePriority": "inert: the preference of the stack's own advertised ranges",
        "zeroAdvertisedRoutePriority": "inert: the preference of the stack's own advertised ranges",
        "exportPolicies": "inert: which of the stack's own ranges are advertised to the peer",
        "importPolicies": BGP,
        "interface": "inert: which tunnel or attachment the session runs over: that link is judged itself",
        "routerApplianceInstance": "inert: a router appliance VM of the stack as the peer (its spoke is judged)",
        "peerAsn": BGP,
        "peerIpAddress": BGP,
        "peerIpv4NexthopAddress": BGP,
        "peerIpv6NexthopAddress": BGP,
        "ipAddress": BGP,
        "ipv4NexthopAddress": BGP,
        "ipv6NexthopAddress": BGP,
        "enable": BGP,
        "enableIpv4": BGP,
        "enableIpv6": BGP,
        "bfd": BGP,
        "md5AuthenticationKey": SECRET,
        "deletionPolicy": REMOVAL,
        "name": NAMING,
        "project": PROJECT,
        "region": REGION,
    },
}

UNJUDGED: dict[str, dict[str, str]] = {}
