"""The real program (`__main__.py`) on the Vultr serving stack, captured under mocks: what an operator relies on.
Only the load balancer's side reaches the replicas' port, the load balancer answers HTTPS and checks the health path
through the admission proxy, the fleet is the planner's fixed size, and neither the API key, the certificate's key
nor a weights key is in what a replica boots with."""

from __future__ import annotations

import base64
import ipaddress
import re
from functools import cache
from pathlib import Path

import pytest
import yaml

from accelstack.components.vultr.serving.weights_key import OFFLINE_SIGNER
from accelstack.engine.capture import Capture, capture, config_for_pulumi
from accelstack.spec import SpecError, load_stack
from accelstack.spec.loader import apply_overrides, read_stack_file

REPO = Path(__file__).resolve().parents[3]
MAIN = REPO / "__main__.py"
EXAMPLE = REPO / "stacks" / "Pulumi.vultr-serving.yaml"
STACK = "vultr-serving"
INSTANCE = "vultr:index/instance:Instance"
LB = "vultr:index/loadBalancer:LoadBalancer"
RULE = "vultr:index/firewallRule:FirewallRule"
GROUP = "vultr:index/firewallGroup:FirewallGroup"
VPC = "vultr:index/vpc:Vpc"


@cache
def run(*overrides: str) -> Capture:
    raw = apply_overrides(read_stack_file(EXAMPLE), list(overrides))
    return capture(MAIN, config_for_pulumi(raw), stack=STACK)


def user_data(cap: Capture) -> dict:
    [first, *_] = cap.by_type(INSTANCE)
    text = first.inputs["userData"]
    return yaml.safe_load(text)


def test_the_fleet_is_the_planners_fixed_size_in_the_vpc_behind_the_firewall_group():
    cap = run()
    spec = load_stack(EXAMPLE)
    instances = cap.by_type(INSTANCE)
    assert len(instances) == spec.serving.replicas.max == spec.serving.replicas.min
    [vpc] = cap.by_type(VPC)
    [group] = cap.by_type(GROUP)
    for instance in instances:
        assert instance.inputs["plan"] == "vcg-l40s-16c-180g-48vram"
        assert instance.inputs["region"] == "ewr"
        assert instance.inputs["vpcIds"] == [vpc.outputs["id"]]
        assert instance.inputs["firewallGroupId"] == group.outputs["id"]
        assert "accelstack:workload=serving" in instance.inputs["tags"]
    assert len(run("serving.replicas.min=3", "serving.replicas.max=3").by_type(INSTANCE)) == 3


def test_only_the_vpc_side_reaches_the_serving_port_and_nothing_else_is_open():
    cap = run()
    spec = load_stack(EXAMPLE)
    [rule] = cap.by_type(RULE)
    network = ipaddress.IPv4Network(spec.serving.network.vpc_cidr)
    assert rule.inputs["protocol"] == "tcp"
    assert rule.inputs["port"] == str(spec.serving.load_balancer.port)
    assert (rule.inputs["subnet"], rule.inputs["subnetSize"]) == (str(network.network_address), network.prefixlen)
    [vpc] = cap.by_type(VPC)
    assert (vpc.inputs["v4Subnet"], vpc.inputs["v4SubnetMask"]) == (str(network.network_address), network.prefixlen)


def test_the_load_balancer_answers_https_and_checks_health_through_the_proxy():
    cap = run()
    spec = load_stack(EXAMPLE)
    [lb] = cap.by_type(LB)
    assert lb.inputs["forwardingRules"] == [
        {"frontendProtocol": "https", "frontendPort": 443, "backendProtocol": "http", "backendPort": 8000}
    ]
    assert lb.inputs["sslRedirect"] is True
    check = lb.inputs["healthCheck"]
    assert check["protocol"] == "http" and check["path"] == spec.serving.load_balancer.health_path
    assert check["port"] == spec.serving.load_balancer.port
    assert 3 <= check["checkInterval"] <= 300 and 1 <= check["responseTimeout"] <= 300
    assert sorted(lb.inputs["attachedInstances"]) == sorted(i.outputs["id"] for i in cap.by_type(INSTANCE))
    [vpc] = cap.by_type(VPC)
    assert lb.inputs["vpc"] == vpc.outputs["id"]


def test_the_replica_boots_the_admission_proxy_in_front_of_a_loopback_server_and_carries_no_key():
    cap = run()
    doc = user_data(cap)
    paths = {f["path"]: f for f in doc["write_files"]}
    assert "/opt/accelstack/admission_proxy.py" in paths
    env = paths["/etc/accelstack/worker.env"]["content"]
    assert "ACCELSTACK_ADMISSION_PER_CLIENT_RATE=600" in env
    assert "ACCELSTACK_ADMISSION_CLIENT_HOP=1" in env
    server = paths["/etc/systemd/system/accelstack-server.service"]["content"]
    assert "--host 127.0.0.1" in server
    prepare = paths["/usr/local/bin/accelstack-prepare"]["content"]
    assert "--endpoint-url https://ewr1.vultrobjects.com" in prepare
    assert "/etc/accelstack/weights-key.env" in prepare
    text = cap.by_type(INSTANCE)[0].inputs["userData"]
    decoded = [base64.b64decode(f["content"]).decode() for f in doc["write_files"] if f.get("encoding") == "b64"]
    # No key assignment with a value (the prepare script names the variables it checks for, with nothing after them).
    for secretish in (
        re.compile(r"AWS_SECRET_ACCESS_KEY=[A-Za-z0-9/+]"),
        re.compile("PRIVATE KEY|VULTR_SERVING_API_KEY"),
    ):
        assert not secretish.search(text) and not any(secretish.search(d) for d in decoded)
    # Nor the signer's secret: the user data carries only the URL signed with it.
    assert OFFLINE_SIGNER[1] not in text


@pytest.mark.parametrize(
    ("override", "path", "says"),
    [
        ("serving.admission.kind=queue", "serving.admission.kind", "Vultr has no managed queue"),
        ("serving.replicas.capacity=spot", "serving.replicas.capacity", "spot"),
        ("serving.replicas.warmPool=1", "serving.replicas.warmPool", "warmPool 0"),
        ("serving.replicas.instanceType=vcg-a100-12c-120g-80vram", "serving.replicas.instanceType", None),
        (
            "serving.loadBalancer.certificate=-----BEGIN CERTIFICATE-----",
            "serving.loadBalancer.certificate",
            "has a space",
        ),
        ("serving.loadBalancer.certificate=arn:aws:acm:x", "serving.loadBalancer.certificate", "env:<VARIABLE>"),
        ("serving.replicas.instanceType=vcg-h100-unknown", "serving.replicas.instanceType", "vcg-l40s"),
    ],
)
def test_validate_refuses_what_vultr_refuses_at_its_path(tmp_path: Path, override: str, path: str, says: str | None):
    raw = apply_overrides(read_stack_file(EXAMPLE), [override])
    if override.endswith("vcg-a100-12c-120g-80vram"):
        # Sold in ewr: refused only where the plan list does not have it (Seattle).
        raw["account"]["region"] = "sea"
        raw["separation"]["allowedRegions"] = ["sea"]
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    target = stacks / EXAMPLE.name
    target.write_text(yaml.safe_dump({"config": {f"accelstack:{key}": value for key, value in raw.items()}}))
    with pytest.raises(SpecError) as error:
        load_stack(target)
    problems = [p for p in error.value.problems if p.path == path]
    assert problems, [f"{p.path}: {p.message}" for p in error.value.problems]
    if says:
        assert any(says in p.message for p in problems), [p.message for p in problems]
