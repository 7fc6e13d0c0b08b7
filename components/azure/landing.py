"""Azure landing parts: a management group and a subscription (alias) per side, Azure Policy assignments, budgets.

Deployed from the management subscription (its provider); the caller needs Management Group Contributor on the
parent management group and a subscription-creator role on the billing scope (Microsoft Learn, "Programmatically
create Azure subscriptions with the latest APIs"). Input names and required fields are pulumi_azure_native's
(management/management_group.py, subscription/alias.py, management/management_group_subscription.py,
authorization/policy_assignment.py, consumption/budget.py).

Quota: azure-native has no per-subscription quota request resource (quota/group_quota.py allocates a management
group's group quota, which needs a separate enrollment), so the planner's needs are a documented manual step:
`az quota create` per side, region and VM family, printed by `quota_commands` and logged at preview.
"""

from __future__ import annotations

import re

import pulumi
import pulumi_azure_native as azure_native
import pulumiverse_time as time

from accelstack.clouds import registry
from accelstack.clouds.azure.quotas import quota_request_command
from accelstack.components.recipes.landing import LandedAccount, LandingParts, LandingRecipe
from accelstack.planner.landing_plan import LandingPlan, QuotaNeed
from accelstack.spec.accounts import AzureAccount
from accelstack.spec.landing import SIDES, LandingStack

# Built-in policy definitions (Microsoft Learn, "Azure Policy built-in policy definitions", General and Compute).
ALLOWED_LOCATIONS = "/providers/Microsoft.Authorization/policyDefinitions/e56962a6-4747-49cd-b67b-bf8b01975c4c"
ALLOWED_VM_SKUS = "/providers/Microsoft.Authorization/policyDefinitions/cccc23c7-8427-4f53-ad12-b6a63eb452b3"
MANAGEMENT_GROUPS = "/providers/Microsoft.Management/managementGroups/"
# Role assignments are Azure Policy resources (type Microsoft.Authorization/roleAssignments, alias .../principalId):
# a deny refuses the PUT at the ARM API. An Entra object id carries no subscription, so no rule can say "any
# principal of the other subscription": the definition takes the ids each side lists (organization.<side>.principals).
DENY_PRINCIPALS = "accelstack-deny-role-assignments-to"
DENIED_PRINCIPALS_PARAMETER = "deniedPrincipalIds"
DENY_PRINCIPALS_RULE = {
    "if": {
        "allOf": [
            {"field": "type", "equals": "Microsoft.Authorization/roleAssignments"},
            {
                "field": "Microsoft.Authorization/roleAssignments/principalId",
                "in": f"[parameters('{DENIED_PRINCIPALS_PARAMETER}')]",
            },
        ]
    },
    "then": {"effect": "deny"},
}
# Budget notifications: as AWS's and GCP's, 80% actual and 100% forecast (consumption/_inputs.py NotificationArgs).
BUDGET_ALERTS = (("actual80", 80.0, "Actual"), ("forecast100", 100.0, "Forecasted"))
# A Cost budget starts on the first of a month, and a past start must fall within the current time grain (Microsoft
# Learn, Budgets - Create Or Update, BudgetTimePeriod.startDate): a fixed date is refused from its second month on.
# Each budget starts on the first of the month its clock was created in (a time_static, kept in state, so later `up`s
# send the same date); the clock is replaced with the budget (same triggers), so a re-created budget starts anew.


def budget_start(clock_rfc3339: str) -> str:
    """The first of the clock's month, as the budget API takes it: 2026-12-05T12:00:00Z -> 2026-12-01T00:00:00Z."""
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}T.*", clock_rfc3339):
        raise ValueError(f"a time_static answers RFC 3339, not {clock_rfc3339!r}")
    return f"{clock_rfc3339[:7]}-01T00:00:00Z"


def group_name(prefix: str, side: str) -> str:
    """The side's management group id (letters, digits, '-', up to 90): what the packs find its side by."""
    return f"{prefix}-{side}"


def serving_skus(families: tuple[str, ...]) -> list[str]:
    """The VM sizes the serving side may run: the catalog's, less the training families the planner picks."""
    catalog = registry.get("azure").catalog
    return sorted(name for name, vm in catalog.instances.items() if vm.family not in families)


def quota_commands(needs: list[QuotaNeed]) -> list[str]:
    """The manual quota step, one `az quota create` per need (the subscription id is the landing output)."""
    return [quota_request_command(f"<{need.side}AccountId>", need.region, need.quota, need.amount) for need in needs]


class AzureLandingParts(LandingParts):
    """The Azure landing resources (pulumi_azure_native.management, subscription, authorization, consumption)."""

    _time: time.Provider | None = None  # one explicit time provider (Pulumi.yaml denies default providers)

    def group(self, side: str) -> azure_native.management.ManagementGroup:
        return azure_native.management.ManagementGroup(
            f"{self.prefix}-{side}",
            # group_id is the management group's name in its ARM id; changing it replaces the group.
            group_id=group_name(self.prefix, side),
            display_name=f"accelstack-{side}",
            details=azure_native.management.CreateManagementGroupDetailsArgs(
                parent=azure_native.management.CreateParentGroupInfoArgs(
                    id=MANAGEMENT_GROUPS + self.spec.organization.parent_id
                )
            ),
            opts=self.opts,
        )

    def _assign(
        self,
        side: str,
        group: pulumi.CustomResource,
        name: str,
        definition: pulumi.Input[str],
        values: dict[str, list[str]],
    ) -> azure_native.authorization.PolicyAssignment:
        return azure_native.authorization.PolicyAssignment(
            f"{self.prefix}-{side}-{name}",
            # Assignment names at management-group scope: at most 24 characters (Microsoft Learn, "Azure Policy
            # assignment structure").
            policy_assignment_name=f"acc-{side[:5]}-{name}"[:24],
            scope=group.id,
            policy_definition_id=definition,
            display_name=f"accelstack {side}: {name}",
            # Default enforces; written so no edit drops it (DoNotEnforce only audits).
            enforcement_mode="Default",
            parameters={
                key: azure_native.authorization.ParameterValuesValueArgs(value=value) for key, value in values.items()
            },
            opts=self.opts,
        )

    def guardrails(self, groups: dict[str, pulumi.CustomResource]) -> list[pulumi.Resource]:
        made: list[pulumi.Resource] = [
            self._assign(
                side,
                groups[side],
                "locations",
                ALLOWED_LOCATIONS,
                {"listOfAllowedLocations": list(self.spec.organization.allowed_regions)},
            )
            for side in SIDES
        ]
        made.append(
            self._assign(
                "serving",
                groups["serving"],
                "vm-skus",
                ALLOWED_VM_SKUS,
                {"listOfAllowedSKUs": serving_skus(self.plan.training_families)},
            )
        )
        return made

    def account(self, side: str, group: pulumi.CustomResource, after: list[pulumi.Resource]) -> LandedAccount:
        name = self.spec.side(side).account.name
        alias = azure_native.subscription.Alias(
            f"{self.prefix}-{side}-subscription",
            # The alias name is the subscription's create-once key: a new one creates another subscription.
            alias_name=name,
            properties=azure_native.subscription.PutAliasRequestPropertiesArgs(
                display_name=name,
                billing_scope=self.spec.organization.billing_scope,
                workload="Production",
                # Created straight into the side's management group, under its guardrails.
                additional_properties=azure_native.subscription.PutAliasRequestAdditionalPropertiesArgs(
                    management_group_id=group.id,
                    tags={"accelstack-side": side, "accelstack-workload": "landing", "accelstack-stack": self.prefix},
                ),
            ),
            # Deleting the alias does not cancel the subscription, but a replace would create a second one.
            opts=pulumi.ResourceOptions.merge(self.opts, pulumi.ResourceOptions(protect=True, depends_on=after)),
        )
        subscription_id: pulumi.Output[str] = alias.properties.apply(lambda p: p.subscription_id)
        if needs := self.plan.side_needs(side):
            pulumi.log.info(
                f"{self.prefix}: the {side} subscription's quota is a manual step; after `pulumi up`, run: "
                + "; ".join(quota_commands(needs))
            )
        return LandedAccount(side, subscription_id, None, alias)

    def apart(
        self, groups: dict[str, pulumi.CustomResource], accounts: dict[str, LandedAccount]
    ) -> list[pulumi.Resource]:
        """Each side's management group refuses, at the ARM API, role assignments to the principals the other side
        lists (a custom definition at the parent group, assigned at each side's group). A side that lists none is
        said at preview: its principals are then kept out by the workload packs only (policies/separation)."""
        definition = azure_native.authorization.PolicyDefinitionAtManagementGroup(
            f"{self.prefix}-deny-principals",
            management_group_id=self.spec.organization.parent_id,
            policy_definition_name=DENY_PRINCIPALS,
            policy_type="Custom",
            mode="All",
            display_name="accelstack: no role assignments to the other side's principals",
            parameters={
                DENIED_PRINCIPALS_PARAMETER: azure_native.authorization.ParameterDefinitionsValueArgs(
                    type="Array",
                    metadata=azure_native.authorization.ParameterDefinitionsValueMetadataArgs(
                        display_name="Object ids of the other side's principals"
                    ),
                )
            },
            policy_rule=DENY_PRINCIPALS_RULE,
            opts=self.opts,
        )
        made: list[pulumi.Resource] = [definition]
        for side in SIDES:
            other = "serving" if side == "training" else "training"
            denied = list(self.spec.side(other).principals)
            if not denied:
                pulumi.log.warn(
                    f"{self.prefix}: organization.{other}.principals lists no object ids, so the {side} management "
                    f"group cannot deny role assignments to {other}'s principals at the API; list them and `up` again"
                )
                continue
            made.append(
                self._assign(
                    side,
                    groups[side],
                    f"no-{other}-ids",
                    # The definition's id at the parent group, from its output so the assignment waits for it.
                    definition.id,
                    {DENIED_PRINCIPALS_PARAMETER: denied},
                )
            )
        return made

    def budget_clock(self, side: str, scope: pulumi.Output[str], budget_name: str) -> time.Static:
        """The instant the side's budget is first created; replaced (triggers) when the budget would be."""
        if self._time is None:
            self._time = time.Provider(f"{self.prefix}-time", opts=pulumi.ResourceOptions(parent=self.opts.parent))
        return time.Static(
            f"{self.prefix}-{side}-budget-clock",
            triggers={"scope": scope, "budgetName": budget_name},
            opts=pulumi.ResourceOptions(parent=self.opts.parent, provider=self._time),
        )

    def inside(self, account: LandedAccount, needs: list[QuotaNeed]) -> list[pulumi.Resource]:
        org = self.spec.organization
        side = self.spec.side(account.side)
        scope = pulumi.Output.concat("/subscriptions/", account.account_id)
        budget_name = f"accelstack-{account.side}"
        clock = self.budget_clock(account.side, scope, budget_name)
        return [
            clock,
            azure_native.consumption.Budget(
                f"{self.prefix}-{account.side}-budget",
                budget_name=budget_name,
                scope=scope,
                amount=side.monthly_budget_usd,
                category="Cost",
                time_grain="Monthly",
                time_period=azure_native.consumption.BudgetTimePeriodArgs(start_date=clock.rfc3339.apply(budget_start)),
                notifications={
                    key: azure_native.consumption.NotificationArgs(
                        enabled=True,
                        operator="GreaterThanOrEqualTo",
                        threshold=threshold,
                        threshold_type=kind,
                        contact_emails=list(org.alert_emails),
                    )
                    for key, threshold, kind in BUDGET_ALERTS
                },
                opts=pulumi.ResourceOptions.merge(self.opts, pulumi.ResourceOptions(depends_on=[account.resource])),
            ),
        ]


def build_landing(spec: LandingStack, plan: LandingPlan) -> LandingRecipe:
    """The landing stack, from the management subscription (the provider pinned to it)."""
    account = spec.account
    if not isinstance(account, AzureAccount):
        raise TypeError(f"stack {spec.stack}: an Azure landing stack needs an Azure account block")
    root = pulumi.ComponentResource("accelstack:azure:LandingStack", spec.stack)
    provider = azure_native.Provider(
        f"{spec.stack}-azure",
        subscription_id=account.subscription_id,
        tenant_id=account.tenant_id,
        location=account.region,
        client_id=account.deploy_identity,
        opts=pulumi.ResourceOptions(parent=root),
    )
    parts = AzureLandingParts(spec, plan, pulumi.ResourceOptions(parent=root, provider=provider))
    return LandingRecipe(spec.stack, parts, pulumi.ResourceOptions(parent=root))
