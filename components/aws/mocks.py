"""How AWS answers a program run under Pulumi mocks: the one table behind `accelstack preview` (the
engine's offline capture) and `accelstack.testing.mocks("aws")` (a user's own unit tests).

Every invoke the AWS components make gets a plausible camelCase answer for the stack's account and
Region (caller identity, partition, Region, availability zones, instance-type offerings, subnets, the
public AMI parameters in SSM, Capacity Blocks); an invoke this table does not know answers `{}`.
Resources echo their inputs plus the computed attributes the components read: an id from the
resource name, an ARN in the account and Region, DNS names of FSx and load balancers, queue URLs.

Answers are deterministic (the golden exports pin them): change one and the goldens change with it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import pulumi

from accelstack.components.recipes.landing import STACK_REFERENCE, landing_reference_outputs

DEFAULT_ACCOUNT_ID = "111111111111"
DEFAULT_REGION = "us-east-1"
ZONE_LETTERS = "abc"
# AZ ids are per account in reality; these are us-east-1's shape, enough for code that only passes them on.
ZONE_IDS = ("use1-az1", "use1-az2", "use1-az4")
# A well-formed image id, as EC2 would resolve a public AMI parameter (/aws/service/...).
MOCK_IMAGE_ID = "ami-0123456789abcdef0"


class AwsMocks(pulumi.runtime.Mocks):
    """Answers like AWS would at preview: ids and ARNs derived from names, invokes from a table.

    Subclass and override `call` or `new_resource` (calling `super()` for the rest) to model a Region
    that differs, e.g. a GPU type offered in fewer zones."""

    def __init__(self, account_id: str = DEFAULT_ACCOUNT_ID, region: str = DEFAULT_REGION):
        self.account_id = account_id
        self.region = region

    @property
    def zones(self) -> list[str]:
        return [f"{self.region}{letter}" for letter in ZONE_LETTERS]

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        outputs = dict(args.inputs)
        resource_id = f"{args.name}-id"
        if args.typ == "aws:s3/bucket:Bucket":
            # S3 bucket ARNs have no region or account: policies match on this exact form.
            outputs.setdefault("arn", f"arn:aws:s3:::{args.inputs.get('bucket', args.name)}")
            outputs.setdefault("bucket", args.inputs.get("bucket", args.name))
        if args.typ.startswith("aws:"):
            service = args.typ.split(":")[1].split("/")[0]  # "aws:sqs/queue:Queue" -> "sqs"
            region = "" if service == "iam" else self.region  # IAM ARNs are global
            outputs.setdefault("arn", f"arn:aws:{service}:{region}:{self.account_id}:{args.name}")
        if args.typ == "aws:fsx/lustreFileSystem:LustreFileSystem":
            outputs.setdefault("dnsName", f"fs-{args.name}.fsx.{self.region}.amazonaws.com")
            outputs.setdefault("mountName", "abcdefgh")
        if args.typ == "aws:lb/loadBalancer:LoadBalancer":
            outputs.setdefault("dnsName", f"{args.name}.{self.region}.elb.amazonaws.com")
            outputs.setdefault("arnSuffix", f"app/{args.name}/0123456789abcdef")
        if args.typ == "aws:lb/targetGroup:TargetGroup":
            outputs.setdefault("arnSuffix", f"targetgroup/{args.name}/0123456789abcdef")
        if args.typ == "aws:ssm/parameter:Parameter":
            # arn:aws:ssm:<region>:<account>:parameter/<name without its leading slash>; the first version is 1.
            name = str(args.inputs.get("name", args.name))
            outputs["arn"] = f"arn:aws:ssm:{self.region}:{self.account_id}:parameter/{name.lstrip('/')}"
            outputs.setdefault("version", 1)
        if args.typ == "aws:iam/role:Role":  # the engine autonames it; mocks do not
            outputs.setdefault("name", args.inputs.get("name", args.name))
            outputs["arn"] = f"arn:aws:iam::{self.account_id}:role/{outputs['name']}"
        if args.typ == "aws:iam/openIdConnectProvider:OpenIdConnectProvider":  # IAM names it by the issuer's host/path
            url = str(args.inputs.get("url", "")).removeprefix("https://")
            outputs["arn"] = f"arn:aws:iam::{self.account_id}:oidc-provider/{url}"
        if args.typ == "aws:organizations/account:Account":  # its id is the new account's 12-digit id
            resource_id = str(int(hashlib.sha256(args.name.encode()).hexdigest(), 16))[:12]
            outputs["arn"] = f"arn:aws:organizations::{self.account_id}:account/o-mock/{resource_id}"
        if args.typ == STACK_REFERENCE:
            # A landing stack's outputs for this stack's account, either side.
            role = f"arn:aws:iam::{self.account_id}:role/accelstack-deploy"
            outputs = landing_reference_outputs(args, self.account_id, DeployRoleArn=role)
        if args.typ == "aws:rds/instance:Instance":  # RDS names the endpoint after the identifier
            outputs.setdefault("address", f"{args.name}.c0mock0abcde.{self.region}.rds.amazonaws.com")
            outputs.setdefault("port", args.inputs.get("port", 3306))
        if args.typ == "aws:sqs/queue:Queue":
            outputs.setdefault("name", args.inputs.get("name", args.name))
            outputs.setdefault("url", f"https://sqs.{self.region}.amazonaws.com/{self.account_id}/{args.name}")
        return resource_id, outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        if args.token == "aws:index/getCallerIdentity:getCallerIdentity":
            return {"accountId": self.account_id, "arn": f"arn:aws:iam::{self.account_id}:root", "userId": "mock"}, []
        if args.token == "aws:index/getRegion:getRegion":
            return {"name": self.region, "region": self.region}, []
        if args.token == "aws:index/getPartition:getPartition":
            return {"partition": "aws", "dnsSuffix": "amazonaws.com"}, []
        if args.token == "aws:index/getAvailabilityZones:getAvailabilityZones":
            return {"names": self.zones, "zoneIds": list(ZONE_IDS)}, []
        if args.token == "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings":
            # Every mock AZ offers every instance type (the serving network picks zones that do).
            return {"locations": self.zones, "locationTypes": ["availability-zone"] * len(self.zones)}, []
        if args.token == "aws:ec2/getSubnet:getSubnet":
            zone = args.args.get("availabilityZone") or self.zones[0]
            subnet = args.args.get("id") or "subnet-mock"
            return {"id": subnet, "availabilityZone": zone, "vpcId": "vpc-mock", "cidrBlock": "10.0.0.0/20"}, []
        if args.token == "aws:ssm/getParameter:getParameter":
            name = args.args.get("name", "")
            return {
                "name": name,
                "type": "String",
                "value": MOCK_IMAGE_ID,
                "arn": f"arn:aws:ssm:{self.region}::parameter{name}",
            }, []
        if args.token == "aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation":
            # A purchased block, far enough ahead that every preview plans the same (deterministic exports).
            return {
                "id": args.args.get("id") or "cr-mock",
                "reservationType": "capacity-block",
                "startDate": "2099-01-05T11:30:00Z",
                "endDate": "2099-01-19T11:30:00Z",
                "state": "scheduled",
            }, []
        # failures must be a list: MockMonitor iterates it (None raises TypeError on any invoke).
        return {}, []


def mocks(account: Mapping[str, Any] | None = None) -> AwsMocks:
    """AWS's mocks for a stack's account block as a stack file writes it (`{"id": ..., "region": ...}`):
    caller identity answers that account id, zones and ARNs are in that Region."""
    account = account or {}
    return AwsMocks(
        account_id=str(account.get("id") or DEFAULT_ACCOUNT_ID),
        region=str(account.get("region") or DEFAULT_REGION),
    )
