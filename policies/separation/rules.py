"""Separation pack: a training stack and a serving stack can never reach into each other's account.

Training and serving live in separate accounts so a training run cannot consume the quota (GPUs,
ENIs, EIPs) production depends on; these rules make that separation checkable on every change.
The workload comes from the provider's `accelstack:workload` default tag (or `workload` config); the
account sets and region allowlist from config (accelstack's runner fills them from the stack's
`accelstack:separation` block; with the Pulumi CLI pass `--policy-pack-config`, see
`accelstack policy STACK --emit-config`). Without account config the pack fails (`accounts-configured`):
a separation check with nothing to compare against must not pass silently.

Cross-account access is an allowlist: every grant (resource policies, role trust, KMS grants, identity
policies naming another account's resources, dead-letter targets) is read in the normalized form of
`accelstack.policies.grants` and must reach only the stack's own accounts, except the one documented path:
serving reads training's artifacts under the artifact prefix (s3:GetObject/ListBucket, kms:Decrypt).
Each vendor reads its own grants, regions, load balancers and tags (policies/vendors.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from .. import concepts, vendors
from ..aws.separation import ELB_LOG_DELIVERY_ACCOUNTS  # noqa: F401  # its old home, for callers outside policies/
from ..common import (
    LANDING,
    REQUIRED_TAGS,
    STACK_KINDS,
    TAG_DIGEST,
    TAG_WORKLOAD,
    WORKLOADS,
    Context,
    as_list,
    cloud_packages,
    is_cloud_type,
    is_provider_type,
    own_accounts,
    package_of,
    resource_policy,
    stack_policy,
    tag_values,
    truthy,
)
from ..vendor import SeparationReaders, Vendor
from . import access_rules, copy_rules, handoff_rules, landing_rules, reachability_rules
from .taggable_kinds import TAG_PROPERTY, TAGGABLE

AUTOSCALING_GROUP = "aws:autoscaling/group:Group"
PACK_NAME = "accelstack-separation"
PACK_DESCRIPTION = "Training and serving stay in disjoint accounts, regions and resource kinds."

# Concepts that belong to the other side (concept -> what it is).
SERVING_ONLY = {
    "queue": "an SQS queue (the serving admission queue)",
    "web-acl": "a WAF web ACL (serving's front door)",
}
TRAINING_ONLY = {
    "parallel-file-system": "a Lustre file system (training storage)",
    "rdma-placement": "a placement group (training's EFA fabric)",
}
EFA_INTERFACE_TYPES = ("efa", "efa-only")


def _vendor_of(type_token: str) -> Vendor | None:
    """The listed vendor whose concept table knows a resource kind."""
    package = concepts.cloud_of(type_token)
    return vendors.by_package(package) if package is not None else None


CONFIG: dict[str, dict[str, Any]] = access_rules.CONFIG
HANDOFF_CONFIG = {key: CONFIG[key] for key in ("artifactHandoff", copy_rules.CONFIG_KEY)}


def handoff_provider(ctx: Context) -> bool:
    """Whether the resource's provider is the reader's (accelstack.spec.handoff): the training cloud's package, pinned
    to exactly the training account the serving stack names for its weights on that cloud."""
    return handoff_rules.handoff_of(ctx) is not None


def _account_problems(provider_name: str, accounts: Sequence[str], ctx: Context) -> Iterable[str]:
    if ctx.workload is None:
        return
    if handoff_provider(ctx):
        return  # the reader's provider: what it may create there is handoff-reader-only's to judge
    mine, theirs = ctx.workload_accounts, ctx.other_accounts
    for account in accounts:
        if account in theirs:
            yield (
                f"provider {provider_name} targets account {account}, which is a {ctx.other} account; "
                f"a {ctx.workload} stack may only deploy to {', '.join(sorted(mine)) or 'its own accounts'}"
            )
        elif mine and account not in mine:
            yield (
                f"provider {provider_name} targets account {account}, which is not a {ctx.workload} account "
                f"({', '.join(sorted(mine))})"
            )


def check_accounts_configured(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """The pack knows the stack's side and both sides' accounts; without them every account check
    would pass vacuously, so their absence is itself a violation. Ours (fail closed)."""
    stack = next((r.urn for r in resources if r.resource_type == "pulumi:pulumi:Stack"), "")
    missing = [
        key
        for key, accounts in (("trainingAccounts", ctx.training_accounts), ("servingAccounts", ctx.serving_accounts))
        if not accounts
    ]
    if missing and ctx.workload != LANDING:  # a landing stack creates both sides' accounts: none exist to list
        yield (
            stack,
            (
                f"the separation pack has no {' or '.join(missing)} config, so it cannot check any account: pass "
                "--policy-pack-config (see `accelstack policy STACK --emit-config separation`)"
            ),
        )
    if ctx.workload is None:
        yield (
            stack,
            (
                f"the stack's side is unknown: tag the provider {TAG_WORKLOAD}=training|serving|landing or set `workload` in the policy config"
            ),
        )


def check_explicit_provider(resource: Any, ctx: Context) -> Iterable[str]:
    """Every cloud resource uses the stack's explicit provider, never a default provider.

    Ours. A default provider takes its account and region from ambient credentials, so the same
    program could land in either side's account; Pulumi's own guidance for multi-account stacks
    (https://www.pulumi.com/docs/iac/concepts/resources/providers/#disabling-default-providers).
    """
    if is_provider_type(resource.resource_type) or not is_cloud_type(resource.resource_type):
        return
    if resource.provider is None:
        yield f"{resource.resource_type} {resource.name} has no explicit provider; pass the stack's provider"
    elif ctx.provider is not None and ctx.provider.is_default:
        yield (
            f"{resource.resource_type} {resource.name} uses the default provider {ctx.provider.name}; "
            "pass the stack's explicit provider"
        )


def check_provider_account(resource: Any, ctx: Context) -> Iterable[str]:
    """Every provider, of every package, pins its account (allowedAccountIds) and every account it
    reaches (allowedAccountIds, assumed-role ARNs) belongs to this stack's side. A cloud package whose
    pinning the pack cannot read, or a package it does not know, fails.

    Ours; mirrors the AWS provider's `allowed_account_ids` safeguard and AWS's multi-account guidance
    (https://docs.aws.amazon.com/whitepapers/latest/organizing-your-aws-environment/).
    """
    if not is_provider_type(resource.resource_type):
        return
    facts = ctx.provider
    package = facts.package if facts is not None else resource.resource_type.rsplit(":", 1)[-1]
    clouds = cloud_packages()
    if package in concepts.LOCAL_PACKAGES or (package in concepts.TABLES and package not in clouds):
        return  # no cloud account: local packages, and the dynamic provider (it runs the program's own code)
    pin = vendors.pin_input(package)
    if pin is None:
        kind = "cloud package" if package in clouds else "package the packs do not know"
        yield f"provider {resource.name} is a {package} provider, a {kind}: its account pinning cannot be checked"
        return
    if facts is None:  # a pinnable provider whose inputs the pack could not read: fail closed
        yield f"provider {resource.name} ({package}): its account pinning cannot be read"
        return
    vendor = vendors.by_package(package)
    if vendor is not None and vendor.separation.provider_pin is not None:
        yield from vendor.separation.provider_pin(facts)
        return
    if not facts.allowed_accounts:
        yield f"provider {facts.name} does not pin its account: set {pin} to the stack's account"
    yield from _account_problems(facts.name, facts.accounts, ctx)


def check_handoff_reader_only(resource: Any, ctx: Context) -> Iterable[str]:
    """Under the reader's provider (a serving stack's weights on another cloud), only the reader and its grant:
    nothing else of the serving stack lands in the training account. What the reader may do is the access graph's
    (cross-account-read-only); a trust that names no exact subject is handoff_trust_names_its_subjects'. Ours."""
    handoff = handoff_rules.handoff_of(ctx)
    if is_provider_type(resource.resource_type) or handoff is None:
        return
    kinds = handoff_rules.kinds_under_reader(ctx)
    if resource.resource_type not in kinds:
        yield (
            f"{resource.resource_type} {resource.name} is declared in the training account "
            f"{handoff.get('account')}: a serving stack may declare there only its artifact reader or its copies' "
            f"source credential ({', '.join(sorted(kinds)) or 'nothing'})"
        )


def check_disjoint_accounts(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """The training and serving account sets are disjoint. Ours (the whole point of the separation)."""
    shared = sorted(ctx.training_accounts & ctx.serving_accounts)
    if shared:
        stack = next((r.urn for r in resources if r.resource_type == "pulumi:pulumi:Stack"), "")
        yield stack, f"trainingAccounts and servingAccounts must be disjoint; both list {', '.join(shared)}"


def check_allowed_regions(resource: Any, ctx: Context) -> Iterable[str]:
    """Providers (and resources with their own `region`, aws v7) stay in the allowed regions.

    Mirrors AWS Control Tower's region deny control
    (https://docs.aws.amazon.com/controltower/latest/userguide/region-deny.html).
    """
    if handoff_provider(ctx) and not is_provider_type(resource.resource_type):
        return  # under the reader's provider, pinned to the store's region (checked on the provider)
    if resource.resource_type in handoff_rules.CREDENTIAL_KINDS and resource.props.get("region") == (
        (ctx.config.get("artifactHandoff") or {}).get("region") or "(none)"
    ):
        return  # a replica's session, started at the store's STS endpoint (judged by handoff-reader-expires)
    if not ctx.allowed_regions:
        return
    if is_provider_type(resource.resource_type):
        if ctx.provider is None or ctx.provider.package not in cloud_packages():
            return  # e.g. pulumi-random: makes no cloud calls, has no region
        region, what = ctx.provider.region, f"provider {resource.name}"
        handoff = handoff_rules.handoff_of(ctx) or {}
        if handoff and region in (handoff.get("region"), None):
            return  # the reader lives where the artifacts are (serving.artifactRegion; GCP's is global)
        vendor = vendors.by_package(ctx.provider.package)
        if region is None and vendor is not None and vendor.separation.resources_carry_region:
            return  # its resources' own `region` inputs are checked, one by one
        if region is None:
            yield f"{what} sets no region; allowed: {', '.join(ctx.allowed_regions)}"
            return
    else:
        region, what = resource.props.get("region"), f"{resource.resource_type} {resource.name}"
        vendor = _vendor_of(resource.resource_type) if region is None else None
        if vendor is not None and vendor.separation.region is not None:
            region = vendor.separation.region(resource)  # e.g. azure-native's own `location`
    if region is not None and region not in ctx.allowed_regions:
        yield f"{what} is in region {region}; allowed: {', '.join(ctx.allowed_regions)}"


def check_known_kinds(resource: Any, ctx: Context) -> Iterable[str]:
    """Fail closed: every resource is of a kind in the concept table (policies/concepts.py), or of a
    package that makes no cloud calls. An unknown kind is a violation, not a pass: no rule here could
    have judged it. Ours (issue 10)."""
    kind = resource.resource_type
    if is_provider_type(kind) or kind.startswith("pulumi:"):
        return
    if resource.provider is None and not is_cloud_type(kind):
        return  # a component resource (only custom resources have a provider): it only groups children
    package = package_of(kind)
    if package in concepts.LOCAL_PACKAGES or (package in concepts.TABLES and concepts.concept_of(kind)):
        return
    if package not in cloud_packages():
        yield f"{kind} {resource.name}: package {package} is not known to the packs (it may act with ambient credentials)"
    elif concepts.concept_of(kind) is None:
        yield f"{kind} {resource.name}: a resource kind the packs do not know; add it to policies/concepts.py with its rules"


def _internet_facing(resource: Any) -> bool:
    """As its vendor reads it (AWS: not `internal`; Azure: a public frontend IP; GCP: an external
    forwarding rule); a load balancer no listed vendor reads is not `internal`."""
    vendor = _vendor_of(resource.resource_type)
    if vendor is not None and vendor.separation.internet_facing is not None:
        return vendor.separation.internet_facing(resource)
    return not truthy(resource.props.get("internal"))


def _not_training_fabric(resource: Any) -> bool:
    vendor = _vendor_of(resource.resource_type)
    reader = vendor.separation.not_training_fabric if vendor is not None else None
    return reader is not None and reader(resource)


def _efa_interfaces(resource: Any) -> bool:
    interfaces = as_list(resource.props.get("networkInterfaces"))
    return any(i.get("interfaceType") in EFA_INTERFACE_TYPES for i in interfaces if hasattr(i, "get"))


def check_workload_kinds(resource: Any, ctx: Context) -> Iterable[str]:
    """Resource kinds belong to the stack's workload: no internet-facing load balancer or serving queue
    in training; no Lustre, placement group or EFA interfaces in serving. Ours. Kinds are concepts,
    so alias tokens (`aws:alb/...`, `aws:elasticloadbalancingv2/...`) are the same kind."""
    concept = concepts.concept_of(resource.resource_type)
    if ctx.workload == "training":
        if concept == "load-balancer" and _internet_facing(resource):
            yield (
                f"internet-facing load balancer {resource.name} in a training stack: "
                "serving load balancers belong in the serving account"
            )
        elif concept in SERVING_ONLY:
            yield f"{SERVING_ONLY[concept]} {resource.name} in a training stack: it belongs in the serving account"
    elif ctx.workload == "serving":
        if concept in TRAINING_ONLY and not _not_training_fabric(resource):
            yield f"{TRAINING_ONLY[concept]} {resource.name} in a serving stack: it belongs in the training account"
        elif concept in ("node-template", "instance") and _efa_interfaces(resource):
            yield f"{resource.resource_type} {resource.name} attaches EFA interfaces in a serving stack: EFA fabric is training's"


# --- cross-account access: an allowlist over normalized grants -----------------------------------
# --- cross-account access: an allowlist over normalized grants, each vendor reading its own -------


def check_cross_account_grants(resource: Any, ctx: Context) -> Iterable[str]:
    """One resource's edges of the access graph, judged alone (policies/separation/access_rules.py)."""
    if _landing_oci(resource, ctx):
        return
    yield from access_rules.check_resource_access(resource, ctx)


def check_network_admission(resource: Any, ctx: Context) -> Iterable[str]:
    """Storage firewalls let in networks of the stack's own accounts, and of serving accounts on a training
    stack's account only (Azure: policies/azure/separation.py `network_admission_problems`). Ours: Checkov
    and Trivy check that a storage firewall denies by default, not whose networks it lets in."""
    if ctx.workload is None:
        return
    for vendor in vendors.VENDORS:
        if vendor.separation.network_admission is not None:
            yield from vendor.separation.network_admission(resource, own_accounts(ctx), ctx)


def check_store_keys(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Storage takes keys and local users, which go around every grant and the read path's condition, only where a
    consumer in the stack needs them, and never on the artifact store (Azure: policies/azure/store_access.py). Ours:
    Checkov's CKV2_AZURE_40 wants Shared Key off everywhere, which Managed Lustre's Blob integration cannot meet."""
    for vendor in vendors.VENDORS:
        if vendor.separation.key_access is not None:
            yield from vendor.separation.key_access(resources, ctx)


def check_cross_account_grants_final(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Stack-level repeat of `cross-account-read-only` on the stack's final state, so it binds on `up`
    even when a policy document was unknown during preview (it is usually built from ARNs), and with the
    stack's buckets known (a grant on a bucket the stack does not create is placed by the configured stores, or
    fails), and every edge reached through `become` judged too: the stack's access graph, built once."""
    yield from access_rules.check_stack_access([r for r in resources if not _landing_oci(r, ctx)], ctx)


def _landing_oci(resource: Any, ctx: Context) -> bool:
    """An OCI landing stack's own resources: its grants name the compartments and groups it creates, which no
    separation config lists (a landing stack has none); landing-guardrails judges them against those
    (policies/separation/landing_oci.py), and where they sit (the tenancy and the parent compartment)."""
    return ctx.workload == LANDING and resource.resource_type.startswith("oci:")


check_cross_account_grants.__doc__ = "\n\n".join(
    reader.__doc__ or "" for v in vendors.VENDORS if (reader := v.separation.access) is not None
)


def _vendor_kinds(pick: Callable[[SeparationReaders], tuple[str, ...]]) -> list[str]:
    """The kinds a resource policy filters on, of every listed vendor."""
    return [kind for vendor in vendors.VENDORS for kind in pick(vendor.separation)]


def check_pinned_project(resource: Any, ctx: Context) -> Iterable[str]:
    """Every gcp resource's `project` input is absent (the provider's pin applies) or the pinned
    project: a resource-level `project` overrides the provider's and would land in another project.
    Ours (Google's guidance: one project per environment, https://cloud.google.com/docs/enterprise/best-practices-for-enterprise-organizations)."""
    vendor = _vendor_of(resource.resource_type)
    if (
        vendor is None
        or vendor.separation.pinned_account is None
        or ctx.provider is None
        or _landing_oci(resource, ctx)
    ):
        return
    # OCI's provider signs for a tenancy, where OCI keeps its tenancy-level kinds (dynamic groups).
    tenancy = {ctx.provider.tenancy} if ctx.provider.tenancy else set()
    yield from vendor.separation.pinned_account(
        resource, frozenset(ctx.provider.accounts) | ctx.workload_accounts | tenancy
    )


def check_workload_tags(resource: Any, ctx: Context) -> Iterable[str]:
    """Every resource carries the workload and stack tags: the provider stamps them through
    `defaultTags`, resources never override them, and the places default tags do not reach (launch
    template tag specifications, autoscaling group tags) carry them explicitly. The config digest
    is not a default tag (it would update every resource on every config edit): autoscaling groups
    carry it, and propagate it to the instances they launch.

    Mirrors Checkov CKV_AWS_153-style tagging checks and the AWS tagging best practices whitepaper
    (https://docs.aws.amazon.com/whitepapers/latest/tagging-best-practices/).
    """
    facts = ctx.provider
    if is_provider_type(resource.resource_type):
        if facts is None or facts.package != "aws":
            return
        missing = [t for t in REQUIRED_TAGS if t != TAG_DIGEST and not facts.default_tags.get(t)]
        if missing:
            yield f"provider {facts.name} defaultTags lack {', '.join(missing)}"

        workload = facts.default_tags.get(TAG_WORKLOAD)
        if workload and workload not in STACK_KINDS:
            yield f"provider {facts.name} tags {TAG_WORKLOAD}={workload}; allowed: {', '.join(STACK_KINDS)}"
        configured = ctx.config.get("workload")
        if workload and configured in STACK_KINDS and workload != configured:
            yield f"provider {facts.name} tags {TAG_WORKLOAD}={workload} but the policy config says {configured}"
        return
    if not is_cloud_type(resource.resource_type) or facts is None:
        return
    expected = dict(facts.default_tags)
    own = tag_values(resource.props.get("tags"))
    for key in REQUIRED_TAGS:
        if key in own and key in expected and own[key] != expected[key]:
            yield f"{resource.name} overrides tag {key}={own[key]} (the stack's is {expected[key]})"
    if resource.resource_type == AUTOSCALING_GROUP:
        missing = [k for k in REQUIRED_TAGS if k in expected and own.get(k) != expected[k]]
        missing += [TAG_DIGEST] if not own.get(TAG_DIGEST) else []
        if missing:
            yield f"autoscaling group {resource.name} must tag {', '.join(missing)} (default tags do not apply to it)"
    if resource.resource_type == "aws:ec2/launchTemplate:LaunchTemplate":
        # The digest is not required here: tag specifications belong to a template version, and a
        # digest in them would roll a serving fleet on every config edit; groups propagate it.
        stable = [k for k in REQUIRED_TAGS if k != TAG_DIGEST]
        specs = {
            s.get("resourceType"): tag_values(s.get("tags")) for s in as_list(resource.props.get("tagSpecifications"))
        }
        for kind in ("instance", "volume"):
            tags = specs.get(kind, {})
            missing = [k for k in stable if k in expected and tags.get(k) != expected[k]]
            if missing:
                yield (
                    f"launch template {resource.name} tagSpecifications[{kind}] lack {', '.join(missing)} "
                    "(instances an autoscaling group launches do not get the provider's default tags)"
                )


def check_cloud_workload_tags(resource: Any, ctx: Context) -> Iterable[str]:
    """Azure tags and GCP labels never name the other side: a resource tagged `accelstack:workload`
    (GCP label `accelstack-workload`) carries the stack's side, and the gcp provider stamps it through
    `defaultLabels` (azure-native has no default tags; the conformance suite checks each resource's).
    Mirrors the AWS rule above (Checkov CKV_AWS_153-style tagging)."""
    if is_provider_type(resource.resource_type):
        facts = ctx.provider
        vendor = vendors.by_package(facts.package) if facts is not None else None
        if facts is not None and vendor is not None and vendor.separation.provider_tags is not None:
            yield from vendor.separation.provider_tags(facts)
        return
    vendor = _vendor_of(resource.resource_type)
    if vendor is None or vendor.separation.resource_tags is None:
        return
    workload = vendor.separation.resource_tags(resource).get(TAG_WORKLOAD)
    if workload is not None and ctx.workload in WORKLOADS and workload != ctx.workload:
        yield f"{resource.name} is tagged {TAG_WORKLOAD}={workload} in a {ctx.workload} stack"


def check_workload_tag_present(resource: Any, ctx: Context) -> Iterable[str]:
    """On every cloud alike, a resource of a kind whose provider schema takes tags or labels
    (policies/separation/taggable_kinds.py) carries the workload tag, its own or the one its provider stamps
    (aws defaultTags, gcp defaultLabels; azure-native, oci and vultr providers stamp none, so the resource
    states it): cost reports and audits find a side's resources by it, on every cloud the same way.
    Kinds that cannot carry a tag are exempt; autoscaling groups are checked above, tag by tag."""
    # The type first: a kind that cannot carry a tag reads nothing, so the runner skips it (policies/type_index.py).
    package = package_of(resource.resource_type)
    if resource.resource_type not in TAGGABLE.get(package, ()) or resource.resource_type == AUTOSCALING_GROUP:
        return
    if ctx.provider is None:
        return  # a resource without the stack's provider is explicit-provider's
    vendor = _vendor_of(resource.resource_type)
    reader = vendor.separation.resource_tags if vendor is not None else None
    own = reader(resource) if reader is not None else tag_values(resource.props.get(TAG_PROPERTY[package]))
    stamped = ctx.provider.default_tags
    if own.get(TAG_WORKLOAD) or stamped.get(TAG_WORKLOAD):
        return
    side = ctx.workload if ctx.workload in STACK_KINDS else "training or serving"
    yield (
        f"{resource.name} ({resource.resource_type}) carries no {TAG_WORKLOAD} tag: its {TAG_PROPERTY[package]} "
        f"lack it and its provider stamps none; tag it with the stack's side ({side})"
    )


def _both(*checks: Any) -> Any:
    def check(resource: Any, ctx: Context) -> Iterable[str]:
        for one in checks:
            yield from one(resource, ctx)

    check.__doc__ = "\n\n".join(c.__doc__ or "" for c in checks)
    return check


POLICIES = [
    stack_policy(
        "accounts-configured", "The pack knows both sides' accounts and the stack's side.", check_accounts_configured
    ),
    resource_policy("explicit-provider", "Cloud resources use the stack's explicit provider.", check_explicit_provider),
    resource_policy(
        "provider-account",
        "Every provider pins an account of this stack's side (training or serving).",
        check_provider_account,
        config=HANDOFF_CONFIG,
    ),
    resource_policy(
        "handoff-reader-only",
        "In another cloud's training account a serving stack declares only its artifact reader.",
        check_handoff_reader_only,
        config=HANDOFF_CONFIG,
    ),
    resource_policy(
        "handoff-reader-read-only",
        "A serving stack's reader on another cloud reads only the artifact prefix; its trust names its subject.",
        handoff_rules.check_handoff_reader_reads_only_the_prefix,
        config=HANDOFF_CONFIG,
    ),
    stack_policy(
        "handoff-copy-into-own-store",
        "A serving stack's copy of another cloud's artifacts reads the artifact prefix read-only and writes only "
        "under a prefix of the stack's own store; a training stack copies nothing.",
        copy_rules.check_copies,
        config={**HANDOFF_CONFIG, "trainingStores": CONFIG["trainingStores"]},
    ),
    stack_policy(
        "handoff-reader-expires",
        "A serving stack's per-replica credential on another cloud (an OCI pre-authenticated request, a Cloud "
        "Storage access token) comes from its replica's clock and expires within its bound.",
        handoff_rules.check_handoff_credentials_expire,
        config=HANDOFF_CONFIG,
    ),
    stack_policy("disjoint-accounts", "Training and serving account sets are disjoint.", check_disjoint_accounts),
    resource_policy(
        "allowed-regions", "Resources stay in the allowed regions.", check_allowed_regions, config=HANDOFF_CONFIG
    ),
    resource_policy(
        "known-resource-kinds", "Every resource is of a kind the packs know (fail closed).", check_known_kinds
    ),
    resource_policy(
        "workload-resource-kinds",
        "Resource kinds belong to the stack's workload.",
        _both(check_workload_kinds, landing_rules.check_landing_kinds),
    ),
    stack_policy(
        "landing-guardrails",
        "A landing stack attaches each side's guardrail SCPs to its OU, and none to the other's.",
        landing_rules.check_landing_guardrails,
        config=landing_rules.CONFIG,
    ),
    resource_policy(
        "landing-quota-caps",
        "A landing stack's quota requests ask for no more than the planner sized.",
        landing_rules.check_quota_caps,
        config=landing_rules.CONFIG,
    ),
    resource_policy(
        "cross-account-read-only",
        "Cross-account grants only let serving read training's artifacts.",
        check_cross_account_grants,
        types=_vendor_kinds(lambda r: r.access_types),
        config=CONFIG,
    ),
    resource_policy(
        "cross-account-network-admission",
        "Storage firewalls admit only the stack's own networks, and serving's readers on training's account.",
        check_network_admission,
        types=_vendor_kinds(lambda r: r.admission_types),
    ),
    stack_policy(
        "store-keys-only-where-needed",
        "Storage accepts keys (Shared Key, SAS) or local users only where a consumer in the stack needs them.",
        check_store_keys,
    ),
    stack_policy(
        "cross-account-read-only-final",
        "Cross-account grants only let serving read training's artifacts (final state).",
        check_cross_account_grants_final,
        config=CONFIG,
    ),
    stack_policy(
        reachability_rules.POLICY_NAME,
        reachability_rules.DESCRIPTION,
        reachability_rules.check_no_network_path,
        config=CONFIG,
    ),
    resource_policy("pinned-project", "GCP resources stay in the provider's pinned project.", check_pinned_project),
    resource_policy(
        "workload-tags",
        "Resources carry the workload and stack tags; groups the config digest.",
        _both(check_workload_tags, check_cloud_workload_tags, check_workload_tag_present),
    ),
]
ENFORCEMENT_LEVEL = EnforcementLevel.MANDATORY
