"""The new VPCs both stacks build (one shared construction: accelstack.components.aws.network.create_nat_vpc),
captured from the real program on the shipped stacks under mocks.

What an operator relies on: private subnets reach the internet only through a NAT gateway in
their own AZ (an AZ outage must not cut another zone's egress), public subnets route to the
internet gateway, and S3 traffic from every private subnet takes the gateway endpoint, not NAT.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import ClassVar

import pytest

from accelstack.components.aws.mocks import AwsMocks
from accelstack.components.aws.network import pick_zones
from accelstack.engine.capture import Capture, capture, config_for_pulumi
from accelstack.spec.loader import apply_overrides, read_stack_file

REPO = Path(__file__).resolve().parents[2]
MAIN = REPO / "__main__.py"

SUBNET = "aws:ec2/subnet:Subnet"
ROUTES = "aws:ec2/routeTable:RouteTable"
ASSOCIATION = "aws:ec2/routeTableAssociation:RouteTableAssociation"
NAT = "aws:ec2/natGateway:NatGateway"
EIP = "aws:ec2/eip:Eip"
GATEWAY = "aws:ec2/internetGateway:InternetGateway"
ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"


@cache
def run(stack: str) -> Capture:
    raw = read_stack_file(REPO / "stacks" / f"Pulumi.{stack}.yaml")
    return capture(MAIN, config_for_pulumi(raw), stack=stack)


def egress_by_subnet(cap: Capture) -> dict[str, dict]:
    """Subnet name -> its route table's default route (as the program wrote it)."""
    tables = {t.id: t for t in cap.by_type(ROUTES)}
    subnets = {s.id: s for s in cap.by_type(SUBNET)}
    routes = {}
    for association in cap.by_type(ASSOCIATION):
        subnet = subnets[association.inputs["subnetId"]]
        [default] = tables[association.inputs["routeTableId"]].inputs["routes"]
        assert default["cidrBlock"] == "0.0.0.0/0"
        routes[subnet.name] = default
    return routes


def check_nat_vpc(cap: Capture, private: list[str], public: list[str]) -> None:
    subnets = {s.name: s for s in cap.by_type(SUBNET)}
    routes = egress_by_subnet(cap)
    assert set(routes) == set(private) | set(public), "every subnet has exactly one route table"
    gateway = cap.one(GATEWAY)
    nats = {n.id: n for n in cap.by_type(NAT)}
    assert len(nats) == len(private) == len(cap.by_type(EIP))
    for name in public:
        assert routes[name].get("gatewayId") == gateway.id
    nat_subnets = set()
    for name in private:
        nat = nats[routes[name]["natGatewayId"]]
        nat_subnet = next(s for s in subnets.values() if s.id == nat.inputs["subnetId"])
        assert nat_subnet.name in public
        assert nat_subnet.inputs["availabilityZone"] == subnets[name].inputs["availabilityZone"]
        nat_subnets.add(nat_subnet.name)
    assert nat_subnets == set(public), "one NAT gateway per zone"
    [s3] = [e.inputs for e in cap.by_type(ENDPOINT) if e.inputs["serviceName"] == "com.amazonaws.us-east-1.s3"]
    private_tables = {t.id for t in cap.by_type(ROUTES) if t.inputs["routes"][0].get("natGatewayId")}
    assert s3["vpcEndpointType"] == "Gateway" and set(s3["routeTableIds"]) == private_tables
    assert not any(s.inputs.get("mapPublicIpOnLaunch") for s in subnets.values())


def test_serving_vpc_gives_each_zone_its_own_nat_and_the_s3_endpoint() -> None:
    cap = run("aws-serving")
    check_nat_vpc(
        cap,
        private=["aws-serving-net-private-a", "aws-serving-net-private-b"],
        public=["aws-serving-net-public-a", "aws-serving-net-public-b"],
    )
    zones = {s.inputs["availabilityZone"] for s in cap.by_type(SUBNET)}
    assert len(zones) == 2


def test_training_vpc_is_one_zone_with_the_nat_in_the_small_public_subnet() -> None:
    cap = run("aws-training")
    check_nat_vpc(cap, private=["aws-training-net-cluster"], public=["aws-training-net-nat"])
    subnets = {s.name: s.inputs for s in cap.by_type(SUBNET)}
    assert subnets["aws-training-net-nat"]["cidrBlock"].endswith("/28")


class RegionWithLocalZoneAndPatchyGpus(AwsMocks):
    """us-east-1 as an account that opted in to a Local Zone sees it: EC2 lists it among "available"
    zones (unless filtered to opt-in-not-required) and it sorts before the AZs; the GPU type is not
    offered in us-east-1a. Answers honour the filters the program sends, as EC2 would."""

    ZONES: ClassVar[dict[str, str]] = {"us-east-1-bos-1a": "opted-in", "us-east-1a": "opt-in-not-required",
             "us-east-1b": "opt-in-not-required", "us-east-1c": "opt-in-not-required",
             "us-east-1d": "opt-in-not-required"}  # fmt: skip
    OFFERED = frozenset({"us-east-1-bos-1a", "us-east-1b", "us-east-1d"})

    def __init__(self) -> None:
        super().__init__(account_id="222222222222")
        self.offering_filters: list = []

    def call(self, args):
        if args.token == "aws:index/getAvailabilityZones:getAvailabilityZones":
            wanted = {f["name"]: f["values"] for f in args.args.get("filters") or []}
            names = [z for z, status in self.ZONES.items() if status in wanted.get("opt-in-status", [status])]
            return {"names": names}, []
        if args.token == "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings":
            self.offering_filters.append(args.args)
            return {"locations": sorted(self.OFFERED)}, []
        return super().call(args)


def test_serving_zones_are_real_azs_that_offer_the_replica_instance_type() -> None:
    raw = read_stack_file(REPO / "stacks" / "Pulumi.aws-serving.yaml")
    cloud = RegionWithLocalZoneAndPatchyGpus()
    cap = capture(MAIN, config_for_pulumi(raw), stack="aws-serving", mocks=cloud)
    zones = sorted(s.inputs["availabilityZone"] for s in cap.by_type(SUBNET) if "-private-" in s.name)
    # Not the Local Zone (no ALB there), not us-east-1a (no g6e there): the first two AZs that offer it.
    assert zones == ["us-east-1b", "us-east-1d"]
    [query] = cloud.offering_filters
    assert query["locationType"] == "availability-zone"
    assert query["filters"] == [{"name": "instance-type", "values": ["g6e.xlarge"]}]


def test_too_few_zones_offering_the_instance_type_is_refused_naming_the_config() -> None:
    with pytest.raises(ValueError, match=r"serving.replicas.instanceType: p5.48xlarge is offered in 1 .*us-east-1b"):
        pick_zones(
            ["us-east-1a", "us-east-1b", "us-east-1c"],
            ["us-east-1b"],
            "p5.48xlarge",
            2,
            "serving.replicas.instanceType",
        )


def test_training_cluster_subnet_is_in_the_first_az_that_offers_the_node_type() -> None:
    raw = read_stack_file(REPO / "stacks" / "Pulumi.aws-training.yaml")
    cloud = RegionWithLocalZoneAndPatchyGpus()
    cloud.account_id = "111111111111"
    cap = capture(MAIN, config_for_pulumi(raw), stack="aws-training", mocks=cloud)
    [cluster] = [s for s in cap.by_type(SUBNET) if s.name.endswith("-cluster")]
    # Not the opted-in Local Zone that sorts first, not us-east-1a (no such GPUs there).
    assert cluster.inputs["availabilityZone"] == "us-east-1b"
    assert [q["filters"] for q in cloud.offering_filters] == [[{"name": "instance-type", "values": ["p5.48xlarge"]}]]


# --- flow logs and the default security group (Checkov CKV2_AWS_11, CKV2_AWS_12) -------------------

FLOW_LOG = "aws:ec2/flowLog:FlowLog"
DEFAULT_SG = "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"


@pytest.mark.parametrize(("stack", "account"), [("aws-training", "111111111111"), ("aws-serving", "222222222222")])
def test_every_new_vpc_logs_its_flows_to_s3_and_closes_its_default_group(stack: str, account: str) -> None:
    cap = run(stack)
    vpc = cap.one("aws:ec2/vpc:Vpc")
    [flow_log] = cap.by_type(FLOW_LOG)
    [bucket] = [b for b in cap.by_type("aws:s3/bucket:Bucket") if b.name.endswith("-net-flow-logs")]
    assert flow_log.inputs["vpcId"] == vpc.id and flow_log.inputs["trafficType"] == "ALL"
    assert flow_log.inputs["logDestinationType"] == "s3"
    assert flow_log.inputs["logDestination"] == f"{bucket.outputs['arn']}/vpc-flow-logs"
    assert flow_log.inputs["destinationOptions"]["fileFormat"] == "parquet"
    [policy] = [p for p in cap.by_type("aws:s3/bucketPolicy:BucketPolicy") if p.inputs["bucket"] == bucket.id]
    assert policy.urn in flow_log.dependencies, "CreateFlowLogs checks delivery may write: the policy first"
    statements = {s["Sid"]: s for s in json.loads(policy.inputs["policy"])["Statement"]}
    write = statements["FlowLogDeliveryWrite"]
    assert write["Principal"] == {"Service": "delivery.logs.amazonaws.com"}
    assert write["Resource"] == f"{bucket.outputs['arn']}/vpc-flow-logs/AWSLogs/{account}/*"
    assert write["Condition"]["StringEquals"]["aws:SourceAccount"] == account
    assert statements["FlowLogDeliveryAclCheck"]["Resource"] == bucket.outputs["arn"]
    assert bucket.protect
    [default] = cap.by_type(DEFAULT_SG)
    assert default.inputs["vpcId"] == vpc.id
    assert default.inputs.get("ingress", []) == [] and default.inputs.get("egress", []) == []
    # Nothing of ours lands in the default group: every interface names its own.
    assert all(default.id not in json.dumps(r.inputs) for r in cap.resources if r.urn != default.urn)


@pytest.mark.parametrize(("stack", "account"), [("aws-training", "111111111111"), ("aws-serving", "222222222222")])
def test_flow_logs_land_under_the_vpcs_own_customer_managed_key(stack: str, account: str) -> None:
    """SSE-KMS by the key's ARN (a key id leaves delivery "LogDestination undeliverable"), with a key
    policy that lets log delivery use the key for this account's flow logs only (VPC user guide,
    "Required key policy for use with SSE-KMS"); the key is kept like every key."""
    cap = run(stack)
    [flow_log] = cap.by_type(FLOW_LOG)
    [bucket] = [b for b in cap.by_type("aws:s3/bucket:Bucket") if b.name.endswith("-net-flow-logs")]
    [key] = [k for k in cap.by_type("aws:kms/key:Key") if k.name.endswith("-net-flow-logs")]
    [encryption] = [
        e
        for e in cap.by_type("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")
        if e.inputs["bucket"] == bucket.id
    ]
    [rule] = encryption.inputs["rules"]
    default = rule["applyServerSideEncryptionByDefault"]
    assert default == {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": key.outputs["arn"]}
    assert rule["bucketKeyEnabled"] is True
    assert encryption.urn in flow_log.dependencies, "the first delivery already lands under the key"
    assert key.protect and key.retain_on_delete
    assert key.inputs["enableKeyRotation"] is True and key.inputs["deletionWindowInDays"] == 30
    statements = {s["Sid"]: s for s in json.loads(key.inputs["policy"])["Statement"]}
    assert set(statements) == {"AccountAdministersKeyThroughIam", "FlowLogDeliveryUsesKey"}
    assert statements["AccountAdministersKeyThroughIam"]["Principal"] == {"AWS": f"arn:aws:iam::{account}:root"}
    delivery = statements["FlowLogDeliveryUsesKey"]
    assert delivery["Principal"] == {"Service": "delivery.logs.amazonaws.com"}
    assert "kms:GenerateDataKey*" in delivery["Action"] and "kms:CreateGrant" not in delivery["Action"]
    assert delivery["Condition"] == {
        "StringEquals": {"aws:SourceAccount": account},
        "ArnLike": {"aws:SourceArn": f"arn:aws:logs:us-east-1:{account}:*"},
    }
    [alias] = [a for a in cap.by_type("aws:kms/alias:Alias") if a.name.endswith("-net-flow-logs")]
    assert alias.inputs["name"] == f"alias/accelstack/{stack}-net-flow-logs" and key.urn in alias.dependencies


def test_an_existing_vpc_gets_no_flow_log_or_default_group_from_us() -> None:
    raw = apply_overrides(
        read_stack_file(REPO / "stacks" / "Pulumi.aws-training.yaml"),
        [
            "training.network={vpcId: vpc-0123456789abcdef0, subnetId: subnet-0123456789abcdef0, availabilityZone: us-east-1b}"
        ],
    )
    cap = capture(MAIN, config_for_pulumi(raw), stack="aws-training")
    assert cap.by_type(FLOW_LOG) == [] and cap.by_type(DEFAULT_SG) == []
