"""How OCI answers a program run under Pulumi mocks: the one table behind `accelstack preview` (the engine's offline
capture) and `accelstack.testing.mocks("oci")` (a user's own unit tests).

Invokes get camelCase answers (a snake_case key reaches the SDK as None): the region's availability domains
(`availabilityDomains: [{name, id, compartmentId}]`) and the tenancy's Object Storage namespace. Resources echo
their inputs plus what OCI computes and the components read: an OCID `id` of the resource's kind, a Lustre file
system's `managementServiceAddress` and `lnet`, a private IP's `ipAddress`. Answers are deterministic.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import pulumi

from accelstack.clouds.oci.catalog import AVAILABILITY_DOMAINS, domain_labels
from accelstack.components.propagation import SLEEP, mock_sleep
from accelstack.components.recipes.landing import STACK_REFERENCE, landing_reference_outputs

DEFAULT_TENANCY = "ocid1.tenancy.oc1..aaaaaaaaexample"
DEFAULT_COMPARTMENT = "ocid1.compartment.oc1..aaaaaaaaexample"
DEFAULT_REGION = "us-ashburn-1"
DEFAULT_NAMESPACE = "acmetenancy"
LANDED_NODES_GROUP = "acme-landed-nodes"  # a landing stack's nodes dynamic group (components/oci/landing.py)
TENANCY_PREFIX = "Uocm"  # the per-tenancy prefix of availability domain names


def region_key(region: str) -> str:
    """us-ashburn-1 -> US-ASHBURN (how availability domain names spell the region)."""
    return "-".join(region.split("-")[:2]).upper()


class OciMocks(pulumi.runtime.Mocks):
    """Answers like OCI would at preview. Subclass and override `call` or `new_resource` for another tenancy."""

    def __init__(
        self,
        tenancy: str = DEFAULT_TENANCY,
        region: str = DEFAULT_REGION,
        namespace: str = DEFAULT_NAMESPACE,
        compartment: str = DEFAULT_COMPARTMENT,
    ):
        self.tenancy = tenancy
        self.region = region
        self.namespace = namespace
        self.compartment = compartment
        self.provider_regions: dict[str, str] = {}  # provider resource id -> its region

    @property
    def availability_domains(self) -> list[str]:
        return self.domains_of(self.region)

    @staticmethod
    def domains_of(region: str) -> list[str]:
        """The region's domains as the catalog counts and spells them (one in most regions; a region the catalog
        does not list gets three, as the oldest regions have)."""
        labels = domain_labels(region) if region in AVAILABILITY_DOMAINS else None
        labels = labels or [f"{region_key(region)}-AD-{n}" for n in (1, 2, 3)]
        return [f"{TENANCY_PREFIX}:{label}" for label in labels]

    def ocid(self, type_token: str, name: str) -> str:
        kind = type_token.rsplit(":", 1)[-1].lower()
        unique = hashlib.sha256(f"{type_token}/{name}".encode()).hexdigest()[:20]
        return f"ocid1.{kind}.oc1.{self.region}.{unique}"

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        outputs = dict(args.inputs)
        if args.typ == SLEEP:
            return mock_sleep(args)
        if args.typ == STACK_REFERENCE:  # a landing stack's outputs: this compartment and its nodes, either side
            return f"{args.name}-id", landing_reference_outputs(
                args,
                self.compartment,
                NodesGroupName=LANDED_NODES_GROUP,
                NodesGroupId=self.ocid("dynamicgroup", "landed"),
            )
        if args.typ == "pulumi:providers:oci" and args.inputs.get("region"):
            # An invoke through this provider (a landing stack's regional one) answers for its region.
            self.provider_regions[f"{args.name}-id"] = str(args.inputs["region"])
        if not args.typ.startswith("oci:"):
            return f"{args.name}-id", outputs
        resource_id = self.ocid(args.typ, args.name)
        if args.typ == "oci:ObjectStorage/bucket:Bucket":
            # A bucket's id is <namespace>/<name>; its OCID is bucketId.
            outputs.setdefault("bucketId", resource_id)
            resource_id = f"n/{args.inputs.get('namespace')}/b/{args.inputs.get('name')}"
        outputs.setdefault("id", resource_id)
        if args.typ == "oci:Lustre/fileStorageLustreFileSystem:FileStorageLustreFileSystem":
            # The management service address and LNet the clients mount: <address>@tcp:/<fileSystemName>.
            outputs.setdefault("managementServiceAddress", "10.60.0.200")
            outputs.setdefault("lnet", "tcp")
        if args.typ == "oci:Kms/vault:Vault":
            outputs.setdefault(
                "managementEndpoint", f"https://{args.name}-management.kms.{self.region}.oraclecloud.com"
            )
            outputs.setdefault("cryptoEndpoint", f"https://{args.name}-crypto.kms.{self.region}.oraclecloud.com")
        if args.typ == "oci:ObjectStorage/preauthrequest:Preauthrequest":
            # What OCI returns only at create: the PAR's id and its access URI, /p/<token>/n/<namespace>/b/<bucket>/o/
            # for a bucket-level (AnyObject*) request (+ the object name for a single object's).
            token = hashlib.sha256(f"par/{args.name}/{args.inputs.get('timeExpires')}".encode()).hexdigest()[:32]
            ns, bucket = args.inputs.get("namespace"), args.inputs.get("bucket")
            single = (
                ""
                if str(args.inputs.get("accessType", "")).startswith("AnyObject")
                else args.inputs.get("objectName", "")
            )
            outputs.setdefault("parId", f"par-{token[:12]}")
            outputs.setdefault("accessUri", f"/p/{token}/n/{ns}/b/{bucket}/o/{single}")
            outputs.setdefault("fullPath", f"https://objectstorage.{self.region}.oraclecloud.com{outputs['accessUri']}")
            outputs.setdefault("timeCreated", "2026-12-05T12:00:01Z")
        if args.typ == "oci:Core/instance:Instance":
            vnic = args.inputs.get("createVnicDetails") or {}
            outputs.setdefault("privateIp", vnic.get("privateIp", "10.60.0.10"))
        if args.typ == "oci:Core/vcn:Vcn":
            outputs.setdefault(
                "defaultSecurityListId", self.ocid("oci:Core/securityList:SecurityList", f"{args.name}-default")
            )
        return resource_id, outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        if args.token == "oci:Identity/getAvailabilityDomains:getAvailabilityDomains":
            compartment = args.args.get("compartmentId", self.tenancy)
            region = self.provider_regions.get(str(args.provider or "").rsplit("::", 1)[-1], self.region)
            domains = [
                {"name": name, "id": self.ocid("ad", name), "compartmentId": compartment}
                for name in self.domains_of(region)
            ]
            return {"availabilityDomains": domains, "compartmentId": compartment, "id": "ads"}, []
        if args.token == "oci:ObjectStorage/getNamespace:getNamespace":
            return {"namespace": self.namespace, "id": self.namespace}, []
        if args.token == "oci:Core/getServices:getServices":
            # The Oracle Services Network entry a service gateway routes to.
            key = region_key(self.region).split("-")[1].lower()
            service = {
                "id": self.ocid("service", "all"),
                "cidrBlock": f"all-{key[:3]}-services-in-oracle-services-network",
                "name": "All Services In Oracle Services Network",
                "description": "All Services",
            }
            return {"services": [service], "id": "services"}, []
        if args.token == "oci:Core/getImages:getImages":
            shape = args.args.get("shape", "")
            image = {
                "id": self.ocid("oci:Core/image:Image", f"ubuntu-24.04-{shape}"),
                "displayName": f"Canonical-Ubuntu-24.04-2026.10.31-0 ({shape})",
                "operatingSystem": args.args.get("operatingSystem"),
                "operatingSystemVersion": args.args.get("operatingSystemVersion"),
            }
            return {"images": [image], "id": "images", "compartmentId": args.args.get("compartmentId")}, []
        return {}, []


def mocks(account: Mapping[str, Any] | None = None) -> OciMocks:
    """OCI's mocks for a stack's account block as a stack file writes it (`{"tenancyOcid": ..., "region": ...}`)."""
    account = account or {}
    return OciMocks(
        tenancy=str(account.get("tenancyOcid") or DEFAULT_TENANCY),
        region=str(account.get("region") or DEFAULT_REGION),
        compartment=str(account.get("compartmentOcid") or DEFAULT_COMPARTMENT),
    )
