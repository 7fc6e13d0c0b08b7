"""AWS's guarded kinds, property by property (a landing stack's organization: OUs, member accounts, service control
policies and their attachments, quota requests, budgets): judged by the named pack rules, inert with the reason, or
unjudged with why it matters (policies/schema.py)."""

from __future__ import annotations

NAMING = "inert: naming and display only"
TAGS = "inert: tags and labels: metadata (workload-tags reads accelstack's own keys)"
GUARDRAILS = "landing-guardrails"
QUOTA_CAPS = "landing-quota-caps"
LIFECYCLE = "what destroying it does (a guardrail left behind, an account closed)"
SPEND = "what the budget counts and alerts on (a budget that never alerts)"

PROPERTIES: dict[str, dict[str, str]] = {
    "aws:organizations/organizationalUnit:OrganizationalUnit": {
        "name": NAMING,
        # The side an OU is: where each guardrail must be attached (components/aws/landing.py tags it).
        "tags": f"{GUARDRAILS}, workload-tags",
    },
    "aws:organizations/account:Account": {
        "name": NAMING,
        "tags": "workload-tags",
        # Which OU (so which guardrails) the account lands in, and its id (whose side the cross-side SCP names).
        "parentId": GUARDRAILS,
    },
    "aws:organizations/policy:Policy": {
        "content": GUARDRAILS,
        "type": GUARDRAILS,
        "description": NAMING,
        "name": NAMING,
        "tags": "workload-tags",
    },
    "aws:organizations/policyAttachment:PolicyAttachment": {
        "policyId": GUARDRAILS,
        "targetId": GUARDRAILS,
    },
    "aws:servicequotas/serviceQuota:ServiceQuota": {
        "quotaCode": QUOTA_CAPS,
        "value": QUOTA_CAPS,
        "region": QUOTA_CAPS,
    },
    "aws:budgets/budget:Budget": {
        "name": NAMING,
        "namePrefix": NAMING,
        "tags": "workload-tags",
    },
}
UNJUDGED: dict[str, dict[str, str]] = {
    "aws:organizations/organizationalUnit:OrganizationalUnit": {
        "parentId": "unjudged: where the OU sits in the organization (the guardrails inherited from above it)",
    },
    "aws:organizations/account:Account": {
        "email": "unjudged: the root user's address (who can recover the account)",
        "closeOnDeletion": LIFECYCLE,
        "createGovcloud": "unjudged: a GovCloud twin account, outside the organization's guardrails",
        "iamUserAccessToBilling": "unjudged: whether IAM users may read and change billing",
        "roleName": "unjudged: the role the management account administers the account through (the deploy role)",
    },
    "aws:organizations/policy:Policy": {"skipDestroy": LIFECYCLE},
    "aws:organizations/policyAttachment:PolicyAttachment": {"skipDestroy": LIFECYCLE},
    "aws:servicequotas/serviceQuota:ServiceQuota": {
        "serviceCode": "unjudged: which service's quota (ec2 for the GPU families)",
    },
    "aws:budgets/budget:Budget": {
        "budgetType": SPEND,
        "timeUnit": SPEND,
        "accountId": SPEND,
        "autoAdjustData": SPEND,
        "billingViewArn": SPEND,
        "costFilters": SPEND,
        "costTypes": SPEND,
        "filterExpression": SPEND,
        "limitAmount": SPEND,
        "limitUnit": SPEND,
        "metrics": SPEND,
        "notifications": SPEND,
        "plannedLimits": SPEND,
        "timePeriodEnd": SPEND,
        "timePeriodStart": SPEND,
    },
}
