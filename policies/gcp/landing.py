"""How GCP's landing guardrails read: the organization policies a landing stack sets on its folders, the custom
constraint the serving folder enforces, and the quota preferences it makes in each side's project.

Pure readers over exported properties (policies/separation/landing_rules.py judges where they sit). Constraint
names are Google's (cloud.google.com/resource-manager/docs/organization-policy/org-policy-constraints):
gcp.resourceLocations takes `in:<region>-locations` value groups, iam.allowedPolicyMemberDomains Workspace
customer ids; the custom constraint is components/gcp/landing.py's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..common import as_list

FOLDER = "gcp:organizations/folder:Folder"
LABEL_SIDE = "accelstack-side"  # a side's project and provider carry it (components/gcp/landing.py)
LOCATIONS = "gcp.resourceLocations"
MEMBER_DOMAINS = "iam.allowedPolicyMemberDomains"
SERVING_MACHINES = "custom.accelstackServingNoTrainingMachines"
INSTANCE_TYPE = "compute.googleapis.com/Instance"
# Each folder's custom constraint refusing allow policies that grant the other side's principals (components/gcp/
# landing.py); training's leaves out only the artifact read role.
NO_OTHER_SIDE = {
    "training": "custom.accelstackTrainingNoServingMembers",
    "serving": "custom.accelstackServingNoTrainingMembers",
}
ALLOW_POLICY_TYPE = "iam.googleapis.com/AllowPolicy"
ARTIFACT_READ_EXCEPTION = "!RoleNameMatches(binding.role, ['roles/storage.objectViewer']) && "
_LOCATION_GROUP = re.compile(r"^in:([a-z]+-[a-z]+[0-9]+)-locations$")
_DENIED_MACHINE = re.compile(r"resource\.machineType\.endsWith\('/machineTypes/([a-z0-9-]+)'\)")


def folder_side(display_name: Any) -> str | None:
    """The side a folder is, by the display name components/gcp/landing.py gives it (accelstack-<side>)."""
    if not isinstance(display_name, str):
        return None
    side = display_name.removeprefix("accelstack-")
    return side if side in ("training", "serving") and display_name != side else None


def constraint_of(policy_name: Any) -> str | None:
    """`folders/1/policies/gcp.resourceLocations` -> gcp.resourceLocations."""
    return (
        policy_name.rsplit("/policies/", 1)[1] if isinstance(policy_name, str) and "/policies/" in policy_name else None
    )


def _rules(spec: Any) -> list[Mapping[str, Any]]:
    return [
        r for r in as_list((spec or {}).get("rules") if isinstance(spec, Mapping) else None) if isinstance(r, Mapping)
    ]


def allowed_values(spec: Any) -> list[str] | None:
    """The one allow-list a list policy sets, or None when it sets anything else (allowAll, denials, conditions,
    or several rules: a rule with a condition can widen what another allows)."""
    rules = _rules(spec)
    if len(rules) != 1:
        return None
    rule = rules[0]
    if rule.get("allowAll") or rule.get("denyAll") or rule.get("condition"):
        return None
    values = rule.get("values")
    if not isinstance(values, Mapping) or values.get("deniedValues"):
        return None
    allowed = [str(v) for v in as_list(values.get("allowedValues"))]
    return allowed or None


def allowed_regions(spec: Any) -> set[str] | None:
    """The regions a gcp.resourceLocations policy allows, when every value is a region's value group; None otherwise
    (an `in:us-locations` multi-region group or a bare zone allows more than the regions it names)."""
    values = allowed_values(spec)
    if values is None:
        return None
    matches = [_LOCATION_GROUP.match(v) for v in values]
    return {m.group(1) for m in matches if m} if all(matches) else None


def enforced(spec: Any) -> bool:
    """A boolean (custom) constraint's policy enforces it unconditionally."""
    rules = _rules(spec)
    return bool(rules) and all(str(r.get("enforce", "")).upper() == "TRUE" and not r.get("condition") for r in rules)


def denied_machine_types(resource_types: Any, action_type: Any, method_types: Any, condition: Any) -> set[str]:
    """Machine types a custom constraint denies creating: a DENY on Compute Engine instances' CREATE whose
    condition is only `||`-joined machineType tests (anything else could narrow it)."""
    if action_type != "DENY" or INSTANCE_TYPE not in [str(t) for t in as_list(resource_types)]:
        return set()
    if "CREATE" not in [str(m) for m in as_list(method_types)] or not isinstance(condition, str):
        return set()
    terms = [term.strip() for term in condition.split("||")]
    matches = [_DENIED_MACHINE.fullmatch(term) for term in terms]
    return {m.group(1) for m in matches if m} if all(matches) else set()


def members_denial_problem(side: str, other_project: str, constraint: Mapping[str, Any]) -> str | None:
    """Why a side's member constraint does not refuse every grant to the other project's principals: a DENY on
    allow policies' CREATE and UPDATE whose condition is one `resource.bindings.exists(...)` naming the other
    project's service accounts, and, on training only, leaving out the artifact read role and nothing else."""
    if constraint.get("actionType") != "DENY":
        return f"is not a DENY (actionType {constraint.get('actionType')!r})"
    if ALLOW_POLICY_TYPE not in [str(t) for t in as_list(constraint.get("resourceTypes"))]:
        return f"does not judge {ALLOW_POLICY_TYPE}"
    if missing := {"CREATE", "UPDATE"} - {str(m) for m in as_list(constraint.get("methodTypes"))}:
        return f"does not judge {', '.join(sorted(missing))} of allow policies"
    condition = constraint.get("condition")
    if not isinstance(condition, str) or not condition.startswith("resource.bindings.exists(binding, "):
        return "has no condition over the policy's bindings"
    body = condition.removeprefix("resource.bindings.exists(binding, ")
    if side == "training":
        body = body.removeprefix(ARTIFACT_READ_EXCEPTION)
    if "&&" in body or "RoleNameMatches" in body:
        return "narrows the denial to some roles (only training may leave out roles/storage.objectViewer)"
    if f"'@{other_project}.iam.gserviceaccount.com'" not in body:
        return f"does not name {other_project}'s service accounts (@{other_project}.iam.gserviceaccount.com)"
    return None


def preference_key(dimensions: Any, quota_id: Any) -> tuple[str | None, str | None, str | None]:
    """(region, quota id, gpu family) a quota preference sets."""
    dims = dimensions if isinstance(dimensions, Mapping) else {}
    return dims.get("region"), quota_id if isinstance(quota_id, str) else None, dims.get("gpu_family")


def gpu_family(quota: str) -> str:
    """The gpu_family dimension of a GPU quota metric (accelstack.clouds.gcp.quotas.gpu_family)."""
    return quota.removeprefix("PREEMPTIBLE_").removesuffix("_GPUS")


def matching_need(needs: Iterable[Mapping[str, Any]], side: Any, key: tuple[Any, Any, Any]) -> Mapping[str, Any] | None:
    region, quota_id, family = key
    return next(
        (
            n
            for n in needs
            if n.get("side") == side
            and n.get("region") == region
            and n.get("quotaCode") == quota_id
            and gpu_family(str(n.get("quota", ""))) == family
        ),
        None,
    )
