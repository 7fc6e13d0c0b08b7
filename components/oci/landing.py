"""OCI landing parts: a compartment per side under the parent, a deploy group and its IAM policy per side, a quota
policy per compartment (the region guardrail, serving's zero for the training shapes, the planner's caps), a budget
with alert rules per compartment.

Deployed from the tenancy's root compartment in its home region (accelstack.spec.landing_oci) by a principal that
may manage compartments under the parent, groups and policies, quotas and budgets in the tenancy. Input names and
required fields are pulumi_oci 5.5.0's (identity/compartment.py, identity/group.py, identity/policy.py,
limits/quota.py, budget/budget.py, budget/rule.py).

Separation: OCI policies only allow (docs.oracle.com/iaas/Content/Identity/policysyntax/policysyntax.htm), so a side
is kept off the other's compartment by granting it nothing there, which the packs check (landing-guardrails); a
policy attached to the parent may grant in a child (the policy's location is relative to where it is attached).
"""

from __future__ import annotations

import pulumi
import pulumi_oci as oci

from accelstack.clouds.oci import landing_quotas
from accelstack.clouds.oci.names import iam_name
from accelstack.clouds.oci.quotas import domain_name
from accelstack.components.recipes.landing import LandedAccount, LandingParts, LandingRecipe
from accelstack.planner.landing_plan import LandingPlan, QuotaNeed
from accelstack.spec.accounts import OciAccount
from accelstack.spec.landing import SIDES, LandingStack
from accelstack.spec.landing_oci import compartment_path

TAG_SIDE = "accelstack-side"  # free-form tag keys take no ':' in OCI's console filters; ours match GCP's label
# What a side's deploy group manages in its own compartment and nowhere else, by family (never all-resources).
# Training: what its stacks make (components/oci: cluster networks and instance pools, File Storage with Lustre,
# buckets, Vault keys and secrets, the policies of its nodes). Serving: what a serving service runs on, and not
# cluster networks (compute-management-family) or file systems (docs.oracle.com/iaas/Content/Identity/Reference/
# corepolicyreference.htm and filestoragepolicyreference.htm).
GRANTS = {
    "training": (
        "instance-family",
        "compute-management-family",
        "volume-family",
        "virtual-network-family",
        "object-family",
        "file-family",
        "lustre-file-family",
        "vaults",
        "keys",
        "secret-family",
        "policies",
    ),
    "serving": (
        "instance-family",
        "instance-configurations",
        "instance-pools",
        "volume-family",
        "virtual-network-family",
        "load-balancers",
        "object-family",
        "vaults",
        "keys",
        "secret-family",
    ),
}
# Budget alert rules, as the other clouds': 80% of actual spend, 100% of forecast (budget/rule.py: type ACTUAL or
# FORECAST, threshold_type PERCENTAGE).
BUDGET_ALERTS = (("actual80", 80.0, "ACTUAL"), ("forecast100", 100.0, "FORECAST"))


def deploy_group_name(account_name: str) -> str:
    """The side's deploy group (unique in the tenancy): the people and CI principals who run its stacks."""
    return iam_name(account_name, "deployers")


def nodes_group_name(account_name: str) -> str:
    """The side's nodes' dynamic group (unique in the tenancy, as dynamic group names are): every instance of the
    side's compartment, which its workload stacks' policies grant what their nodes read and write."""
    return iam_name(account_name, "nodes")


def nodes_matching_rule(compartment_id: str) -> str:
    """Matches the instances of one compartment (docs.oracle.com/iaas/Content/Identity/dynamicgroups/
    Writing_Matching_Rules_to_Define_Dynamic_Groups.htm), and no other: the side's compartment is its own."""
    return f"ALL {{instance.compartment.id = '{compartment_id}'}}"


def grant_statements(side: str, group_id: str, compartment_id: str) -> list[str]:
    return [f"allow group id {group_id} to manage {what} in compartment id {compartment_id}" for what in GRANTS[side]]


class OciLandingParts(LandingParts):
    """The OCI landing resources (pulumi_oci.identity, limits, budget)."""

    def __init__(self, spec: LandingStack, plan: LandingPlan, opts: pulumi.ResourceOptions):
        super().__init__(spec, plan, opts)
        account = spec.account
        assert isinstance(account, OciAccount)
        self.tenancy = account.tenancy_ocid
        self.node_groups: dict[str, oci.identity.DynamicGroup] = {}
        self.regional: dict[str, oci.Provider] = {}

    def tags(self, side: str) -> dict[str, str]:
        return {TAG_SIDE: side, "accelstack-workload": "landing", "accelstack-stack": self.prefix}

    def group(self, side: str) -> oci.identity.Compartment:
        return oci.identity.Compartment(
            f"{self.prefix}-{side}",
            compartment_id=self.spec.organization.parent_id,
            name=self.spec.side(side).account.name,
            description=f"accelstack {side}: the {side} stacks' resources",
            # With enable_delete false the provider neither deletes the compartment on destroy nor on removal
            # (identity/compartment.py); protect keeps a replace (a new parent) from orphaning what is in it.
            enable_delete=False,
            freeform_tags=self.tags(side),
            opts=pulumi.ResourceOptions.merge(self.opts, pulumi.ResourceOptions(protect=True)),
        )

    def quota_statements(self, side: str, domains: dict[str, list[str]]) -> list[str]:
        """The side's quota statements; `domains`: each needed region's availability domains, as the tenancy
        names them (a need in one domain is capped there exactly, and zeroed in the others)."""
        path = compartment_path(self.spec, side)
        statements = landing_quotas.region_guardrail(path, self.spec.organization.allowed_regions)
        if side == "serving" and (shapes := landing_quotas.training_shape_quotas(self.plan.training_families)):
            statements.append(landing_quotas.zero(shapes, path))
        for need in self.plan.side_needs(side):
            if need.zone:
                found = landing_quotas.checked_domains(need.region, domains[need.region])
                domain = domain_name(found, need.zone)
                statements.extend(landing_quotas.cap_in_domain(need.quota, need.amount, path, found, domain))
            else:
                statements.append(landing_quotas.cap(need.quota, need.amount, path, need.region))
        return statements

    def statements_once_known(
        self, side: str, domains: pulumi.Output[dict[str, list[str]]]
    ) -> pulumi.Output[list[str]]:
        return domains.apply(lambda found: self.quota_statements(side, found))

    def region_domains(self, region: str) -> pulumi.Output[list[str]]:
        """The region's availability domains as the tenancy names them ("Uocm:US-ASHBURN-AD-1": a per-tenancy
        prefix, so read at preview; identity/get_availability_domains.py), through a provider in that region."""
        provider = self.opts.provider
        if region != self.spec.account.region:
            provider = self.regional.get(region) or oci.Provider(
                f"{self.prefix}-oci-{region}",
                tenancy_ocid=self.tenancy,
                region=region,
                opts=pulumi.ResourceOptions(parent=self.opts.parent),
            )
            self.regional[region] = provider
        found = oci.identity.get_availability_domains_output(
            compartment_id=self.tenancy, opts=pulumi.InvokeOptions(parent=self.opts.parent, provider=provider)
        )
        return found.availability_domains.apply(lambda listed: [domain.name for domain in listed])

    def guardrails(self, groups: dict[str, pulumi.CustomResource]) -> list[pulumi.Resource]:
        # Quota policies live in the root compartment and name the compartment they cover by its path
        # (limits/quota.py example: compartment_id=tenancy_ocid); it must exist when the quota is created. The
        # Limits service parses each statement at create and update (a domain name it does not know fails there).
        regions = sorted({need.region for need in self.plan.needs if need.zone})
        domains = pulumi.Output.all(*(self.region_domains(region) for region in regions)).apply(
            lambda lists: dict(zip(regions, lists, strict=True))
        )
        return [
            oci.limits.Quota(
                f"{self.prefix}-{side}-quota",
                compartment_id=self.tenancy,
                name=iam_name(self.prefix, f"{side}-quota"),
                description=f"accelstack {side}: allowed regions, the planner's GPU caps"
                + (", no training shapes" if side == "serving" else ""),
                # Statements are "(Updatable)" (limits/quota.py): a changed cap or zero updates the quota policy in
                # place; only compartment_id and name replace (replace_rows.py).
                statements=self.statements_once_known(side, domains),
                freeform_tags=self.tags(side),
                opts=pulumi.ResourceOptions.merge(self.opts, pulumi.ResourceOptions(depends_on=[groups[side]])),
            )
            for side in SIDES
        ]

    def account(self, side: str, group: pulumi.CustomResource, after: list[pulumi.Resource]) -> LandedAccount:
        deployers = oci.identity.Group(
            f"{self.prefix}-{side}-deployers",
            # Groups live in the tenancy (identity/group.py: the tenancy's OCID as compartment id).
            compartment_id=self.tenancy,
            name=deploy_group_name(self.spec.side(side).account.name),
            description=f"accelstack {side}: who deploys the {side} stacks",
            freeform_tags=self.tags(side),
            # Deleting the group takes every member's access with it: protected as the compartment is.
            opts=pulumi.ResourceOptions.merge(self.opts, pulumi.ResourceOptions(protect=True, depends_on=after)),
        )
        compartment_id: pulumi.Output[str] = group.id
        oci.identity.Policy(
            f"{self.prefix}-{side}-deploy",
            # Attached to the parent: a policy grants in the compartment it is attached to and its children.
            compartment_id=self.spec.organization.parent_id,
            name=iam_name(self.prefix, f"{side}-deploy"),
            description=f"accelstack {side}: its deploy group manages its compartment only",
            statements=pulumi.Output.all(deployers.id, compartment_id).apply(
                lambda ids: grant_statements(side, str(ids[0]), str(ids[1]))
            ),
            freeform_tags=self.tags(side),
            opts=pulumi.ResourceOptions.merge(self.opts, pulumi.ResourceOptions(depends_on=[deployers, group])),
        )
        self.node_groups[side] = self.nodes_group(side, group)
        return LandedAccount(side, compartment_id, None, group)

    def nodes_group(self, side: str, compartment: pulumi.CustomResource) -> oci.identity.DynamicGroup:
        """The side's nodes' dynamic group, made here so no workload deployer needs `manage dynamic-groups` in the
        tenancy (a dynamic group lives in the root compartment: with that grant a deployer could write one that
        matches the other side's instances). CreateDynamicGroup takes the tenancy's OCID as compartment id, a name
        unique in the tenancy, and parses the matching rule (identity/dynamic_group.py: compartment_id and name
        replace, the rule and description update in place); the compartment it names must exist first."""
        return oci.identity.DynamicGroup(
            f"{self.prefix}-{side}-nodes",
            compartment_id=self.tenancy,
            name=nodes_group_name(self.spec.side(side).account.name),
            description=f"accelstack {side}: the instances of the {side} compartment",
            matching_rule=compartment.id.apply(nodes_matching_rule),
            freeform_tags=self.tags(side),
            # The workload stacks' node policies name it: deleting it takes their nodes' access, as the deploy
            # group's deletion would its members'.
            opts=pulumi.ResourceOptions.merge(
                self.opts, pulumi.ResourceOptions(protect=True, depends_on=[compartment])
            ),
        )

    def side_outputs(self, side: str) -> dict[str, pulumi.Input[object]]:
        group = self.node_groups[side]
        return {"NodesGroupName": group.name, "NodesGroupId": group.id}

    def apart(
        self, groups: dict[str, pulumi.CustomResource], accounts: dict[str, LandedAccount]
    ) -> list[pulumi.Resource]:
        # OCI policies only allow: a side reaches the other's compartment only through a grant naming it, which
        # landing-guardrails refuses here and the workload stacks' packs refuse there (policies/separation).
        return []

    def inside(self, account: LandedAccount, needs: list[QuotaNeed]) -> list[pulumi.Resource]:
        org = self.spec.organization
        side = self.spec.side(account.side)
        budget = oci.budget.Budget(
            f"{self.prefix}-{account.side}-budget",
            # Budgets are created in the root compartment and target the compartment they count (budget/budget.py).
            compartment_id=self.tenancy,
            amount=int(side.monthly_budget_usd),
            reset_period="MONTHLY",
            processing_period_type="MONTH",
            target_type="COMPARTMENT",
            targets=[account.account_id],
            display_name=f"accelstack-{account.side}",
            description=f"accelstack {account.side}: the compartment's monthly spend",
            freeform_tags=self.tags(account.side),
            opts=pulumi.ResourceOptions.merge(self.opts, pulumi.ResourceOptions(depends_on=[account.resource])),
        )
        rules = [
            oci.budget.Rule(
                f"{self.prefix}-{account.side}-{key}",
                budget_id=budget.id,
                threshold=threshold,
                threshold_type="PERCENTAGE",
                type=kind,
                display_name=f"accelstack-{account.side}-{key}",
                recipients=", ".join(org.alert_emails),
                message=f"accelstack {account.side}: {kind.lower()} spend at {threshold:g}% of the monthly budget",
                freeform_tags=self.tags(account.side),
                opts=self.opts,
            )
            for key, threshold, kind in BUDGET_ALERTS
        ]
        return [budget, *rules]


def build_landing(spec: LandingStack, plan: LandingPlan) -> LandingRecipe:
    """The landing stack, from the tenancy's root compartment in its home region (the provider pinned to both)."""
    account = spec.account
    if not isinstance(account, OciAccount):
        raise TypeError(f"stack {spec.stack}: an OCI landing stack needs an OCI account block")
    root = pulumi.ComponentResource("accelstack:oci:LandingStack", spec.stack)
    provider = oci.Provider(
        f"{spec.stack}-oci",
        tenancy_ocid=account.tenancy_ocid,
        region=account.region,
        opts=pulumi.ResourceOptions(parent=root),
    )
    parts = OciLandingParts(spec, plan, pulumi.ResourceOptions(parent=root, provider=provider))
    return LandingRecipe(spec.stack, parts, pulumi.ResourceOptions(parent=root))
