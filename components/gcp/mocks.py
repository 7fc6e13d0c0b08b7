"""How Google Cloud answers a program run under Pulumi mocks: the one table behind `accelstack preview`
(the engine's offline capture) and `accelstack.testing.mocks("gcp")` (a user's own unit tests).

Invokes get camelCase answers for the stack's project and region (a snake_case key reaches the SDK as
None: `project_id` is silently dropped). Resources echo their inputs plus what GCP computes and the
components read: `name` (auto-naming runs in the provider, not under mocks), `id` and `selfLink` in the
resource's collection (`projects/<p>/global/networks/<n>`, `projects/<p>/regions/<r>/subnetworks/<n>`),
`project` and service account `email`s.

Answers are deterministic (the golden exports pin them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import pulumi

from accelstack.components.propagation import SLEEP, mock_sleep
from accelstack.components.recipes.landing import STACK_REFERENCE, landing_reference_outputs

# A self-signed test CA (P-256, ten years; its key was never kept), standing in for a Cloud SQL instance's server CA.
SERVER_CA_CERT = """\
-----BEGIN CERTIFICATE-----
MIIB1DCCAXmgAwIBAgIUQhl+y9Wos58Ba8rg3tPlLTCV7EowCgYIKoZIzj0EAwIw
PzEYMBYGA1UECgwPYWNjZWxzdGFjayB0ZXN0MSMwIQYDVQQDDBpHb29nbGUgQ2xv
dWQgU1FMIFNlcnZlciBDQTAeFw0yNjEyMDYwNjUyNTJaFw0zNjEyMDMwNjUyNTJa
MD8xGDAWBgNVBAoMD2FjY2Vsc3RhY2sgdGVzdDEjMCEGA1UEAwwaR29vZ2xlIENs
b3VkIFNRTCBTZXJ2ZXIgQ0EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASZCkgk
ZyCi8oZs8eEpm1mTwFS7VTcZ3XROt/nvUIPRgU5uqSQxzd40bPqKD+ru30kPa2Vk
L1lecH98/nn8FiVeo1MwUTAdBgNVHQ4EFgQUJ8MIFZvbpprGzXViduCq5/MbpVgw
HwYDVR0jBBgwFoAUJ8MIFZvbpprGzXViduCq5/MbpVgwDwYDVR0TAQH/BAUwAwEB
/zAKBggqhkjOPQQDAgNJADBGAiEArRox3Z0UWLeXzKNpdMUiVugD0my1NlGWai6n
uRe/+lkCIQCF1Rdi3g+Z3HMReY6fK7oPw/gXyfwKnV8/lCY60Gl7Kg==
-----END CERTIFICATE-----
"""

DEFAULT_PROJECT_ID = "acme-train"
DEFAULT_PROJECT_NUMBER = "123456789012"
DEFAULT_REGION = "us-central1"
ZONE_LETTERS = "abc"
API = "https://www.googleapis.com/compute/v1"

# Compute Engine collections by resource class: where the resource lives (global, regional, zonal).
GLOBAL = {
    "Network": "networks",
    "Firewall": "firewalls",
    "GlobalAddress": "addresses",
    "HealthCheck": "healthChecks",
    "BackendService": "backendServices",
    "URLMap": "urlMaps",
    "TargetHttpsProxy": "targetHttpsProxies",
    "GlobalForwardingRule": "forwardingRules",
    "SecurityPolicy": "securityPolicies",
    "ManagedSslCertificate": "sslCertificates",
    "InstanceTemplate": "instanceTemplates",
}
REGIONAL = {
    "Subnetwork": "subnetworks",
    "Router": "routers",
    "RegionInstanceTemplate": "instanceTemplates",
    "RegionInstanceGroupManager": "instanceGroupManagers",
    "RegionAutoscaler": "autoscalers",
    "ResourcePolicy": "resourcePolicies",
    "Address": "addresses",
}
ZONAL = {
    "InstanceGroupManager": "instanceGroupManagers",
    "Instance": "instances",
    "Disk": "disks",
    "Reservation": "reservations",
    "Autoscaler": "autoscalers",
}


SERVICE_AGENT_DOMAINS = {
    "lustre.googleapis.com": "gcp-sa-lustre",
    "file.googleapis.com": "cloud-filer",
    "pubsub.googleapis.com": "gcp-sa-pubsub",
    "sqladmin.googleapis.com": "gcp-sa-cloud-sql",
}


class GcpMocks(pulumi.runtime.Mocks):
    """Answers like GCP would at preview. Subclass and override `call` or `new_resource` (calling
    `super()` for the rest) to model a project or region that differs."""

    def __init__(
        self,
        project_id: str = DEFAULT_PROJECT_ID,
        region: str = DEFAULT_REGION,
        project_number: str = DEFAULT_PROJECT_NUMBER,
    ):
        self.project_id = project_id
        self.region = region
        self.project_number = project_number

    @property
    def zones(self) -> list[str]:
        return [f"{self.region}-{letter}" for letter in ZONE_LETTERS]

    def resource_path(self, type_token: str, name: str, inputs: Mapping[str, Any]) -> str:
        _, module, kind = type_token.split(":")
        project = inputs.get("project") or self.project_id
        if module.startswith("compute/"):
            if kind in GLOBAL:
                return f"projects/{project}/global/{GLOBAL[kind]}/{name}"
            if kind in REGIONAL:
                return f"projects/{project}/regions/{inputs.get('region') or self.region}/{REGIONAL[kind]}/{name}"
            if kind in ZONAL:
                return f"projects/{project}/zones/{inputs.get('zone') or self.zones[0]}/{ZONAL[kind]}/{name}"
        if type_token == "gcp:filestore/instance:Instance":
            return f"projects/{project}/locations/{inputs.get('location')}/instances/{name}"
        if type_token == "gcp:lustre/instance:Instance":
            # The provider's id: projects/<p>/locations/<zone>/instances/<instanceId>.
            return f"projects/{project}/locations/{inputs.get('location')}/instances/{inputs.get('instanceId', name)}"
        return f"projects/{project}/{kind[:1].lower()}{kind[1:]}s/{name}"

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        outputs = dict(args.inputs)
        if args.typ == SLEEP:
            return mock_sleep(args)
        if args.typ == STACK_REFERENCE:  # a landing stack's outputs: this project, either side
            return f"{args.name}-id", landing_reference_outputs(args, self.project_id)
        if not args.typ.startswith("gcp:"):
            return f"{args.name}-id", outputs
        if args.typ == "gcp:organizations/folder:Folder":
            # Resource Manager numbers folders; the provider's id and name are folders/<number>.
            number = str(int(hashlib.sha256(args.name.encode()).hexdigest(), 16))[:12]
            return f"folders/{number}", {**outputs, "name": f"folders/{number}", "folderId": number}
        if args.typ == "gcp:organizations/project:Project":
            number = str(int(hashlib.sha256(args.name.encode()).hexdigest(), 16))[:12]
            return f"projects/{args.inputs.get('projectId')}", {**outputs, "number": number}
        name = str(args.inputs.get("name") or args.name)
        path = self.resource_path(args.typ, name, args.inputs)
        outputs.setdefault("name", name)
        outputs.setdefault("project", self.project_id)
        outputs.setdefault("id", path)
        if args.typ.startswith("gcp:compute/"):
            outputs.setdefault("selfLink", f"{API}/{path}")
        if args.typ == "gcp:lustre/instance:Instance":
            # "<MGS address>@tcp:/<filesystem>", as `gcloud lustre instances describe` prints mountPoint.
            outputs.setdefault("mountPoint", f"172.16.0.2@tcp:/{args.inputs.get('filesystem', 'lustrefs')}")
            outputs.setdefault("instanceId", args.inputs.get("instanceId", args.name))
        if args.typ == "gcp:filestore/instance:Instance":
            # The instance's address in the private services access range it is connected through.
            outputs["networks"] = [{**n, "ipAddresses": ["172.16.0.2"]} for n in args.inputs.get("networks", [])]
        if args.typ == "gcp:sql/databaseInstance:DatabaseInstance":
            # An address in the private services access range (settings.ipConfiguration.privateNetwork).
            outputs.setdefault("privateIpAddress", "172.16.8.3")
            outputs.setdefault("connectionName", f"{self.project_id}:{args.inputs.get('region')}:{name}")
            # The instance's own server CA (Cloud SQL makes one per instance): a parseable certificate, as the
            # head's boot checks what it is given (tests/boot).
            outputs.setdefault(
                "serverCaCerts",
                [{"cert": SERVER_CA_CERT, "commonName": "O=accelstack test,CN=Google Cloud SQL Server CA"}],
            )
        if args.typ == "gcp:hypercomputecluster/cluster:Cluster":
            # Cluster Director names clusters projects/<p>/locations/<region>/clusters/<clusterId>.
            location = args.inputs.get("location") or self.region
            outputs["name"] = f"projects/{self.project_id}/locations/{location}/clusters/{args.inputs.get('clusterId')}"
            outputs["id"] = outputs["name"]
            path = outputs["name"]
        if args.typ == "gcp:secretmanager/secretVersion:SecretVersion":
            # Versions are named by project NUMBER: projects/<number>/secrets/<id>/versions/<n>.
            secret = str(args.inputs.get("secret") or args.name).rsplit("/", 1)[-1]
            outputs["name"] = f"projects/{self.project_number}/secrets/{secret}/versions/1"
            outputs["version"] = "1"
        if args.typ == "gcp:compute/address:Address" and args.inputs.get("addressType") == "INTERNAL":
            outputs.setdefault("address", args.inputs.get("address", "10.0.0.10"))
        if args.typ == "gcp:compute/address:Address" and args.inputs.get("addressType") == "EXTERNAL":
            outputs.setdefault("address", args.inputs.get("address", "34.118.0.10"))  # a regional external address
        if args.typ == "gcp:compute/instanceTemplate:InstanceTemplate":
            outputs.setdefault("selfLinkUnique", f"{API}/{path}?uniqueId=1000000000000000001")
        if args.typ == "gcp:projects/serviceIdentity:ServiceIdentity":
            # The agent's address by service (cloud.google.com/iam/docs/service-agents).
            domain = SERVICE_AGENT_DOMAINS.get(str(args.inputs.get("service")), "unknown-agent")
            email = f"service-{self.project_number}@{domain}.iam.gserviceaccount.com"
            outputs.setdefault("email", email)
            outputs.setdefault("member", f"serviceAccount:{email}")
        if args.typ == "gcp:iam/workloadIdentityPool:WorkloadIdentityPool":
            # IAM names pools (and principals of them) by the project's NUMBER.
            pool = args.inputs.get("workloadIdentityPoolId", args.name)
            outputs["name"] = f"projects/{self.project_number}/locations/global/workloadIdentityPools/{pool}"
        if args.typ == "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider":
            pool = args.inputs.get("workloadIdentityPoolId", "pool")
            provider = args.inputs.get("workloadIdentityPoolProviderId", args.name)
            outputs["name"] = (
                f"projects/{self.project_number}/locations/global/workloadIdentityPools/{pool}/providers/{provider}"
            )
        if args.typ == "gcp:serviceaccount/account:Account":
            account_id = args.inputs.get("accountId", args.name)
            email = f"{account_id}@{self.project_id}.iam.gserviceaccount.com"
            outputs.setdefault("email", email)
            outputs.setdefault("member", f"serviceAccount:{email}")
            # IAM's numeric id of the account: the `sub` of its ID tokens, which other clouds' trusts name.
            outputs.setdefault("uniqueId", str(100000000000000000000 + sum(map(ord, account_id))))
        return path, outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        if args.token == "gcp:organizations/getProject:getProject":
            return {"projectId": self.project_id, "number": self.project_number, "name": self.project_id}, []
        if args.token == "gcp:storage/getProjectServiceAccount:getProjectServiceAccount":
            email = f"service-{self.project_number}@gs-project-accounts.iam.gserviceaccount.com"
            return {"emailAddress": email, "member": f"serviceAccount:{email}", "project": self.project_id}, []
        if args.token == "gcp:compute/getZones:getZones":
            return {"names": self.zones, "region": self.region, "project": self.project_id}, []
        # failures must be a list: MockMonitor iterates it (None raises TypeError on any invoke).
        return {}, []


def mocks(account: Mapping[str, Any] | None = None) -> GcpMocks:
    """GCP's mocks for a stack's account block as a stack file writes it (`{"projectId": ..., "region": ...}`)."""
    account = account or {}
    return GcpMocks(
        project_id=str(account.get("projectId") or DEFAULT_PROJECT_ID),
        region=str(account.get("region") or DEFAULT_REGION),
    )
