"""Create-time rules for Azure and Google Cloud added with the fresh-account work: regions the cloud has, subnets
that hold what the stack puts in them (nodes and head, or replicas and standby VMs, plus the addresses each cloud
reserves), and the capacity reservation an Azure scale set draws on. Each valid spelling passes, each invalid one is
refused at its key naming the cloud's rule, and the shipped examples stay clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelstack.spec.loader import SpecError, apply_overrides, parse_spec, read_stack_file, spec_warnings
from accelstack.spec.problems import Level, Problem

STACKS = Path(__file__).resolve().parents[2] / "stacks"
CRG = "/subscriptions/3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c/resourceGroups/gpu-rg/providers/Microsoft.Compute/capacityReservationGroups/h100"


def sized(spec, cidr: str, count: int):  # type: ignore[no-untyped-def]
    """`spec` with another VNet/VPC range and node count (past the count bounds the parsed spec checks)."""
    training = spec.training
    network = training.network.model_copy(update={"vpc_cidr": cidr})
    nodes = training.nodes.model_copy(update={"count": count})
    return spec.model_copy(update={"training": training.model_copy(update={"network": network, "nodes": nodes})})


def problems(stack: str, *overrides: str) -> list[Problem]:
    raw = apply_overrides(read_stack_file(STACKS / f"Pulumi.{stack}.yaml"), list(overrides))
    try:
        spec = parse_spec(raw, stack)
    except SpecError as error:
        return error.problems
    return spec_warnings(spec)


def at(path: str, stack: str, *overrides: str, level: Level = Level.ERROR) -> list[str]:
    return [p.message for p in problems(stack, *overrides) if p.path == path and p.level is level]


@pytest.mark.parametrize("stack", ["azure-training", "azure-serving", "gcp-training", "gcp-serving"])
def test_the_examples_stay_clean(stack: str) -> None:
    """Clean but for the import warning of a training example that creates its dataset bucket (its Lustre imports
    only when asked: tests/conformance/test_dataset_import.py)."""
    assert [p for p in problems(stack) if p.path != "training.storage.lustre.importTrigger"] == []


@pytest.mark.parametrize(
    ("stack", "path", "overrides", "expected"),
    [
        (
            "gcp-training",
            "account.region",
            ("account.region=us-central9", "separation.allowedRegions=null"),
            "Compute Engine region",
        ),
        (
            "gcp-serving",
            "account.region",
            ("account.region=europe-west99", "separation.allowedRegions=null"),
            "Compute Engine region",
        ),
        (
            "gcp-training",
            "separation.allowedRegions.1",
            ('separation.allowedRegions=["us-central1", "us-central9"]',),
            "Compute Engine region",
        ),
        (
            "azure-training",
            "account.location",
            ("account.location=eastuss", "separation.allowedRegions=null"),
            "not an Azure region",
        ),
        (
            "azure-serving",
            "account.location",
            ("account.location=westus9", "separation.allowedRegions=null"),
            "not an Azure region",
        ),
    ],
)
def test_an_unknown_region_is_refused_at_its_key(
    stack: str, path: str, overrides: tuple[str, ...], expected: str
) -> None:
    messages = at(path, stack, *overrides)
    assert any(expected in m and "checked" in m for m in messages), messages


@pytest.mark.parametrize(
    ("stack", "region"),
    [("gcp-training", "europe-west4"), ("gcp-serving", "asia-southeast1"), ("azure-training", "westeurope")],
)
def test_a_known_region_passes(stack: str, region: str) -> None:
    key = "account.location" if stack.startswith("azure") else "account.region"
    assert not [
        p
        for p in problems(stack, f"{key}={region}", "separation.allowedRegions=null")
        if "region" in p.message and p.path == key
    ]


def test_the_azure_replica_subnet_must_hold_the_group_and_its_standby_vms() -> None:
    (message,) = at(
        "serving.network.vpcCidr", "azure-serving", "serving.network.vpcCidr=10.0.0.0/23", "serving.replicas.max=250"
    )
    assert (
        "251" not in message
        and "10.0.1.0/24" in message
        and "5 Microsoft Azure reserves" in message
        and "250 replicas" in message
    )
    assert not at(
        "serving.network.vpcCidr",
        "azure-serving",
        "serving.network.vpcCidr=10.0.0.0/23",
        "serving.replicas.max=200",
        "serving.replicas.warmPool=10",
    )
    # 246 + 5 fills the /24 exactly: one more replica does not fit.
    assert not at(
        "serving.network.vpcCidr",
        "azure-serving",
        "serving.network.vpcCidr=10.0.0.0/23",
        "serving.replicas.max=241",
        "serving.replicas.warmPool=10",
    )
    assert at(
        "serving.network.vpcCidr",
        "azure-serving",
        "serving.network.vpcCidr=10.0.0.0/23",
        "serving.replicas.max=242",
        "serving.replicas.warmPool=10",
    )


def test_the_gcp_replica_subnet_must_hold_the_group_and_its_standby_vms() -> None:
    (message,) = at(
        "serving.network.vpcCidr",
        "gcp-serving",
        "serving.network.vpcCidr=10.8.0.0/28",
        "serving.replicas.max=10",
        "serving.replicas.warmPool=3",
    )
    assert "16 addresses" in message and "4 Google Cloud reserves" in message
    assert "3 surge VMs of a rolling update" in message
    assert not at(
        "serving.network.vpcCidr",
        "gcp-serving",
        "serving.network.vpcCidr=10.8.0.0/28",
        "serving.replicas.max=6",  # 6 + 3 standby + 3 surge + 4 reserved = 16
        "serving.replicas.warmPool=3",
    )


def test_the_azure_nodes_subnet_must_hold_the_nodes_and_the_head() -> None:
    # A /22 VNet: the nodes' /23 holds 512 - 5 - 1 = 506 nodes (the check runs whatever the IB count rule says).
    assert not at("training.network.vpcCidr", "azure-training", "training.network.vpcCidr=10.40.0.0/16")
    spec = parse_spec(read_stack_file(STACKS / "Pulumi.azure-training.yaml"), "azure-training")
    from accelstack.spec.address_rules import subnets_hold_their_machines

    # nodes' /27: 32 - 5 - 1 = 26 nodes
    assert list(subnets_hold_their_machines(sized(spec, "10.40.0.0/26", 26))) == []
    (problem,) = subnets_hold_their_machines(sized(spec, "10.40.0.0/26", 27))
    assert problem.path == "training.network.vpcCidr" and "the 5 Microsoft Azure reserves" in problem.message
    assert "27 nodes + 1 Slurm head" in problem.message


def test_the_gcp_nodes_subnet_must_hold_the_nodes_and_the_head() -> None:
    from accelstack.spec.address_rules import subnets_hold_their_machines

    spec = parse_spec(read_stack_file(STACKS / "Pulumi.gcp-training.yaml"), "gcp-training")
    # nodes' /19: 8192 - 4 - 1 = 8187 nodes
    assert list(subnets_hold_their_machines(sized(spec, "10.0.0.0/18", 8187))) == []
    (problem,) = subnets_hold_their_machines(sized(spec, "10.0.0.0/18", 8188))
    assert problem.path == "training.network.vpcCidr" and "the 4 Google Cloud reserves" in problem.message


def test_a_capacity_reservation_names_the_size_and_zone_it_must_hold() -> None:
    (message,) = at(
        "training.nodes.reservationId", "azure-training", "training.nodes.count=1", f"training.nodes.reservationId={CRG}",
        level=Level.WARNING,
    )  # fmt: skip
    assert (
        "Standard_ND96isr_H100_v5" in message and "zone 1 of eastus" in message and "--resource-group gpu-rg" in message
    )
    assert not at("training.nodes.reservationId", "azure-training", level=Level.WARNING)
