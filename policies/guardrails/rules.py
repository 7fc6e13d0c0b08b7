"""Guardrails pack: encryption, no public exposure, IMDSv2, least privilege, protected state, and the
scaling/capacity rules that keep a GPU fleet safe and affordable.

Each check names the trusted rule it mirrors (Checkov CKV_AWS_xx, Trivy AVD-AWS-xxxx, an AWS doc) or
says it is ours. Checks that link resources (a bucket and its encryption/versioning/public-access
resources, an autoscaling group and its scaling policies) are stack policies: they follow the engine's
property dependencies, which are known even while ids are not. Checks whose inputs are usually unknown
during preview (policy documents, user data built from other resources' outputs) are repeated as
stack policies (`*-final`) on the stack's final state so they still bind on `up`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from pulumi_policy import EnforcementLevel
from pulumi_policy.proxy import UnknownValueError

from .. import concepts, vendors, waf
from ..common import Context, ResourceCheck, StackCheck, resource_policy, stack_policy, truthy
from ..readers import name_of, secrets_in
from ..vendor import GuardrailReaders, PatternFindings, ResourceFindings, StackFindings
from . import exposure

PACK_NAME = "accelstack-guardrails"
PACK_DESCRIPTION = "Encryption, no public exposure, IMDSv2, least privilege, protected state, safe scaling."

CONFIG: dict[str, dict[str, Any]] = {
    "checkpointPattern": {
        "type": "string",
        "default": "checkpoint",
        "description": "Regex on a bucket's resource or bucket name marking the checkpoint location.",
    },
    "kmsBucketPattern": {
        "type": "string",
        "default": "checkpoint|artifact|model|dataset",
        "description": "Regex on a bucket's resource or bucket name: buckets that must use SSE-KMS.",
    },
    "logBucketPattern": {
        "type": "string",
        "default": "log",
        "description": "Regex on a bucket's resource or bucket name: log buckets, whose lifecycle may expire objects.",
    },
    "minRetentionDays": {
        "type": "integer",
        "default": 7,
        "description": "Shortest soft-delete / deletion window, in days, on stateful stores and keys.",
    },
    "versionedBucketPattern": {
        "type": "string",
        "default": "checkpoint|artifact|model",
        "description": "Regex on a bucket's resource or bucket name: buckets that must be versioned.",
    },
}

Reader = TypeVar("Reader")


# Readers by the pick that chose them (its code, for a pick without a closure: the same lambda written in a rule is
# a new function each call) and the vendor list they were chosen from (held, so its id stays its own): a rule runs
# per resource, and the list (frozen vendors, replaced whole when a vendor is added) rarely changes.
_chosen: dict[Any, tuple[tuple[Any, ...], list[Any]]] = {}


def _readers(pick: Callable[[GuardrailReaders], Reader | None]) -> list[Reader]:
    """Every listed vendor's reader of one concern, in the list's order (policies/vendors.py)."""
    listed = vendors.VENDORS
    key = pick.__code__ if getattr(pick, "__closure__", True) is None else pick
    held = _chosen.get(key)
    if held is not None and held[0] is listed:
        return held[1]
    readers = [reader for vendor in listed if (reader := pick(vendor.guardrails)) is not None]
    if len(_chosen) >= 256:
        _chosen.clear()
    _chosen[key] = (listed, readers)
    return readers


def _setting(ctx: Context, key: str) -> str:
    return str(ctx.config.get(key) or CONFIG[key]["default"])


Check = TypeVar("Check", bound=Callable[..., Any])


def _documented(check: Check, pick: Callable[[GuardrailReaders], Any], doc: str = "") -> Check:
    """The check's doc: what the policy asks, then what each vendor's reader mirrors."""
    docs = [doc] + [getattr(reader, "__doc__", None) or "" for reader in _readers(pick)]
    check.__doc__ = "\n\n".join(d for d in docs if d)
    return check


def each_resource(pick: Callable[[GuardrailReaders], ResourceFindings | None], doc: str = "") -> ResourceCheck:
    """A resource policy over every vendor: each vendor's reader of the concern, in the list's order."""

    def check(resource: Any, ctx: Context) -> Iterable[str]:
        for read in _readers(pick):
            yield from read(resource)

    return _documented(check, pick, doc)


def each_stack(pick: Callable[[GuardrailReaders], StackFindings | None], doc: str = "") -> StackCheck:
    """A stack policy over every vendor."""

    def check(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
        for read in _readers(pick):
            yield from read(resources)

    return _documented(check, pick, doc)


def each_stack_named(pick: Callable[[GuardrailReaders], PatternFindings | None], setting: str) -> StackCheck:
    """A stack policy over every vendor, handing each the name pattern configured as `setting`."""

    def check(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
        pattern = _setting(ctx, setting)
        for read in _readers(pick):
            yield from read(resources, pattern)

    return _documented(check, pick)


# The stack file's own opt-out (serving.loadBalancer.accessLogs: false), a reviewed change of the stack's config: the
# runner passes it; a resource edit that drops the logs while the stack says they are on is still caught.
SERVICE_LOGS_CONFIG: dict[str, dict[str, Any]] = {
    "frontDoorAccessLogs": {
        "type": "boolean",
        "default": True,
        "description": "Whether the serving front door's access logs are required (serving.loadBalancer.accessLogs).",
    },
}


def check_service_logs(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Access, audit and request logs stay on, each vendor reading its own (below); the front door's access logs
    only where the stack file keeps them on. Ours, after each cloud's logging guidance."""
    front_door = ctx.config.get("frontDoorAccessLogs", True) is not False
    for read in _readers(lambda r: r.service_logs):
        yield from read(resources, front_door)


check_service_logs.__doc__ = "\n\n".join(
    [check_service_logs.__doc__ or ""]
    + [v.guardrails.service_logs.__doc__ or "" for v in vendors.VENDORS if v.guardrails.service_logs]
)


def check_no_internet_ingress(resource: Any, ctx: Context) -> Iterable[str]:
    for read in _readers(lambda r: r.internet_ingress):
        yield from read(resource, ctx.workload)


def check_lb_deletion_protection(resource: Any, ctx: Context) -> Iterable[str]:
    for read in _readers(lambda r: r.lb_deletion_protection):
        yield from read(resource, ctx.workload)


def check_no_secrets_in_user_data(resource: Any, ctx: Context) -> Iterable[str]:
    """No secrets in a dynamic resource's inputs (stored in the state in clear). Ours."""
    for read in _readers(lambda r: r.node_data_secrets):
        yield from read(resource)
    if concepts.is_a(resource.resource_type, "dynamic-operation"):
        for what in secrets_in(" ".join(str(v) for v in _known_inputs(resource.props))):
            yield f"dynamic resource {name_of(resource)} inputs embed {what} (inputs are stored in the state in clear)"


def _known_inputs(props: Any) -> Iterable[Any]:
    """A dynamic resource's inputs the pack can read: an unknown one (a preview's output, or a secret, which the
    state keeps encrypted, as the copy's source URL and keys: components/handoff/copy.py) embeds nothing in clear;
    once known, the -final repeat reads it."""
    for key in props:
        if str(key).startswith("__"):
            continue
        try:
            yield props.get(key)
        except UnknownValueError:
            continue


def check_no_secrets_in_user_data_final(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Stack-level repeat of `no-secrets-in-user-data` (user data is often unknown during preview). A kind
    whose node data is a secret output (unreadable after the deployment) was judged on its inputs, which
    the resource-level check sees in clear. Node data a node names by reference (a Vultr startup script's id) is
    judged here, where the stack's resources are: one the pack cannot find in the stack fails closed."""
    secret_outputs = {kind for vendor in vendors.VENDORS for kind in vendor.guardrails.secret_output_kinds}
    for resource in resources:
        try:
            found = list(check_no_secrets_in_user_data(resource, ctx))
        except UnknownValueError:
            # A dynamic resource's secret outputs (a minted token: components/gcp/handoff_token.py) are hidden here
            # too; its inputs, where a secret could be written in, were judged in clear resource by resource.
            if resource.resource_type in secret_outputs or concepts.is_a(resource.resource_type, "dynamic-operation"):
                continue
            raise
        for message in found:
            yield resource.urn, message
    for read in _readers(lambda r: r.node_data_references):
        yield from read(resources)


def check_protect_stateful(resource: Any, ctx: Context) -> Iterable[str]:
    """Stateful resources (every kind of a stateful concept in policies/concepts.py: buckets, file
    systems, volumes, KMS keys, databases, image repositories) are `protect`ed so `pulumi destroy` or a
    replace cannot delete them. Ours (Pulumi's protect option)."""
    concept = concepts.concept_of(resource.resource_type)
    if concept in concepts.STATEFUL and not resource.opts.protect:
        names = {kind: name for vendor in vendors.VENDORS for kind, name in vendor.guardrails.stateful_names.items()}
        yield f"{names.get(resource.resource_type, concept)} {name_of(resource)} is not protected (set protect=True)"


def check_no_scheduled_data_loss(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    logs = _setting(ctx, "logBucketPattern")
    for read in _readers(lambda r: r.scheduled_data_loss):
        yield from read(resources, logs)
    for resource in resources:
        if concepts.concept_of(resource.resource_type) in concepts.STATEFUL:
            for key in ("forceDestroy", "forceDelete", "skipFinalSnapshot"):
                if truthy(resource.props.get(key)):
                    yield resource.urn, f"{name_of(resource)} sets {key}: a destroy or replace deletes its data"


def check_waf_rate_limit(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Every internet-facing entry (AWS ALB, Azure Application Gateway listener, GCP external backend service)
    is guarded by a WAF whose per-client rate limit is enforced: it blocks (not count, log or preview), covers
    all traffic, is keyed on the client address (never a header, cookie or path the client chooses: AWS
    https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based-aggregation-options.html,
    Azure groupByUserSession, GCP enforceOnKey) and no allow rule is evaluated before it. One judgement over
    each vendor's reading (policies/waf.py); Checkov CKV2_AWS_28 and CKV_AZURE_120/122 ask for the WAF."""
    for read in _readers(lambda r: r.waf_front_doors):
        for door in read(resources):
            yield from waf.judge(door)


def check_soft_delete_retention(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    days = int(ctx.config.get("minRetentionDays") or CONFIG["minRetentionDays"]["default"])
    kept, logs = _setting(ctx, "versionedBucketPattern"), _setting(ctx, "logBucketPattern")
    for read in _readers(lambda r: r.retention):
        yield from read(resources, days, kept, logs)


def check_no_spot_serving(resource: Any, ctx: Context) -> Iterable[str]:
    if ctx.workload == "serving":
        for read in _readers(lambda r: r.spot_serving):
            yield from read(resource)


def check_spot_training_checkpoints(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    if ctx.workload == "training":
        pattern = _setting(ctx, "checkpointPattern")
        for read in _readers(lambda r: r.spot_checkpoints):
            yield from read(resources, pattern)


def check_serving_scales_on_queue_depth(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    if ctx.workload == "serving":
        for read in _readers(lambda r: r.queue_scaling):
            yield from read(resources)


_documented(check_no_internet_ingress, lambda r: r.internet_ingress)
_documented(check_lb_deletion_protection, lambda r: r.lb_deletion_protection)
_documented(check_no_secrets_in_user_data, lambda r: r.node_data_secrets, check_no_secrets_in_user_data.__doc__ or "")
_documented(check_no_scheduled_data_loss, lambda r: r.scheduled_data_loss)
_documented(check_no_spot_serving, lambda r: r.spot_serving)
_documented(check_spot_training_checkpoints, lambda r: r.spot_checkpoints)
_documented(check_serving_scales_on_queue_depth, lambda r: r.queue_scaling)
_documented(check_waf_rate_limit, lambda r: r.waf_front_doors, check_waf_rate_limit.__doc__ or "")
_documented(
    check_soft_delete_retention,
    lambda r: r.retention,
    """Stateful stores keep what is deleted for at least `minRetentionDays` (soft delete, deletion windows,
    object lock), and no store or key turns that protection off. Ours; per-vendor rules below.""",
)


POLICIES = [
    resource_policy(
        "encryption-at-rest",
        "Data at rest is encrypted.",
        each_resource(lambda r: r.encryption_at_rest),
    ),
    stack_policy(
        "bucket-encryption",
        "Every bucket has default encryption; data buckets use KMS (Azure/GCP: the stack's key, if any).",
        each_stack_named(lambda r: r.data_encryption, "kmsBucketPattern"),
        config=CONFIG,
    ),
    resource_policy(
        "no-public-buckets",
        "No bucket, storage account or container is public.",
        each_resource(lambda r: r.public_storage),
    ),
    resource_policy(
        "min-tls-1-2",
        "Endpoints refuse TLS below 1.2 (Azure, GCP).",
        each_resource(
            lambda r: r.min_tls,
            """TLS 1.2+ on every endpoint Azure and GCP let a stack configure: storage accounts (Checkov
    CKV_AZURE_44), Service Bus namespaces, Application Gateway SSL policies, GCP SSL policies and HTTPS
    proxies (Trivy AVD-GCP-0039). AWS's listeners are judged by https-listeners.""",
        ),
    ),
    resource_policy(
        "queue-identity-auth",
        "Queues accept identities only, no shared access keys (Azure).",
        each_resource(
            lambda r: r.queue_identity_auth,
            """Queues take identities, not shared keys: Azure Policy "Azure Service Bus namespaces should have local
    authentication methods disabled" (https://learn.microsoft.com/azure/service-bus-messaging/disable-local-
    authentication). Pub/Sub and SQS have no key of their own: IAM is the only way in.""",
        ),
    ),
    resource_policy(
        "managed-ml-private",
        "Azure Machine Learning: workspace off the internet, compute and datastores on identities only.",
        each_resource(lambda r: r.managed_ml_private),
    ),
    stack_policy(
        "no-public-buckets-final",
        "No bucket policy makes a bucket public (final state).",
        each_stack(lambda r: r.public_storage_final),
    ),
    stack_policy(
        "bucket-public-access-block",
        "Every bucket has a public access block.",
        each_stack(lambda r: r.public_access_block),
    ),
    resource_policy(
        "no-internet-ingress",
        "No ingress from the internet but the serving HTTPS entry.",
        check_no_internet_ingress,
    ),
    stack_policy(
        "internet-ingress-only-to-load-balancer",
        "Only an internet-facing load balancer's security group is open to the internet.",
        each_stack(lambda r: r.ingress_owner),
    ),
    stack_policy(exposure.POLICY_NAME, exposure.DESCRIPTION, exposure.check_internet_reaches_only_the_front_door),
    resource_policy(
        "no-public-ip-on-nodes",
        "Nodes and subnets get no public IPs.",
        each_resource(lambda r: r.public_ip),
    ),
    stack_policy(
        "nodes-in-private-subnets",
        "Nodes launch only in subnets without a route to an internet gateway.",
        each_stack(lambda r: r.private_subnets),
    ),
    resource_policy("imdsv2-required", "Instances require IMDSv2.", each_resource(lambda r: r.instance_metadata)),
    resource_policy(
        "os-login-not-disabled",
        "GCP VMs keep OS Login on.",
        each_resource(
            lambda r: r.os_login, "GCP VMs and Cluster Director login nodes keep OS Login on: Checkov CKV_GCP_34."
        ),
    ),
    resource_policy(
        "batch-not-privileged", "Batch job containers are not privileged.", each_resource(lambda r: r.privileged_jobs)
    ),
    resource_policy(
        "no-secrets-in-user-data",
        "User data embeds no secrets.",
        check_no_secrets_in_user_data,
    ),
    stack_policy(
        "no-secrets-in-user-data-final",
        "User data embeds no secrets (final state).",
        check_no_secrets_in_user_data_final,
    ),
    resource_policy(
        "iam-least-privilege",
        "IAM policies grant least privilege.",
        each_resource(lambda r: r.least_privilege),
    ),
    stack_policy(
        "iam-least-privilege-final",
        "IAM policies grant least privilege (final state).",
        each_stack(lambda r: r.least_privilege_final),
    ),
    resource_policy("protect-stateful", "Stateful resources are protected.", check_protect_stateful),
    stack_policy(
        "bucket-versioning",
        "Checkpoint and artifact buckets are versioned.",
        each_stack_named(lambda r: r.versioning, "versionedBucketPattern"),
        config=CONFIG,
    ),
    stack_policy(
        "no-scheduled-data-loss",
        "No lifecycle expiry of current versions, exported deletions or forceDestroy on stateful resources.",
        check_no_scheduled_data_loss,
        config=CONFIG,
    ),
    stack_policy("queue-dlq", "Every queue has a dead-letter queue.", each_stack(lambda r: r.queue_dlq)),
    resource_policy("https-listeners", "Listeners are HTTPS-only.", each_resource(lambda r: r.https_listeners)),
    stack_policy(
        "http-only-redirects", "HTTP proxies only redirect to HTTPS (GCP).", each_stack(lambda r: r.http_redirects)
    ),
    resource_policy(
        "lb-deletion-protection", "Serving load balancers have deletion protection.", check_lb_deletion_protection
    ),
    resource_policy(
        "no-spot-serving",
        "Serving replicas never run on spot.",
        check_no_spot_serving,
    ),
    stack_policy(
        "spot-training-needs-checkpoints",
        "Spot training only with a checkpoint location.",
        check_spot_training_checkpoints,
        config=CONFIG,
    ),
    stack_policy(
        "serving-scales-on-queue-depth",
        "Serving scales on the requests replicas own (queue depth, or load-balancer requests per replica), "
        "or is a fixed fleet; never on CPU.",
        check_serving_scales_on_queue_depth,
    ),
    stack_policy(
        "waf-rate-limit",
        "Internet-facing entries have a WAF whose per-client rate limit is enforced on all traffic.",
        check_waf_rate_limit,
    ),
    stack_policy(
        "service-logs",
        "Access, audit and request logs stay on (load balancers, gateways, Key Vault audit, Data Access audit logs).",
        check_service_logs,
        config=SERVICE_LOGS_CONFIG,
    ),
    stack_policy(
        "soft-delete-retention",
        "Stateful stores and keys keep deleted data for a minimum window (soft delete, deletion delays, object lock).",
        check_soft_delete_retention,
        config=CONFIG,
    ),
]
ENFORCEMENT_LEVEL = EnforcementLevel.MANDATORY
