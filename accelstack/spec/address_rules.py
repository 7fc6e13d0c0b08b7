"""Address rules every cloud enforces alike, written once: the ranges a stack's network carves out of its CIDR
keys stay clear of the addresses no network may use, do not overlap one another within one network, and each
subnet holds every address its machines take at their most.

What a cloud carves (its subnets, its file system's range, its peering range) and what each subnet holds (nodes,
the head, replicas at their maximum with the surge of a rolling update, standby VMs, load balancer instances,
endpoints) is the cloud's to say: its rule modules register an `@carves(workload=...)` that yields
`CarvedRange`s, computed with the same functions its components carve with. The reserved ranges are the neutral
ones below plus the cloud's own (`Cloud.reserved_ranges`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, overload

from accelstack.clouds import registry
from accelstack.clouds.base import ReservedRange
from accelstack.spec.models import ServingStack, StackSpec, TrainingStack
from accelstack.spec.problems import Problem
from accelstack.spec.rule_registry import Registered, Workload, in_run_order, rule

# No network of any cloud may use these (RFC 6890's special-purpose ranges that no host can be given; each cloud's
# VPC documentation lists them among its unusable ranges: AWS "VPC CIDR blocks", Azure "What address ranges can I
# use in my VNets?", Google "Valid IPv4 ranges").
UNUSABLE_EVERYWHERE = (
    ReservedRange("0.0.0.0/8", "'this network' (RFC 1122), not assignable"),
    ReservedRange("127.0.0.0/8", "loopback"),
    ReservedRange("169.254.0.0/16", "link-local; every cloud's metadata service answers at 169.254.169.254"),
    ReservedRange("224.0.0.0/4", "multicast"),
    ReservedRange("255.255.255.255/32", "limited broadcast"),
)
# The serving replicas run the inference server with Docker, whose default bridge is 172.17.0.0/16
# (docs.docker.com/engine/network/drivers/bridge): the host routes that range to docker0, so load balancer nodes,
# NAT and peers addressed in it would get no answer from a replica.
UNUSABLE_ON_REPLICAS = (ReservedRange("172.17.0.0/16", "Docker's default bridge on the replicas (docker0)"),)
PRIVATE_RANGES = "10.0.0.0/8, 172.16.0.0/12 (outside 172.17.0.0/16 for serving) or 192.168.0.0/16"
# RFC 1918's private blocks. A range outside them is someone's public addresses: the stack's firewall rules admit
# its own network's range, so they would admit those hosts from the internet (the guardrail packs' no-internet-
# ingress refuses that at preview), and the hosts behind it become unreachable from the stack.
RFC1918 = tuple(ipaddress.IPv4Network(cidr) for cidr in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))


@dataclass(frozen=True)
class CarvedRange:
    """One range a cloud's components carve (or take whole) from a stack's CIDR key."""

    path: str  # the config key it comes from: "training.network.vpcCidr"
    name: str  # what it is, in messages: "the nodes' subnet"
    network: ipaddress.IPv4Network
    vpc: str = ""  # the network it lives in ("" : the whole address space itself, checked for reserved ranges only)
    reserved: int = 0  # addresses the cloud keeps in each subnet (AWS and Azure 5, Google 4); 0: not a subnet
    holds: tuple[tuple[int, str], ...] = ()  # (addresses, who takes them) at their most

    @property
    def needed(self) -> int:
        return self.reserved + sum(count for count, _ in self.holds)


PLANS: list[Registered[CarvedRange]] = []

TrainingPlan = TypeVar("TrainingPlan", bound=Callable[[TrainingStack], Iterator[CarvedRange]])
ServingPlan = TypeVar("ServingPlan", bound=Callable[[ServingStack], Iterator[CarvedRange]])


@overload
def carves(*, workload: Literal["training"]) -> Callable[[TrainingPlan], TrainingPlan]: ...
@overload
def carves(*, workload: Literal["serving"]) -> Callable[[ServingPlan], ServingPlan]: ...
def carves(*, workload: Workload) -> Any:
    """Register what `workload` stacks' networks carve on a cloud (in a module its `Cloud.rules` names)."""

    def register(plan: Callable[..., Iterator[CarvedRange]]) -> Callable[..., Iterator[CarvedRange]]:
        PLANS.append(Registered(plan, workload))
        return plan

    return register


def carved_ranges(spec: StackSpec) -> list[CarvedRange]:
    """Every range `spec`'s cloud carves, as its components will (none where the stack brings its network)."""
    try:
        return [carved for plan in in_run_order(PLANS, spec.cloud) for carved in plan(spec)]
    except ValueError:
        return []  # a CIDR too small to carve: the cloud's own size rule names it


def unusable_ranges(spec: StackSpec) -> tuple[ReservedRange, ...]:
    on_replicas = UNUSABLE_ON_REPLICAS if isinstance(spec, ServingStack) else ()
    return (*UNUSABLE_EVERYWHERE, *registry.get(spec.cloud).reserved_ranges, *on_replicas)


@rule
def carved_ranges_avoid_reserved_addresses(spec: StackSpec) -> Iterator[Problem]:
    """No range of the stack's network overlaps one no network may use (loopback, link-local and the metadata
    service, multicast, broadcast), one the cloud keeps for itself, or Docker's bridge on the replicas: the create
    call refuses it, or the machines would route those addresses elsewhere."""
    reported: set[tuple[str, str]] = set()
    for carved in carved_ranges(spec):
        for reserved in unusable_ranges(spec):
            if (carved.path, reserved.cidr) in reported or not carved.network.overlaps(reserved.network):
                continue
            reported.add((carved.path, reserved.cidr))
            yield Problem(
                carved.path,
                f"{carved.name} {carved.network} overlaps {reserved.cidr} ({reserved.why}), which a {spec.workload} "
                f"network on {spec.cloud} cannot use; allowed: a range inside {PRIVATE_RANGES}, clear of it",
            )


@rule
def carved_ranges_are_private(spec: StackSpec) -> Iterator[Problem]:
    """Each range of the stack's network lies inside RFC 1918's private blocks (RFC1918 above)."""
    reported: set[str] = set()
    for carved in carved_ranges(spec):
        if carved.path in reported or any(carved.network.subnet_of(block) for block in RFC1918):
            continue
        if any(carved.network.overlaps(reserved.network) for reserved in UNUSABLE_EVERYWHERE):
            continue  # the reserved-range rule names it
        reported.add(carved.path)
        yield Problem(
            carved.path,
            f"{carved.name} {carved.network} is not a private range (RFC 1918): the stack's firewall admits its own "
            f"network, which would be public addresses; allowed: a range inside {PRIVATE_RANGES}",
        )


@rule
def carved_ranges_do_not_overlap(spec: StackSpec) -> Iterator[Problem]:
    """Within one network, no two carved ranges overlap (subnets, the file system's subnet, a peering range): the
    cloud refuses the second."""
    carved = [each for each in carved_ranges(spec) if each.vpc]
    for index, first in enumerate(carved):
        for second in carved[index + 1 :]:
            if first.vpc == second.vpc and first.network.overlaps(second.network):
                yield Problem(
                    second.path,
                    f"{second.name} {second.network} overlaps {first.name} {first.network} in {first.vpc}; "
                    "allowed: disjoint ranges (a larger CIDR gives each its own block)",
                )


@rule
def subnets_hold_their_machines(spec: StackSpec) -> Iterator[Problem]:
    """Each subnet holds every address taken in it at its most (nodes, the head, replicas at their maximum with a
    rolling update's surge and the standby VMs, load balancer instances, endpoints) besides the addresses the cloud
    keeps per subnet: a group larger than its subnet leaves machines uncreated (IP space exhausted)."""
    title = registry.get(spec.cloud).title
    for carved in carved_ranges(spec):
        if not carved.holds or carved.needed <= carved.network.num_addresses:
            continue
        takers = " + ".join(f"{count} {who}" for count, who in carved.holds if count)
        prefix = next(p for p in range(carved.network.prefixlen, -1, -1) if 2 ** (32 - p) >= carved.needed)
        yield Problem(
            carved.path,
            f"{carved.name} {carved.network} has {carved.network.num_addresses} addresses, fewer than the "
            f"{carved.needed} it needs ({takers} + the {carved.reserved} {title} reserves per subnet); allowed: "
            f"a subnet of /{prefix} or larger (a larger {carved.path.rsplit('.', 1)[-1]}) or fewer machines",
        )
