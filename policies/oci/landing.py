"""How OCI's landing guardrails read: the quota statements a landing stack writes for each side's compartment.

Pure readers over exported properties (policies/separation/landing_oci.py judges them). The grammar is OCI's
(https://docs.oracle.com/iaas/Content/Quotas/Concepts/quota_policy_syntax.htm): `set <family> quota <name> to
<value> in compartment <path> [where <condition>]`, `zero <family> quotas <name>, ... in compartment <path>
[where ...]`, `unset ...`; conditions on request.region and request.ad. components/oci/landing.py writes them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

COMPARTMENT = "oci:Identity/compartment:Compartment"
GROUP = "oci:Identity/group:Group"
QUOTA = "oci:Limits/quota:Quota"
POLICY = "oci:Identity/policy:Policy"
DYNAMIC_GROUP = "oci:Identity/dynamicGroup:DynamicGroup"
TAG_SIDE = "accelstack-side"  # the compartments', groups' and quotas' free-form tag (components/oci/landing.py)
FAMILY = "compute-core"  # the GPU and core counts' quota family
EVERY_QUOTA = "/*/"  # a wildcard naming every quota of the family
# What the serving deploy group may not be granted: everything, the cluster networks and File Storage (with
# Lustre) that training runs on (docs.oracle.com/iaas/Content/Identity/Reference/corepolicyreference.htm,
# filestoragepolicyreference.htm).
SERVING_DENIED = frozenset(
    {
        "all-resources",
        "cluster-networks",
        "compute-management-family",
        "file-family",
        "file-systems",
        "mount-targets",
        "export-sets",
        "lustre-file-family",
        "lustre-file-systems",
    }
)
# What no side's deploy group may be granted: the identities OCI keeps in the tenancy. With dynamic groups a
# deployer could write one matching the other side's instances; the landing stack makes each side's nodes group.
DEPLOYER_DENIED = frozenset({"dynamic-groups", "groups", "users", "domains", "identity-providers"})
_QUOTA = re.compile(
    r"^\s*(?P<action>set|zero|unset)\s+(?P<family>[a-z0-9-]+)\s+quotas?\s+(?P<names>.+?)"
    r"(?:\s+to\s+(?P<value>-?[0-9]+))?\s+in\s+(?:(?P<tenancy>tenancy)|compartment\s+(?P<compartment>\S+))"
    r"(?:\s+where\s+(?P<where>.+?))?\s*$",
    re.IGNORECASE,
)
_REGION = re.compile(r"^request\.region\s*=\s*'(?P<region>[a-z0-9-]+)'$", re.IGNORECASE)
# An availability domain as the tenancy names it: a tenancy prefix, the region's key and the domain's number
# (Uocm:US-ASHBURN-AD-1; Identity API ListAvailabilityDomains).
_DOMAIN = re.compile(r"^request\.ad\s*=\s*'(?P<domain>[A-Za-z0-9]+:[A-Za-z0-9-]+-AD-[0-9]+)'$", re.IGNORECASE)


@dataclass(frozen=True)
class QuotaStatement:
    text: str
    action: str = ""
    family: str = ""
    names: tuple[str, ...] = ()
    value: int | None = None
    compartment: str | None = None  # the path the statement names; None: the tenancy
    region: str | None = None  # request.region = <region>; None: every region (or the domain's)
    domain: str | None = None  # request.ad = <availability domain>; None: each domain (of the region)
    unparsed: str = ""  # why it could not be read ("" when it was)

    @property
    def compartment_name(self) -> str | None:
        """The named compartment's own name (the last segment of its path)."""
        return self.compartment.rsplit(":", 1)[-1] if self.compartment else None


def parse_quota(text: str) -> QuotaStatement:
    match = _QUOTA.match(text)
    if match is None:
        return QuotaStatement(text, unparsed="not a set, zero or unset statement the packs can read")
    names = tuple(n.strip() for n in match["names"].split(",") if n.strip())
    where = match["where"]
    region = domain = None
    if where is not None:
        condition, in_domain = _REGION.match(where.strip()), _DOMAIN.match(where.strip())
        if condition is None and in_domain is None:
            return QuotaStatement(text, unparsed=f"a condition the packs cannot read: {where!r}")
        region = condition["region"] if condition else None
        domain = in_domain["domain"] if in_domain else None
    action = match["action"].lower()
    if (action == "set") != (match["value"] is not None):
        return QuotaStatement(text, unparsed="set takes a value (to <n>), zero and unset none")
    return QuotaStatement(
        text,
        action=action,
        family=match["family"].lower(),
        names=names,
        value=int(match["value"]) if match["value"] is not None else None,
        compartment=match["compartment"],
        region=region,
        domain=domain,
    )


def domain_label(domain: str) -> str:
    """A domain's name without the tenancy's prefix, as the catalog lists it: Uocm:US-ASHBURN-AD-1 -> US-ASHBURN-AD-1
    (the config's availabilityDomains, accelstack/clouds/oci/catalog.py)."""
    return domain.rsplit(":", 1)[-1].upper()
