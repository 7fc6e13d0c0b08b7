"""The neutral address rules (`accelstack.spec.address_rules`) on every cloud: the ranges each cloud's components
carve from the stack's CIDR key stay clear of reserved addresses, do not overlap within one network, and each
subnet holds what it must at its most; the shipped stacks pass."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
from test_catalog_rules import CLOUD_WORKLOADS, SERVING_CLOUDS, at, problems

from accelstack.clouds import registry
from accelstack.spec import address_rules
from accelstack.spec.address_rules import CarvedRange, carved_ranges
from accelstack.spec.loader import load_stack

STACKS = Path(__file__).resolve().parents[2] / "stacks"
WORKLOADS = CLOUD_WORKLOADS
ADDRESS_WORDS = ("overlaps", "addresses, fewer than")


def key(workload: str) -> str:
    return f"{workload}.network.vpcCidr"


@pytest.mark.parametrize(("cloud", "workload"), WORKLOADS)
def test_the_shipped_stacks_carve_ranges_that_pass(cloud, workload):
    spec = load_stack(STACKS / f"Pulumi.{cloud}-{workload}.yaml")
    carved = carved_ranges(spec)
    assert [each for each in carved if each.holds], "every cloud says what its subnets hold"
    assert not [m for m in at(problems(cloud, workload), key(workload)) if any(w in m for w in ADDRESS_WORDS)]
    # Within one network the carved ranges are disjoint, and every subnet lies in the stack's CIDR.
    whole = ipaddress.IPv4Network(getattr(spec, workload).network.vpc_cidr)
    for index, first in enumerate(carved):
        assert first.network.subnet_of(whole), first
        assert not [
            s for s in carved[index + 1 :] if s.vpc and s.vpc == first.vpc and s.network.overlaps(first.network)
        ]


@pytest.mark.parametrize(
    ("cidr", "reserved"),
    [
        ("169.254.0.0/16", "169.254.0.0/16 (link-local"),
        ("127.0.0.0/16", "127.0.0.0/8 (loopback)"),
        ("224.0.0.0/16", "224.0.0.0/4 (multicast)"),
        ("0.0.0.0/16", "0.0.0.0/8 ('this network'"),
    ],
)
@pytest.mark.parametrize(("cloud", "workload"), WORKLOADS)
def test_a_cidr_in_a_range_no_network_may_use_is_refused_on_every_cloud(cloud, workload, cidr, reserved):
    found = at(problems(cloud, workload, f"{key(workload)}={cidr}"), key(workload))
    [message] = [m for m in found if "overlaps" in m]
    assert f"{cidr} overlaps {reserved}" in message
    assert message.endswith("allowed: a range inside " + address_rules.PRIVATE_RANGES + ", clear of it")


def test_azures_platform_address_is_refused_on_azure_only():
    [message] = [m for m in at(problems("azure", "training", f"{key('training')}=168.63.0.0/16"), key("training"))
                 if "overlaps" in m]  # fmt: skip
    assert "overlaps 168.63.129.16/32 (Azure's platform address" in message
    assert not [m for m in at(problems("gcp", "training", f"{key('training')}=168.63.0.0/16"), key("training"))
                if "overlaps" in m]  # fmt: skip


@pytest.mark.parametrize("cloud", SERVING_CLOUDS)
def test_dockers_bridge_is_refused_for_the_replicas_network_only(cloud):
    serving = [m for m in at(problems(cloud, "serving", f"{key('serving')}=172.17.0.0/16"), key("serving"))]
    assert any("overlaps 172.17.0.0/16 (Docker's default bridge on the replicas" in m for m in serving), serving
    if registry.get(cloud).deploys("training"):
        training = at(problems(cloud, "training", f"{key('training')}=172.17.0.0/16"), key("training"))
        assert not [m for m in training if "Docker" in m]


def test_overlapping_ranges_in_one_network_are_refused(monkeypatch):
    spec = load_stack(STACKS / "Pulumi.gcp-training.yaml")
    first = CarvedRange("training.network.vpcCidr", "the nodes' subnet", ipaddress.IPv4Network("10.0.0.0/20"), "vpc a")
    second = CarvedRange("training.network.vpcCidr", "a peering range", ipaddress.IPv4Network("10.0.8.0/21"), "vpc a")
    elsewhere = CarvedRange("training.network.vpcCidr", "a fabric subnet", ipaddress.IPv4Network("10.0.8.0/21"), "b")
    monkeypatch.setattr(address_rules, "carved_ranges", lambda _spec: [first, second, elsewhere])
    [problem] = address_rules.carved_ranges_do_not_overlap(spec)
    assert problem.path == "training.network.vpcCidr"
    assert problem.message.startswith("a peering range 10.0.8.0/21 overlaps the nodes' subnet 10.0.0.0/20 in vpc a")


@pytest.mark.parametrize(
    ("cloud", "overrides", "subnet", "takers"),
    [
        ("aws", ["serving.network.vpcCidr=10.8.0.0/24", "serving.replicas.max=60"], "the replicas' subnet 1",
         "30 instance refresh replacements"),
        ("azure", ["serving.network.vpcCidr=10.8.0.0/23", "serving.replicas.max=300"], "the replicas' subnet",
         "300 replicas"),
        ("gcp", ["serving.network.vpcCidr=10.8.0.0/28", "serving.replicas.max=9"], "the replicas' subnet",
         "3 surge VMs of a rolling update"),
        ("vultr", ["serving.network.vpcCidr=10.8.0.0/28", "serving.replicas.min=14", "serving.replicas.max=14"],
         "the replicas' VPC", "14 replicas"),
    ],
)  # fmt: skip
def test_a_replicas_subnet_counts_the_surge_and_the_standby_vms(cloud, overrides, subnet, takers):
    found = at(problems(cloud, "serving", *overrides), "serving.network.vpcCidr")
    [message] = [m for m in found if m.startswith(subnet + " ")]
    title = registry.get(cloud).title
    assert takers in message and "reserves per subnet); allowed: a subnet of /" in message and title in message


def test_the_alb_subnets_keep_eight_free_addresses():
    spec = load_stack(STACKS / "Pulumi.aws-serving.yaml")
    public = [each for each in carved_ranges(spec) if each.name.startswith("the public subnet")]
    assert len(public) == 2 and all((8, "free addresses the ALB needs") in each.holds for each in public)
