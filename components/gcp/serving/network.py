"""The serving project's own VPC: one replica subnet (Private Google Access: replicas reach Pub/Sub and
Cloud Storage without public IPs) and Cloud NAT for the rest of their egress (the container registry)."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from accelstack.components.gcp.network import FLOW_LOGS


def serving_network(svc: Any, name: str) -> tuple[gcp.compute.Network, gcp.compute.Subnetwork]:
    network = gcp.compute.Network(
        f"{name}-net",
        auto_create_subnetworks=False,  # custom mode: the only subnet is the one below
        routing_mode="REGIONAL",
        opts=svc.child,
    )
    subnet = gcp.compute.Subnetwork(
        f"{name}-replicas",
        network=network.id,
        region=svc.region,
        ip_cidr_range=svc.serving.network.vpc_cidr,
        private_ip_google_access=True,
        log_config=FLOW_LOGS,
        opts=svc.child,
    )
    router = gcp.compute.Router(f"{name}-router", network=network.id, region=svc.region, opts=svc.child)
    gcp.compute.RouterNat(
        f"{name}-nat",
        router=router.name,
        region=svc.region,
        nat_ip_allocate_option="AUTO_ONLY",
        source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
        subnetworks=[gcp.compute.RouterNatSubnetworkArgs(name=subnet.id, source_ip_ranges_to_nats=["ALL_IP_RANGES"])],
        opts=pulumi.ResourceOptions.merge(svc.child, pulumi.ResourceOptions(depends_on=[subnet])),
    )
    return network, subnet
