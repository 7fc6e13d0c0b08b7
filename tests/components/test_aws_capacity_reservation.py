"""On-Demand Capacity Reservations: `capacity: on-demand` with a `reservationId` launches the nodes
into that reservation (a targeted launch), at on-demand prices, in the reservation's zone."""

from __future__ import annotations

import pytest

from tests.components.test_aws_training import NO_SCHEDULER, STACK, node_template, stack

ODCR = ("training.nodes.reservationId=cr-0123456789abcdef0", "training.network.availabilityZone=us-east-1b")


@pytest.mark.parametrize("scheduler", [NO_SCHEDULER, "training.scheduler.kind=slurm"])
def test_on_demand_with_a_reservation_targets_it_without_a_market(scheduler) -> None:
    cap = stack(scheduler, *ODCR)
    template = node_template(cap).inputs
    assert "instanceMarketOptions" not in template  # on-demand: no spot, no capacity-block market
    target = template["capacityReservationSpecification"]["capacityReservationTarget"]
    assert target == {"capacityReservationId": "cr-0123456789abcdef0"}


def test_the_cluster_subnet_is_in_the_reservations_zone() -> None:
    cap = stack(NO_SCHEDULER, *ODCR)
    zones = {r.inputs.get("availabilityZone") for r in cap.by_type("aws:ec2/subnet:Subnet")}
    assert zones == {"us-east-1b"}


def test_the_head_node_does_not_consume_the_reservation() -> None:
    cap = stack("training.scheduler.kind=slurm", *ODCR)
    [head] = [r for r in cap.by_type("aws:ec2/instance:Instance") if r.name == f"{STACK}-head"]
    assert "capacityReservationSpecification" not in head.inputs
