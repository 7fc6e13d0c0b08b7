"""The training VCN: one private regional subnet for the nodes, the head and Lustre; a NAT gateway (packages) and a
service gateway (Object Storage and Vault over the Oracle Services Network, never the internet); a security list
that admits only the VCN, and NSGs: the nodes' (everything within the VCN: Slurm, NCCL bootstrap, ssh from the head)
and Lustre's (TCP 988 and 512-1023 from the nodes: docs.oracle.com/iaas/Content/lustre/security-rules.htm).
The RDMA network is the cluster network's own (the agent plugins address the RoCE NICs), not a VCN subnet.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import pulumi
import pulumi_oci as oci

from accelstack.clouds.oci import names
from accelstack.clouds.oci.catalog import DEFAULT_VCN_CIDR
from accelstack.spec.models import TrainingStack

LUSTRE_PORTS = ((988, 988), (512, 1023))


def head_address(subnet_cidr: str) -> str:
    """The head's fixed private address: .10 of the nodes' subnet (OCI keeps the first two and the last)."""
    return str(ipaddress.ip_network(subnet_cidr).network_address + 10)


@dataclass(frozen=True)
class TrainingNetwork:
    vcn: oci.core.Vcn
    subnet: oci.core.Subnet
    subnet_cidr: str
    nodes_nsg: oci.core.NetworkSecurityGroup
    lustre_nsg: oci.core.NetworkSecurityGroup

    @property
    def head_address(self) -> str:
        return head_address(self.subnet_cidr)


def _rule(name: str, nsg: oci.core.NetworkSecurityGroup, source: str, tcp: tuple[int, int] | None, opts) -> None:
    oci.core.NetworkSecurityGroupSecurityRule(
        name,
        network_security_group_id=nsg.id,
        direction="INGRESS",
        protocol="6" if tcp else "all",
        source=source,
        source_type="CIDR_BLOCK",
        tcp_options={"destination_port_range": {"min": tcp[0], "max": tcp[1]}} if tcp else None,
        stateless=False,
        opts=opts,
    )


def training_network(
    name: str, spec: TrainingStack, compartment_id: str, tags: dict[str, str], opts: pulumi.ResourceOptions
) -> TrainingNetwork:
    cidr = spec.training.network.vpc_cidr or DEFAULT_VCN_CIDR
    network = ipaddress.ip_network(cidr, strict=False)
    subnet_cidr = str(next(network.subnets(prefixlen_diff=1)))
    common = {"compartment_id": compartment_id, "freeform_tags": tags}
    vcn = oci.core.Vcn(
        f"{name}-vcn",
        cidr_blocks=[cidr],
        display_name=f"{name}-vcn",
        dns_label=names.dns_label(name, "vcn"),
        **common,
        opts=opts,
    )
    at_vcn = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(parent=vcn))
    nat = oci.core.NatGateway(f"{name}-nat", vcn_id=vcn.id, display_name=f"{name}-nat", **common, opts=at_vcn)
    services = oci.core.get_services_output(opts=pulumi.InvokeOptions(parent=vcn, provider=opts.provider))
    all_services = services.services.apply(lambda found: found[0])
    service_gateway = oci.core.ServiceGateway(
        f"{name}-services",
        vcn_id=vcn.id,
        services=[{"service_id": all_services.id}],
        display_name=f"{name}-services",
        **common,
        opts=at_vcn,
    )
    routes = oci.core.RouteTable(
        f"{name}-private",
        vcn_id=vcn.id,
        route_rules=[
            {"network_entity_id": nat.id, "destination": "0.0.0.0/0", "destination_type": "CIDR_BLOCK"},
            {
                "network_entity_id": service_gateway.id,
                "destination": all_services.cidr_block,
                "destination_type": "SERVICE_CIDR_BLOCK",
            },
        ],
        display_name=f"{name}-private",
        **common,
        opts=at_vcn,
    )
    security_list = oci.core.SecurityList(
        f"{name}-nodes",
        vcn_id=vcn.id,
        ingress_security_rules=[{"protocol": "all", "source": cidr, "source_type": "CIDR_BLOCK"}],
        egress_security_rules=[{"protocol": "all", "destination": "0.0.0.0/0", "destination_type": "CIDR_BLOCK"}],
        display_name=f"{name}-nodes",
        **common,
        opts=at_vcn,
    )
    subnet = oci.core.Subnet(
        f"{name}-nodes",
        vcn_id=vcn.id,
        cidr_block=subnet_cidr,
        prohibit_public_ip_on_vnic=True,  # private: no public IP on any node, head or file system
        prohibit_internet_ingress=True,
        route_table_id=routes.id,
        security_list_ids=[security_list.id],
        dns_label=names.dns_label(name, "nodes"),
        display_name=f"{name}-nodes",
        **common,
        opts=at_vcn,
    )
    nodes_nsg = oci.core.NetworkSecurityGroup(
        f"{name}-nodes", vcn_id=vcn.id, display_name=f"{name}-nodes", **common, opts=at_vcn
    )
    lustre_nsg = oci.core.NetworkSecurityGroup(
        f"{name}-lustre", vcn_id=vcn.id, display_name=f"{name}-lustre", **common, opts=at_vcn
    )
    at_nodes = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(parent=nodes_nsg))
    _rule(f"{name}-nodes-from-vcn", nodes_nsg, cidr, None, at_nodes)
    at_lustre = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(parent=lustre_nsg))
    for low, high in LUSTRE_PORTS:
        _rule(f"{name}-lustre-{low}", lustre_nsg, subnet_cidr, (low, high), at_lustre)
    return TrainingNetwork(vcn, subnet, subnet_cidr, nodes_nsg, lustre_nsg)
