"""OCI landing stacks (components/oci/landing.py), judged: each side's compartment, its quota policy and its deploy
group's grants (landing-guardrails), and each quota `set` statement against the planner's need
(landing-quota-caps). Ours; the grammars are OCI's (policies/oci/landing.py, policies/oci/statements.py).

OCI has no deny policy for a landing stack to attach: a side is kept off the other's compartment by its deploy
group being granted only its own (policies only allow), and the serving group by not being granted cluster
networks or file systems; its compartment's quota zeroes the training shapes' GPUs, and each compartment's
quota zeroes compute outside the allowed regions (the closest thing OCI has to a location policy: region
subscriptions are tenancy-wide). This module judges those grants and statements in the landing stack itself,
where both sides' compartments and groups are known (the separation config lists no accounts for it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pulumi_policy.proxy import UnknownValueError

from .. import concepts
from ..common import Context, as_list, decode, tag_values
from ..oci import landing as oci_landing
from ..oci.statements import matching_compartments, parse

UNKNOWN = object()


def _read(resource: Any, prop: str) -> Any:
    try:
        return resource.props.get(prop)
    except UnknownValueError:
        return UNKNOWN


def resource_side(resource: Any) -> str | None:
    """The side an OCI landing resource is, by its free-form tag."""
    tags = _read(resource, "freeformTags")
    side = tag_values(tags).get(oci_landing.TAG_SIDE) if tags is not UNKNOWN else None
    return side if side in ("training", "serving") else None


def quota_statements(resource: Any) -> list[oci_landing.QuotaStatement] | None:
    """A quota policy's statements, parsed; None while preview does not know them."""
    statements = _read(resource, "statements")
    if statements is UNKNOWN:
        return None
    return [oci_landing.parse_quota(str(text)) for text in as_list(decode(statements))]


def _quota_problems(side: str, compartment: Any, resources: Sequence[Any], ctx: Context) -> Iterable[str]:
    name = _read(compartment, "name")
    covering: list[oci_landing.QuotaStatement] = []
    for quota in (r for r in resources if r.resource_type == oci_landing.QUOTA):
        parsed = quota_statements(quota)
        if parsed is None:
            return  # judged at `up`, with the statements known
        for statement in parsed:
            if statement.unparsed:
                yield f"{quota.name}: {statement.text!r}: {statement.unparsed}"
            elif statement.compartment_name == name:
                covering.append(statement)
                if resource_side(quota) != side:
                    yield f"{quota.name} (tagged {resource_side(quota)}) writes the {side} compartment's statement {statement.text!r}"
            elif statement.compartment is None:
                yield f"{quota.name}: {statement.text!r} covers the whole tenancy, not one side's compartment"
    if not covering:
        yield f"no quota policy covers the {side} compartment {name}"
        return
    zeros = [s for s in covering if s.action == "zero" and s.family == oci_landing.FAMILY]
    denied_regions = ctx.config.get("deniedRegions")
    if denied_regions is None:
        yield "no deniedRegions config to hold the region guardrail to (accelstack preview fills it)"
    else:
        zeroed = {s.region for s in zeros if s.region and oci_landing.EVERY_QUOTA in s.names}
        if missing := sorted(set(denied_regions) - zeroed):
            yield f"the {side} compartment's quota does not zero compute in {', '.join(missing)} (outside allowedRegions)"
    unset = [s.text for s in covering if s.action == "unset"]
    if unset:
        yield f"the {side} compartment's quota unsets {', '.join(unset)}: back to the service limits"
    denied_quotas = set(ctx.config.get("deniedQuotas") or [])
    everywhere = {n for s in zeros if s.region is None and s.domain is None for n in s.names}
    if side == "serving":
        if missing := sorted(denied_quotas - everywhere):
            yield f"the serving compartment's quota does not zero the training shapes' {', '.join(missing)}"
    elif denied_quotas & everywhere:
        yield f"the training compartment's quota zeroes {', '.join(sorted(denied_quotas & everywhere))}: the serving guardrail is on training"


def _grant_problems(side: str, compartments: Mapping[str, Any], resources: Sequence[Any]) -> Iterable[str]:
    """Every statement of the landing stack's policies grants a side's deploy group in that side's compartment
    only (serving: none of SERVING_DENIED); each side's group is granted something there."""
    ids = {s: _read(c, "id") for s, c in compartments.items()}
    groups = {s: g for g in concepts.of(resources, "member-account") if (s := resource_side(g)) is not None}
    group_ids = {s: _read(g, "id") for s, g in groups.items()}
    if UNKNOWN in ids.values() or UNKNOWN in group_ids.values():
        return  # preview before the compartments and groups exist: judged at `up`
    other = "serving" if side == "training" else "training"
    granted = False
    for policy in (r for r in resources if r.resource_type == oci_landing.POLICY):
        statements = _read(policy, "statements")
        if statements is UNKNOWN:
            continue
        for text in as_list(decode(statements)):
            statement = parse(str(text))
            mine = [s for s in statement.subjects if s.by_id and s.kind == "group" and s.name == group_ids.get(side)]
            if not mine:
                continue
            if statement.unparsed or len(statement.subjects) != 1:
                yield f"{policy.name}: {text!r}: a grant to the {side} deploy group the packs cannot place"
            elif not statement.scope_by_id or statement.scope != ids.get(side):
                where = other if statement.scope == ids.get(other) else statement.scope
                yield f"{policy.name} grants the {side} deploy group in the {where} compartment, not its own: {text!r}"
            elif statement.what.lower() in oci_landing.DEPLOYER_DENIED:
                yield f"{policy.name} grants the {side} deploy group {statement.what}: {text!r} (tenancy identities)"
            elif side == "serving" and statement.what.lower() in oci_landing.SERVING_DENIED:
                yield f"{policy.name} grants the serving deploy group {statement.what}: {text!r} (training's)"
            else:
                granted = True
    if not granted:
        yield f"the {side} deploy group is granted nothing in the {side} compartment"


def _stray_grants(compartments: Mapping[str, Any], resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """Statements granting anyone but a side's deploy group (the landing stack grants its deployers only)."""
    group_ids = {_read(g, "id") for g in concepts.of(resources, "member-account") if resource_side(g)}
    if UNKNOWN in group_ids:
        return
    for policy in (r for r in resources if r.resource_type == oci_landing.POLICY):
        statements = _read(policy, "statements")
        if statements is UNKNOWN:
            continue
        for text in as_list(decode(statements)):
            statement = parse(str(text))
            if statement.unparsed or any(
                not (s.by_id and s.kind == "group" and s.name in group_ids) for s in statement.subjects
            ):
                yield policy.urn, f"{policy.name}: {text!r} grants someone other than a side's deploy group"


def oci_side_problems(
    side: str, compartments: Mapping[str, Any], resources: Sequence[Any], ctx: Context
) -> Iterable[str]:
    """The side's compartment is kept (protected, never deleted by the provider), its quota policy holds the
    region guardrail (and on serving the training shapes' zero), and its deploy group is granted only there."""
    compartment = compartments[side]
    if not compartment.opts.protect:
        yield f"the {side} compartment {compartment.name} is not protected (set protect=True)"
    if _read(compartment, "enableDelete") is True:
        yield f"the {side} compartment {compartment.name} sets enableDelete: a destroy deletes it"
    yield from _quota_problems(side, compartment, resources, ctx)
    if set(compartments) == {"training", "serving"}:
        yield from _grant_problems(side, compartments, resources)
        yield from _nodes_group_problems(side, compartments, resources)


def _nodes_group_problems(side: str, compartments: Mapping[str, Any], resources: Sequence[Any]) -> Iterable[str]:
    """The side's nodes dynamic group (its workload stacks' policies name it: policies/oci/access.py places it in
    the side's compartment) is in the tenancy and matches the instances of the side's compartment and no other."""
    groups = [g for g in resources if g.resource_type == oci_landing.DYNAMIC_GROUP and resource_side(g) == side]
    if not groups:
        yield f"no nodes dynamic group is tagged {oci_landing.TAG_SIDE}={side} (the {side} stacks' policies name it)"
    compartment_id = _read(compartments[side], "id")
    for group in groups:
        rule = _read(group, "matchingRule")
        if rule is UNKNOWN or compartment_id is UNKNOWN:
            continue  # judged at `up`, with the compartment's OCID known
        matched, why = matching_compartments(str(rule))
        if why or matched != (compartment_id,):
            yield (
                f"the {side} nodes dynamic group {group.name} matches {rule!r}, not the instances of the {side} "
                f"compartment {compartment_id} alone{f': {why}' if why else ''}"
            )
        where = _read(group, "compartmentId")
        if where is not UNKNOWN and not str(where).startswith("ocid1.tenancy."):
            yield f"the {side} nodes dynamic group {group.name} is in {where}: dynamic groups live in the tenancy"


def oci_stack_problems(compartments: Mapping[str, Any], resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    yield from _stray_grants(compartments, resources)


def oci_quota_caps(
    resource: Any, needs: list[dict[str, Any]], domains: Mapping[str, Sequence[str]] | None
) -> Iterable[str]:
    """Each `set` statement of a side's quota policy caps a GPU quota at the planner's need for that side and
    region, and no higher; a cap nothing needs is room no stack accounts for. A need in one availability domain
    (a cluster network's, `zone`) is capped in that domain (`request.ad`): a region-wide cap would be allocated
    to each of its domains (quota_policy_syntax.htm, Scope), up to three times the need. `domains`: each region's
    availability domains as the catalog names them (the availabilityDomains config)."""
    side = resource_side(resource)
    parsed = quota_statements(resource)
    if parsed is None:
        return  # judged at `up`, with the statements known
    readable = [s for s in parsed if not s.unparsed]
    for statement in readable:
        if statement.action != "set":
            continue
        where = statement.domain or statement.region or "every region"
        for name in statement.names:
            need = next(
                (
                    n
                    for n in needs
                    if n.get("side") == side and _covers(statement, n, domains) and n.get("quota") == name
                ),
                None,
            )
            if need is None and statement.domain and _uncounted(side, name, needs, domains):
                continue  # a need in a region whose domains are unlisted: failed closed below, naming the region
            if need is None:
                yield f"{resource.name} sets {name} in {where} for the {side} compartment, which no listed workload stack needs"
            elif statement.value is not None and statement.value > int(need.get("amount", 0)):
                yield (
                    f"{resource.name} sets {name} to {statement.value} in {where}, past the planner's need "
                    f"of {need.get('amount')} for the {side} compartment's stacks"
                )
            elif need.get("zone") and statement.domain is None:
                yield (
                    f"{resource.name} sets {name} in each availability domain of {where}, but the {side} "
                    f"compartment's need is in AD-{need.get('zone')} alone: cap it there (where request.ad = ...)"
                )
    for need in needs:
        if need.get("side") == side and need.get("zone"):
            yield from _domain_cap_problems(resource.name, need, readable, domains)


def _uncounted(side: Any, quota: str, needs: list[dict[str, Any]], domains: Any) -> bool:
    """Whether a need of the side for the quota is in a domain of a region the config lists no domains for."""
    return any(
        n.get("side") == side and n.get("quota") == quota and n.get("zone") and _domain_labels(n, domains) is None
        for n in needs
    )


def _domain_labels(need: Mapping[str, Any], domains: Mapping[str, Sequence[str]] | None) -> list[str] | None:
    region = str(need.get("region"))
    listed = (domains or {}).get(region)
    return [str(label).upper() for label in listed] if isinstance(listed, list | tuple) else None


def _domain_cap_problems(
    name: str,
    need: Mapping[str, Any],
    statements: Sequence[oci_landing.QuotaStatement],
    domains: Mapping[str, Sequence[str]] | None,
) -> Iterable[str]:
    """A need in one availability domain is capped there and zeroed in every other domain of its region, in the
    capped compartment, by statements that do not overlap the cap: Oracle documents no rule for how a region-wide
    `zero` and an AD-scoped `set` of one quota combine (quota_policy_syntax.htm, sample_quotas.htm), so a cap is
    proven only where no other statement covers its domain, and then no statement's order matters. The zeros are
    counted, by distinct `request.ad`, against the region's domains in the catalog (fail closed without them)."""
    quota, region, zone = str(need.get("quota")), str(need.get("region")), str(need.get("zone"))
    labels = _domain_labels(need, domains)
    if labels is None:
        yield (
            f"{name}: the need for {quota} is in AD-{zone} of {region}, a region the availabilityDomains config does "
            "not list: its other domains' zeros cannot be counted (accelstack/clouds/oci/catalog.py)"
        )
        return
    index = int(zone) - 1 if zone.isdigit() else -1
    if not 0 <= index < len(labels):
        yield f"{name}: the need for {quota} is in AD-{zone}, but {region} has {len(labels)} availability domain(s)"
        return
    own = labels[index]

    def covers(statement: oci_landing.QuotaStatement) -> bool:
        return quota in statement.names or oci_landing.EVERY_QUOTA in statement.names

    caps = [
        s
        for s in statements
        if s.action == "set" and quota in s.names and s.domain and oci_landing.domain_label(s.domain) == own
    ]
    if not caps:
        yield f"{name} does not cap {quota} in {own}, where the planner's need for it is"
    for compartment in sorted({str(s.compartment) for s in caps}):
        mine = [s for s in statements if str(s.compartment) == compartment and covers(s)]
        zeroed = {oci_landing.domain_label(s.domain) for s in mine if s.action == "zero" and s.domain}
        if missing := [label for label in labels if label != own and label not in zeroed]:
            yield (
                f"{name} caps {quota} in {own} for compartment {compartment} but does not zero it in "
                f"{', '.join(missing)}: {region} has {len(labels)} availability domains, and each one not zeroed "
                "keeps the tenancy's service limit"
            )
        overlapping = [
            s.text
            for s in mine
            if s.action != "set"
            and s.region in (None, region)
            and (s.domain is None or oci_landing.domain_label(s.domain) == own)
        ]
        if overlapping:
            yield (
                f"{name}: {'; '.join(overlapping)} overlaps the cap on {quota} in {own}: Oracle documents no order "
                "between overlapping statements, so the cap is not proven"
            )


def _covers(
    statement: oci_landing.QuotaStatement, need: Mapping[str, Any], domains: Mapping[str, Sequence[str]] | None
) -> bool:
    """Whether the statement's place is the need's: its domain (a need in one), else its region."""
    region, zone = str(need.get("region")), str(need.get("zone") or "")
    if statement.domain is not None:
        labels = _domain_labels(need, domains)
        index = int(zone) - 1 if zone.isdigit() else -1
        return (
            labels is not None
            and 0 <= index < len(labels)
            and oci_landing.domain_label(statement.domain) == labels[index]
        )
    return statement.region == region
