"""GCP landing parts: a folder and a project per side, organization policies, GPU quota preferences, budgets.

Deployed from the landing stack's own project (its provider; the caller needs Folder Creator, Project Creator,
Organization Policy Administrator and Billing Account User on the parent, organization and billing account).
Input names and required fields are pulumi_gcp's (organizations/folder.py, organizations/project.py,
orgpolicy/policy.py, orgpolicy/custom_constraint.py, cloudquota/s_quota_preference.py, billing/budget.py).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pulumi
import pulumi_gcp as gcp

from accelstack.clouds.gcp.quotas import GPU_FAMILY_DIMENSION, SERVICE, gpu_family
from accelstack.components.recipes.landing import LandedAccount, LandingParts, LandingRecipe
from accelstack.planner.landing_plan import LandingPlan, QuotaNeed
from accelstack.spec.accounts import GcpAccount
from accelstack.spec.landing import SIDES, LandingStack

LABEL_SIDE = "accelstack-side"  # GCP label keys take no ':' (the packs find each side's folder by it)
# What a side's project enables at creation: Compute Engine (its GPU quotas exist only once it is on), the Cloud
# Quotas API the quota preferences are made through, and the Budget and Monitoring APIs the budget and its alert
# channels are created with (the side's project is their quota project). The workload stacks enable the rest
# themselves (components/gcp/apis.py).
PROJECT_SERVICES = (
    "compute.googleapis.com",
    "cloudquotas.googleapis.com",
    "billingbudgets.googleapis.com",
    "monitoring.googleapis.com",
)
# List constraints (cloud.google.com/resource-manager/docs/organization-policy/org-policy-constraints):
# gcp.resourceLocations takes value groups ("in:us-central1-locations", cloud.google.com/resource-manager/docs/
# organization-policy/defining-locations#value_groups); iam.allowedPolicyMemberDomains takes Workspace customer
# ids (cloud.google.com/resource-manager/docs/organization-policy/restricting-domains).
LOCATIONS = "gcp.resourceLocations"
MEMBER_DOMAINS = "iam.allowedPolicyMemberDomains"
# Custom constraints are named custom.<camelCase> (cloud.google.com/resource-manager/docs/organization-policy/
# creating-managing-custom-constraints); Compute Engine's Instance supports them on resource.machineType
# (cloud.google.com/compute/docs/access/custom-constraints).
SERVING_MACHINES = "custom.accelstackServingNoTrainingMachines"
INSTANCE_TYPE = "compute.googleapis.com/Instance"
BUDGET_ALERTS = ((0.8, "CURRENT_SPEND"), (1.0, "FORECASTED_SPEND"))  # as AWS's: 80% actual, 100% forecast
# Who may be granted roles, at the API: custom constraints on IAM allow policies (resource type
# iam.googleapis.com/AllowPolicy, CREATE and UPDATE of any allow policy under the folder, buckets' included;
# cloud.google.com/iam/docs/org-policy-custom-constraints). An IAM deny policy cannot do it: it denies permissions,
# not grants, and names no "every service account of a project" principal set (iam/docs/principal-identifiers).
ALLOW_POLICY_TYPE = "iam.googleapis.com/AllowPolicy"
NO_OTHER_SIDE = {
    "training": "custom.accelstackTrainingNoServingMembers",
    "serving": "custom.accelstackServingNoTrainingMembers",
}
# The one role serving's principals may hold in training's folder: reading the published models (the bucket binding
# components/gcp/serving/identity.py makes, its condition limiting it to the artifact prefix).
ARTIFACT_READ_ROLE = "roles/storage.objectViewer"


def location_values(regions: list[str]) -> list[str]:
    return [f"in:{region}-locations" for region in regions]


def members_condition(project_id: str, project_number: str, except_role: str | None) -> str:
    """CEL matching an allow policy that grants a role to a principal of the project: its user-managed service
    accounts (<name>@<id>.iam.gserviceaccount.com), its Compute Engine default and Google-managed service agents
    (by number), GKE workload identity (<id>.svc.id.goog) and its workload identity pools; `except_role` is left out."""
    suffixes = [f"@{project_id}.iam.gserviceaccount.com"]
    prefixes = [
        f"serviceAccount:{project_number}-compute@",
        f"serviceAccount:service-{project_number}@",
        f"serviceAccount:{project_id}.svc.id.goog[",
        f"principal://iam.googleapis.com/projects/{project_number}/",
        f"principalSet://iam.googleapis.com/projects/{project_number}/",
    ]
    member = (
        f"binding.members.exists(member, MemberSubjectEndsWith(member, {suffixes!r}) || "
        f"MemberSubjectStartsWith(member, {prefixes!r}))"
    )
    role = f"!RoleNameMatches(binding.role, [{except_role!r}]) && " if except_role else ""
    return f"resource.bindings.exists(binding, {role}{member})"


def _condition_for(project_id: str, except_role: str | None) -> Callable[[str], str]:
    """`members_condition` for one project, once its number is known."""
    return lambda number: members_condition(project_id, str(number), except_role)


def machine_condition(machine_types: tuple[str, ...]) -> str:
    """CEL denying the machine types: machineType is a (partial) URL ending in machineTypes/<name>."""
    return " || ".join(f"resource.machineType.endsWith('/machineTypes/{name}')" for name in machine_types)


def budget_money(usd: float) -> dict[str, Any]:
    """google.type.Money of a budget: whole units and, where the amount has cents, nanos of the same sign
    (billing/_inputs.py BudgetAmountSpecifiedAmountArgs); units alone would drop a budget's cents (0.5 -> 0)."""
    amount = Decimal(str(usd))
    units = int(amount)
    nanos = int(((amount - units) * 10**9).to_integral_value())
    return {"units": str(units), **({"nanos": nanos} if nanos else {})}


class GcpLandingParts(LandingParts):
    """The GCP landing resources (pulumi_gcp.organizations, orgpolicy, projects, cloudquota, billing)."""

    def __init__(self, spec: LandingStack, plan: LandingPlan, opts: pulumi.ResourceOptions):
        super().__init__(spec, plan, opts)
        self.services: dict[str, list[gcp.projects.Service]] = {}
        self.providers: dict[str, gcp.Provider] = {}
        self.audit_logs: dict[str, gcp.projects.IAMAuditConfig] = {}

    def group(self, side: str) -> gcp.organizations.Folder:
        return gcp.organizations.Folder(
            f"{self.prefix}-{side}",
            display_name=f"accelstack-{side}",
            parent=self.spec.organization.parent_id,
            # Deleting a folder strands what a workload left in it: the provider refuses unless switched off.
            deletion_protection=True,
            # Folder tags are Resource Manager tag bindings (tagKeys/...), not labels: the packs find each side's
            # folder by its display name instead (policies/separation/landing_rules.py).
            opts=self.opts,
        )

    def _policy(
        self,
        side: str,
        folder: pulumi.CustomResource,
        constraint: str,
        spec: gcp.orgpolicy.PolicySpecArgs,
        after: list[pulumi.Resource] | None = None,
    ) -> gcp.orgpolicy.Policy:
        parent: pulumi.Output[str] = folder.name  # type: ignore[attr-defined]  # folders/<number>
        return gcp.orgpolicy.Policy(
            f"{self.prefix}-{side}-{constraint.replace('.', '-')}",
            parent=parent,
            name=pulumi.Output.concat(parent, "/policies/", constraint),
            spec=spec,
            opts=pulumi.ResourceOptions.merge(self.opts, pulumi.ResourceOptions(depends_on=after or [])),
        )

    def guardrails(self, groups: dict[str, pulumi.CustomResource]) -> list[pulumi.Resource]:
        org = self.spec.organization
        made: list[pulumi.Resource] = []
        for side in SIDES:
            made.append(
                self._policy(
                    side,
                    groups[side],
                    LOCATIONS,
                    gcp.orgpolicy.PolicySpecArgs(
                        rules=[
                            gcp.orgpolicy.PolicySpecRuleArgs(
                                values=gcp.orgpolicy.PolicySpecRuleValuesArgs(
                                    allowed_values=location_values(org.allowed_regions)
                                )
                            )
                        ]
                    ),
                )
            )
            made.append(
                self._policy(
                    side,
                    groups[side],
                    MEMBER_DOMAINS,
                    gcp.orgpolicy.PolicySpecArgs(
                        rules=[
                            gcp.orgpolicy.PolicySpecRuleArgs(
                                values=gcp.orgpolicy.PolicySpecRuleValuesArgs(
                                    allowed_values=list(org.allowed_customer_ids)
                                )
                            )
                        ]
                    ),
                )
            )
        constraint = gcp.orgpolicy.CustomConstraint(
            f"{self.prefix}-serving-machines",
            parent=self.spec.gcp_organization,
            # The bare custom.<name>, as the SDK's examples write it (orgpolicy/custom_constraint.py): the parent
            # says which organization.
            name=SERVING_MACHINES,
            display_name="accelstack: serving projects may not run training machine types",
            action_type="DENY",
            method_types=["CREATE", "UPDATE"],
            resource_types=[INSTANCE_TYPE],
            condition=machine_condition(self.plan.training_families),
            opts=self.opts,
        )
        made.append(constraint)
        made.append(
            self._policy(
                "serving",
                groups["serving"],
                SERVING_MACHINES,
                gcp.orgpolicy.PolicySpecArgs(rules=[gcp.orgpolicy.PolicySpecRuleArgs(enforce="TRUE")]),
                after=[constraint],
            )
        )
        return made

    def account(self, side: str, group: pulumi.CustomResource, after: list[pulumi.Resource]) -> LandedAccount:
        project_id = self.spec.side(side).account.name
        project = gcp.organizations.Project(
            f"{self.prefix}-{side}-project",
            project_id=project_id,
            name=project_id,
            folder_id=group.folder_id,  # type: ignore[attr-defined]
            billing_account=self.spec.organization.billing_account,
            # No default network with its open firewall rules: the workload stacks make their own VPCs.
            auto_create_network=False,
            # A project deleted goes with every bucket and disk in it: the provider refuses (deletion_policy,
            # organizations/project.py; "PREVENT" is the provider's default too, written so no edit drops it).
            deletion_policy="PREVENT",
            labels={LABEL_SIDE: side, "accelstack-workload": "landing", "accelstack-stack": self.prefix},
            opts=pulumi.ResourceOptions.merge(self.opts, pulumi.ResourceOptions(protect=True, depends_on=after)),
        )
        landed = LandedAccount(side, project.project_id, None, project)
        self.providers[side] = self.member_provider(landed)
        self.services[side] = [
            gcp.projects.Service(
                f"{self.prefix}-{side}-{api.split('.', 1)[0]}",
                project=project.project_id,
                service=api,
                disable_on_destroy=False,  # a landing update never switches off an API the workloads use
                disable_dependent_services=False,
                opts=self.member_opts(side),
            )
            for api in PROJECT_SERVICES
        ]
        # Who read or changed what in the project, for every service: Data Access audit logs are off by default
        # (cloud.google.com/logging/docs/audit/configure-data-access; CIS GCP 2.1). Authoritative for `allServices`
        # only, so the workload stacks' own per-service configs (storage.googleapis.com) stay theirs.
        self.audit_logs[side] = gcp.projects.IAMAuditConfig(
            f"{self.prefix}-{side}-audit-logs",
            project=project.project_id,
            service="allServices",
            audit_log_configs=[
                gcp.projects.IAMAuditConfigAuditLogConfigArgs(log_type=log_type)
                for log_type in ("ADMIN_READ", "DATA_READ", "DATA_WRITE")
            ],
            opts=self.member_opts(side),
        )
        return landed

    def member_provider(self, account: LandedAccount) -> gcp.Provider:
        """What is made in a side's project goes through a provider pinned to it (as AWS's member-account
        provider): its labels say the side, which the packs judge its quota preferences by."""
        return gcp.Provider(
            f"{self.prefix}-{account.side}-gcp",
            project=account.account_id,
            region=self.spec.account.region,
            impersonate_service_account=getattr(self.spec.account, "deploy_service_account", None),
            # Quota preferences and budgets are billed to a quota project: the side's own.
            billing_project=account.account_id,
            user_project_override=True,
            default_labels={
                "accelstack-workload": "landing",
                "accelstack-stack": self.prefix,
                LABEL_SIDE: account.side,
            },
            opts=pulumi.ResourceOptions(parent=self.opts.parent, depends_on=[account.resource]),
        )

    def member_opts(self, side: str, after: list[pulumi.Resource] | None = None) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self.opts.parent, provider=self.providers[side], depends_on=after or [])

    def apart(
        self, groups: dict[str, pulumi.CustomResource], accounts: dict[str, LandedAccount]
    ) -> list[pulumi.Resource]:
        """Each folder refuses, at the IAM API, any allow policy granting a role to the other side's principals;
        training's admits serving's only the artifact read role (its prefix condition stays the packs' to judge)."""
        made: list[pulumi.Resource] = []
        for side in SIDES:
            other = "serving" if side == "training" else "training"
            project = accounts[other].resource
            number: pulumi.Output[str] = project.number  # type: ignore[attr-defined]
            constraint = gcp.orgpolicy.CustomConstraint(
                f"{self.prefix}-{side}-no-{other}-members",
                parent=self.spec.gcp_organization,
                name=NO_OTHER_SIDE[side],
                display_name=f"accelstack: {side} grants no role to {other}'s principals",
                action_type="DENY",
                method_types=["CREATE", "UPDATE"],
                resource_types=[ALLOW_POLICY_TYPE],
                condition=number.apply(
                    _condition_for(
                        self.spec.side(other).account.name, ARTIFACT_READ_ROLE if side == "training" else None
                    )
                ),
                opts=self.opts,
            )
            made.append(constraint)
            made.append(
                self._policy(
                    side,
                    groups[side],
                    NO_OTHER_SIDE[side],
                    gcp.orgpolicy.PolicySpecArgs(rules=[gcp.orgpolicy.PolicySpecRuleArgs(enforce="TRUE")]),
                    after=[constraint],
                )
            )
        return made

    def inside(self, account: LandedAccount, needs: list[QuotaNeed]) -> list[pulumi.Resource]:
        org = self.spec.organization
        project = account.resource
        made: list[pulumi.Resource] = []
        for need in needs:
            family = gpu_family(need.quota)
            made.append(
                gcp.cloudquota.SQuotaPreference(
                    f"{self.prefix}-{account.side}-{need.region}-{family.lower()}-{need.code.split('-')[0].lower()}",
                    parent=pulumi.Output.concat("projects/", account.account_id),
                    name=f"accelstack-{account.side}-{need.region}-{family.lower().replace('_', '-')}-{need.code.split('-')[0].lower()}",
                    service=SERVICE,
                    quota_id=need.code,
                    dimensions={"region": need.region, GPU_FAMILY_DIMENSION: family},
                    quota_config=gcp.cloudquota.SQuotaPreferenceQuotaConfigArgs(preferred_value=str(need.amount)),
                    contact_email=org.alert_emails[0],
                    justification=f"accelstack {', '.join(need.stacks)}: {need.amount} {need.unit} in {need.region}",
                    # A preference for a disabled service's quota fails: it waits for Compute Engine and Cloud Quotas.
                    opts=self.member_opts(account.side, [project, *self.services[account.side]]),
                )
            )
        side = self.spec.side(account.side)
        channels = [
            gcp.monitoring.NotificationChannel(
                f"{self.prefix}-{account.side}-alert-{index}",
                type="email",
                display_name=f"accelstack {account.side} budget: {email}",
                labels={"email_address": email},
                # In the side's project: Cloud Monitoring holds the channels the budget's alerts go to.
                opts=self.member_opts(account.side, self.services[account.side]),
            )
            for index, email in enumerate(org.alert_emails)
        ]
        made.extend(channels)
        made.append(
            gcp.billing.Budget(
                f"{self.prefix}-{account.side}-budget",
                billing_account=str(org.billing_account),
                display_name=f"accelstack-{account.side}",
                # Budget filters name projects by number (billing/budget.py, BudgetBudgetFilterArgs.projects).
                budget_filter=gcp.billing.BudgetBudgetFilterArgs(
                    projects=[pulumi.Output.concat("projects/", project.number)]  # type: ignore[attr-defined]
                ),
                amount=gcp.billing.BudgetAmountArgs(
                    specified_amount=gcp.billing.BudgetAmountSpecifiedAmountArgs(
                        currency_code="USD", **budget_money(side.monthly_budget_usd)
                    )
                ),
                threshold_rules=[
                    gcp.billing.BudgetThresholdRuleArgs(threshold_percent=percent, spend_basis=basis)
                    for percent, basis in BUDGET_ALERTS
                ],
                all_updates_rule=gcp.billing.BudgetAllUpdatesRuleArgs(
                    monitoring_notification_channels=[channel.id for channel in channels]
                ),
                # Billed to the side's project as quota project: the Budget API must be on there.
                opts=self.member_opts(account.side, self.services[account.side]),
            )
        )
        return made


def build_landing(spec: LandingStack, plan: LandingPlan) -> LandingRecipe:
    """The landing stack, from its own project (the provider pinned to it, impersonating its deploy account)."""
    account = spec.account
    if not isinstance(account, GcpAccount):
        raise TypeError(f"stack {spec.stack}: a GCP landing stack needs a GCP account block")
    root = pulumi.ComponentResource("accelstack:gcp:LandingStack", spec.stack)
    provider = gcp.Provider(
        f"{spec.stack}-gcp",
        project=account.project_id,
        region=account.region,
        impersonate_service_account=account.deploy_service_account,
        # Budgets and quota preferences are billed to a quota project: the landing stack's own.
        billing_project=account.project_id,
        user_project_override=True,
        default_labels={"accelstack-workload": "landing", "accelstack-stack": spec.stack},
        opts=pulumi.ResourceOptions(parent=root),
    )
    parts = GcpLandingParts(spec, plan, pulumi.ResourceOptions(parent=root, provider=provider))
    return LandingRecipe(spec.stack, parts, pulumi.ResourceOptions(parent=root))
