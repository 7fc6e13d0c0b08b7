"""The training networks: the system VPC (nodes, the Slurm head, Managed Lustre's peering, Cloud NAT; MTU 8896
on every machine type) and one VPC per GPU NIC the machine type has, every one of them configured, as Cluster Toolkit's blueprints build them
(accelstack.clouds.gcp.catalog.NIC_LAYOUTS):

- A3 High (GPUDirect-TCPX): 4 more gVNIC VPCs; A3 Mega (TCPXO): 8; both at MTU 8244.
- A3 Ultra and A4 (GPUDirect RDMA): a second gVNIC VPC and ONE RoCE VPC created from the zone's RoCE network
  profile (`projects/<p>/global/networkProfiles/<zone>-vpc-roce`) with 8 subnets, one per MRDMA NIC, all at
  MTU 8896 (cluster-toolkit modules/network/gpu-rdma-vpc).

Each fabric subnet is sized for the node count (accelstack.clouds.gcp.rules.address_plan) and admits traffic
from itself only. Ingress from the internet is denied explicitly on every VPC (above Google's implied
deny, so a later allow with a lower priority number is the only way in); SSH comes only through IAP's range.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from accelstack.clouds.gcp import catalog
from accelstack.clouds.gcp.rules import address_plan
from accelstack.spec.models import TrainingStack

# Identity-Aware Proxy's TCP forwarding source range (cloud.google.com/iap/docs/using-tcp-forwarding).
IAP_RANGE = "35.235.240.0/20"
# VPC flow logs on the system subnet (Checkov CKV_GCP_26): 5-minute aggregation, half the flows sampled, with
# metadata (cloud.google.com/vpc/docs/flow-logs#key_properties; the same settings as the serving subnet).
FLOW_LOGS = {"aggregation_interval": "INTERVAL_5_MIN", "flow_sampling": 0.5, "metadata": "INCLUDE_ALL_METADATA"}
SYSTEM_MTU = 8896  # the maximum (cloud.google.com/vpc/docs/mtu)
# Firewall priorities: 0..65535, lower wins (cloud.google.com/firewall/docs/firewalls#priority_order_for_firewall_rules).
DENY_INTERNET_PRIORITY = 65000
ALLOW_PRIORITY = 1000


@dataclass
class TrainingNetwork:
    """What the nodes' template, the head and Managed Lustre attach to."""

    system: gcp.compute.Network
    nodes_subnet: gcp.compute.Subnetwork
    zone: str
    head_address: str
    lustre_peering: ipaddress.IPv4Network  # the private services access range Managed Lustre peers through
    # (network, subnetwork, nic type) per extra NIC, in the order the template attaches them.
    fabric_nics: list[tuple[gcp.compute.Network, gcp.compute.Subnetwork, str]] = field(default_factory=list)
    firewalls: list[gcp.compute.Firewall] = field(default_factory=list)


def _deny_internet(name: str, network: gcp.compute.Network, opts: pulumi.ResourceOptions) -> gcp.compute.Firewall:
    return gcp.compute.Firewall(
        f"{name}-deny-internet",
        network=network.id,
        direction="INGRESS",
        priority=DENY_INTERNET_PRIORITY,
        denies=[{"protocol": "all"}],
        source_ranges=["0.0.0.0/0"],
        log_config={"metadata": "EXCLUDE_ALL_METADATA"},
        opts=opts,
    )


def _allow_from(
    name: str, network: gcp.compute.Network, sources: list[str], opts: pulumi.ResourceOptions, **allow: object
) -> gcp.compute.Firewall:
    return gcp.compute.Firewall(
        name,
        network=network.id,
        direction="INGRESS",
        priority=ALLOW_PRIORITY,
        allows=[allow or {"protocol": "all"}],
        source_ranges=sources,
        opts=opts,
    )


def training_network(
    name: str, spec: TrainingStack, zone: str, opts: pulumi.ResourceOptions, *, fabric: bool = True
) -> TrainingNetwork:
    """The system VPC, and with `fabric` one VPC per GPU NIC of the machine type."""
    training = spec.training
    region = spec.account.region  # type: ignore[attr-defined]  # a GcpAccount (components.gcp.provider)
    plan = address_plan(training.network.vpc_cidr or "10.20.0.0/16")
    layout = catalog.nic_layout(training.nodes.instance_type)

    system = gcp.compute.Network(
        f"{name}-net",
        auto_create_subnetworks=False,
        routing_mode="REGIONAL",
        # The largest MTU GCP takes, whatever the machine type: Lustre and Cloud Storage traffic gain from jumbo
        # frames, and a machine type change never touches the network Managed Lustre is peered with.
        mtu=SYSTEM_MTU,
        opts=opts,
    )
    nodes_subnet = gcp.compute.Subnetwork(
        f"{name}-nodes",
        network=system.id,
        region=region,
        ip_cidr_range=str(plan.nodes),
        # Nodes have no external IP: Cloud Storage, Secret Manager and the Lustre API through Google's
        # private access; the rest (apt) through Cloud NAT.
        private_ip_google_access=True,
        log_config=FLOW_LOGS,
        opts=opts,
    )
    router = gcp.compute.Router(f"{name}-router", network=system.id, region=region, opts=opts)
    gcp.compute.RouterNat(
        f"{name}-nat",
        router=router.name,
        region=region,
        nat_ip_allocate_option="AUTO_ONLY",
        source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
        subnetworks=[{"name": nodes_subnet.id, "source_ip_ranges_to_nats": ["ALL_IP_RANGES"]}],
        log_config={"enable": True, "filter": "ERRORS_ONLY"},
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[nodes_subnet])),
    )
    firewalls = [
        _deny_internet(f"{name}-net", system, opts),
        # Slurm, NCCL's bootstrap and the jobs' own traffic between the nodes and the head.
        _allow_from(f"{name}-net-internal", system, [str(plan.nodes)], opts),
        # Managed Lustre's servers connect to their clients over TCP from the peering range
        # (cloud.google.com/managed-lustre/docs/vpc, "Create a firewall rule").
        _allow_from(f"{name}-net-lustre", system, [str(plan.lustre_peering)], opts, protocol="tcp"),
        _allow_from(f"{name}-net-iap-ssh", system, [IAP_RANGE], opts, protocol="tcp", ports=["22"]),
    ]
    network = TrainingNetwork(
        system=system,
        nodes_subnet=nodes_subnet,
        zone=zone,
        head_address=plan.head_address,
        lustre_peering=plan.lustre_peering,
        firewalls=firewalls,
    )

    if not fabric:
        return network
    blocks = iter(plan.fabric)
    for index in range(1, layout.gvnic_networks):
        vpc = gcp.compute.Network(
            f"{name}-gpu{index}",
            auto_create_subnetworks=False,
            routing_mode="REGIONAL",
            mtu=layout.gvnic_mtu,
            opts=opts,
        )
        block = str(next(blocks))
        subnet = gcp.compute.Subnetwork(
            f"{name}-gpu{index}",
            network=vpc.id,
            region=region,
            ip_cidr_range=block,
            private_ip_google_access=True,  # harmless here (the default route is the system NIC's), and uniform
            # No flow logs: these NICs carry NCCL's bulk traffic (up to 200 Gb/s per NIC); sampling it would bill
            # logs by the terabyte and say nothing the system subnet's logs do not (policies/scanner-exceptions.yaml).
            opts=opts,
        )
        network.fabric_nics.append((vpc, subnet, "GVNIC"))
        network.firewalls += [
            _deny_internet(f"{name}-gpu{index}", vpc, opts),
            _allow_from(f"{name}-gpu{index}-internal", vpc, [block], opts),
        ]
    if layout.rdma_subnets:
        roce = gcp.compute.Network(
            f"{name}-rdma",
            auto_create_subnetworks=False,
            routing_mode="REGIONAL",
            mtu=layout.rdma_mtu,
            # The RoCE profile of the nodes' zone makes this a RoCE VPC; only MRDMA NICs attach to it.
            network_profile=pulumi.Output.concat(
                "projects/", system.project, f"/global/networkProfiles/{zone}-vpc-roce"
            ),
            opts=opts,
        )
        for index in range(layout.rdma_subnets):
            block = str(next(blocks))
            subnet = gcp.compute.Subnetwork(
                f"{name}-rdma{index}", network=roce.id, region=region, ip_cidr_range=block, opts=opts
            )
            network.fabric_nics.append((roce, subnet, "MRDMA"))
        # RoCE VPCs carry RDMA only and take no firewall rules (cloud.google.com/vpc/docs/rdma-network-profiles).
    return network
