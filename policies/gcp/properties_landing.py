"""GCP's guarded landing kinds, property by property (a landing stack's organization: folders, projects,
organization policies and custom constraints, quota preferences, budgets): judged by the named pack rules, inert
with the reason, or unjudged with why it matters (policies/schema.py)."""

from __future__ import annotations

NAMING = "inert: naming and display only"
GUARDRAILS = "landing-guardrails"
QUOTA_CAPS = "landing-quota-caps"
LIFECYCLE = "unjudged: what destroying it does (a guardrail left behind, a project deleted)"
SPEND = "unjudged: what the budget counts and alerts on (a budget that never alerts)"

PROPERTIES: dict[str, dict[str, str]] = {
    # The side a folder is (components/gcp/landing.py names it accelstack-<side>): where each policy must be set.
    "gcp:organizations/folder:Folder": {"displayName": GUARDRAILS},
    "gcp:organizations/project:Project": {
        # Which folder (so which policies) the project lands in, and the side its labels say it is.
        "folderId": GUARDRAILS,
        "labels": GUARDRAILS,
        "name": NAMING,
    },
    "gcp:orgpolicy/policy:Policy": {"parent": GUARDRAILS, "name": GUARDRAILS, "spec": GUARDRAILS},
    "gcp:orgpolicy/customConstraint:CustomConstraint": {
        "actionType": GUARDRAILS,
        "condition": GUARDRAILS,
        "methodTypes": GUARDRAILS,
        "resourceTypes": GUARDRAILS,
        "name": GUARDRAILS,
        "description": NAMING,
        "displayName": NAMING,
    },
    "gcp:cloudquota/sQuotaPreference:SQuotaPreference": {
        "quotaConfig": QUOTA_CAPS,
        "dimensions": QUOTA_CAPS,
        "quotaId": QUOTA_CAPS,
        "parent": QUOTA_CAPS,
        "name": NAMING,
        "justification": "inert: text for the reviewer of the request",
        "contactEmail": "inert: who Google asks about the request",
    },
    "gcp:billing/budget:Budget": {"displayName": NAMING},
}
UNJUDGED: dict[str, dict[str, str]] = {
    "gcp:organizations/folder:Folder": {
        "parent": "unjudged: where the folder sits (the policies inherited from above it)",
        "deletionPolicy": LIFECYCLE,
        "deletionProtection": LIFECYCLE,
        "tags": "unjudged: Resource Manager tag bindings, which conditional organization policies can match",
    },
    "gcp:organizations/project:Project": {
        "autoCreateNetwork": "unjudged: the default network and its open firewall rules",
        "billingAccount": SPEND,
        "deletionPolicy": LIFECYCLE,
        "orgId": "unjudged: a project directly under the organization, outside both folders",
        "projectId": "unjudged: the project's id (the workload stacks' projectId)",
        "tags": "unjudged: Resource Manager tag bindings, which conditional organization policies can match",
    },
    "gcp:orgpolicy/policy:Policy": {
        "dryRunSpec": "unjudged: a dry-run policy only logs what it would deny",
        "deletionPolicy": LIFECYCLE,
    },
    "gcp:orgpolicy/customConstraint:CustomConstraint": {
        "parent": "unjudged: the organization the constraint is defined in",
        "deletionPolicy": LIFECYCLE,
    },
    "gcp:cloudquota/sQuotaPreference:SQuotaPreference": {
        "service": "unjudged: which service's quota (compute.googleapis.com for the GPU families)",
        "ignoreSafetyChecks": "unjudged: lets a preference drop below current usage",
    },
    "gcp:billing/budget:Budget": {
        "amount": SPEND,
        "billingAccount": SPEND,
        "allUpdatesRule": SPEND,
        "budgetFilter": SPEND,
        "deletionPolicy": LIFECYCLE,
        "ownershipScope": SPEND,
        "thresholdRules": SPEND,
    },
}
