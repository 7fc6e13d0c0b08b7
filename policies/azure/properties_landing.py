"""Azure's guarded landing kinds, property by property (a landing stack's organization: management groups,
subscription aliases, Azure Policy assignments, budgets): judged by the named pack rules, inert with the reason,
or unjudged with why it matters (policies/schema.py)."""

from __future__ import annotations

NAMING = "inert: naming and display only"
GUARDRAILS = "landing-guardrails"
SPEND = "unjudged: what the budget counts and alerts on (a budget that never alerts)"

PROPERTIES: dict[str, dict[str, str]] = {
    # The side a management group is (components/azure/landing.py names it accelstack-<side>).
    "azure-native:management:ManagementGroup": {"displayName": GUARDRAILS, "name": NAMING},
    # Which management group the subscription is created in, and the side its tags say it is.
    "azure-native:subscription:Alias": {"properties": GUARDRAILS},
    "azure-native:authorization:PolicyAssignment": {
        "scope": GUARDRAILS,
        "policyDefinitionId": GUARDRAILS,
        "enforcementMode": GUARDRAILS,
        "parameters": GUARDRAILS,
        # Each narrows where or what the assignment applies to: a guardrail with holes.
        "notScopes": GUARDRAILS,
        "overrides": GUARDRAILS,
        "resourceSelectors": GUARDRAILS,
        "displayName": NAMING,
        "description": NAMING,
        "policyAssignmentName": NAMING,
        "metadata": NAMING,
        "nonComplianceMessages": "inert: the text a denied caller reads",
    },
    "azure-native:consumption:Budget": {"budgetName": NAMING},
}
UNJUDGED: dict[str, dict[str, str]] = {
    "azure-native:management:ManagementGroup": {
        "details": "unjudged: where the group sits (the assignments inherited from above it)",
        "groupId": "unjudged: the group's id (its ARM name; the assignments' scope)",
    },
    "azure-native:subscription:Alias": {"aliasName": "unjudged: the alias, the subscription's create-once key"},
    "azure-native:authorization:PolicyAssignment": {
        "assignmentType": "unjudged: who manages the assignment (System, SystemHidden, Custom)",
        "definitionVersion": "unjudged: which version of the definition applies",
        "identity": "unjudged: the identity a deployIfNotExists or modify policy acts as (none for deny)",
        "location": "unjudged: where the assignment's managed identity lives",
    },
    "azure-native:consumption:Budget": {
        "amount": SPEND,
        "category": SPEND,
        "eTag": "unjudged: optimistic concurrency on updates",
        "filter": SPEND,
        "notifications": SPEND,
        "scope": SPEND,
        "timeGrain": SPEND,
        "timePeriod": SPEND,
    },
}
