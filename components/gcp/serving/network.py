"""The serving project's own VPC: one replica subnet (Private Google Access: replicas reach Pub/Sub and
Cloud Storage without public IPs) and Cloud NAT for the rest of their egress (the container registry, and weights
on another cloud)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from accelstack.components.gcp.network import FLOW_LOGS
from accelstack.spec.models import ServingSpec

# Cloud NAT with static port allocation: each NAT address has 64,512 source ports (1024-65535) to share among the
# VMs, `min_ports_per_vm` each (cloud.google.com/nat/docs/ports-and-addresses, "Ports"). A port serves one connection
# per destination (address, port, protocol), and a replica fetches its weights from ONE Blob endpoint with azcopy,
# whose default concurrency is 16 per vCPU up to 300 connections (AZCOPY_CONCURRENCY_VALUE: learn.microsoft.com/azure/
# storage/common/storage-use-azcopy-optimize): 512 ports a replica hold that fetch with the registry pull beside it,
# where the default 64 would drop most of its connections (OUT_OF_RESOURCES).
NAT_PORTS_PER_ADDRESS = 64_512
FETCH_PORTS_PER_REPLICA = 512


@dataclass(frozen=True)
class ServingNetwork:
    network: gcp.compute.Network
    subnet: gcp.compute.Subnetwork
    egress_addresses: list[pulumi.Output[str]] | None = None  # reserved NAT addresses, where the weights need them


def egress_address_count(serving: ServingSpec, surge: int) -> int:
    """Static NAT addresses for every replica the group may run at once (replicas.max, plus a rolling update's
    surge) at FETCH_PORTS_PER_REPLICA ports each: 126 replicas an address; at least one."""
    replicas = serving.replicas.max + surge
    return max(1, math.ceil(replicas * FETCH_PORTS_PER_REPLICA / NAT_PORTS_PER_ADDRESS))


def serving_network(
    name: str, serving: ServingSpec, region: str, opts: pulumi.ResourceOptions, *, static_egress: int = 0
) -> ServingNetwork:
    """`static_egress` > 0: Cloud NAT fetches from that many reserved addresses (MANUAL_ONLY), whose list the stack
    exports for a store that admits readers by address (weights in an Azure checkpoint account); AUTO_ONLY
    addresses are Google's to change (added and released as the NAT needs them), so no firewall could list them."""
    network = gcp.compute.Network(
        f"{name}-net",
        auto_create_subnetworks=False,  # custom mode: the only subnet is the one below
        routing_mode="REGIONAL",
        opts=opts,
    )
    subnet = gcp.compute.Subnetwork(
        f"{name}-replicas",
        network=network.id,
        region=region,
        ip_cidr_range=serving.network.vpc_cidr,
        private_ip_google_access=True,
        log_config=FLOW_LOGS,
        opts=opts,
    )
    router = gcp.compute.Router(f"{name}-router", network=network.id, region=region, opts=opts)
    # Regional EXTERNAL addresses, kept until deleted (compute.Address; cloud.google.com/nat/docs/ports-and-addresses,
    # "Manual NAT IP address assignment"). Pulumi creates a new one before the NAT lets go of an old one, as
    # router_nat.py's nat_ips note asks (no resourceInUseByAnotherResource on resizing); nat_ips updates in place, and
    # so does natIpAllocateOption (neither is `immutable` in magic-modules' mmv1/products/compute/RouterNat.yaml: a NAT
    # is a PATCH of its router for create, update and delete), so adding or dropping Azure weights switches the
    # existing NAT between AUTO_ONLY and MANUAL_ONLY without replacing it.
    addresses = [
        gcp.compute.Address(
            f"{name}-nat-{index}", region=region, address_type="EXTERNAL", network_tier="PREMIUM", opts=opts
        )
        for index in range(static_egress)
    ]
    manual = {"nat_ips": [address.self_link for address in addresses], "min_ports_per_vm": FETCH_PORTS_PER_REPLICA}
    gcp.compute.RouterNat(
        f"{name}-nat",
        router=router.name,
        region=region,
        nat_ip_allocate_option="MANUAL_ONLY" if addresses else "AUTO_ONLY",
        source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
        subnetworks=[gcp.compute.RouterNatSubnetworkArgs(name=subnet.id, source_ip_ranges_to_nats=["ALL_IP_RANGES"])],
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[subnet])),
        **(manual if addresses else {}),  # type: ignore[arg-type]
    )
    return ServingNetwork(network, subnet, [address.address for address in addresses] if addresses else None)
