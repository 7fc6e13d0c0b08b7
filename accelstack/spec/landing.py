"""The landing stack's model (`workload: landing`): the accounts training and serving land in, and their guardrails.

A landing stack runs once per organization, before any workload stack, from the organization's management
account (gcp: its own project): it makes one container per side (an AWS member account under its own
organizational unit; a GCP project in its own folder), the guardrail policies that enforce the separation at the
API, the quota requests the workload stacks need (sized by the planner from those stacks' node counts,
`accelstack.planner.landing_plan`) and a budget with alerts for each. Keys only one cloud takes are checked by
`LandingStack._cloud_fields`.
Pure: no Pulumi here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator

from accelstack.clouds import registry
from accelstack.spec.accounts import Account, account_model
from accelstack.spec.base import Grammars, Model
from accelstack.spec.landing_ref import LANDING_CLOUDS
from accelstack.spec.problems import Problem, SpecError
from accelstack.spec.text_grammar import matching

SIDES = ("training", "serving")
# Landing clouds whose Pulumi provider cannot request quota per account, and the function ("module:name",
# (account placeholder, region, quota, amount) -> a shell command) writing the manual step that does: azure-native
# has no per-subscription quota request; `accelstack plan quotas` and preview print the commands.
QUOTA_BY_HAND = {"azure": "accelstack.clouds.azure.quotas:quota_request_command"}
# Landing clouds whose guardrails the packs hold to more than the neutral context (accelstack.engine.pack_context):
# the function ("module:name", (allowed regions, training families) -> pack config keys) giving the rest.
LANDING_PACK_CONTEXT = {"oci": "accelstack.clouds.oci.landing_quotas:pack_context"}
# Landing clouds where the landing stack and a workload stack it lists could create the same name the API keeps
# unique: the function ("module:name", (landing, listed specs by name) -> problems) that says so, at the list item.
LANDING_LISTED_STACK_CHECKS = {"oci": "accelstack.clouds.oci.landing_names:listed_stack_problems"}
# Landing clouds whose quota resources cap a container below the account's service limits and cannot raise them
# (OCI's compartment quotas: docs.oracle.com/iaas/Content/Quotas/Concepts/resourcequotas.htm): the caps are the
# planner's needs, and a service limit below them is raised by a limit request, which `plan quotas` says.
QUOTA_CAPS_ONLY = {
    "oci": (
        "OCI quotas cap each compartment at the planner's need and never raise the tenancy's service limits: where "
        "a limit (`oci limits value list --service-name compute`) is below a cap, request an increase (console: "
        "Governance, Limits, Quotas and Usage). GPU quotas are counted per availability domain "
        "(quota_policy_syntax.htm, Scope): a row with an AD (a training cluster network, placed in one) is capped "
        "exactly, in that AD (`where request.ad`), and the quota is zeroed in the region's other ADs; a row "
        "without one is capped in each AD, so a region with three ADs may hold up to three times it"
    )
}
# How `plan quotas` names the zone of a per-zone quota need (accelstack.clouds.base.Quota.first_zone), by cloud.
QUOTA_ZONE_NAMES = {"oci": "AD-{}"}
# AWS Organizations: a root is r-<4-32 chars>, an OU ou-<4-32>-<8-32> (Organizations API, CreateOrganizationalUnit ParentId).
AWS_PARENT_ID = r"^(r-[0-9a-z]{4,32}|ou-[0-9a-z]{4,32}-[a-z0-9]{8,32})$"
# Resource Manager: a folder's parent is organizations/<number> or folders/<number> (folders.create, Folder.parent).
GCP_PARENT_ID = r"^(organizations|folders)/[0-9]{1,20}$"
# Management group ids: up to 90 letters, digits, '-', '_', '(', ')', '.'; not ending in '.' (Microsoft Learn,
# "Management groups" limits); the tenant root group's id is the tenant id.
AZURE_PARENT_ID = r"^[A-Za-z0-9_().-]{0,89}[A-Za-z0-9_()-]$"
# OCI: the tenancy (root compartment) or a compartment OCID the two compartments are created under
# (Identity API, CreateCompartment compartmentId; OCIDs: docs.oracle.com/iaas/Content/General/Concepts/identifiers.htm).
OCI_PARENT_ID = r"^ocid1\.(tenancy|compartment)\.oc[0-9]+\.\.[a-z0-9]+$"
PARENT_ID_PATTERN = f"({AWS_PARENT_ID})|({GCP_PARENT_ID})|({AZURE_PARENT_ID})|({OCI_PARENT_ID})"
# OCI compartment names: up to 100 letters, digits, '.', '-', '_' (Identity API, CreateCompartmentDetails.name);
# a path names a nested compartment from the root, parent first, joined by ':' (the quota and policy grammar).
OCI_COMPARTMENT_NAME = r"^[A-Za-z0-9._-]{1,100}$"
OCI_COMPARTMENT_PATH = r"^[A-Za-z0-9._-]{1,100}(:[A-Za-z0-9._-]{1,100}){0,5}$"
# Subscription aliases take a billing scope (Microsoft Learn, "Programmatically create Azure subscriptions"):
# an EA enrollment account, an MCA invoice section or an MPA customer.
AZURE_BILLING_SCOPE_PATTERN = (
    r"^/providers/Microsoft\.Billing/billingAccounts/[A-Za-z0-9:_-]{1,200}(/[A-Za-z]+/[A-Za-z0-9:_-]{1,100}){1,2}$"
)
# Cloud Billing: a billing account id is three groups of six hex digits (billingAccounts/XXXXXX-XXXXXX-XXXXXX).
BILLING_ACCOUNT_PATTERN = r"^[0-9A-F]{6}-[0-9A-F]{6}-[0-9A-F]{6}$"
# iam.allowedPolicyMemberDomains takes Google Workspace customer ids (C0...), not domain names
# (cloud.google.com/resource-manager/docs/organization-policy/restricting-domains).
CUSTOMER_ID_PATTERN = r"^C[0-9a-z]{6,12}$"
# Resource Manager project ids: 6-30 lowercase letters, digits, hyphens; a letter first, no hyphen last.
GCP_PROJECT_ID_PATTERN = r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$"
# IAM role names: up to 64 of letters, digits and +=,.@_- (IAM User Guide, "IAM object names").
ROLE_NAME_PATTERN = r"^[A-Za-z0-9+=,.@_-]{1,64}$"
# Organizations CreateAccount: AccountName 1-50 characters; one word here, as every name accelstack writes.
# Ours, not a cloud's: no budget API documents a maximum (AWS Budgets' limitAmount is a decimal string, pulumi_aws
# budgets/budget.py; GCP's specified amount an int64 of whole units, pulumi_gcp billing/_inputs.py; Azure's and OCI's
# amounts plain numbers, pulumi_azure_native consumption/budget.py, pulumi_oci budget/budget.py), so any figure would
# deploy. A billion USD a month is past any one account's spend: above it is a typo (an extra digit, cents for
# dollars), and a budget never reached alerts nobody.
MAX_MONTHLY_BUDGET_USD = 1_000_000_000
ACCOUNT_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,49}$"
EMAIL_PATTERN = r"^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,189}\.[A-Za-z]{2,63}$"
STACK_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{0,39}$"
OBJECT_ID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"


class MemberAccount(Model):
    """The account a side's stacks deploy into, created in the organization by the landing stack."""

    name: str = Field(pattern=ACCOUNT_NAME_PATTERN)
    """Account name, e.g. acme-training (gcp: the project id the landing stack creates, 6-30 lowercase letters, digits, hyphens; oci: the compartment's name)."""
    email: str | None = Field(default=None, pattern=EMAIL_PATTERN)
    """aws: the account's root user email, 6 to 64 characters, unique across AWS (CreateAccount refuses one already used); gcp, azure, oci: unset."""


class LandingSide(Model):
    """One side (training or serving): its account, the workload stacks deployed there, its budget."""

    account: MemberAccount
    """The side's member account."""
    stacks: list[str] = Field(default_factory=list)
    """Workload stacks (names of stacks/Pulumi.<name>.yaml) deployed in this account: their node counts size its quota requests."""
    monthly_budget_usd: float = Field(gt=0)
    """Monthly cost budget of the account, USD, at most 1,000,000,000 (accelstack's bound: past it is a typo); alerts at 80% actual and 100% forecast."""
    principals: list[str] = Field(default_factory=list)
    """azure: Entra object ids of this side's principals (its workload stacks' deploy identities, the managed identities they create: `pulumi stack output`): the other side's management group denies role assignments to them at the API. An object id names no subscription, so Azure Policy can refuse only the ids listed."""

    # Each item, checked before the safe text every string keeps: the message names its index.
    TEXT_GRAMMARS: ClassVar[Grammars] = {
        "stacks": matching(STACK_NAME_PATTERN, "a stack name", "lowercase letters, digits and '-', e.g. aws-training")
    }

    @field_validator("monthly_budget_usd")
    @classmethod
    def _plausible_budget(cls, value: float) -> float:
        if value > MAX_MONTHLY_BUDGET_USD:
            raise ValueError(
                f"{value:,.0f} USD a month is above {MAX_MONTHLY_BUDGET_USD:,} USD, accelstack's bound (the budget APIs "
                "state none): a figure past any account's spend is a typo (an extra digit, cents for dollars) and its "
                f"alerts would never fire; allowed: more than 0, at most {MAX_MONTHLY_BUDGET_USD:,}"
            )
        return value

    @field_validator("stacks")
    @classmethod
    def _stack_names(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("lists a stack twice")
        return value


class Organization(Model):
    """Where the landing stack puts the two sides, and the guardrails both get."""

    parent_id: str = Field(pattern=PARENT_ID_PATTERN)
    """aws: the organization root (r-...) or OU (ou-...) the training and serving OUs are created under; gcp: the organizations/<n> or folders/<n> the two folders are created under; azure: the id of the management group the two management groups are created under; oci: the tenancy or compartment OCID the two compartments are created under."""
    role_name: str = Field(default="accelstack-deploy", pattern=ROLE_NAME_PATTERN)
    """Role Organizations creates in each new account (trusting the management account): the workload stacks' deploy role."""
    allowed_regions: list[str] = Field(min_length=1)
    """Regions the region guardrail allows in both accounts (global services are exempt, as AWS documents)."""
    alert_emails: list[str] = Field(min_length=1)
    """Who the budget alerts email, each address once (gcp: the quota preferences' contact too); aws: at most 10, gcp: at most 5 (the budget APIs' limits)."""
    billing_account: str | None = Field(default=None, pattern=BILLING_ACCOUNT_PATTERN)
    """gcp: the billing account the projects are charged to and the budgets watch, e.g. 012345-6789AB-CDEF01."""
    billing_scope: str | None = Field(default=None, pattern=AZURE_BILLING_SCOPE_PATTERN)
    """azure: the billing scope the subscription aliases are created under, e.g. /providers/Microsoft.Billing/billingAccounts/<id>/enrollmentAccounts/<id>."""
    organization_id: str | None = Field(default=None, pattern=r"^[0-9]{1,20}$")
    """gcp: the organization's number, where the serving side's custom constraint is defined (custom constraints live on the organization); taken from parentId when that is organizations/<n>."""
    allowed_customer_ids: list[str] = Field(default_factory=list)
    """gcp: the Google Workspace customer ids (C0...) whose principals IAM policies may name (iam.allowedPolicyMemberDomains)."""
    parent_path: str | None = Field(default=None, pattern=OCI_COMPARTMENT_PATH)
    """oci: the parent compartment's path from the root (Parent:Child, at most 5 names: compartments nest 6 deep) when parentId is a compartment, not the tenancy: quota statements name compartments by path."""
    training: LandingSide
    """The training account."""
    serving: LandingSide
    """The serving account."""

    TEXT_GRAMMARS: ClassVar[Grammars] = {
        "alert_emails": matching(EMAIL_PATTERN, "an email address", "local-part@domain, e.g. finops@acme.example")
    }

    @model_validator(mode="after")
    def _apart(self) -> Organization:
        emails = (self.training.account.email, self.serving.account.email)
        if emails[0] is not None and emails[1] is not None and emails[0].lower() == emails[1].lower():
            raise ValueError("training and serving accounts need different emails (one email makes one account)")
        if self.training.account.name.lower() == self.serving.account.name.lower():
            # Azure resource names are case-insensitive (Microsoft Learn, "Naming rules and restrictions for Azure
            # resources"): a second alias of the same name in another case returns the first alias's subscription.
            raise ValueError(
                "training and serving accounts need different names, compared without case (Azure's subscription "
                "aliases are case-insensitive names: one name makes one subscription)"
            )
        shared = sorted(set(self.training.stacks) & set(self.serving.stacks))
        if shared:
            raise ValueError(f"a stack deploys to one side only; both list {', '.join(shared)}")
        return self


class AwsOrganization(Organization):
    parent_id: str = Field(pattern=AWS_PARENT_ID)


class GcpOrganization(Organization):
    parent_id: str = Field(pattern=GCP_PARENT_ID)


class AzureOrganization(Organization):
    parent_id: str = Field(pattern=AZURE_PARENT_ID)


class OciOrganization(Organization):
    parent_id: str = Field(pattern=OCI_PARENT_ID)


# Each cloud's parentId alone (an Azure management group id can look like anything): the error names the key.
ORGANIZATION_MODELS: dict[str, type[Organization]] = {
    "aws": AwsOrganization,
    "gcp": GcpOrganization,
    "azure": AzureOrganization,
    "oci": OciOrganization,
}


class LandingStack(Model):
    """A landing stack: deployed from the organization's management account, before the workload stacks."""

    stack: str = Field(default="dev", pattern=STACK_NAME_PATTERN)
    """Stack name, from the stack file's name (Pulumi.<stack>.yaml); not a config key."""
    cloud: str
    """Cloud of the stack (landing stacks: aws, azure, gcp, oci)."""
    workload: Literal["landing"]
    """landing: the accounts and guardrails, not a workload."""
    account: Account
    """The management account (and home region) the landing stack deploys from; its keys depend on `cloud`."""
    organization: Organization
    """The two sides' accounts, guardrails, quotas and budgets."""

    @field_validator("cloud")
    @classmethod
    def _built(cls, value: str) -> str:
        if value not in LANDING_CLOUDS:
            known = value in registry.names()
            why = "landing parts are not built for it yet" if known else "not a registered cloud"
            raise ValueError(f"{value!r}: {why}; landing stacks: {', '.join(LANDING_CLOUDS)}")
        return value

    @field_validator("account", mode="before")
    @classmethod
    def _account_of_cloud(cls, value: object, info: ValidationInfo) -> object:
        cloud = info.data.get("cloud")
        if cloud is None:
            return Account.model_construct(region="")  # `cloud` is reported
        return account_model(cloud).model_validate(value)

    @field_validator("organization", mode="before")
    @classmethod
    def _organization_of_cloud(cls, value: object, info: ValidationInfo) -> object:
        model = ORGANIZATION_MODELS.get(str(info.data.get("cloud")))
        return value if model is None or not isinstance(value, dict) else model.model_validate(value)

    @model_validator(mode="after")
    def _cloud_fields(self) -> LandingStack:
        """What each cloud's landing parts need, and nothing the other cloud's would take."""
        org = self.organization
        if org.parent_path is not None and self.cloud != "oci":
            raise ValueError("organization.parentPath is oci's; remove it")
        if self.cloud == "aws":
            if not re.fullmatch(AWS_PARENT_ID, org.parent_id):
                raise ValueError(f"organization.parentId {org.parent_id!r}: aws takes a root (r-...) or an OU (ou-...)")
            for side in SIDES:
                if self.side(side).account.email is None:
                    raise ValueError(f"organization.{side}.account.email: an AWS account needs its root user email")
            if org.billing_account is not None or org.allowed_customer_ids or org.organization_id is not None:
                raise ValueError(
                    "organization.billingAccount, organizationId and allowedCustomerIds are gcp's; remove them"
                )
            if org.billing_scope is not None:
                raise ValueError("organization.billingScope is azure's; remove it")
            self.no_principals()
            return self
        if self.cloud == "azure":
            return self._azure_fields()
        if self.cloud == "oci":
            from accelstack.spec.landing_oci import oci_fields

            oci_fields(self)
            return self
        if org.billing_scope is not None:
            raise ValueError("organization.billingScope is azure's; remove it")
        self.no_principals()
        if not re.fullmatch(GCP_PARENT_ID, org.parent_id):
            raise ValueError(
                f"organization.parentId {org.parent_id!r}: gcp takes organizations/<number> or folders/<number>"
            )
        if org.parent_id.startswith("folders/") and org.organization_id is None:
            raise ValueError(
                "organization.organizationId: a gcp folder parent needs the organization's number (custom constraints live there)"
            )
        if org.billing_account is None:
            raise ValueError(
                "organization.billingAccount: gcp projects need a billing account, e.g. 012345-6789AB-CDEF01"
            )
        if not org.allowed_customer_ids:
            raise ValueError(
                "organization.allowedCustomerIds: gcp's domain-restricted sharing needs the Workspace customer ids (C0...)"
            )
        for customer in org.allowed_customer_ids:
            if not re.fullmatch(CUSTOMER_ID_PATTERN, customer):
                raise ValueError(
                    f"organization.allowedCustomerIds: {customer!r} is not a Workspace customer id (C0...)"
                )
        for side in SIDES:
            account = self.side(side).account
            if not re.fullmatch(GCP_PROJECT_ID_PATTERN, account.name):
                raise ValueError(
                    f"organization.{side}.account.name {account.name!r}: a gcp project id, 6-30 lowercase letters, digits "
                    "or hyphens, a letter first"
                )
            if account.email is not None:
                raise ValueError(f"organization.{side}.account.email: gcp projects have no root email; remove it")
        return self

    @model_validator(mode="after")
    def _create_time_limits(self) -> LandingStack:
        """The per-cloud limits the account, project and budget APIs hold a value to (accelstack.spec.landing_limits)."""
        from accelstack.spec.landing_limits import create_time_limits

        create_time_limits(self)
        return self

    def no_principals(self) -> None:
        for side in SIDES:
            if self.side(side).principals:
                raise ValueError(
                    f"organization.{side}.principals is azure's (aws: the SCPs deny the other account; gcp: the folder's "
                    "constraint names the other project's principals; oci: each side's policy grants its own group "
                    "only); remove it"
                )

    def _azure_fields(self) -> LandingStack:
        org = self.organization
        if org.billing_scope is None:
            raise ValueError(
                "organization.billingScope: azure subscription aliases need a billing scope, e.g. "
                "/providers/Microsoft.Billing/billingAccounts/<id>/enrollmentAccounts/<id>"
            )
        if org.billing_account is not None or org.allowed_customer_ids or org.organization_id is not None:
            raise ValueError(
                "organization.billingAccount, organizationId and allowedCustomerIds are gcp's; remove them"
            )
        for side in SIDES:
            if self.side(side).account.email is not None:
                raise ValueError(
                    f"organization.{side}.account.email: azure subscriptions have no root email; remove it"
                )
            for index, principal in enumerate(self.side(side).principals):
                if not re.fullmatch(OBJECT_ID_PATTERN, principal):
                    raise ValueError(
                        f"organization.{side}.principals.{index}: {principal!r} is not an Entra object id (a GUID)"
                    )
        if set(self.organization.training.principals) & set(self.organization.serving.principals):
            raise ValueError("organization.training.principals and serving.principals must be disjoint")
        return self

    @model_validator(mode="after")
    def _home_region_allowed(self) -> LandingStack:
        from accelstack.spec.catalog_rules import unknown_region  # the rules import the models

        # Each region the guardrails name exists: an unknown home region fails the first create call, and an unknown
        # allowed region allows nothing while the guardrail denies the region meant.
        named = [(f"account.{type(self.account).region_key()}", self.account.region)]
        named += [(f"organization.allowedRegions.{i}", r) for i, r in enumerate(self.organization.allowed_regions)]
        for path, region in named:
            message = unknown_region(self.cloud, region)
            if message is not None:
                raise ValueError(f"{path}: {message}")
        if len(set(self.organization.allowed_regions)) != len(self.organization.allowed_regions):
            raise ValueError("organization.allowedRegions lists a region twice")
        if self.account.region not in self.organization.allowed_regions:
            raise ValueError(
                f"account.region {self.account.region!r} is not in organization.allowedRegions "
                f"({', '.join(self.organization.allowed_regions)}): the region guardrail would deny the landing stack's own home"
            )
        return self

    @property
    def gcp_organization(self) -> str:
        """organizations/<n>: the parent itself, or the organizationId a folder parent needs."""
        parent = self.organization.parent_id
        return parent if parent.startswith("organizations/") else f"organizations/{self.organization.organization_id}"

    def side(self, name: str) -> LandingSide:
        return self.organization.training if name == "training" else self.organization.serving


def is_landing(raw: dict[str, Any]) -> bool:
    """Whether raw config (namespace stripped) is a landing stack's."""
    return raw.get("workload") == "landing"


def parse_landing(
    raw: dict[str, Any], stack: str = "dev", *, provider_settings: Callable[[str], Any] | None = None
) -> LandingStack:
    """Raw config (namespace stripped) -> LandingStack, or SpecError naming each problem's config path.
    `provider_settings` looks up the stack file's other keys: its provider region (oci:region, aws:region...) must
    agree with account.region, as a workload stack's must (accelstack.spec.loader.parse_spec)."""
    from accelstack.spec.loader import decoded, problems_from_validation, provider_region_problem

    data = {key: decoded(key, value) for key, value in raw.items()}
    data.setdefault("stack", stack)
    try:
        landing = LandingStack.model_validate(data)
    except ValidationError as exc:
        raise SpecError([_at_its_key(problem) for problem in problems_from_validation(exc, None)]) from None
    region_problem = provider_region_problem(landing, provider_settings)
    if region_problem is not None:
        raise SpecError([region_problem])
    return landing


# The cross-key checks above name their key first ("organization.allowedRegions.1: ..."); pydantic files them under
# the model ("accelstack"). Moved to the key they name, so messages and `--set` blame read as any key's.
_NAMED_KEY = re.compile(r"^((?:account|organization)(?:\.[A-Za-z0-9]+)+):? (.+)$", re.DOTALL)


def _at_its_key(problem: Problem) -> Problem:
    named = _NAMED_KEY.match(problem.message) if problem.path == "accelstack" else None
    return replace(problem, path=named[1], message=named[2]) if named else problem


def workload_specs(landing: LandingStack, stacks_dir: Path) -> dict[str, Any]:
    """The specs of the workload stacks the landing stack lists, read from `stacks_dir`/Pulumi.<name>.yaml;
    SpecError naming the list item of each one missing or invalid (its own problems prefixed with its name)."""
    from accelstack.spec.loader import load_stack

    specs: dict[str, Any] = {}
    problems: list[Problem] = []
    for side in SIDES:
        for index, name in enumerate(landing.side(side).stacks):
            path = stacks_dir / f"Pulumi.{name}.yaml"
            where = f"organization.{side}.stacks.{index}"
            if not path.is_file():
                problems.append(
                    Problem(where, f"{name}: no {path} (the quota requests are sized from its node counts)")
                )
                continue
            try:
                specs[name] = load_stack(path)
            except SpecError as error:
                problems.extend(Problem(where, f"{name}: {p.path}: {p.message}") for p in error.problems)
    if not problems:
        from accelstack.spec.landing_limits import listed_stack_problems

        problems = listed_stack_problems(landing, specs)
    if problems:
        raise SpecError(problems)
    return specs
