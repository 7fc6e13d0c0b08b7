"""The serving subscription's own VNet: a dedicated Application Gateway subnet (v2 needs one, nothing else in
it) and the replicas' subnet behind a NAT gateway, each with its own NSG.

Gateway subnet (learn.microsoft.com/azure/application-gateway/configuration-infrastructure#network-security-groups):
HTTPS from the internet, GatewayManager on 65200-65535 (v2's infrastructure ports, required or the gateway
fails to provision) and the Azure load balancer's probes. Replicas' subnet: the model server's port from the
gateway subnet only, and an explicit deny of internet ingress (the replicas have no public address either).
Egress through a NAT gateway: subnets created since the default outbound access retirement are private
(learn.microsoft.com/azure/virtual-network/ip-services/default-outbound-access), and the replicas pull the
server image and the Service Bus client.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_azure_native as azure_native

from accelstack.clouds.azure.serving_rules import GATEWAY_SUBNET_PREFIX
from accelstack.components.azure.serving.placement import Placement
from accelstack.spec.models import ServingSpec

DEFAULT_SERVING_CIDR = "10.30.0.0/16"
GATEWAY_MANAGER_PORTS = "65200-65535"  # Application Gateway v2 infrastructure
DENY_INTERNET_PRIORITY = 4000


@dataclass(frozen=True)
class ServingSubnets:
    gateway: str
    replicas: str


def serving_subnets(vpc_cidr: str | None) -> ServingSubnets:
    """The gateway takes the VNet's first /24; the replicas the VNet's second half (1000 replicas fit a /22)."""
    vnet = ipaddress.ip_network(vpc_cidr or DEFAULT_SERVING_CIDR)
    first, second = vnet.subnets(prefixlen_diff=1)
    gateway = (
        next(first.subnets(new_prefix=GATEWAY_SUBNET_PREFIX)) if first.prefixlen < GATEWAY_SUBNET_PREFIX else first
    )
    return ServingSubnets(gateway=str(gateway), replicas=str(second))


def _rule(name: str, priority: int, source: str, ports: str, *, protocol: str = "Tcp", access: str = "Allow",
          description: str) -> dict[str, Any]:  # fmt: skip
    return {
        "name": name,
        "priority": priority,
        "direction": "Inbound",
        "access": access,
        "protocol": protocol,
        "source_address_prefix": source,
        "source_port_range": "*",
        "destination_address_prefix": "*",
        "destination_port_range": ports,
        "description": description,
    }


def gateway_security_rules() -> list[dict[str, Any]]:
    return [
        _rule("https-from-clients", 100, "Internet", "443", description="clients reach the HTTPS listener only"),
        _rule("gateway-manager", 110, "GatewayManager", GATEWAY_MANAGER_PORTS, description="App Gateway v2 infrastructure"),
        _rule("azure-load-balancer", 120, "AzureLoadBalancer", "*", protocol="*", description="platform probes"),
    ]  # fmt: skip


def replica_security_rules(gateway_subnet: str, port: int) -> list[dict[str, Any]]:
    return [
        _rule("model-server-from-gateway", 100, gateway_subnet, str(port), description="the gateway's backend traffic and probes"),
        _rule("deny-internet-inbound", DENY_INTERNET_PRIORITY, "Internet", "*", protocol="*", access="Deny",
              description="no ingress from the internet (replicas have no public address either)"),
    ]  # fmt: skip


class ServingNetwork(pulumi.ComponentResource):
    """`vnet`, `gateway_subnet`, `replicas_subnet`, `nat_gateway`."""

    def __init__(self, name: str, serving: ServingSpec, placement: Placement):
        super().__init__("accelstack:azure:ServingNetwork", name, None, placement.opts)
        child = pulumi.ResourceOptions(parent=self)
        rg, tags = placement.resource_group.name, placement.tags
        plan = serving_subnets(serving.network.vpc_cidr)
        self.subnets = plan
        self.vnet = azure_native.network.VirtualNetwork(
            f"{name}-vnet",
            resource_group_name=rg,
            address_space={"address_prefixes": [serving.network.vpc_cidr or DEFAULT_SERVING_CIDR]},
            tags=tags,
            # Subnets are their own resources below; declaring none here, the VNet would remove them on update.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["subnets"]),
        )
        egress_ip = azure_native.network.PublicIPAddress(
            f"{name}-nat-ip",
            resource_group_name=rg,
            sku={"name": "Standard", "tier": "Regional"},  # a NAT gateway takes Standard static addresses only
            public_ip_allocation_method="Static",
            public_ip_address_version="IPv4",
            tags=tags,
            opts=child,
        )
        self.nat_gateway = azure_native.network.NatGateway(
            f"{name}-nat",
            resource_group_name=rg,
            sku={"name": "Standard"},
            public_ip_addresses=[{"id": egress_ip.id}],
            idle_timeout_in_minutes=10,
            tags=tags,
            opts=child,
        )
        gateway_nsg = azure_native.network.NetworkSecurityGroup(
            f"{name}-gateway-nsg",
            resource_group_name=rg,
            security_rules=gateway_security_rules(),
            tags=tags,
            opts=child,
        )
        replicas_nsg = azure_native.network.NetworkSecurityGroup(
            f"{name}-replicas-nsg",
            resource_group_name=rg,
            security_rules=replica_security_rules(plan.gateway, serving.load_balancer.port),
            tags=tags,
            opts=child,
        )
        self.gateway_subnet = azure_native.network.Subnet(
            f"{name}-gateway",
            resource_group_name=rg,
            virtual_network_name=self.vnet.name,
            address_prefix=plan.gateway,
            network_security_group={"id": gateway_nsg.id},
            opts=child,
        )
        # After the gateway's subnet: two subnets of one VNet written at once conflict (AnotherOperationInProgress).
        self.replicas_subnet = azure_native.network.Subnet(
            f"{name}-replicas",
            resource_group_name=rg,
            virtual_network_name=self.vnet.name,
            address_prefix=plan.replicas,
            network_security_group={"id": replicas_nsg.id},
            nat_gateway={"id": self.nat_gateway.id},
            default_outbound_access=False,
            # Blob (weights) over the Azure backbone, and the subnet a training stack's checkpoint account admits
            # (training.artifactReaderSubnets). Global: Microsoft.Storage reaches only accounts in the subnet's own
            # region, and the training subscription's GPUs are often in another ("Configure Azure Storage
            # firewalls and virtual networks"). Service Bus Standard has no service endpoint (Premium only).
            service_endpoints=[{"service": "Microsoft.Storage.Global"}],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.gateway_subnet]),
        )
        self.register_outputs({"vnet": self.vnet.id, "replicasSubnet": self.replicas_subnet.id})
