"""How Azure's landing guardrails read: the Azure Policy assignments a landing stack makes at its management
groups, and where its subscriptions are placed.

Pure readers over exported properties (policies/separation/landing_rules.py judges where they sit). The
definitions are Azure's built-ins (learn.microsoft.com/azure/governance/policy/samples/built-in-policies):
"Allowed locations" takes listOfAllowedLocations, "Allowed virtual machine size SKUs" listOfAllowedSKUs; an
assignment whose enforcementMode is DoNotEnforce only audits (learn.microsoft.com/azure/governance/policy/
concepts/assignment-structure#enforcement-mode). components/azure/landing.py makes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..common import as_list, decode

MANAGEMENT_GROUP = "azure-native:management:ManagementGroup"
ALLOWED_LOCATIONS = "e56962a6-4747-49cd-b67b-bf8b01975c4c"
ALLOWED_VM_SKUS = "cccc23c7-8427-4f53-ad12-b6a63eb452b3"
# The custom definition refusing role assignments to listed principals (components/azure/landing.py), its parameter.
DENIED_PRINCIPALS_PARAMETER = "deniedPrincipalIds"
ROLE_ASSIGNMENT_TYPE = "microsoft.authorization/roleassignments"
PRINCIPAL_ALIAS = "microsoft.authorization/roleassignments/principalid"
# What exempts scopes or resources from an assignment, or overrides its effect (assignment structure).
NARROWING = ("notScopes", "overrides", "resourceSelectors")
TAG_SIDE = "accelstack-side"  # a subscription alias's tags (Azure tag keys take ':' too; ours match GCP's label)


def definition_of(definition_id: Any) -> str | None:
    """`/providers/Microsoft.Authorization/policyDefinitions/<guid>` -> the built-in's guid (lowercase)."""
    if not isinstance(definition_id, str) or "/policydefinitions/" not in definition_id.lower():
        return None
    return definition_id.rsplit("/", 1)[-1].lower()


def enforced(mode: Any) -> bool:
    """Default (or unset, which Azure reads as Default) enforces; DoNotEnforce only reports."""
    return mode is None or str(mode) == "Default"


def parameter_list(parameters: Any, name: str) -> list[str] | None:
    """The list an assignment passes to the definition's `name` parameter ({name: {value: [...]}}), or None."""
    if not isinstance(parameters, Mapping):
        return None
    entry = parameters.get(name)
    value = entry.get("value") if isinstance(entry, Mapping) else None
    if value is None or isinstance(value, (str, Mapping)):
        return None
    return [str(v) for v in as_list(value)]


def alias_placement(properties: Any) -> tuple[Any, dict[str, str]]:
    """(managementGroupId, tags) a subscription alias is created with (properties.additionalProperties)."""
    extra = properties.get("additionalProperties") if isinstance(properties, Mapping) else None
    if not isinstance(extra, Mapping):
        return None, {}
    tags = extra.get("tags")
    return extra.get("managementGroupId"), {str(k): str(v) for k, v in tags.items()} if isinstance(
        tags, Mapping
    ) else {}


def principal_denial_problem(policy_rule: Any, mode: Any) -> str | None:
    """Why a custom definition's rule does not refuse every role assignment to the principals its parameter lists:
    it must be `if allOf [type equals roleAssignments, principalId in [parameters('deniedPrincipalIds')]] then
    deny` and nothing more (another condition narrows it; audit only reports), in mode All: "Indexed" evaluates only
    types that take tags and a location, which role assignments do not (learn.microsoft.com/azure/governance/policy/
    concepts/definition-structure-basics#mode)."""
    if str(mode or "") != "All":
        return f"is in mode {mode!r}, not All (role assignments take no tags or location: Indexed skips them)"
    policy_rule = decode(policy_rule)  # a JSON string, or a proxy of the object: plain dicts and lists either way
    if not isinstance(policy_rule, Mapping):
        return "has no policy rule"
    effect = policy_rule.get("then")
    if not isinstance(effect, Mapping) or str(effect.get("effect", "")).lower() != "deny":
        return "does not deny (its effect only reports or changes nothing)"
    condition = policy_rule.get("if")
    terms = condition.get("allOf") if isinstance(condition, Mapping) else None
    if not isinstance(terms, list) or len(terms) != 2 or not all(isinstance(t, Mapping) for t in terms):
        return "has a condition other than the role assignment's type and principal (it narrows the deny)"
    by_field = {str(t.get("field", "")).lower(): t for t in terms}
    kind, principal = by_field.get("type"), by_field.get(PRINCIPAL_ALIAS)
    if kind is None or str(kind.get("equals", "")).lower() != ROLE_ASSIGNMENT_TYPE:
        return "does not judge role assignments (type Microsoft.Authorization/roleAssignments)"
    if principal is None or str(principal.get("in", "")) != f"[parameters('{DENIED_PRINCIPALS_PARAMETER}')]":
        return f"does not test the principal id against [parameters('{DENIED_PRINCIPALS_PARAMETER}')]"
    return None
