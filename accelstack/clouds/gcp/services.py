"""Which Google Cloud API each pulumi-gcp resource type (and each invoke the components make) calls (pure data).

A project serves a call only while the API is enabled in it ("SERVICE_DISABLED: ... has not been used in
project N before or it is disabled"), and a fresh project has few enabled. The stack enables what its
resources need with `projects.Service` (components/gcp/apis.py) and makes each resource wait for its API.
Only Service Usage itself cannot be enabled by the stack (enabling goes through it: `gcloud services enable
serviceusage.googleapis.com`, on by default in new projects: cloud.google.com/service-usage/docs/enabled-service).

Rows are by type token prefix, the longest match wins; a type missing here is reported by the tests, never
guessed. API names: each product's "Enable the API" step in cloud.google.com/<product>/docs (checked 2026-08).
"""

from __future__ import annotations

from accelstack.clouds.base import AccountServices

COMPUTE = "compute.googleapis.com"
MONITORING = "monitoring.googleapis.com"
RESOURCE_MANAGER = "cloudresourcemanager.googleapis.com"
SERVICE_USAGE = "serviceusage.googleapis.com"
STORAGE = "storage.googleapis.com"
LUSTRE = "lustre.googleapis.com"

# The enabler: a Service resource and the input naming its API.
SERVICE_TYPE = "gcp:projects/service:Service"
SERVICE_IDENTITY_TYPE = "gcp:projects/serviceIdentity:ServiceIdentity"

API_BY_TYPE_PREFIX: dict[str, tuple[str, ...]] = {
    "gcp:compute/": (COMPUTE,),
    # The autoscaler reads the metric it scales on (the subscription's undelivered messages) from Cloud
    # Monitoring (cloud.google.com/compute/docs/autoscaler/scaling-cloud-monitoring-metrics).
    "gcp:compute/regionAutoscaler:": (COMPUTE, MONITORING),
    "gcp:compute/autoscaler:": (COMPUTE, MONITORING),
    "gcp:kms/": ("cloudkms.googleapis.com",),
    "gcp:storage/": (STORAGE,),
    "gcp:lustre/": (LUSTRE,),
    "gcp:filestore/": ("file.googleapis.com",),
    "gcp:secretmanager/": ("secretmanager.googleapis.com",),
    # Cloud SQL Admin (cloud.google.com/sql/docs/mysql/admin-api); private IP goes through Service Networking's peering.
    "gcp:sql/": ("sqladmin.googleapis.com",),
    # The private services access peering is made by Service Networking on the project's VPC.
    "gcp:servicenetworking/": ("servicenetworking.googleapis.com", COMPUTE),
    "gcp:pubsub/": ("pubsub.googleapis.com",),
    "gcp:serviceaccount/": ("iam.googleapis.com",),
    "gcp:serviceAccount/": ("iam.googleapis.com",),
    # Project-level IAM is the project's policy, held by Resource Manager.
    "gcp:projects/iAM": (RESOURCE_MANAGER,),
    "gcp:hypercomputecluster/": ("hypercomputecluster.googleapis.com",),
    # Enabling goes through Service Usage (the bootstrap API, enabled beforehand). A service agent is created by
    # Service Usage for the API it names, which must be enabled first: the components add that API by the
    # resource's `service` input (components/gcp/apis.py).
    SERVICE_TYPE: (),
    SERVICE_IDENTITY_TYPE: (),
    # Invokes (not in a stack export; the components wait for these APIs too).
    "gcp:organizations/getProject:": (RESOURCE_MANAGER,),
    "gcp:storage/getProjectServiceAccount:": (STORAGE,),
}

ACCOUNT_SERVICES = AccountServices(
    kind="API",
    by_type_prefix=API_BY_TYPE_PREFIX,
    enabled_by_stack=True,
    note=(
        f"the stack enables each with projects.Service (left enabled on destroy); {SERVICE_USAGE} must be enabled "
        "first, and the deployer needs serviceusage.services.enable (Editor or Service Usage Admin)"
    ),
)
