"""What both packs share: reading provider facts, policy documents and config, and wrapping small
check functions as pulumi-policy policies.

Resource properties arrive from the engine as pulumi-policy proxies: touching a value that is unknown
during preview raises `UnknownValueError`, which pulumi-policy turns into an advisory "can't run during
preview" diagnostic. So checks read only the fields they need (`.get`, never `in` on a proxy).
Provider inputs arrive camelCase with every non-string value JSON-encoded (`allowedAccountIds` is
'["111111111111"]', `assumeRoles` a JSON list of {roleArn, ...}, `defaultTags` '{"tags": {...}}').
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ResourceValidationPolicy,
    StackValidationPolicy,
)

from . import type_index

TAG_WORKLOAD = "accelstack:workload"
TAG_STACK = "accelstack:stack"
TAG_DIGEST = "accelstack:config-digest"
REQUIRED_TAGS = (TAG_WORKLOAD, TAG_STACK, TAG_DIGEST)
WORKLOADS = ("training", "serving")
# A landing stack makes the two sides' accounts and guardrails (accelstack.spec.landing): a stack kind, not a side.
LANDING = "landing"
STACK_KINDS = (*WORKLOADS, LANDING)
# GCP spells the tags as labels (lowercase, `-` for `:`).
LABEL_TAGS = {
    "accelstack-side": "accelstack:side",  # a landing stack's per-side provider (components/gcp/landing.py)
    "accelstack-workload": TAG_WORKLOAD,
    "accelstack-stack": TAG_STACK,
    "accelstack-config-digest": TAG_DIGEST,
}

PROVIDER_PREFIX = "pulumi:providers:"
# Packages whose resources live in a cloud account (and so must go through the stack's own provider).
CLOUD_PACKAGES = frozenset({"aws", "aws-native", "azure", "azure-native", "gcp", "google-native", "oci", "vultr"})
# The key prefix of training's artifact store that serving may read (separation's `artifactPrefix` default).
ARTIFACT_PREFIX = "models/"
AWS_ACCOUNT = re.compile(r"^\d{12}$")
GCP_SERVICE_ACCOUNT = re.compile(r"^[^@]+@([a-z][a-z0-9-]{4,28}[a-z0-9])\.iam\.gserviceaccount\.com$")

# Config every policy that needs the stack's context accepts (`--policy-pack-config` / `accelstack policy`).
CONTEXT_SCHEMA: dict[str, dict[str, Any]] = {
    "workload": {
        "type": "string",
        "enum": list(STACK_KINDS),
        "description": "Overrides the provider's accelstack:workload tag (landing: a landing stack).",
    },
    "trainingAccounts": {"type": "array", "items": {"type": "string"}, "description": "Training side's accounts."},
    "servingAccounts": {"type": "array", "items": {"type": "string"}, "description": "Serving side's accounts."},
    "allowedRegions": {"type": "array", "items": {"type": "string"}, "description": "Regions a stack may use."},
    "artifactStores": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Stores holding the artifacts serving may read: buckets, or Azure storage account names.",
    },
}


def package_of(type_token: str) -> str:
    return type_token.split(":", 1)[0]


def is_provider_type(type_token: str) -> bool:
    return type_token.startswith(PROVIDER_PREFIX)


def cloud_packages() -> frozenset[str]:
    """CLOUD_PACKAGES and every listed vendor's packages (policies/vendors.py)."""
    # The vendor modules import this one: read their list when asked.
    from . import vendors

    listed = vendors.VENDORS
    if _cloud_packages_of[0] is not listed:  # asked per resource: made again only when the list is replaced
        _cloud_packages_of[:] = [listed, CLOUD_PACKAGES | vendors.packages()]
    return _cloud_packages_of[1]  # type: ignore[no-any-return]


_cloud_packages_of: list[Any] = [None, frozenset()]  # [the vendor list read, its packages with CLOUD_PACKAGES]


def is_cloud_type(type_token: str) -> bool:
    return package_of(type_token) in cloud_packages()


def decode(value: Any) -> Any:
    """Provider inputs and policy documents travel as JSON strings, or as objects (the SDK takes either):
    both come back as plain dicts and lists, so a reader (and a library such as cloudsplaining that checks
    `isinstance(x, dict)`) sees one shape. Anything else is returned as is."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    if isinstance(value, Mapping) or (isinstance(value, Sequence) and not isinstance(value, (str, bytes))):
        return plain(value)
    return value


_LEAVES = frozenset({str, int, float, bool, type(None)})


def plain(value: Any) -> Any:
    """A pulumi-policy proxy (or any mapping/sequence) as plain dicts and lists. Reading an unknown value
    raises pulumi-policy's UnknownValueError, as reading it through the proxy would."""
    if type(value) in _LEAVES:  # neither a mapping nor a sequence to copy: skips two ABC checks per leaf
        return value
    if isinstance(value, Mapping):
        return {str(key): plain(value[key]) for key in value}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [plain(item) for item in value]
    return value


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (str, Mapping)):
        return [value]
    if isinstance(value, Sequence):
        return list(value)
    return [value]


GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def canonical_account(account: str) -> str:
    """An account id as its cloud compares it: a GUID (an Azure subscription id) names the same subscription in
    any case, so it compares lowercased; one subscription written in two cases must not pass as two accounts
    (disjoint sides, "not the other side's"). AWS ids are digits and GCP project ids lowercase: unchanged."""
    return account.lower() if GUID.fullmatch(account) else account


def account_of_arn(arn: Any) -> str | None:
    """`arn:aws:iam::111111111111:role/x` -> 111111111111 (None for anything else)."""
    if isinstance(arn, str) and arn.startswith("arn:"):
        parts = arn.split(":")
        if len(parts) > 4 and parts[4]:
            return parts[4]
    return None


def urn_name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


@dataclass(frozen=True)
class ProviderFacts:
    """What a provider pins: accounts (allowedAccountIds and assumed roles), region, default tags."""

    urn: str
    name: str
    package: str
    region: str | None
    allowed_accounts: tuple[str, ...]
    role_accounts: tuple[str, ...]
    default_tags: Mapping[str, str]
    # OCI's provider signs for a tenancy (`tenancyOcid`), which holds both sides' compartments: not an account.
    tenancy: str | None = None
    # Vultr's provider carries its account as an API key (a secret): whether one is set (its value is never read).
    api_key_set: bool = False

    @property
    def is_default(self) -> bool:
        # The engine names the providers it creates for resources without one `default` / `default_7_51_1`.
        return self.name == "default" or self.name.startswith("default_")

    @property
    def accounts(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.allowed_accounts + self.role_accounts))

    @property
    def workload(self) -> str | None:
        value = self.default_tags.get(TAG_WORKLOAD)
        return value if isinstance(value, str) else None


def _api_key_set(props: Mapping[str, Any]) -> bool:
    try:
        return props.get("apiKey") not in (None, "")
    except Exception:  # noqa: BLE001  # unknown during preview (a secret the deployment supplies): it is set
        return True


def provider_facts(type_token: str, props: Mapping[str, Any], urn: str = "", name: str = "") -> ProviderFacts:
    package = type_token[len(PROVIDER_PREFIX) :] if is_provider_type(type_token) else package_of(type_token)
    allowed = [str(a) for a in as_list(decode(props.get("allowedAccountIds")))]
    roles = as_list(decode(props.get("assumeRoles"))) + as_list(decode(props.get("assumeRole")))
    role_accounts = [a for role in roles if isinstance(role, Mapping) and (a := account_of_arn(role.get("roleArn")))]
    tags_block = decode(props.get("defaultTags"))
    tags = tags_block.get("tags") if isinstance(tags_block, Mapping) else None
    # azure-native pins `subscriptionId`, gcp `project`: each is the provider's one account. A gcp
    # provider impersonating a service account reaches that account's project, as an assumed role does.
    allowed += [str(v) for v in (props.get("subscriptionId"), props.get("project")) if isinstance(v, str) and v]
    impersonated = GCP_SERVICE_ACCOUNT.match(str(props.get("impersonateServiceAccount") or ""))
    role_accounts += [impersonated.group(1)] if impersonated else []
    labels = decode(props.get("defaultLabels"))
    if isinstance(labels, Mapping):  # gcp label keys cannot hold ':' (`accelstack-workload`)
        tags = {**(tags or {}), **{LABEL_TAGS.get(str(k), str(k)): v for k, v in labels.items()}}
    region = props.get("region") or props.get("location")
    return ProviderFacts(
        urn=urn,
        name=name or urn_name(urn),
        package=package,
        region=region if isinstance(region, str) else None,
        allowed_accounts=tuple(canonical_account(a) for a in allowed),
        role_accounts=tuple(canonical_account(a) for a in role_accounts),
        default_tags={str(k): str(v) for k, v in (tags or {}).items()},
        tenancy=str(props.get("tenancyOcid")) if isinstance(props.get("tenancyOcid"), str) else None,
        api_key_set=_api_key_set(props),
    )


@dataclass
class Context:
    """The stack's side and both sides' accounts: from policy config, else the provider's tags."""

    workload: str | None
    training_accounts: frozenset[str]
    serving_accounts: frozenset[str]
    allowed_regions: tuple[str, ...] | None
    config: Mapping[str, Any]
    provider: ProviderFacts | None = None
    providers: list[ProviderFacts] = field(default_factory=list)

    def accounts(self, workload: str | None) -> frozenset[str]:
        if workload == "training":
            return self.training_accounts
        if workload == "serving":
            return self.serving_accounts
        return frozenset()

    @property
    def other(self) -> str | None:
        return {"training": "serving", "serving": "training"}.get(self.workload or "")

    @property
    def other_accounts(self) -> frozenset[str]:
        return self.accounts(self.other)

    @property
    def workload_accounts(self) -> frozenset[str]:
        return self.accounts(self.workload)


def own_accounts(ctx: Context) -> frozenset[str]:
    """The stack's side's accounts and every account its provider reaches."""
    own = set(ctx.workload_accounts)
    if ctx.provider is not None:
        own |= set(ctx.provider.accounts)
    return frozenset(own)


def make_context(config: Mapping[str, Any] | None, providers: Iterable[ProviderFacts]) -> Context:
    config = dict(config or {})
    providers = list(providers)
    workload = config.get("workload")
    if workload not in STACK_KINDS:
        tagged = [p.workload for p in providers if p.workload in STACK_KINDS]
        workload = tagged[0] if tagged else None
    regions = config.get("allowedRegions")
    return Context(
        workload=workload,
        training_accounts=frozenset(canonical_account(str(a)) for a in config.get("trainingAccounts") or []),
        serving_accounts=frozenset(canonical_account(str(a)) for a in config.get("servingAccounts") or []),
        allowed_regions=tuple(regions) if regions else None,
        config=config,
        provider=providers[0] if len(providers) == 1 else None,
        providers=providers,
    )


# --- IAM / resource policy documents -------------------------------------------------------------


def statements(document: Any) -> list[Mapping[str, Any]]:
    doc = decode(document)
    if not isinstance(doc, Mapping):
        return []
    return [s for s in as_list(doc.get("Statement")) if isinstance(s, Mapping)]


def actions_of(statement: Mapping[str, Any]) -> list[str]:
    return [str(a) for a in as_list(statement.get("Action"))]


def resources_of(statement: Mapping[str, Any]) -> list[str]:
    return [str(r) for r in as_list(statement.get("Resource"))]


def aws_principals(statement: Mapping[str, Any]) -> list[str]:
    """`"*"`, account ids and ARNs named by a statement's Principal (services are not accounts)."""
    principal = statement.get("Principal")
    if principal is None:
        return []
    if isinstance(principal, str):
        return [principal]
    if isinstance(principal, Mapping):
        return [str(p) for p in as_list(principal.get("AWS"))]
    return []


def principal_account(principal: str) -> str | None:
    if AWS_ACCOUNT.match(principal):
        return principal
    return account_of_arn(principal)


def is_allow(statement: Mapping[str, Any]) -> bool:
    return statement.get("Effect", "Allow") == "Allow"


# --- wrapping checks as policies -----------------------------------------------------------------

# A resource check gets the pulumi-policy args (resource_type, props, urn, name, opts, provider) and
# the context; it yields violation messages. A stack check gets every resource and yields (urn, message).
ResourceCheck = Callable[[Any, Context], Iterable[str]]
StackCheck = Callable[[Sequence[Any], Context], Iterable[tuple[str, str]]]


def _schema(extra: Mapping[str, Mapping[str, Any]] | None) -> PolicyConfigSchema:
    properties: dict[str, Any] = {**CONTEXT_SCHEMA, **(extra or {})}
    return PolicyConfigSchema(properties=properties)


# Facts of the last providers read, by the identity of their props (held, so an id stays theirs): under a runner that
# shares one read-only view of a provider's props across policies, each provider is read once, not once per policy
# and resource; where each call gets fresh props, this only misses.
_facts_seen: dict[int, tuple[Any, tuple[str, str, str], ProviderFacts]] = {}


def _facts_of(type_token: str, props: Any, urn: str, name: str) -> ProviderFacts:
    held = _facts_seen.get(id(props))
    if held is not None and held[0] is props and held[1] == (type_token, urn, name):
        return held[2]
    facts = provider_facts(type_token, props, urn, name)
    if len(_facts_seen) >= 64:
        _facts_seen.clear()
    _facts_seen[id(props)] = (props, (type_token, urn, name), facts)
    return facts


# Contexts by the identity of the config and provider facts they were made from (held, so their ids stay theirs): a
# runner that hands a policy one config for all its calls (accelstack's shared servicer) makes each context once per
# policy and provider, not once per resource; where each call gets a fresh config, this only misses.
_contexts: dict[tuple[int, ...], tuple[Any, list[ProviderFacts], Context]] = {}


def _context_of(config: Mapping[str, Any] | None, providers: list[ProviderFacts]) -> Context:
    key = (id(config), *map(id, providers))
    held = _contexts.get(key)
    if held is not None and held[0] is config and all(a is b for a, b in zip(held[1], providers, strict=True)):
        return held[2]
    context = make_context(config, providers)
    if len(_contexts) >= 256:
        _contexts.clear()
    _contexts[key] = (config, providers, context)
    return context


def resource_policy(
    name: str,
    description: str,
    check: ResourceCheck,
    *,
    types: Iterable[str] | None = None,
    config: Mapping[str, Mapping[str, Any]] | None = None,
    level: EnforcementLevel = EnforcementLevel.MANDATORY,
) -> ResourceValidationPolicy:
    type_set = frozenset(types) if types is not None else None
    # The last call's config, provider facts and context (held): a runner that shares them across calls (accelstack's
    # shared servicer) gets the same context for every resource of one provider without a lookup.
    last: list[Any] = [None, None, None]

    def validate(args: Any, report_violation: Callable[..., None]) -> None:
        if type_set is not None and args.resource_type not in type_set:
            return
        facts = None
        if is_provider_type(args.resource_type):
            facts = _facts_of(args.resource_type, args.props, args.urn, args.name)
        elif args.provider is not None:
            facts = _facts_of(args.provider.resource_type, args.provider.props, args.provider.urn, args.provider.name)
        config = args.get_config()
        if last[2] is None or last[0] is not config or last[1] is not facts:
            last[:] = [config, facts, _context_of(config, [] if facts is None else [facts])]
        for message in check(args, last[2]):
            report_violation(message)

    def skips(resource_type: str, provider: Any, config: Mapping[str, Any]) -> bool:
        """Whether `validate` reads nothing and reports nothing on every resource of this type under this provider
        and config (policies/type_index.py): a runner may then leave it out for them (accelstack's shared servicer).
        A provider is its own context (its facts are its own props): never skipped."""
        if type_set is not None and resource_type not in type_set:
            return True
        if is_provider_type(resource_type):
            return False
        facts = None
        if provider is not None:
            facts = _facts_of(provider.resource_type, provider.props, provider.urn, provider.name)
        return not type_index.reads_of(check, resource_type, _context_of(config, [] if facts is None else [facts]))

    policy = ResourceValidationPolicy(
        name=name, description=description, validate=validate, enforcement_level=level, config_schema=_schema(config)
    )
    policy.check = check  # type: ignore[attr-defined]  # the pure function, for readers and tests
    # The types it reads (None: any): a runner may skip the policy on any other type (accelstack's shared servicer).
    policy.types = type_set  # type: ignore[attr-defined]
    policy.skips = skips  # type: ignore[attr-defined]
    return policy


# The last stack's cloud providers' facts, with the very list they were read from (held, so its id stays its own): a
# runner that hands every stack policy one list (accelstack's shared servicer) has the stack scanned once, not once
# per stack policy.
_last_stack_providers: list[tuple[Sequence[Any], list[ProviderFacts]]] = []


def _stack_providers(resources: Sequence[Any]) -> list[ProviderFacts]:
    if _last_stack_providers and _last_stack_providers[0][0] is resources:
        return _last_stack_providers[0][1]
    providers = [
        provider_facts(r.resource_type, r.props, r.urn, r.name)
        for r in resources
        if is_provider_type(r.resource_type) and is_cloud_type(r.resource_type[len(PROVIDER_PREFIX) :])
    ]
    _last_stack_providers[:] = [(resources, providers)]
    return providers


def stack_policy(
    name: str,
    description: str,
    check: StackCheck,
    *,
    config: Mapping[str, Mapping[str, Any]] | None = None,
    level: EnforcementLevel = EnforcementLevel.MANDATORY,
) -> StackValidationPolicy:
    def validate(args: Any, report_violation: Callable[..., None]) -> None:
        providers = _stack_providers(args.resources)
        for urn, message in check(args.resources, make_context(args.get_config(), providers)):
            report_violation(message, urn)

    policy = StackValidationPolicy(
        name=name, description=description, validate=validate, enforcement_level=level, config_schema=_schema(config)
    )
    policy.check = check  # type: ignore[attr-defined]
    return policy


# --- cross-resource links (stack policies) -------------------------------------------------------


def refers_to(resource: Any, prop: str, target: Any, *, keys: Sequence[str] = ("id", "bucket", "arn", "name")) -> bool:
    """True when `resource.prop` points at `target`: through the engine's property dependencies (known
    even when ids are unknown during preview), else by value (an id, name or ARN of the target)."""
    deps = getattr(resource, "property_dependencies", None) or {}
    if any(getattr(d, "urn", None) == target.urn for d in deps.get(prop, [])):
        return True
    value = resource.props.get(prop)
    if value is None:
        return False
    candidates = {target.props.get(k) for k in keys} - {None, ""}
    # A reference may be a sub-resource block (`{"id": ...}`, azure-native's style) or a list of either.
    items = [v.get("id") if hasattr(v, "get") else v for v in as_list(value)]
    values = {v for v in items if isinstance(v, (str, int, float))}
    return bool(values & candidates)


# Large resource lists seen lately, each held (so that its id stays its own) with its length and, from its second use
# on, its positions by type: the stack policies ask the one list a runner hands them (accelstack's shared servicer)
# some 50 times; a list a rule derives for one question is asked once and not indexed.
_lists_by_type: list[tuple[list[Any], int, dict[str, list[tuple[int, Any]]] | None]] = []


def _positions_by_type(resources: list[Any]) -> dict[str, list[tuple[int, Any]]] | None:
    for index, (held, length, by_type) in enumerate(_lists_by_type):
        if held is resources and length == len(resources):
            if by_type is None:
                by_type = {}
                for position, resource in enumerate(resources):
                    by_type.setdefault(resource.resource_type, []).append((position, resource))
                _lists_by_type[index] = (held, length, by_type)
            return by_type
    _lists_by_type[:] = [(resources, len(resources), None), *_lists_by_type[:3]]
    return None


def of_type(resources: Iterable[Any], *types: str) -> list[Any]:
    """The resources of these types, in the order given."""
    by_type = _positions_by_type(resources) if isinstance(resources, list) and len(resources) >= 256 else None
    if by_type is None:
        return [r for r in resources if r.resource_type in types]
    found = [pair for kind in dict.fromkeys(types) for pair in by_type.get(kind, ())]
    if len(types) > 1:
        found.sort(key=lambda pair: pair[0])
    return [resource for _, resource in found]


def tag_values(tags: Any) -> dict[str, str]:
    """`tags` maps key -> value; autoscaling groups list {key, value, propagateAtLaunch}."""
    if hasattr(tags, "items"):
        return {str(k): str(v) for k, v in tags.items()}
    found = {}
    for tag in as_list(tags):
        if hasattr(tag, "get") and tag.get("key") is not None:
            found[str(tag.get("key"))] = str(tag.get("value"))
    return found


def truthy(value: Any) -> bool:
    """Bools arrive as bools from programs but as strings in some nested blocks (launch templates)."""
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return bool(value)
