"""Run a Pulumi program in-process under mocks and record every registration, as the engine would.

The mock monitor records each `RegisterResourceRequest` (inputs, parent, provider reference,
dependencies, protect, retainOnDelete, ...), so what we capture is exactly what the Pulumi
CLI would send to the engine. Nothing here talks to a cloud or to the Pulumi CLI.
"""

from __future__ import annotations

import json
import runpy
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import empty_pb2, json_format
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.stack import run_in_stack
from pulumi.runtime.sync_await import _sync_await

# Pulumi's wire sentinels (sdk/go/common/resource/plugin/rpc.go).
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"


@dataclass
class Registration:
    """One resource as registered by the program (request) and as the mock answered (response)."""

    urn: str
    type: str
    name: str
    custom: bool
    parent: str
    provider: str  # "urn::id" provider reference, "" for components
    dependencies: list[str]
    property_dependencies: dict[str, list[str]]
    protect: bool
    retain_on_delete: bool
    delete_before_replace: bool
    ignore_changes: list[str]
    additional_secret_outputs: list[str]
    inputs: dict[str, Any]  # JSON form of the wire struct: secrets and unknowns keep their sentinels
    outputs: dict[str, Any] = field(default_factory=dict)
    id: str = ""
    request: Any = None  # the RegisterResourceRequest itself, for analyzers that want protobufs

    @property
    def is_provider(self) -> bool:
        return self.type.startswith("pulumi:providers:")


@dataclass
class Capture:
    project: str
    stack: str
    preview: bool
    resources: list[Registration]
    stack_outputs: dict[str, Any]

    def by_type(self, type_token: str) -> list[Registration]:
        return [r for r in self.resources if r.type == type_token]

    def one(self, type_token: str) -> Registration:
        found = self.by_type(type_token)
        if len(found) != 1:
            raise AssertionError(f"expected one {type_token}, found {len(found)}")
        return found[0]


def _struct_to_json(struct: Any) -> dict[str, Any]:
    return json_format.MessageToDict(struct, preserving_proto_field_name=True) if struct is not None else {}


class MockCloud(pulumi.runtime.Mocks):
    """Answers like a cloud would at preview: ids and ARNs derived from names, invokes from a table."""

    def __init__(self, account_id: str = "111111111111", region: str = "us-east-1"):
        self.account_id = account_id
        self.region = region

    @classmethod
    def for_config(cls, config: dict[str, str]) -> MockCloud:
        """Answer as the stack's own account and region would (`accelstack:account`), so ARNs in a
        serving preview name the serving account, not a default."""
        try:
            account = json.loads(config.get("accelstack:account", "{}"))
        except (TypeError, json.JSONDecodeError):
            account = {}
        if not isinstance(account, dict):
            account = {}
        return cls(
            account_id=str(account.get("id") or "111111111111"), region=str(account.get("region") or "us-east-1")
        )

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
            return {"names": [f"{self.region}{z}" for z in "abc"], "zoneIds": ["use1-az1", "use1-az2", "use1-az4"]}, []
        if args.token == "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings":
            # Every mock AZ offers every instance type (the serving network picks zones that do).
            return {"locations": [f"{self.region}{z}" for z in "abc"], "locationTypes": ["availability-zone"] * 3}, []
        if args.token == "aws:ec2/getSubnet:getSubnet":
            zone = args.args.get("availabilityZone") or f"{self.region}a"
            subnet = args.args.get("id") or "subnet-mock"
            return {"id": subnet, "availabilityZone": zone, "vpcId": "vpc-mock", "cidrBlock": "10.0.0.0/20"}, []
        if args.token == "aws:ssm/getParameter:getParameter":
            # Public AMI parameters (/aws/service/...): a well-formed image id, as EC2 would resolve it.
            name = args.args.get("name", "")
            return {
                "name": name,
                "type": "String",
                "value": "ami-0123456789abcdef0",
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


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """MockMonitor that keeps every registration request and the stack's outputs."""

    def __init__(self, mocks: pulumi.runtime.Mocks):
        super().__init__(mocks)
        self.registrations: list[Registration] = []
        self.outputs_by_urn: dict[str, dict[str, Any]] = {}

    # pulumi's MockMonitor is unannotated: its calls are the untyped ones below.
    def RegisterResource(  # noqa: N802 (gRPC method name)
        self, request: resource_pb2.RegisterResourceRequest
    ) -> resource_pb2.RegisterResourceResponse:
        response: resource_pb2.RegisterResourceResponse = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        self.registrations.append(
            Registration(
                urn=response.urn,
                type=request.type,
                name=request.name,
                custom=bool(request.custom),
                parent=request.parent,
                provider=request.provider,
                dependencies=list(request.dependencies),
                property_dependencies={k: list(v.urns) for k, v in request.propertyDependencies.items()},
                protect=request.protect if request.HasField("protect") else False,
                retain_on_delete=request.retainOnDelete if request.HasField("retainOnDelete") else False,
                delete_before_replace=bool(request.deleteBeforeReplace),
                ignore_changes=list(request.ignoreChanges),
                additional_secret_outputs=list(request.additionalSecretOutputs),
                inputs=_struct_to_json(request.object),
                outputs=_struct_to_json(response.object) if response.HasField("object") else {},
                id=response.id,
                request=request,
            )
        )
        return response

    def RegisterResourceOutputs(self, request: resource_pb2.RegisterResourceOutputsRequest) -> empty_pb2.Empty:  # noqa: N802
        self.outputs_by_urn[request.urn] = _struct_to_json(request.outputs)
        result: empty_pb2.Empty = super().RegisterResourceOutputs(request)  # type: ignore[no-untyped-call]
        return result


def config_for_pulumi(raw: dict[str, Any], namespace: str = "accelstack") -> dict[str, str]:
    """Structured config values travel to programs as JSON strings, plain strings as they are."""
    return {f"{namespace}:{key}": value if isinstance(value, str) else json.dumps(value) for key, value in raw.items()}


def capture(
    program: Callable[[], None] | Path,
    config: dict[str, str],
    *,
    project: str = "accelstack",
    stack: str = "dev",
    preview: bool = True,
    mocks: pulumi.runtime.Mocks | None = None,
) -> Capture:
    """Run `program` (a callable, or the path of a Pulumi `__main__.py`) and return what it registered.

    Global Pulumi runtime state is reset before and after, so captures in one process are
    independent; the CLI still runs one subprocess per stack for full isolation.
    """
    monitor = RecordingMonitor(mocks or MockCloud.for_config(config))
    pulumi.runtime.set_all_config(config)
    # set_mocks would register a root Stack of its own; run_in_stack creates the one the CLI would.
    pulumi_settings.ROOT.set("urn:accelstack:placeholder-root")  # type: ignore[arg-type]  # any non-None root
    pulumi_mocks.set_mocks(monitor.mocks, project=project, stack=stack, preview=preview, monitor=monitor)
    pulumi_settings.ROOT.set(None)

    def run() -> None:
        if isinstance(program, Path):
            runpy.run_path(str(program), run_name="__main__")
        else:
            program()

    try:
        _sync_await(run_in_stack(run))
    finally:
        pulumi_settings.ROOT.set(None)
        pulumi.runtime.set_all_config({})
    stack_urn = f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}"
    resources = list(monitor.registrations)
    for registration in resources:
        registration.outputs = monitor.outputs_by_urn.get(registration.urn, registration.outputs)
    return Capture(
        project=project,
        stack=stack,
        preview=preview,
        resources=resources,
        stack_outputs=monitor.outputs_by_urn.get(stack_urn, {}),
    )
