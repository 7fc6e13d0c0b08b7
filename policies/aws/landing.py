"""How AWS's landing guardrails read: the service control policies a landing stack attaches to its OUs.

Pure readers over one SCP document (policies/separation/landing_rules.py judges where they are attached). An SCP
denies; what counts here is what a statement denies unconditionally or under the one condition the guardrail is
written with, exactly as AWS evaluates it (Organizations User Guide, "SCP syntax"): a statement with any other
condition denies less, and is not counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..common import as_list, statements

# What no account may do (components/aws/landing.py writes them; the packs hold the stack to them).
BASELINE_DENIES = frozenset(
    {"cloudtrail:DeleteTrail", "cloudtrail:StopLogging", "cloudtrail:UpdateTrail", "organizations:LeaveOrganization"}
)
SERVING_DENIED_CREATES = frozenset({"fsx:CreateFileSystem", "ec2:CreatePlacementGroup"})
SCP = "SERVICE_CONTROL_POLICY"


def _denies(statement: Mapping[str, Any]) -> bool:
    return statement.get("Effect") == "Deny"


def _all_resources(statement: Mapping[str, Any]) -> bool:
    return "*" in [str(r) for r in as_list(statement.get("Resource"))]


def _condition(statement: Mapping[str, Any]) -> dict[str, dict[str, list[str]]]:
    condition = statement.get("Condition") or {}
    if not isinstance(condition, Mapping):
        return {}
    return {
        str(op): {str(k): [str(v) for v in as_list(values)] for k, values in (block or {}).items()}
        for op, block in condition.items()
        if isinstance(block, Mapping)
    }


def denied_outside(document: Any) -> set[str] | None:
    """The Regions outside which the SCP denies everything but the global services (`NotAction`, or `*`), or None."""
    for statement in statements(document):
        condition = _condition(statement)
        regions = condition.get("StringNotEquals", {}).get("aws:RequestedRegion")
        everything = statement.get("NotAction") is not None or "*" in as_list(statement.get("Action"))
        if _denies(statement) and _all_resources(statement) and everything and regions and len(condition) == 1:
            return set(regions)
    return None


def denied_always(document: Any) -> set[str]:
    """Actions the SCP denies on every resource with no condition."""
    return {
        str(action)
        for statement in statements(document)
        if _denies(statement) and _all_resources(statement) and not statement.get("Condition")
        for action in as_list(statement.get("Action"))
    }


def denied_families(document: Any) -> set[str]:
    """Instance families (`p5` from `p5.*`) whose launch the SCP denies (ec2:RunInstances on ec2:InstanceType)."""
    found: set[str] = set()
    for statement in statements(document):
        actions = [str(a) for a in as_list(statement.get("Action"))]
        types = _condition(statement).get("StringLike", {}).get("ec2:InstanceType", [])
        if (
            _denies(statement)
            and ("ec2:RunInstances" in actions or "ec2:*" in actions)
            and len(_condition(statement)) == 1
        ):
            found |= {pattern.removesuffix(".*") for pattern in types if pattern.endswith(".*")}
    return found


def denies_internet_facing_load_balancers(document: Any) -> bool:
    for statement in statements(document):
        actions = [str(a) for a in as_list(statement.get("Action"))]
        scheme = _condition(statement).get("StringEquals", {}).get("elasticloadbalancing:Scheme")
        if (
            _denies(statement)
            and _all_resources(statement)
            and "elasticloadbalancing:CreateLoadBalancer" in actions
            and scheme == ["internet-facing"]
            and len(_condition(statement)) == 1
        ):
            return True
    return False


def denied_resource_accounts(document: Any) -> set[str]:
    """Accounts whose resources the SCP denies every action on (aws:ResourceAccount)."""
    found: set[str] = set()
    for statement in statements(document):
        accounts = _condition(statement).get("StringEquals", {}).get("aws:ResourceAccount", [])
        if _denies(statement) and "*" in as_list(statement.get("Action")) and len(_condition(statement)) == 1:
            found |= set(accounts)
    return found
