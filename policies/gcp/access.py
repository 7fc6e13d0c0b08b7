"""GCP (pulumi-gcp) edges of the access graph (policies/access.py): every IAM member, binding and policy at any
scope, the service accounts machines and services wear, service account and HMAC keys, workload identity
providers, and where data is written, forwarded or encrypted (log sinks, transfer jobs, Pub/Sub exports, customer
keys, bucket ACLs, shared VPC attachments). The separation invariant judges them (policies/separation/access_rules.py).

Names are placed by what they carry: a project id or number in an id or email, a bucket by its global name (the
stack's own buckets, else the configured trainingStores/servingStores), the provider's project when a resource
names none. Network peering and private endpoints are the reachability view's, not edges.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from ..access import ADMIN, BECOME, IDENTITY, KEY, OBJECTS, OWN, RESOURCE, Edge, Party, Placement
from ..common import as_list, decode
from ..readers import items_at
from ..vendor import tokens_of
from .concepts import GCP
from .flows import FLOW_TYPES, flow_edges
from .iam import StackFacts, condition_of, member_party, narrow_attribute_condition, object_prefixes, role_access
from .places import (
    PROJECT_IN,
    account_party,
    bucket_party,
    key_party,
    label_of,
    party_in,
    stack_facts,
    text_at,
    values_at,
)

# An IAM resource's inputs that say who and what, not where.
NOT_SCOPE = frozenset({"id", "urn", "name", "role", "member", "members", "condition", "policyData", "etag", "project"})
IAM_KIND = re.compile(r"^gcp:[A-Za-z0-9]+/[A-Za-z0-9]*[iI][aA][mM](?:Member|Binding|Policy):[A-Za-z0-9]+$")

# Kinds whose service account a machine or managed service runs as: the resource -become-> that account. Paths
# walk lists where a step ends in "[]". Cluster Director (hypercomputecluster) declares no service account input;
# Cloud Batch has no pulumi-gcp resource.
WEARERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "gcp:compute/instance:Instance": (("serviceAccount", "email"),),
    "gcp:compute/instanceTemplate:InstanceTemplate": (("serviceAccount", "email"),),
    "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate": (("serviceAccount", "email"),),
    "gcp:compute/instanceFromTemplate:InstanceFromTemplate": (("serviceAccount", "email"),),
    "gcp:compute/instanceFromMachineImage:InstanceFromMachineImage": (("serviceAccount", "email"),),
    "gcp:container/nodePool:NodePool": (("nodeConfig", "serviceAccount"),),
    "gcp:container/cluster:Cluster": (
        ("nodeConfig", "serviceAccount"),
        ("nodePools[]", "nodeConfig", "serviceAccount"),
        ("clusterAutoscaling", "autoProvisioningDefaults", "serviceAccount"),
    ),
    "gcp:cloudrunv2/service:Service": (("template", "serviceAccount"),),
    "gcp:cloudrunv2/job:Job": (("template", "template", "serviceAccount"),),
    "gcp:cloudfunctionsv2/function:Function": (
        ("serviceConfig", "serviceAccountEmail"),
        ("buildConfig", "serviceAccount"),
    ),
    "gcp:workbench/instance:Instance": (("gceSetup", "serviceAccounts[]", "email"),),
    "gcp:cloudscheduler/job:Job": (
        ("httpTarget", "oauthToken", "serviceAccountEmail"),
        ("httpTarget", "oidcToken", "serviceAccountEmail"),
    ),
    "gcp:cloudbuild/trigger:Trigger": (("serviceAccount",),),
    # Pub/Sub mints tokens as these accounts for push and export deliveries.
    "gcp:pubsub/subscription:Subscription": (
        ("pushConfig", "oidcToken", "serviceAccountEmail"),
        ("bigqueryConfig", "serviceAccountEmail"),
        ("cloudStorageConfig", "serviceAccountEmail"),
    ),
    "gcp:storage/transferJob:TransferJob": (("serviceAccount",),),
    "gcp:logging/projectSink:ProjectSink": (("customWriterIdentity",),),
    "gcp:logging/folderSink:FolderSink": (("customWriterIdentity",),),
    "gcp:logging/organizationSink:OrganizationSink": (("customWriterIdentity",),),
    "gcp:logging/billingAccountSink:BillingAccountSink": (("customWriterIdentity",),),
}
SA_KEYS = ("gcp:serviceaccount/key:Key", "gcp:serviceAccount/key:Key", "gcp:storage/hmacKey:HmacKey")
POOL_PROVIDER = "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider"
ORG_SCOPES = {"gcp:folder/": "folder", "gcp:organizations/": "orgId"}

# The kinds the resource-level policy reads (the stack-level one reads every resource, and any pulumi-gcp IAM kind
# IAM_KIND matches).
ACCESS_TYPES: tuple[str, ...] = tuple(
    dict.fromkeys(
        [
            *tokens_of(GCP, "role-binding", "resource-grant"),
            *(f"gcp:{scope}iAM{shape}:IAM{shape}" for scope in ORG_SCOPES for shape in ("Member", "Binding", "Policy")),
            *(f"gcp:storage/managedFolderIam{s}:ManagedFolderIam{s}" for s in ("Member", "Binding", "Policy")),
            *WEARERS,
            *SA_KEYS,
            POOL_PROVIDER,
            *FLOW_TYPES,
        ]
    )
)


# --- IAM members, bindings and policies ---------------------------------------------------------------------------


def bindings_of(props: Any) -> list[tuple[str, str, Any]]:
    """(role, member, binding) of an IAM member, binding or policy resource (policyData as JSON or an object)."""
    found: list[tuple[str, str, Any]] = []
    role = str(props.get("role") or "")
    for member in as_list(props.get("member")) + as_list(props.get("members")):
        found.append((role, str(member), props))
    policy = decode(props.get("policyData"))
    if hasattr(policy, "get"):
        for binding in items_at(policy, "bindings"):
            for member in as_list(binding.get("members")):
                found.append((str(binding.get("role") or ""), str(member), binding))
    return found


def _scope(resource: Any, placement: Placement, facts: StackFacts | None) -> tuple[Party, Party | None, str | None]:
    """(target of the grant, identity its become-roles lend or None, bucket name for conditions)."""
    kind, props = resource.resource_type, resource.props
    service, _, _ = kind.partition(":")[2].partition("/")
    for prefix, key in ORG_SCOPES.items():
        if kind.startswith(prefix):
            what = f"{key.removesuffix('Id')} {props.get(key)}"
            why = f"{what} holds projects the pack cannot list (both sides' may be under it)"
            return (
                Party(what, None, RESOURCE, why),
                Party(f"every service account under {what}", None, IDENTITY, why),
                None,
            )
    if kind.startswith("gcp:projects/"):
        project = text_at(props, "project")
        target = party_in(f"project {project or '(the provider)'}", project, facts, RESOURCE, placement)
        return target, Party(f"every service account of {target.ref}", target.account, IDENTITY, target.unplaced), None
    if kind.startswith(("gcp:storage/bucketIAM", "gcp:storage/managedFolderIam")):
        bucket = text_at(props, "bucket")
        return bucket_party(bucket, placement, facts, resource), None, (bucket or "").removeprefix("b/")
    if kind.startswith(("gcp:kms/cryptoKeyIAM", "gcp:kms/keyRingIAM")):
        prop = "cryptoKeyId" if "cryptoKey" in kind else "keyRingId"
        value = text_at(props, prop) or ""
        # The provider also takes {project}/{location}/{ring}[/{key}], and without the project the provider's.
        parts, full = value.split("/"), 4 if prop == "cryptoKeyId" else 3
        if value and not value.startswith("projects/") and len(parts) in (full, full - 1):
            project = parts[0] if len(parts) == full else None
            return party_in(f"key {value}", project, facts, KEY, placement), None, None
        return key_party(props.get(prop), placement, facts, resource, prop), None, None
    if kind.startswith(("gcp:serviceaccount/", "gcp:serviceAccount/")):
        account = account_party(text_at(props, "serviceAccountId") or "", placement, facts)
        return account, account, None
    # Any other IAM kind (pulumi-gcp has hundreds): the resource its other string inputs name, in the project they
    # (or its `project` input) name, else the provider's.
    ids = (
        [str(v) for k, v in props.items() if isinstance(v, str) and k not in NOT_SCOPE]
        if hasattr(props, "items")
        else []
    )
    project = next((m.group(1) for v in ids if (m := PROJECT_IN.search(v)) and m.group(1) not in "_-"), None)
    project = project or text_at(props, "project")
    shown = f"{service} {next((v for v in ids if v != project), '?')}"
    return party_in(shown, project, facts, RESOURCE, placement), None, None


def iam_edges(resource: Any, placement: Placement, facts: StackFacts | None) -> Iterator[Edge]:
    target, identities, bucket = _scope(resource, placement, facts)
    label = label_of(resource)
    managed_folder = text_at(resource.props, "managedFolder") if target.kind == OBJECTS else None
    for role, member, binding in bindings_of(resource.props):
        source = member_party(member, facts, needs_stack=placement.stack is None)
        granted = role_access(role, facts)
        if granted.needs_stack and placement.stack is None:
            continue  # the stack-level check reads the custom role's permissions
        what = f"{label} ({role} to {member}{'; ' + granted.note if granted.note else ''})"
        if target.kind == IDENTITY:
            access = BECOME if granted.becomes or granted.level == ADMIN else granted.level
            yield Edge(source, access, target, resource.urn, what)
            continue
        if target.kind == OBJECTS:
            yield from _object_edges(source, granted.level, target, resource.urn, what, binding, bucket, managed_folder)
        else:
            yield Edge(source, granted.level, target, resource.urn, what)
        if granted.becomes and identities is not None:
            yield Edge(source, BECOME, identities, resource.urn, what)


def _object_edges(
    source: Party,
    level: str,
    target: Party,
    origin: str,
    what: str,
    binding: Any,
    bucket: str | None,
    folder: str | None,
) -> Iterator[Edge]:
    """A bucket grant, one edge per object prefix its condition (or managed folder) limits it to."""
    expression, title = condition_of(binding)
    prefixes = object_prefixes(expression, bucket or None)
    if prefixes is None:
        prefixes = [""]
        if expression is not None:
            what = f"{what}; condition {title or expression!r} limits it to no object prefix the pack can read"
    base = folder.rstrip("/") + "/" if folder else ""
    for prefix in prefixes:
        scope = prefix if not base or prefix.startswith(base) else base
        yield Edge(source, level, target, origin, what, scope)


# --- identities worn, keys held, federation -----------------------------------------------------------------------


def wearer_edges(resource: Any, placement: Placement, facts: StackFacts | None) -> Iterator[Edge]:
    paths = WEARERS.get(resource.resource_type, ())
    if not paths:
        return
    label = label_of(resource)
    wearer = party_in(label, text_at(resource.props, "project"), facts, RESOURCE, placement)
    for path in paths:
        for value in values_at(resource.props, path):
            if isinstance(value, str) and value:
                identity = account_party(value, placement, facts)
                yield Edge(wearer, BECOME, identity, resource.urn, f"{label} runs as {value} ({'.'.join(path)})")


def key_holder_edges(resource: Any, placement: Placement, facts: StackFacts | None) -> Iterator[Edge]:
    """A service account key or HMAC key: whoever holds it (the stack's state, a file, a CI secret) is the account,
    for as long as the key lives (https://cloud.google.com/iam/docs/best-practices-for-managing-service-account-keys)."""
    props = resource.props
    value = text_at(props, "serviceAccountId") or text_at(props, "serviceAccountEmail") or ""
    label = label_of(resource)
    holder = Party(f"holder of {label}", None, IDENTITY, "a long-lived key is held by whoever reads it, in no project")
    yield Edge(holder, BECOME, account_party(value, placement, facts), resource.urn, f"{label} for {value or '?'}")


def provider_edges(resource: Any, placement: Placement, facts: StackFacts | None) -> Iterator[Edge]:
    """A workload identity pool provider admits outside identities into the pool; only an AWS account or a
    condition naming exact identities places them (https://cloud.google.com/iam/docs/workload-identity-federation)."""
    props = resource.props
    pool = text_at(props, "workloadIdentityPoolId") or "?"
    target = party_in(f"workload identity pool {pool}", text_at(props, "project"), facts, IDENTITY, placement)
    label = label_of(resource)
    condition = props.get("attributeCondition")
    aws_account = text_at(props, "aws", "accountId")
    issuer = text_at(props, "oidc", "issuerUri") or (
        "SAML" if props.get("saml") else "X.509" if props.get("x509") else "?"
    )
    if aws_account is not None:
        source = Party(f"AWS account {aws_account}", aws_account, IDENTITY)
    elif narrow_attribute_condition(condition):
        # The serving stack's own replicas on another cloud, where the config says so (artifactHandoff.issuers).
        where = OWN if placement.federated_own(issuer) else issuer
        source = Party(f"identities of {issuer} matching {condition}", where, IDENTITY)
    else:
        why = f"every identity {issuer} vouches for (attributeCondition {condition or 'absent'} names none exactly)"
        source = Party(f"identities of {issuer}", None, IDENTITY, why)
    yield Edge(source, BECOME, target, resource.urn, f"{label} ({issuer})")


def edges(resource: Any, placement: Placement) -> Iterable[Edge]:
    """Every edge one pulumi-gcp resource creates (none for another vendor's)."""
    kind = resource.resource_type
    if not kind.startswith("gcp:"):
        return []
    facts = stack_facts(placement)
    found: list[Edge] = []
    if IAM_KIND.match(kind):
        found += iam_edges(resource, placement, facts)
    if kind in WEARERS:
        found += wearer_edges(resource, placement, facts)
    if kind in SA_KEYS:
        found += key_holder_edges(resource, placement, facts)
    elif kind == POOL_PROVIDER:
        found += provider_edges(resource, placement, facts)
    found += flow_edges(resource, placement, facts)
    return found
