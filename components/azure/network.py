"""The training network: one VNet, the nodes' subnet (nodes and the Slurm head) behind a NAT gateway, and
a dedicated Azure Managed Lustre subnet sized for the file system, each with its own NSG.

Ingress is closed to the internet on both subnets (an explicit deny above Azure's default rules, so a later
rule cannot open it by accident); inside the VNet, Azure's default AllowVnetInBound lets the nodes, the head
and Lustre talk. The Lustre subnet admits only LNet (988) and Lustre's 1019-1023 from the VNet
(learn.microsoft.com/azure/azure-managed-lustre/amlfs-prerequisites, "Network prerequisites").
Outbound: a NAT gateway (package mirrors, Key Vault, Blob). Subnets created since Azure's default outbound
access retirement are private (defaultOutboundAccess false: learn.microsoft.com/azure/virtual-network/
ip-services/default-outbound-access), so without it nothing reaches apt or the storage endpoints.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import pulumi
import pulumi_azure_native as azure_native

from accelstack.clouds.azure import catalog
from accelstack.clouds.azure.rules import NODES_SUBNET_SHARE
from accelstack.components.azure.provider import stack_tags
from accelstack.spec.models import TrainingStack

LUSTRE_PORTS = ("988", "1019-1023")  # amlfs-prerequisites: LNet and Lustre's server ports, TCP
# The head takes a fixed address near the top of the nodes' subnet: replacing it keeps the address.
HEAD_ADDRESS_FROM_TOP = 6
# Rule priorities: 100-4096, lower wins (learn.microsoft.com/azure/virtual-network/network-security-groups-overview).
DENY_INTERNET_PRIORITY = 4000


@dataclass(frozen=True)
class SubnetPlan:
    nodes: str
    lustre: str | None
    head_address: str


def training_subnets(spec: TrainingStack) -> SubnetPlan:
    """The nodes take the VNet's first half; the Lustre subnet, sized for the file system's capacity
    (catalog.amlfs_subnet_prefix), starts the second half. `vnet_holds_the_subnets` checks it fits."""
    cidr = spec.training.network.vpc_cidr or "10.20.0.0/16"
    vnet = ipaddress.ip_network(cidr)
    first, second = vnet.subnets(prefixlen_diff=NODES_SUBNET_SHARE)
    lustre = spec.training.storage.lustre
    lustre_subnet = None
    if lustre is not None:
        capacity_tib = (lustre.capacity_gib or 0) / catalog.TIB_GIB
        prefix = catalog.amlfs_subnet_prefix(capacity_tib)
        lustre_subnet = str(next(second.subnets(new_prefix=prefix)))
    head = first.broadcast_address - HEAD_ADDRESS_FROM_TOP
    return SubnetPlan(nodes=str(first), lustre=lustre_subnet, head_address=str(head))


def _deny_internet_inbound() -> dict[str, object]:
    return {
        "name": "deny-internet-inbound",
        "priority": DENY_INTERNET_PRIORITY,
        "direction": "Inbound",
        "access": "Deny",
        "protocol": "*",
        "source_address_prefix": "Internet",
        "source_port_range": "*",
        "destination_address_prefix": "*",
        "destination_port_range": "*",
        "description": "no ingress from the internet (nodes have no public address either)",
    }


def lustre_security_rules(lustre_subnet: str) -> list[dict[str, object]]:
    """Lustre's ports from the VNet, anything between the file system's own servers (its subnet), and
    nothing else inbound from the VNet or the internet (Azure's AllowVnetInBound would admit every port)."""
    rule: dict[str, object] = {"direction": "Inbound", "source_port_range": "*", "destination_address_prefix": "*"}
    rules: list[dict[str, object]] = [
        {
            **rule,
            "name": "lustre-servers",
            "priority": 100,
            "access": "Allow",
            "protocol": "*",
            "source_address_prefix": lustre_subnet,
            "destination_port_range": "*",
            "description": "the file system's own servers",
        }
    ]
    rules += [
        {
            **rule,
            "name": f"lustre-{ports}",
            "priority": 110 + index,
            "access": "Allow",
            "protocol": "Tcp",
            "source_address_prefix": "VirtualNetwork",
            "destination_port_range": ports,
            "description": "Lustre clients in the VNet (amlfs-prerequisites)",
        }
        for index, ports in enumerate(LUSTRE_PORTS)
    ]
    rules.append(
        {
            **rule,
            "name": "deny-other-vnet-inbound",
            "priority": DENY_INTERNET_PRIORITY - 10,
            "access": "Deny",
            "protocol": "*",
            "source_address_prefix": "VirtualNetwork",
            "destination_port_range": "*",
            "description": "only Lustre's ports reach the file system from the VNet",
        }
    )
    rules.append(_deny_internet_inbound())
    return rules


class TrainingNetwork(pulumi.ComponentResource):
    """`vnet`, `nodes_subnet`, `lustre_subnet` (None without Lustre), `head_address`, `zone`."""

    def __init__(self, name: str, spec: TrainingStack, resource_group: pulumi.Input[str], opts: pulumi.ResourceOptions):
        super().__init__("accelstack:azure:TrainingNetwork", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = stack_tags(spec)
        plan = training_subnets(spec)
        self.head_address = plan.head_address
        # Pinned zone (AMLFS takes exactly one; the scale set, head and its disk go beside it); "1" by default.
        self.zone = spec.training.network.availability_zone or catalog.ZONES[0]

        self.vnet = azure_native.network.VirtualNetwork(
            f"{name}-vnet",
            resource_group_name=resource_group,
            address_space={"address_prefixes": [spec.training.network.vpc_cidr or "10.20.0.0/16"]},
            tags=tags,
            # Subnets are their own resources below; declaring none here, the VNet would remove them on update.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["subnets"]),
        )
        egress_ip = azure_native.network.PublicIPAddress(
            f"{name}-nat-ip",
            resource_group_name=resource_group,
            sku={"name": "Standard", "tier": "Regional"},  # a NAT gateway takes Standard static addresses only
            public_ip_allocation_method="Static",
            public_ip_address_version="IPv4",
            zones=[self.zone],
            tags=tags,
            opts=child,
        )
        self.nat_gateway = azure_native.network.NatGateway(
            f"{name}-nat",
            resource_group_name=resource_group,
            sku={"name": "Standard"},
            public_ip_addresses=[{"id": egress_ip.id}],
            zones=[self.zone],
            idle_timeout_in_minutes=10,
            tags=tags,
            opts=child,
        )
        self.nodes_nsg = azure_native.network.NetworkSecurityGroup(
            f"{name}-nodes-nsg",
            resource_group_name=resource_group,
            security_rules=[_deny_internet_inbound()],
            tags=tags,
            opts=child,
        )
        self.nodes_subnet = azure_native.network.Subnet(
            f"{name}-nodes",
            resource_group_name=resource_group,
            virtual_network_name=self.vnet.name,
            address_prefix=plan.nodes,
            network_security_group={"id": self.nodes_nsg.id},
            nat_gateway={"id": self.nat_gateway.id},
            default_outbound_access=False,
            # Blob and Key Vault over the Azure backbone from the nodes (the accounts may then restrict to it).
            service_endpoints=[{"service": "Microsoft.Storage"}, {"service": "Microsoft.KeyVault"}],
            opts=child,
        )
        self.lustre_subnet: azure_native.network.Subnet | None = None
        if plan.lustre is not None:
            lustre_nsg = azure_native.network.NetworkSecurityGroup(
                f"{name}-lustre-nsg",
                resource_group_name=resource_group,
                security_rules=lustre_security_rules(plan.lustre),
                tags=tags,
                opts=child,
            )
            # Dedicated to the file system (amlfs-prerequisites: one file system per subnet, nothing else in it).
            # Created after the nodes' subnet: two subnets of one VNet written at once conflict
            # (AnotherOperationInProgress).
            self.lustre_subnet = azure_native.network.Subnet(
                f"{name}-lustre",
                resource_group_name=resource_group,
                virtual_network_name=self.vnet.name,
                address_prefix=plan.lustre,
                network_security_group={"id": lustre_nsg.id},
                # The file system reaches Azure services from its subnet (amlfs-prerequisites: Key Vault for its
                # key, Storage for the Blob integration, monitoring): the zone's NAT gateway is its way out, and
                # the service endpoints let the storage account and vault admit this subnet by rule.
                nat_gateway={"id": self.nat_gateway.id},
                default_outbound_access=False,
                service_endpoints=[{"service": "Microsoft.Storage"}, {"service": "Microsoft.KeyVault"}],
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.nodes_subnet]),
            )
        self.register_outputs({"vnet": self.vnet.id, "nodesSubnet": self.nodes_subnet.id})
