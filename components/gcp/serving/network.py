"""The serving project's own VPC: one replica subnet (Private Google Access: replicas reach Pub/Sub and
Cloud Storage without public IPs) and Cloud NAT for the rest of their egress (the container registry)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from accelstack.components.gcp.network import FLOW_LOGS
from accelstack.spec.models import ServingSpec


@dataclass(frozen=True)
class ServingNetwork:
    network: gcp.compute.Network
    subnet: gcp.compute.Subnetwork


def serving_network(name: str, serving: ServingSpec, region: str, opts: pulumi.ResourceOptions) -> ServingNetwork:
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
    gcp.compute.RouterNat(
        f"{name}-nat",
        router=router.name,
        region=region,
        nat_ip_allocate_option="AUTO_ONLY",
        source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
        subnetworks=[gcp.compute.RouterNatSubnetworkArgs(name=subnet.id, source_ip_ranges_to_nats=["ALL_IP_RANGES"])],
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[subnet])),
    )
    return ServingNetwork(network, subnet)
