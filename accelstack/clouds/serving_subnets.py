"""What the cloud rule modules share about the serving replicas' subnet (each cloud names its own reserved count)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from accelstack.spec.models import ServingStack
from accelstack.spec.problems import Problem


def subnet_holds_the_group(
    spec: ServingStack, path: str, subnet: ipaddress.IPv4Network | ipaddress.IPv6Network, reserved: int, cloud: str
) -> Iterator[Problem]:
    """The replicas' subnet holds replicas.max, the standby VMs (the planner's warm pool) and the cloud's reserved
    addresses ."""
    from accelstack.clouds import registry
    from accelstack.planner.serving_plan import plan_serving

    warm = plan_serving(spec.serving, registry.get(spec.cloud).catalog).warm_pool_size
    most = spec.serving.replicas.max
    if subnet.num_addresses < most + warm + reserved:
        yield Problem(
            path,
            f"the replicas' subnet {subnet} has {subnet.num_addresses} addresses, fewer than serving.replicas.max "
            f"({most}) + the standby VMs ({warm}, serving.replicas.warmPool) + the {reserved} {cloud} reserves per "
            "subnet; use a larger serving.network.vpcCidr or fewer replicas",
        )
