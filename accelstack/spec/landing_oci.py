"""What an OCI landing stack's config must say (`LandingStack._cloud_fields` for cloud: oci), kept apart from the
landing model so that file stays the clouds' common shape.

An OCI landing stack deploys from the tenancy's root compartment: groups, quota policies and budgets are
tenancy-level (Identity API CreateGroup: "specify your tenancy's OCID as the compartment ID"; the Limits API's
quotas and the Budgets API's budgets are created in the root compartment, pulumi_oci limits/quota.py and
budget/budget.py examples), and IAM writes go to the tenancy's home region (docs.oracle.com/iaas/Content/Identity/
regions/managingregions.htm), which `account.region` names. Each side's container is a compartment named by
`organization.<side>.account.name`. Pure: no Pulumi here.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelstack.spec.landing import LandingStack

# "Subcompartments inside of compartments ... up to six levels deep" (OCI release notes, "Support for compartment
# hierarchies", and docs.oracle.com/iaas/Content/Identity/compartments/managingcompartments.htm): CreateCompartment
# refuses a seventh level, so the parent the sides are made under is at most five below the root.
OCI_COMPARTMENT_DEPTH = 6
OCI_PARENT_DEPTH_MAX = OCI_COMPARTMENT_DEPTH - 1


def oci_fields(landing: LandingStack) -> None:
    """ValueError naming the key when an OCI landing stack's config is not one its parts can build."""
    from accelstack.spec.accounts import OciAccount
    from accelstack.spec.landing import OCI_COMPARTMENT_NAME, OCI_PARENT_ID, SIDES

    org = landing.organization
    if not re.fullmatch(OCI_PARENT_ID, org.parent_id):
        raise ValueError(
            f"organization.parentId {org.parent_id!r}: oci takes the tenancy or a compartment OCID "
            "(ocid1.tenancy.oc1..<id> or ocid1.compartment.oc1..<id>)"
        )
    if org.billing_account is not None or org.allowed_customer_ids or org.organization_id is not None:
        raise ValueError("organization.billingAccount, organizationId and allowedCustomerIds are gcp's; remove them")
    if org.billing_scope is not None:
        raise ValueError("organization.billingScope is azure's; remove it")
    account = landing.account
    if isinstance(account, OciAccount):
        if account.compartment_ocid != account.tenancy_ocid:
            raise ValueError(
                f"account.compartmentOcid: an OCI landing stack deploys from the root compartment (groups, quota "
                f"policies and budgets live there); set it to the tenancyOcid {account.tenancy_ocid}"
            )
        under_root = org.parent_id == account.tenancy_ocid
        if org.parent_id.startswith("ocid1.tenancy.") and not under_root:
            raise ValueError(
                f"organization.parentId {org.parent_id}: another tenancy; a landing stack makes compartments in "
                f"its own ({account.tenancy_ocid})"
            )
        if not under_root and org.parent_path is None:
            raise ValueError(
                "organization.parentPath: a compartment parent needs its path from the root (e.g. Platform:AI): "
                "quota statements name compartments by path"
            )
        if under_root and org.parent_path is not None:
            raise ValueError("organization.parentPath: the parent is the root compartment; remove it")
    if org.parent_path is not None and (depth := len(org.parent_path.split(":"))) > OCI_PARENT_DEPTH_MAX:
        raise ValueError(
            f"organization.parentPath: {depth} names, a parent {depth} compartments below the root, would put "
            f"the sides' compartments {depth + 1} deep; OCI nests compartments at most {OCI_COMPARTMENT_DEPTH} levels "
            f"below the root; allowed: a path of 1 to {OCI_PARENT_DEPTH_MAX} names"
        )
    landing.no_principals()
    for side in SIDES:
        budget = landing.side(side).monthly_budget_usd
        if budget != int(budget):
            # CreateBudgetDetails.amount: "expressed as a whole number in the currency of the customer's rate card"
            # (pulumi_oci budget/budget.py, amount: int); a fraction would be cut off, 0.5 to a budget of 0.
            raise ValueError(
                f"organization.{side}.monthlyBudgetUsd {budget:g}: an OCI budget is a whole number; allowed: "
                f"{max(1, round(budget))} or another whole number >= 1"
            )
        member = landing.side(side).account
        if member.email is not None:
            raise ValueError(f"organization.{side}.account.email: OCI compartments have no root email; remove it")
        if not re.fullmatch(OCI_COMPARTMENT_NAME, member.name):
            raise ValueError(
                f"organization.{side}.account.name {member.name!r}: an OCI compartment name, up to 100 letters, "
                "digits, '.', '-' or '_'"
            )


def compartment_path(landing: LandingStack, side: str) -> str:
    """The side's compartment as quota statements name it: its path from the root compartment."""
    name = landing.side(side).account.name
    parent = landing.organization.parent_path
    return f"{parent}:{name}" if parent else name
