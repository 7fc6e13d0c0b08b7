"""The quota statements an OCI landing stack writes for each side's compartment (pure).

Grammar: docs.oracle.com/iaas/Content/Quotas/Concepts/quota_policy_syntax.htm: `set <family> quota <name> to
<value> in compartment <path> [where <condition>]` and `zero <family> quotas <name>, ... in compartment <path>
[where ...]`; the conditions are `request.region` and `request.ad`, and a wildcard `/<pattern>/` names a range of
quotas. The GPU counts are the compute-core family's (resourcequotas_topic-Compute_Quotas.htm, "Core-based and
GPU-based quotas"), named as the service limits are (accelstack.clouds.oci.quotas.LIMIT_NAMES).

A quota only lowers what the tenancy's service limits allow (it never raises them), so `set` caps a side at the
planner's need; the service limit itself is raised by a limit request (console or support), not by the stack.
"""

from __future__ import annotations

from collections.abc import Iterable

from accelstack.clouds.oci.catalog import ACCELERATED_INSTANCES, AVAILABILITY_DOMAINS, REGIONS, domain_labels
from accelstack.clouds.oci.quotas import LIMIT_NAMES

FAMILY = "compute-core"


def cap(quota: str, amount: int, compartment: str, region: str) -> str:
    """The side's cap on one GPU quota in one region: the planner's need, allocated to EACH availability domain of
    the region (a quota of an AD-scoped resource without `request.ad`: quota_policy_syntax.htm, Scope)."""
    return f"set {FAMILY} quota {quota} to {int(amount)} in compartment {compartment} where request.region = '{region}'"


def cap_in_domain(quota: str, amount: int, compartment: str, domains: list[str], domain: str) -> list[str]:
    """The side's exact cap on one GPU quota whose need is in one availability domain (a cluster network's): the
    need in `domain` and zero in each other domain of the region (`domains`, the tenancy's names, which
    `request.ad` takes). One statement per domain, none overlapping another, so no statement's order matters:
    Oracle documents no rule for how overlapping statements combine (quota_policy_syntax.htm says only that an
    AD-scoped quota without `request.ad` "is allocated to each AD"), so no region-wide zero under the cap."""
    where = "where request.ad = '{}'"
    statements = [f"set {FAMILY} quota {quota} to {int(amount)} in compartment {compartment} {where.format(domain)}"]
    statements.extend(f"{zero([quota], compartment)} {where.format(other)}" for other in domains if other != domain)
    return statements


def checked_domains(region: str, listed: list[str]) -> list[str]:
    """The tenancy's domain names for `region` (ListAvailabilityDomains), when they are the catalog's
    (catalog.AVAILABILITY_DOMAINS): the packs prove a per-domain cap by its zeros in each other domain the catalog
    counts, so a tenancy listing others would write statements they refuse. ValueError naming both lists."""
    expected = domain_labels(region) if region in AVAILABILITY_DOMAINS else None
    found = [name.rsplit(":", 1)[-1].upper() for name in listed]
    if expected is None or sorted(found) != expected:
        catalog = ", ".join(expected) if expected is not None else "none: the region is not in the catalog"
        raise ValueError(
            f"{region}: the tenancy lists availability domains {', '.join(listed) or 'none'}; accelstack's catalog "
            f"has {catalog} (accelstack/clouds/oci/catalog.py AVAILABILITY_DOMAINS): update the catalog"
        )
    return listed


def zero(quotas: Iterable[str], compartment: str, region: str | None = None) -> str:
    where = f" where request.region = '{region}'" if region else ""
    return f"zero {FAMILY} quotas {', '.join(quotas)} in compartment {compartment}{where}"


def region_guardrail(compartment: str, allowed_regions: Iterable[str]) -> list[str]:
    """OCI has no location policy: region subscriptions are tenancy-wide (docs.oracle.com/iaas/Content/Identity/
    regions/managingregions.htm) and a subscription cannot be ended. The closest wall per compartment is a quota:
    every compute-core quota zeroed in each region of the catalog outside the allowed ones (`request.region` takes
    `=` only in the documented grammar, so one statement per region)."""
    allowed = set(allowed_regions)
    return [zero(["/*/"], compartment, region) for region in REGIONS if region not in allowed]


def training_shape_quotas(families: Iterable[str]) -> list[str]:
    """The GPU quotas of the catalog's shapes in the training families whose limit name is known
    (accelstack.clouds.oci.quotas); a shape without one is not zeroed by a guessed name."""
    wanted = set(families)
    return sorted(
        {
            LIMIT_NAMES[name]
            for name, shape in ACCELERATED_INSTANCES.items()
            if shape.family in wanted and name in LIMIT_NAMES
        }
    )


def pack_context(allowed_regions: tuple[str, ...], training_families: tuple[str, ...]) -> dict[str, object]:
    """What landing-guardrails and landing-quota-caps hold the OCI quota policies to (policies/separation/
    landing_oci.py): the regions each compartment's quota zeroes compute in, the GPU quotas serving's zeroes, and
    each region's availability domains (where a per-domain cap's zeros go)."""
    return {
        "deniedRegions": [region for region in REGIONS if region not in set(allowed_regions)],
        "deniedQuotas": training_shape_quotas(training_families),
        # Each region's availability domains as their names end: a cap in one is proven by a zero in each other.
        "availabilityDomains": {region: domain_labels(region) for region in AVAILABILITY_DOMAINS},
    }
