"""How the packs read gcp resources: one small pure function per rule, each naming the trusted rule it
mirrors (Checkov CKV_GCP_xx, Trivy AVD-GCP-xxxx, a Google doc) or saying it is ours.

Properties arrive camelCase as the engine sends them (`publicAccessPrevention`, `accessConfigs`,
`deadLetterPolicy`). The packs reach them through the GCP vendor entry (policies/gcp/__init__.py).
"""

from __future__ import annotations

import base64
import ipaddress
import re
from collections.abc import Iterable, Sequence
from typing import Any

from .. import concepts
from ..common import as_list, decode, refers_to, truthy, urn_name
from ..links import referrers_of, targets_of
from ..readers import count_of, get, items_at, name_of
from ..vendor import tokens_of
from .concepts import GCP

CLOUD = "gcp"

BUCKET = tokens_of(GCP, "bucket")
NODE_KINDS = tokens_of(GCP, "instance", "node-template")
MANAGED_CLUSTERS = tokens_of(GCP, "fleet")  # Cluster Director: its own login and GPU VMs
CAPACITY_REQUESTS = tokens_of(GCP, "capacity-request")  # MIG resize requests (flex-start)
INSTANCE = "gcp:compute/instance:Instance"
FIREWALL = "gcp:compute/firewall:Firewall"
SSL_POLICY = "gcp:compute/sSLPolicy:SSLPolicy"
HTTPS_PROXY = "gcp:compute/targetHttpsProxy:TargetHttpsProxy"
HTTP_PROXY = "gcp:compute/targetHttpProxy:TargetHttpProxy"
URL_MAP = "gcp:compute/uRLMap:URLMap"
SUBSCRIPTION = "gcp:pubsub/subscription:Subscription"
TOPIC = "gcp:pubsub/topic:Topic"
AUTOSCALERS = tokens_of(GCP, "scaling-policy")
GROUPS = tokens_of(GCP, "node-group")
BACKEND_SERVICE = "gcp:compute/backendService:BackendService"
FORWARDING_RULE = "gcp:compute/globalForwardingRule:GlobalForwardingRule"
GRANTS = tokens_of(GCP, "resource-grant", "role-binding")
PROJECT_GRANTS = tokens_of(GCP, "role-binding")
# CMEK-capable data stores and the input naming their key (provider docs of each resource).
KEY_INPUTS = {
    "gcp:storage/bucket:Bucket": ("encryption", "defaultKmsKeyName"),
    "gcp:lustre/instance:Instance": ("kmsKey",),
    "gcp:filestore/instance:Instance": ("kmsKeyName",),
    "gcp:pubsub/topic:Topic": ("kmsKeyName",),
    "gcp:sql/databaseInstance:DatabaseInstance": ("encryptionKeyName",),  # Checkov CKV_GCP_79-style CMEK
}
SQL_INSTANCE = "gcp:sql/databaseInstance:DatabaseInstance"


def _entries(node: Any, key: str) -> list[Any]:
    """A keyed collection's entries, written as the SDK's list of {id, ...} or as the API's map id -> {...}
    (Cluster Director's computeResources, storageResources, networkResources)."""
    value = get(node, key)
    if hasattr(value, "values") and not any(k in value for k in ("id", "config")):
        return [v for v in value.values() if hasattr(v, "get")]
    return items_at(node, key)


# --- encryption at rest ---------------------------------------------------------------------------


def check_customer_keys(resources: Sequence[Any], data_pattern: str) -> Iterable[tuple[str, str]]:
    """Google encrypts everything at rest by default (https://cloud.google.com/docs/security/encryption/default-encryption),
    so without a Cloud KMS key in the stack the default is the documented choice. Where the stack has
    its own CryptoKey, the data stores use it: data buckets (`kmsBucketPattern`) set
    encryption.defaultKmsKeyName (Trivy AVD-GCP-0066), Lustre
    `kmsKey`, Filestore `kmsKeyName`, Pub/Sub topics `kmsKeyName` (CKV_GCP_83). Ours for the linking."""
    if not concepts.of(resources, "key", cloud=CLOUD):
        return
    for resource in resources:
        path = KEY_INPUTS.get(resource.resource_type)
        if path is None or get(resource.props, *path):
            continue
        if resource.resource_type == "gcp:storage/bucket:Bucket":
            names = [urn_name(resource.urn), str(resource.props.get("name") or "")]
            if not any(re.search(data_pattern, n, re.IGNORECASE) for n in names):
                continue
        yield (
            resource.urn,
            f"{name_of(resource)} uses Google-managed encryption while the stack has a Cloud KMS key: set {'.'.join(path)}",
        )


# --- public exposure ------------------------------------------------------------------------------

PUBLIC_MEMBERS = ("allusers", "allauthenticatedusers")


def members_of(resource: Any) -> list[tuple[str, str]]:
    """(role, member) pairs of an IAM member, binding or policy resource, whatever its spelling."""
    props = resource.props
    role = str(props.get("role") or "")
    found = [(role, str(m)) for m in as_list(props.get("member")) + as_list(props.get("members"))]
    policy = decode(props.get("policyData"))
    if hasattr(policy, "get"):
        for binding in items_at(policy, "bindings"):
            found += [(str(binding.get("role")), str(m)) for m in as_list(binding.get("members"))]
    return found


def check_no_public_buckets(resource: Any) -> Iterable[str]:
    """No public bucket: publicAccessPrevention enforced (Checkov CKV_GCP_114, Trivy AVD-GCP-0001
    family), uniform bucket-level access on, so no object ACL can open it (CKV_GCP_29, AVD-GCP-0002),
    and no IAM grant to allUsers / allAuthenticatedUsers on anything (CKV_GCP_28, AVD-GCP-0001)."""
    kind, props, name = resource.resource_type, resource.props, name_of(resource)
    if kind in BUCKET:
        if str(props.get("publicAccessPrevention") or "inherited") != "enforced":
            yield f"bucket {name} does not enforce public access prevention (publicAccessPrevention must be 'enforced')"
        if not truthy(props.get("uniformBucketLevelAccess")):
            yield f"bucket {name} allows object ACLs (uniformBucketLevelAccess must be true)"
    elif kind in GRANTS:
        for role, member in members_of(resource):
            if member.lower() in PUBLIC_MEMBERS:
                yield f"{name} grants {role} to {member} (everyone)"


# --- TLS ------------------------------------------------------------------------------------------


def check_min_tls(resource: Any) -> Iterable[str]:
    """HTTPS proxies name an SSL policy (without one Google's default allows TLS 1.0:
    https://cloud.google.com/load-balancing/docs/ssl-policies-concepts#defaultpolicy) and SSL
    policies set minTlsVersion TLS_1_2+ (Checkov CKV_GCP_15, Trivy AVD-GCP-0039)."""
    kind, props, name = resource.resource_type, resource.props, name_of(resource)
    if kind == SSL_POLICY:
        if str(props.get("minTlsVersion") or "TLS_1_0") not in ("TLS_1_2", "TLS_1_3"):
            yield f"SSL policy {name} allows TLS below 1.2 (minTlsVersion {props.get('minTlsVersion')})"
    elif kind == HTTPS_PROXY and not props.get("sslPolicy"):
        yield f"HTTPS proxy {name} names no sslPolicy (Google's default allows TLS 1.0)"


def http_proxy_problems(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """An HTTP proxy only redirects: its URL map's defaultUrlRedirect.httpsRedirect is true. Ours
    (https://cloud.google.com/load-balancing/docs/https/setting-up-http-https-redirect)."""
    maps = [r for r in resources if r.resource_type == URL_MAP]
    for proxy in (r for r in resources if r.resource_type == HTTP_PROXY):
        linked = targets_of(proxy, "urlMap", maps, keys=("id", "selfLink", "name"))
        if not linked or any(not truthy(get(m.props, "defaultUrlRedirect", "httpsRedirect")) for m in linked):
            yield (
                proxy.urn,
                f"HTTP proxy {name_of(proxy)} must only redirect to HTTPS (URL map defaultUrlRedirect.httpsRedirect)",
            )


# --- ingress --------------------------------------------------------------------------------------

# Google Front End and health-check ranges that reach backends of external Application Load Balancers
# (https://cloud.google.com/load-balancing/docs/health-check-concepts#ip-ranges), and IAP's TCP
# forwarding range (authenticated by IAM: https://cloud.google.com/iap/docs/using-tcp-forwarding).
GOOGLE_FRONT_ENDS = tuple(
    ipaddress.ip_network(n) for n in ("35.191.0.0/16", "130.211.0.0/22", "2600:2d00:1:b029::/64", "2600:2d00:1:1::/64")
)
IAP_RANGE = ipaddress.ip_network("35.235.240.0/20")


def _within(source: str, networks: Iterable[Any]) -> bool:
    try:
        net = ipaddress.ip_network(source.strip(), strict=False)
    except ValueError:
        return False
    return any(net.version == n.version and net.subnet_of(n) for n in networks)


def internet_rules(resource: Any, is_public_range: Any) -> list[tuple[str, str]]:
    """(what, source) of every enabled ingress allow rule whose sources include public addresses
    other than Google's front ends (serving's proxies and health checks) and IAP (SSH)."""
    if resource.resource_type != FIREWALL:
        return []
    props = resource.props
    if (
        str(props.get("direction") or "INGRESS") != "INGRESS"
        or truthy(props.get("disabled"))
        or not props.get("allows")
    ):
        return []
    found = []
    allows = items_at(props, "allows")
    ports = sorted({str(p) for a in allows for p in as_list(a.get("ports"))}) or ["all ports"]
    protocols = sorted({str(a.get("protocol")) for a in allows})
    sources = [str(s) for s in as_list(props.get("sourceRanges"))]
    if not sources and not props.get("sourceTags") and not props.get("sourceServiceAccounts"):
        # An ingress rule that names no source admits 0.0.0.0/0
        # (https://cloud.google.com/firewall/docs/firewalls#sources-for-rules).
        sources = ["0.0.0.0/0"]
    for source in sources:
        if not is_public_range(source) or _within(source, GOOGLE_FRONT_ENDS):
            continue
        if _within(source, [IAP_RANGE]) and protocols == ["tcp"] and ports == ["22"]:
            continue
        found.append((f"{'/'.join(protocols)} {', '.join(ports)}", source))
    return found


# --- nodes ----------------------------------------------------------------------------------------


def check_no_public_ip(resource: Any) -> Iterable[str]:
    """Nodes get no external IP: no accessConfigs (Checkov CKV_GCP_40, Trivy AVD-GCP-0031) and no
    ipv6AccessConfigs (external IPv6) on instances and templates."""
    if resource.resource_type in MANAGED_CLUSTERS:
        login = get(resource.props, "orchestrator", "slurm", "loginNodes")
        if truthy(get(login, "enablePublicIps")):
            yield f"{name_of(resource)} gives its Slurm login nodes external IPs (loginNodes.enablePublicIps)"
        return
    if resource.resource_type == SQL_INSTANCE:  # Checkov CKV_GCP_60, Trivy AVD-GCP-0017: private IP only
        if get(resource.props, "settings", "ipConfiguration", "ipv4Enabled") is not False:
            yield f"Cloud SQL instance {name_of(resource)} has a public IPv4 address (ipConfiguration.ipv4Enabled)"
        return
    if resource.resource_type not in NODE_KINDS:
        return
    for index, interface in enumerate(items_at(resource.props, "networkInterfaces")):
        for key in ("accessConfigs", "ipv6AccessConfigs"):
            if as_list(interface.get(key)):
                yield f"{name_of(resource)} gives interface {index} an external IP ({key})"


FALSE_WORDS = frozenset({"false", "0", "no", "off", "n", "f"})


def check_os_login(resource: Any) -> Iterable[str]:
    """Who may log in to a VM is IAM (OS Login), not SSH keys in metadata: no instance or template turns the
    project's OS Login setting off with `enable-oslogin: FALSE` (Checkov CKV_GCP_34), and no Cluster Director
    login node disables it (`loginNodes.enableOsLogin: false`). Compute Engine reads the metadata value
    case-insensitively (cloud.google.com/compute/docs/oslogin/set-up-oslogin)."""
    if resource.resource_type in MANAGED_CLUSTERS:
        value = get(resource.props, "orchestrator", "slurm", "loginNodes", "enableOsLogin")
        if value is not None and str(value).strip().lower() in FALSE_WORDS:
            yield f"{name_of(resource)} turns OS Login off on its Slurm login nodes (loginNodes.enableOsLogin)"
        return
    if resource.resource_type not in NODE_KINDS:
        return
    metadata = decode(resource.props.get("metadata")) or {}
    for key in metadata if hasattr(metadata, "keys") else ():
        if str(key).strip().lower() == "enable-oslogin" and str(metadata[key]).strip().lower() in FALSE_WORDS:
            yield f"{name_of(resource)} turns OS Login off (metadata {key}: {metadata[key]}); SSH keys would decide"


def user_data(resource: Any) -> list[tuple[str, Any]]:
    """(where, base64 text) of a node's startup script and cloud-init user data (metadata), and of the
    login and node-set startup scripts of a Cluster Director cluster."""
    if resource.resource_type in MANAGED_CLUSTERS:
        slurm = get(resource.props, "orchestrator", "slurm")
        found = [("loginNodes.startupScript", get(slurm, "loginNodes", "startupScript"))]
        found += [
            (f"nodeSets[{index}].computeInstance.startupScript", get(node_set, "computeInstance", "startupScript"))
            for index, node_set in enumerate(items_at(slurm, "nodeSets"))
        ]
        return [(where, base64.b64encode(str(t).encode()).decode()) for where, t in found if isinstance(t, str)]
    if resource.resource_type not in NODE_KINDS:
        return []
    props = resource.props
    metadata = decode(props.get("metadata")) or {}
    texts = [("metadataStartupScript", props.get("metadataStartupScript"))]
    texts += [(f"metadata.{k}", get(metadata, k)) for k in ("startup-script", "user-data")]
    return [(where, base64.b64encode(str(t).encode()).decode()) for where, t in texts if isinstance(t, str)]


def other_resource_policy(resource: Any) -> bool:
    """A compute ResourcePolicy that is not a placement policy (snapshot or instance schedules share
    the type): not training's fabric. Placement is a group placement (compact) or a workload policy
    (HIGH_THROUGHPUT, the dense placement of a MIG's A3/A4 VMs)."""
    return resource.resource_type == "gcp:compute/resourcePolicy:ResourcePolicy" and not (
        resource.props.get("groupPlacementPolicy") or resource.props.get("workloadPolicy")
    )


# --- capacity and scaling -------------------------------------------------------------------------


def spot_usage(resource: Any) -> str | None:
    """Spot VMs (scheduling.provisioningModel SPOT) or their predecessor, preemptible VMs
    (https://cloud.google.com/compute/docs/instances/preemptible); a Cluster Director compute resource of
    Spot VMs (computeResources[].config.newSpotInstances)."""
    if resource.resource_type in MANAGED_CLUSTERS:
        if any(get(c, "config", "newSpotInstances") for c in _entries(resource.props, "computeResources")):
            return "runs Spot VMs (computeResources[].config.newSpotInstances)"
        return None
    if resource.resource_type not in NODE_KINDS:
        return None
    scheduling = resource.props.get("scheduling")
    if str(get(scheduling, "provisioningModel") or "").upper() == "SPOT":
        return "runs Spot VMs (scheduling.provisioningModel SPOT)"
    if truthy(get(scheduling, "preemptible")):
        return "runs preemptible VMs (scheduling.preemptible)"
    return None


def time_limited_usage(resource: Any) -> str | None:
    """Capacity that ends on a timer: flex-start VMs (scheduling.provisioningModel FLEX_START, a MIG resize
    request, Cluster Director newFlexStartInstances) are deleted after their run duration
    (https://cloud.google.com/compute/docs/instance-groups/about-resize-requests-mig), as are VMs bound to a
    calendar-mode reservation (RESERVATION_BOUND) and any VM with scheduling.maxRunDuration or terminationTime; an
    instance schedule that stops VMs is capacity taken away at a set time, as AWS's scheduled action to zero."""
    if resource.resource_type in CAPACITY_REQUESTS:
        return "asks for flex-start VMs (a resize request), deleted after their run duration"
    if resource.resource_type == "gcp:compute/resourcePolicy:ResourcePolicy":
        # An instance schedule stops the VMs it is attached to at set times
        # (https://cloud.google.com/compute/docs/instances/schedule-instance-start-stop).
        if get(resource.props, "instanceSchedulePolicy", "vmStopSchedule"):
            return "stops its VMs on a schedule (instanceSchedulePolicy.vmStopSchedule)"
        return None
    if resource.resource_type in MANAGED_CLUSTERS:
        if any(get(c, "config", "newFlexStartInstances") for c in _entries(resource.props, "computeResources")):
            return "runs flex-start VMs (newFlexStartInstances), deleted after their run duration"
        return None
    if resource.resource_type in NODE_KINDS:
        scheduling = resource.props.get("scheduling")
        model = str(get(scheduling, "provisioningModel") or "").upper()
        if model == "FLEX_START":
            return "runs flex-start VMs (scheduling.provisioningModel FLEX_START), deleted after their run duration"
        if model == "RESERVATION_BOUND":
            return "runs VMs bound to a calendar reservation (RESERVATION_BOUND), deleted when it ends"
        # Any VM may be given a run-time limit (https://cloud.google.com/compute/docs/instances/limit-vm-runtime).
        for key in ("maxRunDuration", "terminationTime"):
            if get(scheduling, key):
                return f"limits its VMs' run time (scheduling.{key}); they are stopped or deleted at the limit"
    return None


QUEUE_METRIC = "pubsub.googleapis.com/subscription/num_undelivered_messages"


def _backend_entries_for(backend: Any, group: Any) -> list[Any]:
    """The entries of `backend.backends` that name `group` (by its instanceGroup, or through the engine's property
    dependencies, which then stand for every entry)."""
    entries = items_at(backend.props, "backends")
    instance_group = group.props.get("instanceGroup")
    named = [e for e in entries if instance_group is not None and get(e, "group") == instance_group]
    if named:
        return named
    deps = getattr(backend, "property_dependencies", None) or {}
    if any(getattr(d, "urn", None) == group.urn for d in deps.get("backends", [])):
        return entries
    return []


def _load_balancing_on_cpu(group: Any, resources: Sequence[Any]) -> str | None:
    """Why the autoscaler's loadBalancingUtilization reads CPU for `group`, or None when it reads requests: the
    load balancer's utilization is the backend's balancing mode, and UTILIZATION (the default) is CPU
    (https://cloud.google.com/load-balancing/docs/backend-service#balancing-mode); RATE is requests per instance."""
    entries = [e for b in resources if b.resource_type == BACKEND_SERVICE for e in _backend_entries_for(b, group)]
    if not entries:
        return "no backend service names it, so its load-balancing utilization cannot be placed"
    modes = sorted({str(get(e, "balancingMode") or "UTILIZATION").upper() for e in entries})
    if modes != ["RATE"]:
        return f"its load-balancing utilization is balancingMode {', '.join(modes)} (CPU), not RATE"
    return None


def scaling_problems(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """Serving instance groups scale on the requests they own: the Pub/Sub backlog (num_undelivered_messages,
    https://cloud.google.com/compute/docs/autoscaler/scaling-cloud-monitoring-metrics) or, without a queue, the
    load balancer's utilization over RATE backends (requests per instance); never on CPU. An autoscaler with
    cpuUtilization, with load-balancing utilization over UTILIZATION backends, or with no signal at all (it then
    defaults to CPU 60%: provider docs of autoscaling_policy.cpu_utilization) fails. A group no autoscaler names,
    with a targetSize of at least 1, is a fixed fleet and passes."""
    autoscalers = [r for r in resources if r.resource_type in AUTOSCALERS]
    for group in (r for r in resources if r.resource_type in GROUPS):
        linked = referrers_of(group, autoscalers, "target", keys=("id", "selfLink", "instanceGroup"))
        policies = [get(a.props, "autoscalingPolicy") for a in linked]
        metrics = [str(m.get("name")) for p in policies for m in items_at(p, "metrics")]
        cpu = [name_of(a) for a, p in zip(linked, policies, strict=True) if get(p, "cpuUtilization") is not None]
        balanced = [p for p in policies if get(p, "loadBalancingUtilization") is not None]
        lb_cpu = _load_balancing_on_cpu(group, resources) if balanced else None
        size = count_of(group.props.get("targetSize"))
        if cpu:
            yield group.urn, f"replica group {name_of(group)} scales on CPU ({', '.join(cpu)}); scale on queue depth"
        elif lb_cpu:
            yield group.urn, f"replica group {name_of(group)} scales on load-balancing utilization, but {lb_cpu}"
        elif not linked and size is not None and size >= 1:
            continue  # a fixed fleet: nothing scales it
        elif QUEUE_METRIC not in metrics and not balanced:
            yield (
                group.urn,
                f"replica group {name_of(group)} has no autoscaler on the requests its replicas own (the Pub/Sub "
                f"backlog {QUEUE_METRIC}, or without a queue load-balancing utilization over RATE backends), and "
                "is not a fixed fleet (targetSize >= 1)",
            )


# --- queues ---------------------------------------------------------------------------------------


def queue_dlq_problems(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """Every subscription dead-letters (deadLetterPolicy.deadLetterTopic, maxDeliveryAttempts 5-100:
    https://cloud.google.com/pubsub/docs/handling-failures), or reads a dead-letter topic itself."""
    subscriptions = [r for r in resources if r.resource_type == SUBSCRIPTION]
    topics = [r for r in resources if r.resource_type == TOPIC]
    dead_letter_topics = [t for t in topics for s in subscriptions if _depends_on_any(s, "deadLetterPolicy", [t])] + [
        t
        for t in topics
        for s in subscriptions
        if get(s.props, "deadLetterPolicy", "deadLetterTopic") in {t.props.get("id"), t.props.get("name")} - {None}
    ]
    for subscription in subscriptions:
        if any(refers_to(subscription, "topic", t, keys=("id", "name")) for t in dead_letter_topics):
            continue
        policy = subscription.props.get("deadLetterPolicy")
        attempts = get(policy, "maxDeliveryAttempts")
        if not get(policy, "deadLetterTopic"):
            yield subscription.urn, f"subscription {name_of(subscription)} has no dead-letter topic (deadLetterPolicy)"
        elif attempts is not None and not 5 <= int(attempts) <= 100:
            yield (
                subscription.urn,
                f"subscription {name_of(subscription)} maxDeliveryAttempts {attempts} is outside 5-100",
            )


# --- web application firewall ---------------------------------------------------------------------

EXTERNAL = ("EXTERNAL", "EXTERNAL_MANAGED")


def internet_facing(resource: Any) -> bool:
    """A global forwarding rule of an external load balancer (EXTERNAL is the API's default scheme)."""
    # A Private Service Connect endpoint for Google APIs (target all-apis / vpc-sc) is a private address in
    # the VPC, not a load balancer (https://cloud.google.com/vpc/docs/configure-private-service-connect-apis).
    return (
        resource.resource_type == FORWARDING_RULE
        and str(resource.props.get("target") or "") not in ("all-apis", "vpc-sc")
        and str(resource.props.get("loadBalancingScheme") or "EXTERNAL") in EXTERNAL
    )


# --- identity ------------------------------------------------------------------------------------------------

# Basic roles grant (nearly) everything in a project (https://cloud.google.com/iam/docs/roles-overview#basic, Trivy AVD-GCP-0007).
BASIC_ROLES = ("roles/owner", "roles/editor")
ACCOUNT_ADMIN_ROLES = ("roles/iam.serviceAccountUser", "roles/iam.serviceAccountTokenCreator")
# IAM-admin-equivalent predefined roles: each rewrites who may do what in its scope (setIamPolicy on the project,
# folder or organization, custom roles, deny policies, workload identity pools, org policies) or mints any service
# account's keys, so whoever holds one can grant itself every other role
# (https://cloud.google.com/iam/docs/understanding-roles; Rhino Security Labs' GCP escalation paths). Granted
# anywhere, not only across sides: they are basic roles by another name.
IAM_ADMIN_ROLES = (
    "roles/iam.securityAdmin",
    "roles/resourcemanager.projectIamAdmin",
    "roles/resourcemanager.folderIamAdmin",
    "roles/resourcemanager.folderAdmin",
    "roles/resourcemanager.organizationAdmin",
    "roles/iam.roleAdmin",
    "roles/iam.organizationRoleAdmin",
    "roles/iam.denyAdmin",
    "roles/iam.workloadIdentityPoolAdmin",
    "roles/orgpolicy.policyAdmin",
    "roles/iam.serviceAccountAdmin",
    "roles/iam.serviceAccountKeyAdmin",
)


def check_least_privilege(resource: Any) -> Iterable[str]:
    """No basic roles (owner/editor) or IAM-admin-equivalent roles anywhere, and no project-wide service-account
    impersonation (Checkov CKV_GCP_41 / CKV_GCP_49, Trivy AVD-GCP-0011)."""
    if resource.resource_type not in GRANTS:
        return
    for role, member in members_of(resource):
        if role in BASIC_ROLES:
            yield f"{name_of(resource)} grants the basic role {role} to {member}"
        elif role in IAM_ADMIN_ROLES:
            yield f"{name_of(resource)} grants {role} to {member}: it can grant itself any role in its scope"
        elif role in ACCOUNT_ADMIN_ROLES and resource.resource_type in PROJECT_GRANTS:
            yield f"{name_of(resource)} grants {role} project-wide to {member}; grant it on the one service account"


def _depends_on_any(resource: Any, prop: str, targets: Sequence[Any]) -> bool:
    deps = getattr(resource, "property_dependencies", None) or {}
    urns = {t.urn for t in targets}
    return any(getattr(d, "urn", None) in urns for d in deps.get(prop, []))


def project_problems(resource: Any, own: frozenset[str]) -> Iterable[str]:
    """Every gcp resource's `project` input is absent (the provider's pin) or the pinned project."""
    project = resource.props.get("project")
    if isinstance(project, str) and project and own and project not in own:
        yield f"{resource.resource_type} {name_of(resource)} sets project {project}; the provider pins {', '.join(sorted(own))}"


def _named(bucket: Any, pattern: str) -> bool:
    return any(
        re.search(pattern, n, re.IGNORECASE) for n in (urn_name(bucket.urn), str(bucket.props.get("name") or ""))
    )


def versioning_problems(resources: Sequence[Any], pattern: str) -> Iterable[tuple[str, str]]:
    """Checkpoint/artifact buckets keep object versions (Checkov CKV_GCP_78);
    no bucket turns versioning off."""
    for bucket in (r for r in resources if r.resource_type in BUCKET):
        enabled = get(bucket.props, "versioning", "enabled")
        if enabled is not None and not truthy(enabled):
            yield bucket.urn, f"bucket {name_of(bucket)} turns versioning off (versioning.enabled)"
        elif _named(bucket, pattern) and not truthy(enabled):
            yield bucket.urn, f"bucket {name_of(bucket)} holds checkpoints/artifacts but versioning is off"


NONCURRENT_CONDITIONS = ("numNewerVersions", "daysSinceNoncurrentTime", "noncurrentTimeBefore")


def lifecycle_problems(resources: Sequence[Any], log_pattern: str) -> Iterable[tuple[str, str]]:
    """No lifecycle rule deletes live objects of a data bucket (log buckets may): a Delete whose
    condition is not limited to noncurrent versions (withState ARCHIVED, numNewerVersions, ...;
    https://cloud.google.com/storage/docs/lifecycle#conditions). Ours."""
    for bucket in (r for r in resources if r.resource_type in BUCKET):
        if _named(bucket, log_pattern):
            continue
        for rule in items_at(bucket.props, "lifecycleRules"):
            condition = rule.get("condition") or {}
            if str(get(rule, "action", "type")) != "Delete":
                continue
            noncurrent = str(get(condition, "withState") or "ANY") == "ARCHIVED" or any(
                get(condition, k) not in (None, 0, "") for k in NONCURRENT_CONDITIONS
            )
            if not noncurrent:
                yield bucket.urn, f"bucket {name_of(bucket)} has a lifecycle rule that deletes live objects"
    # A Cloud SQL instance is deleted only on purpose, by no surface (the API's flag, not only Pulumi's), and keeps
    # automated backups (Checkov CKV_GCP_14; cloud.google.com/sql/docs/mysql/deletion-protection). Ours for both.
    for instance in (r for r in resources if r.resource_type == SQL_INSTANCE):
        settings = instance.props.get("settings") or {}
        if not truthy(instance.props.get("deletionProtection")) or not truthy(
            get(settings, "deletionProtectionEnabled")
        ):
            yield (
                instance.urn,
                f"Cloud SQL instance {name_of(instance)} lacks deletionProtection or deletionProtectionEnabled",
            )
        if not truthy(get(settings, "backupConfiguration", "enabled")):
            yield instance.urn, f"Cloud SQL instance {name_of(instance)} keeps no automated backups"
