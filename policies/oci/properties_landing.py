"""OCI's guarded landing kinds, property by property (a landing stack's organization: compartments, deploy groups,
quota policies, budgets): judged by the named pack rules, inert with the reason, or unjudged with why it matters
(policies/schema.py). The deploy groups' policies are identity-grant's (policies/oci/properties.py)."""

from __future__ import annotations

NAMING = "inert: naming and display only"
GUARDRAILS = "landing-guardrails"
BOTH = "landing-guardrails, landing-quota-caps"
SPEND = "unjudged: what the budget counts and alerts on (a budget that never alerts)"

PROPERTIES: dict[str, dict[str, str]] = {
    # The side a compartment is (its free-form tag), what its quota statements name (its name) and whether a
    # destroy deletes it.
    "oci:Identity/compartment:Compartment": {
        "freeformTags": GUARDRAILS,
        "name": GUARDRAILS,
        "enableDelete": GUARDRAILS,
        "description": NAMING,
        "definedTags": NAMING,
    },
    "oci:Identity/group:Group": {
        "freeformTags": GUARDRAILS,
        "name": "inert: the grants name the group by its OCID",
        "description": NAMING,
        "definedTags": NAMING,
    },
    "oci:Limits/quota:Quota": {
        "statements": BOTH,
        "freeformTags": BOTH,
        "name": NAMING,
        "description": NAMING,
        "definedTags": NAMING,
    },
    "oci:Budget/budget:Budget": {"displayName": NAMING, "description": NAMING, "definedTags": NAMING},
}
UNJUDGED: dict[str, dict[str, str]] = {
    "oci:Identity/compartment:Compartment": {
        "compartmentId": "unjudged: where the compartment sits (the quotas and policies inherited from above it)",
    },
    "oci:Identity/group:Group": {"compartmentId": "unjudged: groups live in the tenancy (the root compartment)"},
    "oci:Limits/quota:Quota": {
        "compartmentId": "unjudged: quota policies live in the root compartment; the statements name what they cover",
        "locks": "unjudged: who may edit or delete the quota policy",
    },
    "oci:Budget/budget:Budget": {
        key: SPEND
        for key in (
            "amount",
            "budgetProcessingPeriodStartOffset",
            "compartmentId",
            "endDate",
            "freeformTags",
            "processingPeriodType",
            "resetPeriod",
            "startDate",
            "systemTags",
            "targetCompartmentId",
            "targetType",
            "targets",
        )
    },
}
