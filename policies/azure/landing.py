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

from ..common import as_list

MANAGEMENT_GROUP = "azure-native:management:ManagementGroup"
ALLOWED_LOCATIONS = "e56962a6-4747-49cd-b67b-bf8b01975c4c"
ALLOWED_VM_SKUS = "cccc23c7-8427-4f53-ad12-b6a63eb452b3"
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
