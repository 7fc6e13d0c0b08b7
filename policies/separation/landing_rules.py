"""Landing stacks (`workload: landing`, accelstack.spec.landing): the guardrails exist and are attached where they
must be, and no quota request asks for more than the planner sized.

Each side's OU is found by its `accelstack:side` tag; what is attached to it, by the attachments whose targetId
refers to it. Both OUs carry the region guardrail and the baseline (no audit trail switched off, no leaving the
organization); the serving OU denies the training instance families, FSx and placement groups; the training OU
denies internet-facing load balancers; each OU denies its principals the other side's account. A guardrail meant
for one side attached to the other is a violation too (serving's load balancers, or the side's own account denied).
Quota requests are held to the planner's need (`quotaNeeds`, from the workload stacks' node counts): a request
above it gives one account room that was never sized, and one nothing needs is quota no stack accounts for.
Kinds only landing stacks make (OUs, accounts, SCPs, quota requests, budgets) are refused in a workload stack, and
a landing stack makes nothing else. Ours.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pulumi_policy.proxy import UnknownValueError

from .. import concepts
from ..aws import landing as aws_landing
from ..azure import landing as azure_landing
from ..common import LANDING, WORKLOADS, Context, refers_to, tag_values
from ..gcp import landing as gcp_landing
from ..oci import landing as oci_landing
from . import landing_oci

TAG_SIDE = "accelstack:side"
LANDING_CONCEPTS = frozenset(
    {
        "org-unit",
        "member-account",
        "guardrail-policy",
        "guardrail-attachment",
        "guardrail-constraint",
        "quota-request",
        "budget",
        "alert-channel",
    }
)
# Kinds a landing stack may make though workload stacks make them too: the APIs a new GCP project needs on,
# OCI's policies granting each side's deploy group its compartment (judged by landing-guardrails there), and the
# audit logs of every service in a new GCP project (Data Access logs are off by default).
LANDING_ALSO = frozenset({"api-enablement", "identity-grant", "audit-config"})
# Kinds of a workload concept one landing stack makes for its sides, judged by landing-guardrails there: OCI's
# nodes dynamic group per side (each matching only its side's compartment), so no workload deployer needs the
# tenancy-wide `manage dynamic-groups` (components/oci/landing.py).
LANDING_ALSO_TYPES = frozenset({"oci:Identity/dynamicGroup:DynamicGroup"})
CONFIG: dict[str, dict[str, Any]] = {
    "quotaNeeds": {
        "type": "array",
        "items": {"type": "object"},
        "description": "A landing stack's planned quota needs: {side, region, quotaCode, amount} each (accelstack fills it).",
    },
    "sidePrincipals": {
        "type": "object",
        "description": "Azure: each side's listed principal object ids, which the other side's group must deny role assignments to.",
    },
    "deniedFamilies": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Instance families the serving guardrail must deny (the planner's training families).",
    },
    "deniedRegions": {
        "type": "array",
        "items": {"type": "string"},
        "description": "oci: the regions each compartment's quota must zero compute in (the catalog's, less allowedRegions).",
    },
    "availabilityDomains": {
        "type": "object",
        "description": "oci: each region's availability domains as their names end (US-ASHBURN-AD-1): a cap in one "
        "is proven by a zero in each other (accelstack fills it from its catalog).",
    },
    "deniedQuotas": {
        "type": "array",
        "items": {"type": "string"},
        "description": "oci: the GPU quotas the serving compartment's quota must zero (the training shapes').",
    },
}
UNKNOWN = object()


def _read(resource: Any, prop: str) -> Any:
    """A property, or UNKNOWN while preview does not know it yet (an SCP naming an account not created yet)."""
    try:
        return resource.props.get(prop)
    except UnknownValueError:
        return UNKNOWN


def _side(resource: Any) -> str | None:
    if resource.resource_type.startswith("oci:"):
        return landing_oci.resource_side(resource)
    if resource.resource_type in (gcp_landing.FOLDER, azure_landing.MANAGEMENT_GROUP):
        # Folder tags are tag bindings and management groups take none: the display name (accelstack-<side>) says.
        return gcp_landing.folder_side(_read(resource, "displayName"))
    tags = _read(resource, "tags")
    side = tag_values(tags).get(TAG_SIDE) if tags is not UNKNOWN else None
    return side if side in WORKLOADS else None


def _attached(ou: Any, resources: Sequence[Any]) -> list[Any]:
    """The guardrail policies attached to `ou`."""
    attachments = [a for a in concepts.of(resources, "guardrail-attachment") if refers_to(a, "targetId", ou)]
    policies = concepts.of(resources, "guardrail-policy")
    return [p for p in policies if any(refers_to(a, "policyId", p) for a in attachments)]


def _account_ids(side: str, ous: dict[str, Any], resources: Sequence[Any]) -> set[str]:
    """The ids of the member accounts placed in `side`'s OU (known once the accounts exist)."""
    ou = ous.get(side)
    found = set()
    for account in concepts.of(resources, "member-account"):
        # The account's ARN ends in its id (arn:aws:organizations::<management>:account/o-<org>/<id>); the
        # stack's resources show their outputs, not the engine's id.
        arn = _read(account, "arn")
        identifier = _read(account, "id") or (arn.rsplit("/", 1)[-1] if isinstance(arn, str) else None)
        if ou is not None and refers_to(account, "parentId", ou) and isinstance(identifier, str):
            found.add(identifier)
    return found


def _side_problems(side: str, ou: Any, ous: dict[str, Any], resources: Sequence[Any], ctx: Context) -> Iterable[str]:
    documents = [content for p in _attached(ou, resources) if (content := _read(p, "content")) is not None]
    known = [d for d in documents if d is not UNKNOWN]
    other = "serving" if side == "training" else "training"
    regions = [r for d in known if (r := aws_landing.denied_outside(d)) is not None]
    allowed = set(ctx.allowed_regions or ())
    if not regions:
        yield f"the {side} OU has no region guardrail attached (an SCP denying every Region outside the allowed ones)"
    elif allowed and not any(r <= allowed for r in regions):
        yield f"the {side} OU's region guardrail allows {', '.join(sorted(regions[0] - allowed))} beyond allowedRegions"
    denied = set().union(*(aws_landing.denied_always(d) for d in known)) if known else set()
    if missing := sorted(aws_landing.BASELINE_DENIES - denied):
        yield f"the {side} OU's guardrails do not deny {', '.join(missing)}"
    families = set().union(*(aws_landing.denied_families(d) for d in known)) if known else set()
    facing = any(aws_landing.denies_internet_facing_load_balancers(d) for d in known)
    if side == "serving":
        wanted = set(ctx.config.get("deniedFamilies") or [])
        if missing := sorted(wanted - families):
            yield f"the serving OU's guardrails do not deny launching the training families {', '.join(missing)}"
        elif not families:
            yield "the serving OU's guardrails deny no training instance family"
        if missing := sorted(aws_landing.SERVING_DENIED_CREATES - denied):
            yield f"the serving OU's guardrails do not deny {', '.join(missing)}"
        if facing:
            yield "the serving OU denies internet-facing load balancers: the training guardrail is attached to serving"
    else:
        if not facing:
            yield "the training OU's guardrails do not deny internet-facing load balancers"
        if families:
            yield f"the training OU denies {', '.join(sorted(families))}: the serving guardrail is attached to training"
    accounts = set().union(*(aws_landing.denied_resource_accounts(d) for d in known)) if known else set()
    own, theirs = _account_ids(side, ous, resources), _account_ids(other, ous, resources)
    if accounts & own:
        yield f"the {side} OU denies its own account {', '.join(sorted(accounts & own))}: the other side's guardrail is attached here"
    if len(known) == len(documents) and theirs and not theirs <= accounts:
        yield f"the {side} OU's guardrails do not keep its principals off the {other} account ({', '.join(sorted(theirs - accounts))})"


def _gcp_side_problems(side: str, folder: Any, resources: Sequence[Any], ctx: Context) -> Iterable[str]:
    """The folder's organization policies (module docstring; GCP's guardrails, components/gcp/landing.py)."""
    attached = [p for p in concepts.of(resources, "guardrail-policy") if refers_to(p, "parent", folder)]
    names = [_read(p, "name") for p in attached]
    if any(n is UNKNOWN for n in names):
        return  # preview before the folder exists: the policies are judged at `up`, with their names known
    by_constraint: dict[str, list[Any]] = {}
    for policy, name in zip(attached, names, strict=True):
        by_constraint.setdefault(gcp_landing.constraint_of(name) or "", []).append(_read(policy, "spec"))
    for project in concepts.of(resources, "member-account"):
        labels = _read(project, "labels")
        mine = isinstance(labels, Mapping) and labels.get(gcp_landing.LABEL_SIDE) == side
        # By value (the folder's number) or by the engine's dependency on the folder, known before its number is.
        placed = _read(project, "folderId") == _read(folder, "folderId") or refers_to(project, "folderId", folder)
        if mine and not placed:
            yield f"the {side} project {project.name} is not in the {side} folder (its guardrails do not reach it)"
    allowed = set(ctx.allowed_regions or ())
    locations = [gcp_landing.allowed_regions(spec) for spec in by_constraint.get(gcp_landing.LOCATIONS, [])]
    if not locations:
        yield f"the {side} folder has no {gcp_landing.LOCATIONS} policy (allowing only the allowed regions)"
    elif any(regions is None for regions in locations):
        yield f"the {side} folder's {gcp_landing.LOCATIONS} policy allows more than region value groups (in:<region>-locations)"
    elif allowed and (beyond := set().union(*(r or set() for r in locations)) - allowed):
        yield f"the {side} folder's {gcp_landing.LOCATIONS} policy allows {', '.join(sorted(beyond))} beyond allowedRegions"
    domains = by_constraint.get(gcp_landing.MEMBER_DOMAINS, [])
    if not domains or any(gcp_landing.allowed_values(spec) is None for spec in domains):
        yield f"the {side} folder has no {gcp_landing.MEMBER_DOMAINS} policy allowing only the organization's customer ids"
    yield from _gcp_members_problems(side, by_constraint, resources)
    machines = by_constraint.get(gcp_landing.SERVING_MACHINES, [])
    if side == "training":
        if machines:
            yield f"the training folder enforces {gcp_landing.SERVING_MACHINES}: the serving guardrail is attached to training"
        return
    denied: set[str] = set()
    for constraint in concepts.of(resources, "guardrail-constraint"):
        name = _read(constraint, "name")
        if isinstance(name, str) and name.rsplit("/", 1)[-1] == gcp_landing.SERVING_MACHINES:
            denied |= gcp_landing.denied_machine_types(
                *(_read(constraint, k) for k in ("resourceTypes", "actionType", "methodTypes", "condition"))
            )
    if not machines or not all(gcp_landing.enforced(spec) for spec in machines):
        yield f"the serving folder does not enforce {gcp_landing.SERVING_MACHINES} (no training machine types)"
    elif missing := sorted(set(ctx.config.get("deniedFamilies") or []) - denied):
        yield f"the serving folder's {gcp_landing.SERVING_MACHINES} does not deny {', '.join(missing)}"


def _gcp_members_problems(side: str, by_constraint: dict[str, list[Any]], resources: Sequence[Any]) -> Iterable[str]:
    """The folder enforces its constraint refusing grants to the other side's principals (gcp/landing.py)."""
    name = gcp_landing.NO_OTHER_SIDE[side]
    other = "serving" if side == "training" else "training"
    policies = by_constraint.get(name, [])
    if not policies or not all(gcp_landing.enforced(spec) for spec in policies):
        yield f"the {side} folder does not enforce {name} (no role granted to {other}'s principals, at the IAM API)"
        return
    projects = [
        _read(p, "projectId")
        for p in concepts.of(resources, "member-account")
        if isinstance(labels := _read(p, "labels"), Mapping) and labels.get(gcp_landing.LABEL_SIDE) == other
    ]
    constraints = [
        c
        for c in concepts.of(resources, "guardrail-constraint")
        if isinstance(n := _read(c, "name"), str) and n.rsplit("/", 1)[-1] == name
    ]
    if not constraints:
        yield f"the {side} folder enforces {name}, which the stack does not define"
    for constraint in constraints:
        props = {k: _read(constraint, k) for k in ("actionType", "resourceTypes", "methodTypes", "condition")}
        if any(v is UNKNOWN for v in props.values()):
            continue  # the condition names the other project's number, known once it exists
        for project in (p for p in projects if isinstance(p, str)):
            if (why := gcp_landing.members_denial_problem(side, project, props)) is not None:
                yield f"the {side} folder's {name} {why}"


def _azure_side_problems(side: str, group: Any, resources: Sequence[Any], ctx: Context) -> Iterable[str]:
    """The management group's policy assignments and its subscription (components/azure/landing.py)."""
    for alias in concepts.of(resources, "member-account"):
        target, tags = azure_landing.alias_placement(_read(alias, "properties"))
        placed = target is UNKNOWN or target == _read(group, "id") or refers_to(alias, "properties", group)
        if tags.get(azure_landing.TAG_SIDE) == side and not placed:
            yield f"the {side} subscription {alias.name} is not created in the {side} management group (its guardrails do not reach it)"
    assigned: dict[str | None, list[Any]] = {}
    for assignment in concepts.of(resources, "guardrail-policy"):
        if assignment.resource_type.startswith("azure-native:") and refers_to(assignment, "scope", group):
            narrowed = [k for k in azure_landing.NARROWING if _read(assignment, k) not in (None, [], {})]
            if narrowed:
                yield f"{assignment.name} at the {side} management group is narrowed by {', '.join(narrowed)}: a guardrail with holes"
            definition = azure_landing.definition_of(_read(assignment, "policyDefinitionId"))
            assigned.setdefault(definition, []).append(assignment)
    allowed = set(ctx.allowed_regions or ())
    locations = assigned.get(azure_landing.ALLOWED_LOCATIONS, [])
    if not locations:
        yield f"the {side} management group has no Allowed locations assignment"
    for assignment in locations:
        if not azure_landing.enforced(_read(assignment, "enforcementMode")):
            yield f"the {side} management group's Allowed locations assignment is not enforced (DoNotEnforce only audits)"
        listed = azure_landing.parameter_list(_read(assignment, "parameters"), "listOfAllowedLocations")
        if listed is None:
            yield f"the {side} management group's Allowed locations assignment lists no locations"
        elif allowed and (beyond := set(listed) - allowed):
            yield f"the {side} management group's Allowed locations allows {', '.join(sorted(beyond))} beyond allowedRegions"
    yield from _azure_principal_problems(side, group, resources, ctx)
    skus = assigned.get(azure_landing.ALLOWED_VM_SKUS, [])
    if side == "training":
        if skus:
            yield "the training management group restricts VM sizes: the serving guardrail is assigned to training"
        return
    denied = set(ctx.config.get("deniedFamilies") or [])
    if not skus:
        yield "the serving management group has no Allowed virtual machine size SKUs assignment"
    for assignment in skus:
        if not azure_landing.enforced(_read(assignment, "enforcementMode")):
            yield "the serving management group's VM size assignment is not enforced (DoNotEnforce only audits)"
        listed = azure_landing.parameter_list(_read(assignment, "parameters"), "listOfAllowedSKUs")
        if listed is None:
            yield "the serving management group's VM size assignment lists no sizes"
        elif training := sorted(denied & set(listed)):
            yield f"the serving management group allows the training sizes {', '.join(training)}"


def _azure_principal_problems(side: str, group: Any, resources: Sequence[Any], ctx: Context) -> Iterable[str]:
    """The group denies role assignments to every principal the other side lists (`sidePrincipals`), through an
    enforced assignment of a definition that denies exactly that (policies/azure/landing.py)."""
    other = "serving" if side == "training" else "training"
    listed = (ctx.config.get("sidePrincipals") or {}).get(other) or []
    if not listed:
        return
    definitions = [c for c in concepts.of(resources, "guardrail-constraint") if c.resource_type.startswith("azure-")]
    problems = {
        d.urn: azure_landing.principal_denial_problem(_read(d, "policyRule"), _read(d, "mode")) for d in definitions
    }
    denying = [d for d in definitions if problems[d.urn] is None]
    for definition in definitions:
        if problems[definition.urn] is not None:
            yield f"the definition {definition.name} {problems[definition.urn]}"
    assignments = [
        a
        for a in concepts.of(resources, "guardrail-policy")
        if a.resource_type.startswith("azure-native:")
        and refers_to(a, "scope", group)
        and any(refers_to(a, "policyDefinitionId", d) for d in denying)
    ]
    if not assignments:
        yield f"the {side} management group does not deny role assignments to {other}'s {len(listed)} listed principals"
    for assignment in assignments:
        if not azure_landing.enforced(_read(assignment, "enforcementMode")):
            yield f"the {side} management group's deny of {other}'s principals is not enforced (DoNotEnforce only audits)"
        params = _read(assignment, "parameters")
        denied = azure_landing.parameter_list(params, azure_landing.DENIED_PRINCIPALS_PARAMETER) or []
        if missing := sorted({p.lower() for p in listed} - {d.lower() for d in denied}):
            yield f"the {side} management group's deny of {other}'s principals leaves out {', '.join(missing)}"


def check_landing_guardrails(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Each side's OU carries its guardrail SCPs and none of the other side's (module docstring). Ours; the
    guardrails are AWS's own SCP examples (https://docs.aws.amazon.com/organizations/latest/userguide/orgs_manage_policies_scps_examples.html)."""
    if ctx.workload != LANDING:
        return
    stack = next((r.urn for r in resources if r.resource_type == "pulumi:pulumi:Stack"), "")
    ous = {side: ou for ou in concepts.of(resources, "org-unit") if (side := _side(ou)) is not None}
    for side in WORKLOADS:
        if side not in ous:
            yield (
                stack,
                f"a landing stack has an OU (gcp: folder, azure: management group, oci: compartment) for each side; none is tagged {TAG_SIDE}={side}",
            )
            continue
        if ous[side].resource_type == gcp_landing.FOLDER:
            for message in _gcp_side_problems(side, ous[side], resources, ctx):
                yield ous[side].urn, message
            continue
        if ous[side].resource_type == oci_landing.COMPARTMENT:
            for message in landing_oci.oci_side_problems(side, ous, resources, ctx):
                yield ous[side].urn, message
            continue
        if ous[side].resource_type == azure_landing.MANAGEMENT_GROUP:
            for message in _azure_side_problems(side, ous[side], resources, ctx):
                yield ous[side].urn, message
            continue
        for message in _side_problems(side, ous[side], ous, resources, ctx):
            yield ous[side].urn, message
    if any(ou.resource_type == oci_landing.COMPARTMENT for ou in ous.values()):
        yield from landing_oci.oci_stack_problems(ous, resources)
    for policy in concepts.of(resources, "guardrail-policy"):
        if policy.resource_type.startswith("aws:") and _read(policy, "type") != aws_landing.SCP:
            yield policy.urn, f"{policy.name} is not a service control policy (type {aws_landing.SCP})"


def check_quota_caps(resource: Any, ctx: Context) -> Iterable[str]:
    """A quota request asks for what the planner sized for its account, Region and quota, and no more. Ours."""
    if concepts.concept_of(resource.resource_type) != "quota-request":
        return
    if ctx.workload != LANDING:
        return  # the kind itself is workload-resource-kinds' to refuse
    needs = ctx.config.get("quotaNeeds")
    if needs is None:
        yield f"{resource.name}: no quotaNeeds config to hold the request to (accelstack preview fills it)"
        return
    side = ctx.provider.default_tags.get(TAG_SIDE) if ctx.provider is not None else None
    if resource.resource_type.startswith("gcp:"):
        yield from _gcp_quota_caps(resource, needs, side, ctx)
        return
    if resource.resource_type == oci_landing.QUOTA:
        yield from landing_oci.oci_quota_caps(resource, needs, ctx.config.get("availabilityDomains"))
        return
    region = _read(resource, "region") or (ctx.provider.region if ctx.provider is not None else None)
    code, value = _read(resource, "quotaCode"), _read(resource, "value")
    need = next(
        (n for n in needs if n.get("side") == side and n.get("region") == region and n.get("quotaCode") == code),
        None,
    )
    if need is None:
        yield f"{resource.name} requests {code} in {region} for the {side} account, which no listed workload stack needs"
    elif isinstance(value, (int, float)) and value > float(need.get("amount", 0)):
        yield (
            f"{resource.name} requests {value:g} of {code} in {region}, past the planner's need of "
            f"{need.get('amount')} for the {side} account's stacks"
        )


def _gcp_quota_caps(resource: Any, needs: list[dict[str, Any]], side: Any, ctx: Context) -> Iterable[str]:
    """A quota preference (Cloud Quotas) is held to the need of its project's side, region and GPU family."""
    key = gcp_landing.preference_key(_read(resource, "dimensions"), _read(resource, "quotaId"))
    config = _read(resource, "quotaConfig")
    value = config.get("preferredValue") if isinstance(config, Mapping) else None
    need = gcp_landing.matching_need(needs, side, key)
    region, quota_id, family = key
    parent = _read(resource, "parent")
    pinned = ctx.provider.accounts if ctx.provider is not None else ()
    if isinstance(parent, str) and parent.removeprefix("projects/") not in pinned:
        yield f"{resource.name} sets its preference on {parent}, not the {side} project its provider is pinned to"
    if need is None:
        yield f"{resource.name} prefers {quota_id} ({family}) in {region} for the {side} project, which no listed workload stack needs"
    elif value is None or not str(value).lstrip("-").isdigit() or int(str(value)) < 0:
        yield f"{resource.name} prefers {value!r} of {quota_id}: a count of GPUs is needed (-1, unlimited, is never a planned need)"
    elif int(str(value)) > int(need.get("amount", 0)):
        yield (
            f"{resource.name} prefers {value} of {quota_id} ({family}) in {region}, past the planner's need of "
            f"{need.get('amount')} for the {side} project's stacks"
        )


def check_landing_kinds(resource: Any, ctx: Context) -> Iterable[str]:
    """Only landing stacks make organization kinds, and they make nothing else. Ours."""
    concept = concepts.concept_of(resource.resource_type)
    if concept is None:
        return
    if ctx.workload in WORKLOADS and concept in LANDING_CONCEPTS:
        yield f"{resource.resource_type} {resource.name} in a {ctx.workload} stack: only a landing stack makes it"
    elif (
        ctx.workload == LANDING
        and concept not in LANDING_CONCEPTS | LANDING_ALSO
        and resource.resource_type not in LANDING_ALSO_TYPES
    ):
        yield f"{resource.resource_type} {resource.name} in a landing stack: a landing stack makes accounts and guardrails only"
