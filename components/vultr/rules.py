"""What only Vultr's rendered components can measure, registered beside accelstack.clouds.vultr.rules: the replicas'
cloud-config at its longest against Vultr's user-data limit (accelstack.spec.catalog_rules), and the one range its
components carve (accelstack.spec.address_rules)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from accelstack.clouds import registry
from accelstack.components.recipes.serving import ReplicaAdmission
from accelstack.components.vultr.serving.user_data import LOAD_BALANCER_CLIENT_HOP, replica_user_data
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec.address_rules import CarvedRange, carves
from accelstack.spec.catalog_rules import BootData, boot_data
from accelstack.spec.models import ServingStack


@boot_data(workload="serving")
def replica_user_data_at_its_longest(spec: ServingStack) -> Iterator[BootData]:
    """The replica's cloud-config (the instance's user data), rendered as the Vultr components will."""
    serving = spec.serving
    try:
        plan = plan_serving(serving, registry.get(spec.cloud).catalog)
        admission = ReplicaAdmission.planned(serving, plan, client_hop=LOAD_BALANCER_CLIENT_HOP)
        text = replica_user_data(serving, plan, region=spec.account.region, admission=admission)
    except (ValueError, KeyError):
        return  # an input another rule reports stops rendering
    yield BootData.of_replicas(serving, text)


# Addresses a Vultr VPC keeps to itself: Vultr documents none; the network, gateway and broadcast addresses are
# assumed taken (the conventional three), so a subnet sized by this rule is never one address short.
VPC_RESERVED_ADDRESSES = 3


@carves(workload="serving")
def serving_ranges(spec: ServingStack) -> Iterator[CarvedRange]:
    """serving.network.vpcCidr is the VPC's one subnet (components/vultr/serving/edge.py `vpc`): the fixed fleet's
    replicas and the load balancer's private address; Docker's bridge on the replicas must stay out of it."""
    network = spec.serving.network
    if network.vpc_id is not None or network.vpc_cidr is None:
        return
    path = "serving.network.vpcCidr"
    holds = ((spec.serving.replicas.max, "replicas (serving.replicas.max)"), (1, "the load balancer"))
    subnet = ipaddress.IPv4Network(network.vpc_cidr)
    yield CarvedRange(path, "the replicas' VPC", subnet, "the VPC", VPC_RESERVED_ADDRESSES, holds)
