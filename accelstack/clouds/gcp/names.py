"""What a GCP stack's name becomes, and each service's naming rule: the one place the GCP components and the
spec rules take names from (`accelstack.clouds.naming`).

Compute Engine resources (networks, firewalls, routers, instances, templates, groups, health checks, backend
services, addresses) are Pulumi auto-names (the logical name, "-" and 7 random characters), so RFC 1035 bounds the
stack name: a letter first and at most 63 characters with the longest suffix a stack adds. Ids the stack fixes
itself (service accounts, the Managed Lustre instance, the munge key's secret) are derived here.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelstack.clouds.naming import DerivedName, NameRule
from accelstack.spec.catalog_rules import stack_names
from accelstack.spec.models import ServingStack, TrainingStack

# cloud.google.com/compute/docs/naming-resources: RFC 1035, [a-z]([-a-z0-9]{0,61}[a-z0-9])?
COMPUTE_RESOURCE = NameRule(
    "Compute Engine resource name",
    r"[a-z](?:[-a-z0-9]*[a-z0-9])?",
    max_length=63,
    source="cloud.google.com/compute/docs/naming-resources",
    summary="RFC 1035: lowercase letters, digits and hyphens, a letter first and no hyphen last",
)
# cloud.google.com/iam/docs/service-accounts-create: the account id is 6-30 characters, RFC 1035.
SERVICE_ACCOUNT_ID = NameRule(
    "service account id",
    COMPUTE_RESOURCE.pattern,
    max_length=30,
    min_length=6,
    source="cloud.google.com/iam/docs/service-accounts-create",
    summary=COMPUTE_RESOURCE.summary,
)
# Managed Lustre instance id: RFC 1035, 1-63 (cloud.google.com/managed-lustre/docs/create-instance).
LUSTRE_INSTANCE_ID = NameRule("Managed Lustre instance id", COMPUTE_RESOURCE.pattern, max_length=63)
# cloud.google.com/pubsub/docs/pubsub-basics#resource_names: 3-255, a letter first, letters, digits and -_.~+%,
# not starting with "goog".
PUBSUB_NAME = NameRule(
    "Pub/Sub topic or subscription name",
    r"[A-Za-z][A-Za-z0-9._~+%-]*",
    max_length=255,
    min_length=3,
    source="cloud.google.com/pubsub/docs/pubsub-basics",
    summary="a letter first, then letters, digits and - _ . ~ + %",
    forbidden_prefixes=("goog",),
)
# Secret Manager secret id: up to 255 letters, digits, hyphens and underscores.
SECRET_ID = NameRule("Secret Manager secret id", r"[A-Za-z0-9_-]+", max_length=255)
# Cloud KMS key ring and key names: [a-zA-Z0-9_-]{1,63}.
KMS_NAME = NameRule("Cloud KMS key ring or key name", r"[A-Za-z0-9_-]+", max_length=63)
# cloud.google.com/storage/docs/buckets#naming: 3-63 characters (dotted names up to 222), lowercase letters,
# digits, dashes, underscores and dots, a letter or digit at each end; not starting with "goog", not containing
# "google" (or close misspellings).
GCS_BUCKET = NameRule(
    "Cloud Storage bucket name",
    r"[a-z0-9][a-z0-9._-]*[a-z0-9]",
    max_length=63,
    min_length=3,
    source="cloud.google.com/storage/docs/buckets#naming",
    summary="lowercase letters, digits, dashes, underscores and dots, a letter or digit at each end",
    forbidden_prefixes=("goog",),
    forbidden_words=("google", "g00gle"),
)
# The instance group's base instance name: RFC 1035, at most 58 characters (the group appends "-" and 4).
BASE_INSTANCE_NAME = NameRule("base instance name", COMPUTE_RESOURCE.pattern, max_length=58)
# Instance template name_prefix: the provider appends a 26-character unique suffix to at most 37 (google provider,
# google_compute_instance_template).
TEMPLATE_NAME_PREFIX_MAX = 37


def resource_id(stack: str, suffix: str, limit: int) -> str:
    """An id Google takes for a resource the stack names itself (service accounts: 6..30 characters, Managed
    Lustre instances: 1..63; both start with a letter and end with a letter or digit): `<stack>-<suffix>`,
    the stack's part shortened (never the suffix, so a long stack name cannot make two ids collide) and
    prefixed with "s" when the stack name starts with a digit (stack names may)."""
    base = stack if stack[:1].isalpha() else f"s{stack}"
    base = base[: limit - len(suffix) - 1].rstrip("-")
    return f"{base}-{suffix}"


def munge_secret_id(stack: str) -> str:
    return f"{stack}-munge-key"


def node_base_instance_name(stack: str) -> str:
    return f"{stack}-node"[:54]


def replica_base_instance_name(stack: str) -> str:
    return f"{stack}-replica"


def node_template_prefix(stack: str) -> str:
    return f"{stack}-node-"[:TEMPLATE_NAME_PREFIX_MAX]


# The longest logical names the GCP components give a Compute Engine resource, past the stack's name: the
# fabric networks' firewalls (components/gcp/network.py, `<stack>-gpu<N>-deny-internet`, N < 10) and the
# serving firewall (components/gcp/serving/edge.py).
TRAINING_LONGEST = ("-gpu8-deny-internet", "-net-deny-internet", "-lustre-peering", "-slurmctld-state")
SERVING_LONGEST = ("-lb-to-replicas", "-autoscaler")


def _compute(stack: str, suffixes: tuple[str, ...]) -> Iterator[DerivedName]:
    for suffix in suffixes:
        yield DerivedName("a Compute Engine resource", f"{stack}{suffix}", COMPUTE_RESOURCE, autonamed=True)


@stack_names(workload="training")
def training_names(spec: TrainingStack) -> Iterator[DerivedName]:
    stack = spec.stack
    yield from _compute(stack, TRAINING_LONGEST)
    yield DerivedName("the Cloud KMS key ring", f"{stack}-keys", KMS_NAME, autonamed=True)
    yield DerivedName("the nodes' service account", resource_id(stack, "nodes", 30), SERVICE_ACCOUNT_ID)
    yield DerivedName("the nodes' base instance name", node_base_instance_name(stack), BASE_INSTANCE_NAME)
    if spec.training.scheduler.kind == "slurm":
        yield DerivedName("the head's service account", resource_id(stack, "head", 30), SERVICE_ACCOUNT_ID)
        yield DerivedName("the munge key's secret", munge_secret_id(stack), SECRET_ID)
    if spec.training.storage.lustre is not None:
        yield DerivedName("the Managed Lustre instance", resource_id(stack, "lustre", 63), LUSTRE_INSTANCE_ID)


@stack_names(workload="serving")
def serving_names(spec: ServingStack) -> Iterator[DerivedName]:
    stack = spec.stack
    yield from _compute(stack, SERVING_LONGEST)
    yield DerivedName("the replicas' service account", resource_id(stack, "replica", 30), SERVICE_ACCOUNT_ID)
    yield DerivedName("the replicas' base instance name", replica_base_instance_name(stack), BASE_INSTANCE_NAME)
    if spec.serving.admission.kind == "queue":
        for topic in ("requests", "responses", "dead-letters"):
            yield DerivedName(f"the {topic} topic", f"{stack}-{topic}", PUBSUB_NAME, autonamed=True)
