"""How Vultr answers a program run under Pulumi mocks: the table behind `accelstack preview` (offline) and
`accelstack.testing.mocks("vultr")`.

Resources echo their inputs plus what Vultr computes and the components read: a UUID-shaped `id`, an instance's
`mainIp`/`internalIp`, a load balancer's `ipv4`, a VPC's subnet. The plan invoke (`vultr:index/getPlan:getPlan`)
answers from the catalog, in wire camelCase. Answers are deterministic (the golden exports pin them).
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import pulumi

from accelstack.clouds.vultr import catalog

DEFAULT_REGION = "ewr"
# A replica's weights key clock (time_static) is set at create: the mocks answer a fixed instant, so previews and the
# golden exports (and the URL signed from it) stay deterministic.
MOCK_CLOCK = "2026-12-05T12:00:00Z"
CLOCK = "time:index/static:Static"
# A replica's access token of the GCS reader (components/gcp/handoff_token.py), minted at create: a stand-in of the
# same shape (ya29.<...>), deterministic per replica, expiring its lifetime after the mock clock.
GCP_ACCESS_TOKEN = "pulumi-python:dynamic/handoff:GcpAccessToken"
# A replica's STS session of the S3 reader role (components/aws/handoff_session.py): temporary credentials' shape.
AWS_SESSION = "pulumi-python:dynamic/handoff:AwsSession"


def mock_access_token(name: str, inputs: Mapping[str, Any]) -> dict[str, str]:
    minted = datetime.fromisoformat(str(inputs.get("clock") or MOCK_CLOCK).replace("Z", "+00:00"))
    expires = minted + timedelta(seconds=int(inputs.get("lifetime_seconds") or 0))
    return {
        "access_token": "ya29.mock-" + hashlib.sha256(name.encode()).hexdigest()[:40],
        "expire_time": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def mock_session(name: str, inputs: Mapping[str, Any]) -> dict[str, str]:
    digest = hashlib.sha256(name.encode()).hexdigest()
    started = datetime.fromisoformat(str(inputs.get("clock") or MOCK_CLOCK).replace("Z", "+00:00"))
    expires = started + timedelta(seconds=int(inputs.get("duration_seconds") or 0))
    return {
        "access_key_id": "ASIA" + digest[:16].upper(),
        "secret_access_key": digest[16:56],
        "session_token": "IQoJb3JpZ2luX2VjE" + digest,
        "expiration": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def fake_uuid(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def instance_host(name: str) -> int:
    """An instance's last address octet from its name, not from the order Pulumi registers instances (replicas are
    registered concurrently, so a counter gave the golden exports swapped addresses from run to run)."""
    index = re.search(r"(\d+)$", name)
    if index and int(index.group(1)) < 200:
        return 11 + int(index.group(1))
    return 211 + int(hashlib.sha256(name.encode()).hexdigest(), 16) % 40


class VultrMocks(pulumi.runtime.Mocks):
    """Answers like Vultr would at preview. Subclass and override `call` or `new_resource` to model another answer."""

    def __init__(self, region: str = DEFAULT_REGION):
        self.region = region

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        outputs = dict(args.inputs)
        if args.typ == CLOCK:
            return MOCK_CLOCK, {**outputs, "id": MOCK_CLOCK, "rfc3339": MOCK_CLOCK}
        if args.typ == GCP_ACCESS_TOKEN:
            return f"{args.name}-id", {**outputs, **mock_access_token(args.name, outputs)}
        if args.typ == AWS_SESSION:
            return f"{args.name}-id", {**outputs, **mock_session(args.name, outputs)}
        if not args.typ.startswith("vultr:"):
            return f"{args.name}-id", outputs
        resource_id = fake_uuid(f"{args.typ}/{args.name}")
        outputs.setdefault("id", resource_id)
        if args.typ == "vultr:index/instance:Instance":
            host = instance_host(args.name)
            outputs.setdefault("mainIp", f"203.0.113.{host}")
            outputs.setdefault("internalIp", f"10.50.0.{host}")
            outputs.setdefault("powerStatus", "running")
        if args.typ == "vultr:index/loadBalancer:LoadBalancer":
            outputs.setdefault("ipv4", "198.51.100.20")
            outputs.setdefault("hasSsl", "ssl" in args.inputs)
        if args.typ == "vultr:index/vpc:Vpc":
            outputs.setdefault("v4Subnet", args.inputs.get("v4Subnet", "10.50.0.0"))
        return resource_id, outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        if args.token == "vultr:index/getPlan:getPlan":
            wanted = [v for f in args.args.get("filters", []) if f.get("name") == "id" for v in f.get("values", [])]
            plan = catalog.ACCELERATED_PLANS.get(wanted[0]) if wanted else None
            if plan is None:
                return {}, []
            return {
                "id": plan.name,
                "vcpuCount": plan.vcpus,
                "ram": plan.memory_gib * 1024,
                "gpuType": f"NVIDIA_{plan.accelerator}",
                "gpuVram": plan.accelerator_memory_total_gib,
                "locations": list(catalog.PLAN_LOCATIONS.get(plan.name, ())),
                "type": "vcg",
            }, []
        return {}, []


def mocks(account: Mapping[str, Any] | None = None) -> VultrMocks:
    """Vultr's mocks for a stack's account block as a stack file writes it (`{"apiKeySecret": ..., "region": ...}`)."""
    account = account or {}
    return VultrMocks(region=str(account.get("region") or DEFAULT_REGION))


def network_address(cidr: str) -> tuple[str, int]:
    """`10.50.0.0/24` -> ("10.50.0.0", 24): how the Vpc resource takes a subnet."""
    network = ipaddress.IPv4Network(cidr)
    return str(network.network_address), network.prefixlen
