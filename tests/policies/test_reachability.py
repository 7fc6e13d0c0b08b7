"""The reachability view (policies/reachability.py) through both packs, on the shipped stacks' exports: each
class of network path to the other side (peering, endpoints into the other side, shared VPC, a peer the
pack cannot place) draws `no-network-path-across-sides`, and the internet reaching a node directly (a public
address and a rule that admits it) draws `internet-reaches-only-the-front-door`, on every cloud, in at least
two spellings each; legitimate changes (a same-side peer, endpoints to the cloud's own services) draw nothing.
Everything runs through the analyzer path the CLI uses (`policy_verdicts`)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from test_policy_real_mutations import entry, previewed, sides

from accelstack.engine.policy_runner import policy_verdicts

Doc = dict[str, Any]
AWS_TRAINING, AWS_SERVING = "aws-training", "aws-serving"
AZURE_TRAINING, GCP_TRAINING = "azure-training", "gcp-training"
AWS_TRAIN, AWS_SERVE = "111111111111", "222222222222"
AZ_TRAIN, AZ_SERVE = "3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c", "7e6d5c4b-3a29-4817-b6f5-e4d3c2b1a098"
PATH, EXPOSED = "no-network-path-across-sides", "internet-reaches-only-the-front-door"
VPC = ("aws-training-net-vpc", "aws:ec2/vpc:Vpc")
AZ_VNET = ("azure-training-net-vnet", "azure-native:network:VirtualNetwork")
AZ_NODES_NSG = ("azure-training-net-nodes-nsg", "azure-native:network:NetworkSecurityGroup")
AZ_NODES = ("azure-training-nodes", "azure-native:compute:VirtualMachineScaleSet")
GCP_NET = ("gcp-training-net", "gcp:compute/network:Network")
GCP_TEMPLATE = ("gcp-training-node", "gcp:compute/instanceTemplate:InstanceTemplate")


def add_resource(
    doc: Doc, stack: str, type_token: str, name: str, inputs: dict[str, Any], *, depends: dict[str, str]
) -> str:
    """Add a resource as the program registers it: its package's explicit provider, the stack as parent, and
    the engine's property dependencies (`depends`: property -> URN of the resource it came from)."""
    resources = doc["deployment"]["resources"]
    package = type_token.split(":", 1)[0]
    provider = next(r["provider"] for r in resources if r["type"].startswith(f"{package}:") and r.get("provider"))
    urn = f"urn:pulumi:{stack}::accelstack::{type_token}::{name}"
    resources.append(
        {
            "urn": urn,
            "custom": True,
            "id": f"{name}-id",
            "type": type_token,
            "inputs": copy.deepcopy(inputs),
            "outputs": {**copy.deepcopy(inputs), "id": f"{name}-id"},
            "parent": resources[0]["urn"],
            "provider": provider,
            "dependencies": sorted(set(depends.values())),
            "propertyDependencies": {prop: [target] for prop, target in depends.items()},
        }
    )
    return urn


def arm(subscription: str, rest: str) -> str:
    return f"/subscriptions/{subscription}/resourceGroups/rg/providers/{rest}"


def urn_of(doc: Doc, target: tuple[str, str]) -> str:
    return str(entry(doc, *target)["urn"])


@dataclass(frozen=True)
class Case:
    id: str
    stack: str
    apply: Callable[[Doc], str]  # edits the export; returns the URN a verdict must name ("" for legitimate)
    policy: str = ""  # empty: a legitimate change, which must draw no verdict at all


def adding(stack: str, type_token: str, name: str, inputs: dict[str, Any], depends: dict[str, Any] | None = None):
    """Add one resource; `depends` maps a property to the (name, type) of the stack resource it came from."""

    def apply(doc: Doc) -> str:
        deps = {prop: urn_of(doc, target) for prop, target in (depends or {}).items()}
        return add_resource(doc, stack, type_token, name, inputs, depends=deps)

    return apply


def editing(target: tuple[str, str], change: Callable[[dict[str, Any]], None]) -> Callable[[Doc], str]:
    def apply(doc: Doc) -> str:
        resource = entry(doc, *target)
        for props in sides(resource):
            change(props)
        return str(resource["urn"])

    return apply


def both(*steps: Callable[[Doc], str]) -> Callable[[Doc], str]:
    """Several edits; the verdict names the resource the first one returns."""

    def apply(doc: Doc) -> str:
        urns = [step(doc) for step in steps]
        return urns[0]

    return apply


# --- AWS ------------------------------------------------------------------------------------------

PEERING = "aws:ec2/vpcPeeringConnection:VpcPeeringConnection"
ACCEPTER = "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter"
ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
SG = "aws:ec2/securityGroup:SecurityGroup"
INSTANCE = "aws:ec2/instance:Instance"
OPEN_SSH = {"protocol": "tcp", "fromPort": 22, "toPort": 22, "cidrBlocks": ["0.0.0.0/0"]}


def aws(name: str, type_token: str, inputs: dict[str, Any], vpc: bool = True) -> Callable[[Doc], str]:
    return adding(AWS_TRAINING, type_token, name, inputs, {"vpcId": VPC} if vpc else None)


def aws_public_instance(eip: bool) -> Callable[[Doc], str]:
    group = adding(
        AWS_TRAINING, SG, "bastion", {"vpcId": "vpc-1", "ingress": [] if eip else [OPEN_SSH]}, {"vpcId": VPC}
    )
    node_inputs = {"ami": "ami-1", "instanceType": "t3.micro", "vpcSecurityGroupIds": ["bastion-id"]}
    if not eip:
        node_inputs["associatePublicIpAddress"] = True
    node = adding(AWS_TRAINING, INSTANCE, "jump", node_inputs, {"vpcSecurityGroupIds": ("bastion", SG)})
    steps = [node]
    if eip:
        rule = {
            "securityGroupId": "bastion-id",
            "ipProtocol": "tcp",
            "fromPort": 22,
            "toPort": 22,
            "cidrIpv4": "0.0.0.0/0",
        }
        steps.append(
            adding(
                AWS_TRAINING,
                "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
                "ssh",
                rule,
                {"securityGroupId": ("bastion", SG)},
            )
        )
        steps.append(
            adding(
                AWS_TRAINING,
                "aws:ec2/eip:Eip",
                "jump-ip",
                {"domain": "vpc", "instance": "jump-id"},
                {"instance": ("jump", INSTANCE)},
            )
        )
    return lambda doc: (group(doc), *[s(doc) for s in steps])[1]


CUSTOMER_SERVICE = "com.amazonaws.vpce.us-east-1.vpce-svc-0123456789abcdef0"
AWS_CASES = [
    Case(
        "aws-peering-to-serving",
        AWS_TRAINING,
        aws("to-serve", PEERING, {"vpcId": "v", "peerVpcId": "vpc-0serve", "peerOwnerId": AWS_SERVE}),
        PATH,
    ),
    Case(
        "aws-accepter-from-serving",
        AWS_TRAINING,
        aws(
            "from-serve",
            ACCEPTER,
            {"vpcPeeringConnectionId": "pcx-0a1b", "autoAccept": True, "peerOwnerId": AWS_SERVE},
            vpc=False,
        ),
        PATH,
    ),
    Case(
        "aws-tgw-peering-to-serving",
        AWS_TRAINING,
        aws(
            "tgw-peer",
            "aws:ec2transitgateway/peeringAttachment:PeeringAttachment",
            {
                "transitGatewayId": "tgw-1",
                "peerTransitGatewayId": "tgw-2",
                "peerAccountId": AWS_SERVE,
                "peerRegion": "us-east-1",
            },
            vpc=False,
        ),
        PATH,
    ),
    Case(
        "aws-endpoint-service-allows-serving",
        AWS_TRAINING,
        aws(
            "publish",
            "aws:ec2/vpcEndpointService:VpcEndpointService",
            {
                "acceptanceRequired": False,
                "networkLoadBalancerArns": [f"arn:aws:elasticloadbalancing:us-east-1:{AWS_TRAIN}:loadbalancer/net/x/1"],
                "allowedPrincipals": [f"arn:aws:iam::{AWS_SERVE}:root"],
            },
            vpc=False,
        ),
        PATH,
    ),
    Case(
        "aws-endpoint-service-principal-resource",
        AWS_TRAINING,
        aws(
            "serve-principal",
            "aws:ec2/vpcEndpointServiceAllowedPrinciple:VpcEndpointServiceAllowedPrinciple",
            {"vpcEndpointServiceId": "vpce-svc-1", "principalArn": f"arn:aws:iam::{AWS_SERVE}:role/replicas"},
            vpc=False,
        ),
        PATH,
    ),
    Case(
        "aws-endpoint-service-allows-everyone",
        AWS_TRAINING,
        aws(
            "publish-all",
            "aws:ec2/vpcEndpointService:VpcEndpointService",
            {
                "acceptanceRequired": False,
                "gatewayLoadBalancerArns": ["arn:aws:elasticloadbalancing:us-east-1:111111111111:loadbalancer/gwy/x/1"],
                "allowedPrincipals": ["*"],
            },
            vpc=False,
        ),
        PATH,
    ),
    # Unplaceable peers fail closed.
    Case(
        "aws-endpoint-to-unplaced-service",
        AWS_TRAINING,
        aws("other-svc", ENDPOINT, {"vpcId": "v", "serviceName": CUSTOMER_SERVICE, "vpcEndpointType": "Interface"}),
        PATH,
    ),
    Case(
        "aws-gwlb-endpoint-to-unplaced-service",
        AWS_TRAINING,
        aws(
            "other-gwlb",
            ENDPOINT,
            {"vpcId": "v", "serviceName": CUSTOMER_SERVICE, "vpcEndpointType": "GatewayLoadBalancer"},
        ),
        PATH,
    ),
    Case(
        "aws-accepter-unplaced",
        AWS_TRAINING,
        aws("from-someone", ACCEPTER, {"vpcPeeringConnectionId": "pcx-0c1d", "autoAccept": True}, vpc=False),
        PATH,
    ),
    Case(
        "aws-tgw-attachment-shared-gateway",
        AWS_TRAINING,
        aws(
            "tgw",
            "aws:ec2transitgateway/vpcAttachment:VpcAttachment",
            {"vpcId": "v", "transitGatewayId": "tgw-0shared", "subnetIds": ["s"]},
        ),
        PATH,
    ),
    Case(
        "aws-vpn",
        AWS_TRAINING,
        aws(
            "vpn",
            "aws:ec2/vpnConnection:VpnConnection",
            {"customerGatewayId": "cgw-1", "type": "ipsec.1", "vpnGatewayId": "vgw-1"},
            vpc=False,
        ),
        PATH,
    ),
    # The internet reaching a node directly.
    Case("aws-public-ip-and-open-group", AWS_TRAINING, aws_public_instance(eip=False), EXPOSED),
    Case("aws-elastic-ip-and-rule-resource", AWS_TRAINING, aws_public_instance(eip=True), EXPOSED),
    # Legitimate: a peer in training's own account, a gateway endpoint to an AWS service.
    Case(
        "aws-legit-peering-same-side",
        AWS_TRAINING,
        aws("shared-svcs", PEERING, {"vpcId": "v", "peerVpcId": "vpc-0own", "peerOwnerId": AWS_TRAIN}),
    ),
    Case(
        "aws-legit-dynamodb-endpoint",
        AWS_TRAINING,
        aws(
            "dynamodb",
            ENDPOINT,
            {"vpcId": "v", "serviceName": "com.amazonaws.us-east-1.dynamodb", "vpcEndpointType": "Gateway"},
        ),
    ),
]


# --- Azure ----------------------------------------------------------------------------------------

AZ = "azure-native:network"
SERVE_VNET = arm(AZ_SERVE, "Microsoft.Network/virtualNetworks/serve-vnet")
SERVE_STORAGE = arm(AZ_SERVE, "Microsoft.Storage/storageAccounts/servemodels")
OPEN_RULE = {
    "name": "ssh",
    "access": "Allow",
    "direction": "Inbound",
    "priority": 200,
    "protocol": "Tcp",
    "sourceAddressPrefix": "Internet",
    "sourcePortRange": "*",
    "destinationAddressPrefix": "*",
    "destinationPortRange": "22",
}


def azure(name: str, kind: str, inputs: dict[str, Any]) -> Callable[[Doc], str]:
    base = {"resourceGroupName": "azure-training-rg", "location": "eastus"}
    return adding(AZURE_TRAINING, f"{AZ}:{kind}", name, {**base, **inputs})


def peer_inline(remote: str) -> Callable[[dict[str, Any]], None]:
    def change(props: dict[str, Any]) -> None:
        props["virtualNetworkPeerings"] = [{"name": "to-serve", "remoteVirtualNetwork": {"id": remote}}]

    return change


def public_scale_set(props: dict[str, Any]) -> None:
    config = props["virtualMachineProfile"]["networkProfile"]["networkInterfaceConfigurations"][0]
    config["ipConfigurations"][0]["publicIPAddressConfiguration"] = {"name": "pip"}


def open_nsg(props: dict[str, Any]) -> None:
    props["securityRules"] = [*props.get("securityRules", []), OPEN_RULE]


def azure_public_nic(doc: Doc) -> str:
    nsg = azure("jump-nsg", "NetworkSecurityGroup", {"networkSecurityGroupName": "jump-nsg"})(doc)
    add_resource(
        doc,
        AZURE_TRAINING,
        f"{AZ}:SecurityRule",
        "jump-ssh",
        {**OPEN_RULE, "resourceGroupName": "azure-training-rg", "networkSecurityGroupName": "jump-nsg"},
        depends={"networkSecurityGroupName": nsg},
    )
    return azure(
        "jump-nic",
        "NetworkInterface",
        {
            "networkSecurityGroup": {"id": arm(AZ_TRAIN, "Microsoft.Network/networkSecurityGroups/jump-nsg")},
            "ipConfigurations": [
                {"name": "ip", "publicIPAddress": {"id": arm(AZ_TRAIN, "Microsoft.Network/publicIPAddresses/jump")}}
            ],
        },
    )(doc)


AZURE_CASES = [
    Case(
        "azure-peering-to-serving",
        AZURE_TRAINING,
        azure(
            "to-serve",
            "VirtualNetworkPeering",
            {
                "virtualNetworkName": "azure-training-net-vnet",
                "remoteVirtualNetwork": {"id": SERVE_VNET},
                "allowForwardedTraffic": True,
            },
        ),
        PATH,
    ),
    Case("azure-inline-peering-to-serving", AZURE_TRAINING, editing(AZ_VNET, peer_inline(SERVE_VNET.upper())), PATH),
    Case(
        "azure-private-endpoint-into-serving",
        AZURE_TRAINING,
        azure(
            "pe",
            "PrivateEndpoint",
            {
                "subnet": {"id": "s"},
                "privateLinkServiceConnections": [
                    {"name": "c", "privateLinkServiceId": SERVE_STORAGE, "groupIds": ["blob"]}
                ],
            },
        ),
        PATH,
    ),
    Case(
        "azure-manual-private-endpoint-into-serving",
        AZURE_TRAINING,
        azure(
            "pe-manual",
            "PrivateEndpoint",
            {
                "subnet": {"id": "s"},
                "manualPrivateLinkServiceConnections": [
                    {"name": "c", "privateLinkServiceId": SERVE_STORAGE, "groupIds": ["blob"]}
                ],
            },
        ),
        PATH,
    ),
    Case(
        "azure-private-link-service-visible-to-serving",
        AZURE_TRAINING,
        azure("pls", "PrivateLinkService", {"visibility": {"subscriptions": [AZ_SERVE]}}),
        PATH,
    ),
    Case(
        "azure-private-link-service-auto-approves-all",
        AZURE_TRAINING,
        azure("pls-all", "PrivateLinkService", {"autoApproval": {"subscriptions": ["*"]}}),
        PATH,
    ),
    Case(
        "azure-peering-unplaced",
        AZURE_TRAINING,
        azure(
            "to-somewhere",
            "VirtualNetworkPeering",
            {"virtualNetworkName": "azure-training-net-vnet", "remoteVirtualNetwork": {"id": "serve-vnet"}},
        ),
        PATH,
    ),
    Case(
        "azure-vpn-connection",
        AZURE_TRAINING,
        azure(
            "vpn",
            "VirtualNetworkGatewayConnection",
            {"connectionType": "IPsec", "virtualNetworkGateway1": {"id": "g"}, "localNetworkGateway2": {"id": "l"}},
        ),
        PATH,
    ),
    Case(
        "azure-public-scale-set-open-nsg",
        AZURE_TRAINING,
        both(editing(AZ_NODES, public_scale_set), editing(AZ_NODES_NSG, open_nsg)),
        EXPOSED,
    ),
    Case("azure-public-nic-rule-resource", AZURE_TRAINING, azure_public_nic, EXPOSED),
    Case(
        "azure-legit-peering-same-subscription",
        AZURE_TRAINING,
        azure(
            "hub",
            "VirtualNetworkPeering",
            {
                "virtualNetworkName": "azure-training-net-vnet",
                "remoteVirtualNetwork": {"id": arm(AZ_TRAIN, "Microsoft.Network/virtualNetworks/hub")},
            },
        ),
    ),
    Case(
        "azure-legit-private-endpoint-own-subscription",
        AZURE_TRAINING,
        azure(
            "pe-own",
            "PrivateEndpoint",
            {
                # The endpoint's subnet is placed by its ARM id like its far end (one named by no id fails closed).
                "subnet": {"id": arm(AZ_TRAIN, "Microsoft.Network/virtualNetworks/azure-training-net-vnet/subnets/pe")},
                "privateLinkServiceConnections": [
                    {
                        "name": "c",
                        "privateLinkServiceId": arm(AZ_TRAIN, "Microsoft.KeyVault/vaults/kv"),
                        "groupIds": ["vault"],
                    }
                ],
                # A user's resource carries its side's tag like the stack's own (workload-tags, on every cloud).
                "tags": {"accelstack:workload": "training", "accelstack:stack": "azure-training"},
            },
        ),
    ),
]


# --- GCP ------------------------------------------------------------------------------------------


def gcp(name: str, kind: str, inputs: dict[str, Any], network: bool = True) -> Callable[[Doc], str]:
    return adding(GCP_TRAINING, f"gcp:{kind}", name, inputs, {"network": GCP_NET} if network else None)


def gcp_public_template(doc: Doc) -> str:
    node = editing(GCP_TEMPLATE, lambda p: p["networkInterfaces"][0].__setitem__("accessConfigs", [{}]))(doc)
    gcp(
        "ssh-anywhere",
        "compute/firewall:Firewall",
        {
            "network": "n",
            "direction": "INGRESS",
            "allows": [{"protocol": "tcp", "ports": ["22"]}],
            "sourceRanges": ["0.0.0.0/0"],
        },
    )(doc)
    return node


OWN_NET = "projects/acme-train/global/networks/gcp-training-net"
GCP_CASES = [
    Case(
        "gcp-peering-to-serving",
        GCP_TRAINING,
        gcp(
            "to-serve",
            "compute/networkPeering:NetworkPeering",
            {"network": OWN_NET, "peerNetwork": "projects/acme-serve/global/networks/serve"},
        ),
        PATH,
    ),
    Case(
        "gcp-peering-url-to-serving",
        GCP_TRAINING,
        gcp(
            "to-serve-url",
            "compute/networkPeering:NetworkPeering",
            {
                "network": OWN_NET,
                "peerNetwork": "https://www.googleapis.com/compute/v1/projects/acme-serve/global/networks/serve",
                "exportCustomRoutes": True,
            },
        ),
        PATH,
    ),
    Case(
        "gcp-psc-into-serving",
        GCP_TRAINING,
        gcp(
            "psc",
            "compute/forwardingRule:ForwardingRule",
            {
                "network": OWN_NET,
                "region": "us-central1",
                "loadBalancingScheme": "",
                "target": "projects/acme-serve/regions/us-central1/serviceAttachments/models",
            },
        ),
        PATH,
    ),
    Case(
        "gcp-shared-vpc-with-serving",
        GCP_TRAINING,
        gcp(
            "share",
            "compute/sharedVPCServiceProject:SharedVPCServiceProject",
            {"hostProject": "acme-train", "serviceProject": "acme-serve"},
            network=False,
        ),
        PATH,
    ),
    Case(
        "gcp-service-attachment-accepts-serving",
        GCP_TRAINING,
        gcp(
            "publish",
            "compute/serviceAttachment:ServiceAttachment",
            {
                "region": "us-central1",
                "connectionPreference": "ACCEPT_MANUAL",
                "consumerAcceptLists": [{"projectIdOrNum": "acme-serve", "connectionLimit": 4}],
                "enableProxyProtocol": False,
                "natSubnets": ["n"],
                "targetService": "t",
            },
            network=False,
        ),
        PATH,
    ),
    Case(
        "gcp-service-attachment-accepts-all",
        GCP_TRAINING,
        gcp(
            "publish-all",
            "compute/serviceAttachment:ServiceAttachment",
            {
                "region": "us-central1",
                "connectionPreference": "ACCEPT_AUTOMATIC",
                "enableProxyProtocol": False,
                "natSubnets": ["n"],
                "targetService": "t",
            },
            network=False,
        ),
        PATH,
    ),
    Case(
        "gcp-peering-unplaced",
        GCP_TRAINING,
        gcp("to-somewhere", "compute/networkPeering:NetworkPeering", {"network": OWN_NET, "peerNetwork": "serve"}),
        PATH,
    ),
    Case(
        "gcp-vpn-to-external",
        GCP_TRAINING,
        gcp(
            "vpn",
            "compute/vPNTunnel:VPNTunnel",
            {"region": "us-central1", "peerIp": "203.0.113.9", "sharedSecret": "x", "targetVpnGateway": "g"},
            network=False,
        ),
        PATH,
    ),
    Case("gcp-public-template-open-firewall", GCP_TRAINING, gcp_public_template, EXPOSED),
    Case(
        "gcp-external-forwarding-rule-to-nodes",
        GCP_TRAINING,
        gcp(
            "ssh-lb",
            "compute/forwardingRule:ForwardingRule",
            {
                "region": "us-central1",
                "loadBalancingScheme": "EXTERNAL",
                "portRange": "22",
                "backendService": "projects/acme-train/regions/us-central1/backendServices/nodes",
            },
            network=False,
        ),
        EXPOSED,
    ),
    Case(
        "gcp-legit-peering-same-project",
        GCP_TRAINING,
        gcp(
            "gpu1",
            "compute/networkPeering:NetworkPeering",
            {"network": OWN_NET, "peerNetwork": "projects/acme-train/global/networks/gcp-training-gpu1"},
        ),
    ),
    Case(
        "gcp-legit-psc-google-apis",
        GCP_TRAINING,
        gcp(
            "apis",
            "compute/globalForwardingRule:GlobalForwardingRule",
            {"network": OWN_NET, "loadBalancingScheme": "", "target": "all-apis", "ipAddress": "a"},
        ),
    ),
]

CASES = AWS_CASES + AZURE_CASES + GCP_CASES


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_network_paths_and_exposure(case: Case) -> None:
    result = previewed(case.stack)
    doc = copy.deepcopy(result.export)
    urn = case.apply(doc)
    assert doc != result.export, f"{case.id} changed nothing"
    verdicts = policy_verdicts(doc, result.spec)
    if not case.policy:
        assert [v.line() for v in verdicts] == [], case.id
        return
    got = "\n    ".join(v.line() for v in verdicts) or "(no verdict)"
    assert any(v.mandatory and v.urn == urn and v.policy == case.policy for v in verdicts), f"{case.id}:\n    {got}"
    unplaced = "unplaced" in case.id or "shared-gateway" in case.id or "vpn" in case.id
    if unplaced:  # what the pack could not place is said, not just refused
        assert any("fail closed" in v.message for v in verdicts if v.policy == case.policy), got


def test_every_class_has_two_spellings_on_every_cloud() -> None:
    for prefix in ("aws-", "azure-", "gcp-"):
        killing = [c for c in CASES if c.id.startswith(prefix) and c.policy]
        assert sum(c.policy == EXPOSED for c in killing) >= 2
        assert sum("unplaced" in c.id or "vpn" in c.id for c in killing) >= 2
        assert sum(c.policy == PATH for c in killing) >= 6
        assert sum(not c.policy for c in CASES if c.id.startswith(prefix)) >= 2


@pytest.mark.parametrize("stack", [AWS_SERVING, "azure-serving", "gcp-serving"])
def test_serving_front_door_is_what_the_internet_reaches(stack: str) -> None:
    """The view sees each cloud's front door (and only it), so the guardrail's silence is not blindness."""
    from accelstack.policies import reachability
    from accelstack.policies.separation.reachability_rules import readers

    result = previewed(stack)
    resources = [_Resource(r) for r in result.export["deployment"]["resources"]]
    graph = reachability.build(
        resources, readers(), reachability.Placement(frozenset(), {}, reachability.Stack.of(resources))
    )
    reached = graph.from_internet()
    assert reached and all(link.target.kind == reachability.FRONT_DOOR for link in reached)


class _Resource:
    """An export entry as the packs' stack policies see it (outputs, property dependencies)."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.resource_type, self.urn = entry["type"], entry["urn"]
        self.name = self.urn.rsplit("::", 1)[-1]
        self.props = entry.get("outputs") or entry.get("inputs") or {}
        deps = entry.get("propertyDependencies") or {}
        self.property_dependencies = {k: [_Urn(u) for u in v] for k, v in deps.items()}


@dataclass(frozen=True)
class _Urn:
    urn: str


# --- Azure NSG rule order: the first rule by priority that matches a flow decides it -----------------------------

DENY_INTERNET = {
    "name": "deny-internet",
    "access": "Deny",
    "direction": "Inbound",
    "protocol": "*",
    "sourceAddressPrefix": "Internet",
    "sourcePortRange": "*",
    "destinationAddressPrefix": "*",
    "destinationPortRange": "*",
}


def _public_nodes_with(*rules: dict[str, Any]) -> list[Any]:
    """What the internet reaches in azure-training once its nodes get public IPs and their NSG holds `rules`."""
    from accelstack.policies import reachability
    from accelstack.policies.separation.reachability_rules import readers

    doc = copy.deepcopy(previewed(AZURE_TRAINING).export)
    editing(AZ_NODES, public_scale_set)(doc)
    editing(AZ_NODES_NSG, lambda props: props.__setitem__("securityRules", [*props.get("securityRules", []), *rules]))(
        doc
    )
    resources = [_Resource(r) for r in doc["deployment"]["resources"]]
    graph = reachability.build(
        resources, readers(), reachability.Placement(frozenset(), {}, reachability.Stack.of(resources))
    )
    return [link for link in graph.from_internet() if link.target.kind == reachability.NODE]


@pytest.mark.parametrize(
    ("deny", "exposed"),
    [
        ({**DENY_INTERNET, "priority": 100}, False),  # an earlier Deny of every internet flow shadows the Allow
        ({**DENY_INTERNET, "priority": 100, "sourceAddressPrefix": "*"}, False),
        (
            {**{k: v for k, v in DENY_INTERNET.items() if k != "destinationPortRange"}, "priority": 100}
            | {"protocol": "Tcp", "destinationPortRanges": ["20-25"]},
            False,
        ),
        ({**DENY_INTERNET, "priority": 300}, True),  # a later Deny decides nothing the Allow matched first
        ({**DENY_INTERNET, "priority": 100, "destinationPortRange": "23"}, True),  # another port
        ({**DENY_INTERNET, "priority": 100, "protocol": "Udp"}, True),  # another protocol
        ({**DENY_INTERNET, "priority": 100, "sourceAddressPrefix": "198.51.100.0/24"}, True),  # part of the sources
        ({**DENY_INTERNET, "priority": 100, "destinationAddressPrefix": "10.40.1.0/24"}, True),  # unsure: left open
        ({**DENY_INTERNET, "priority": 100, "direction": "Outbound"}, True),
    ],
    ids=["earlier", "any-source", "port-range", "later", "other-port", "udp", "part-source", "dest", "outbound"],
)
def test_azure_nsg_rules_are_read_in_priority_order(deny: dict[str, Any], exposed: bool) -> None:
    reached = _public_nodes_with(OPEN_RULE, deny)
    assert bool(reached) == exposed, [link.what for link in reached]


def test_azure_nsg_deny_as_its_own_rule_resource_shadows_an_inline_allow() -> None:
    """The Deny may be a SecurityRule resource of the same NSG; order is by priority, not by where it is written."""
    assert _public_nodes_with(OPEN_RULE)  # the Allow alone exposes the nodes

    doc = copy.deepcopy(previewed(AZURE_TRAINING).export)
    editing(AZ_NODES, public_scale_set)(doc)
    editing(AZ_NODES_NSG, open_nsg)(doc)
    nsg = urn_of(doc, AZ_NODES_NSG)
    add_resource(
        doc,
        AZURE_TRAINING,
        f"{AZ}:SecurityRule",
        "deny-internet",
        {
            **DENY_INTERNET,
            "priority": 150,
            "resourceGroupName": "azure-training-rg",
            "networkSecurityGroupName": "azure-training-net-nodes-nsg",
        },
        depends={"networkSecurityGroupName": nsg},
    )
    from accelstack.policies import reachability
    from accelstack.policies.separation.reachability_rules import readers

    resources = [_Resource(r) for r in doc["deployment"]["resources"]]
    graph = reachability.build(
        resources, readers(), reachability.Placement(frozenset(), {}, reachability.Stack.of(resources))
    )
    assert not [link for link in graph.from_internet() if link.target.kind == reachability.NODE]
