"""AWS landing parts: organizational units, member accounts, service control policies, quota requests, budgets.

Deployed from the organization's management account (the landing stack's own provider). Resources inside a
member account (its quota requests and budget) go through a provider that assumes the role Organizations
creates there (`role_name`, trusted by the management account), which is also the role the workload stacks
deploy with. SCP documents are written compact: AWS counts every character against the 5,120 limit
(Organizations User Guide, "Quotas for AWS Organizations").
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pulumi
import pulumi_aws as aws

from accelstack.clouds.aws.quotas import SERVICE_CODE
from accelstack.components.recipes.landing import LandedAccount, LandingParts, LandingRecipe
from accelstack.planner.landing_plan import LandingPlan, QuotaNeed
from accelstack.spec.accounts import AwsAccount
from accelstack.spec.landing import LandingStack

# Actions the region guardrail lets through in any Region: the global services (IAM, Organizations, STS,
# CloudFront, Route 53, billing, support...) are called in us-east-1 whatever the workload's Region. This is
# the NotAction list of AWS's example "Deny access to AWS based on the requested AWS Region" (Organizations
# User Guide, SCP examples, general), kept as AWS documents it.
GLOBAL_ACTIONS = (
    "a4b:*", "acm:*", "aws-marketplace-management:*", "aws-marketplace:*", "aws-portal:*", "budgets:*", "ce:*",
    "chime:*", "cloudfront:*", "config:*", "cur:*", "directconnect:*", "ec2:DescribeRegions",
    "ec2:DescribeTransitGateways", "ec2:DescribeVpnGateways", "fms:*", "globalaccelerator:*", "health:*", "iam:*",
    "importexport:*", "kms:*", "mobileanalytics:*", "networkmanager:*", "organizations:*", "pricing:*", "route53:*",
    "route53domains:*", "route53-recovery-cluster:*", "route53-recovery-control-config:*",
    "route53-recovery-readiness:*", "s3:GetAccountPublic*", "s3:ListAllMyBuckets", "s3:ListMultiRegionAccessPoints",
    "s3:PutAccountPublic*", "shield:*", "sts:*", "support:*", "trustedadvisor:*", "waf-regional:*", "waf:*",
    "wafv2:*", "wellarchitected:*",
)  # fmt: skip
# No account may blind the audit trail or leave the organization (and with it every guardrail here).
BASELINE_DENIES = (
    "cloudtrail:DeleteTrail", "cloudtrail:StopLogging", "cloudtrail:UpdateTrail", "cloudtrail:PutEventSelectors",
    "organizations:LeaveOrganization",
)  # fmt: skip
# What serving accounts may not create: a Lustre (any FSx) file system or a placement group (training's fabric).
SERVING_DENIED_CREATES = (
    "fsx:CreateFileSystem", "fsx:CreateFileSystemFromBackup", "ec2:CreatePlacementGroup",
)  # fmt: skip
POLICY_TYPE = "SERVICE_CONTROL_POLICY"
TAG_SIDE = "accelstack:side"  # which side an OU (or a member account's provider) is
BUDGET_ALERTS = (("ACTUAL", 80.0), ("FORECASTED", 100.0))  # percent of the monthly limit


def document(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)}, separators=(",", ":"))


def region_policy(regions: list[str]) -> str:
    return document(
        {
            "Sid": "DenyOutsideAllowedRegions",
            "Effect": "Deny",
            "NotAction": list(GLOBAL_ACTIONS),
            "Resource": "*",
            "Condition": {"StringNotEquals": {"aws:RequestedRegion": regions}},
        }
    )


def side_policy(side: str, training_families: tuple[str, ...]) -> str:
    """The side's own guardrails, with the baseline every account gets."""
    statements: list[dict[str, Any]] = [
        {"Sid": "DenyAuditAndOrganizationEscape", "Effect": "Deny", "Action": list(BASELINE_DENIES), "Resource": "*"}
    ]
    if side == "serving":
        statements.append(
            {
                "Sid": "DenyTrainingInstanceFamilies",
                "Effect": "Deny",
                "Action": "ec2:RunInstances",
                "Resource": "arn:aws:ec2:*:*:instance/*",
                # ec2:InstanceType is a condition key of RunInstances on the instance resource (Service
                # Authorization Reference, Amazon EC2).
                "Condition": {"StringLike": {"ec2:InstanceType": [f"{family}.*" for family in training_families]}},
            }
        )
        statements.append(
            {
                "Sid": "DenyTrainingStorageAndPlacement",
                "Effect": "Deny",
                "Action": list(SERVING_DENIED_CREATES),
                "Resource": "*",
            }
        )
    else:
        statements.append(
            {
                "Sid": "DenyInternetFacingLoadBalancers",
                "Effect": "Deny",
                "Action": "elasticloadbalancing:CreateLoadBalancer",
                "Resource": "*",
                "Condition": {"StringEquals": {"elasticloadbalancing:Scheme": "internet-facing"}},
            }
        )
    return document(*statements)


def apart_policy(other_account_id: str) -> str:
    """Keep this side's principals off the other side's account. No condition key reads the principals a trust or
    resource policy names, so the grant itself cannot be denied by an SCP; its use can: assuming a role in the
    other account, and any call on a resource the other account owns (aws:ResourceAccount)."""
    return document(
        {
            "Sid": "DenyAssumingOtherSideRoles",
            "Effect": "Deny",
            "Action": ["sts:AssumeRole", "sts:AssumeRoleWithWebIdentity", "sts:AssumeRoleWithSAML", "sts:TagSession"],
            "Resource": f"arn:aws:iam::{other_account_id}:role/*",
        },
        {
            "Sid": "DenyOtherSideResources",
            "Effect": "Deny",
            "Action": "*",
            "Resource": "*",
            "Condition": {"StringEquals": {"aws:ResourceAccount": other_account_id}},
        },
    )


def other(side: str) -> str:
    return "serving" if side == "training" else "training"


class AwsLandingParts(LandingParts):
    """The AWS landing resources (pulumi_aws.organizations, servicequotas, budgets)."""

    def group(self, side: str) -> aws.organizations.OrganizationalUnit:
        return aws.organizations.OrganizationalUnit(
            f"{self.prefix}-{side}",
            name=f"accelstack-{side}",
            parent_id=self.spec.organization.parent_id,
            # The packs find each side's OU by this tag (policies/separation/landing_rules.py).
            tags={TAG_SIDE: side},
            opts=self.opts,
        )

    def _attached(
        self, name: str, content: pulumi.Input[str], targets: dict[str, pulumi.CustomResource], what: str
    ) -> list[pulumi.Resource]:
        policy = aws.organizations.Policy(
            name, name=name, type=POLICY_TYPE, content=content, description=what, opts=self.opts
        )
        attachments: list[pulumi.Resource] = [
            aws.organizations.PolicyAttachment(
                f"{name}-{side}", policy_id=policy.id, target_id=target.id, opts=self.opts
            )
            for side, target in targets.items()
        ]
        return [policy, *attachments]

    def guardrails(self, groups: dict[str, pulumi.CustomResource]) -> list[pulumi.Resource]:
        made = self._attached(
            f"{self.prefix}-region",
            region_policy(self.spec.organization.allowed_regions),
            dict(groups),
            "accelstack: deny every Region but the allowed ones (global services exempt)",
        )
        for side in ("training", "serving"):
            made += self._attached(
                f"{self.prefix}-{side}-guardrails",
                side_policy(side, self.plan.training_families),
                {side: groups[side]},
                f"accelstack: what {side} accounts may not do",
            )
        return made

    def account(self, side: str, group: pulumi.CustomResource, after: list[pulumi.Resource]) -> LandedAccount:
        member = self.spec.side(side).account
        account = aws.organizations.Account(
            f"{self.prefix}-{side}-account",
            name=member.name,
            email=member.email,
            parent_id=group.id,
            role_name=self.spec.organization.role_name,
            # Closing an account is not undone by a redeploy (90 days to reopen): `pulumi destroy` removes it from
            # the organization's stack state only, and protect refuses even that without an explicit unprotect.
            close_on_deletion=False,
            iam_user_access_to_billing="DENY",
            opts=pulumi.ResourceOptions.merge(
                self.opts,
                # Organizations cannot read role_name back (the SDK's docs: a configured value always shows a
                # difference after import unless ignored), and a changed iam_user_access_to_billing "will try to
                # recreate the account" (pulumi_aws/organizations/account.py): neither may replace an account.
                pulumi.ResourceOptions(
                    protect=True, depends_on=after, ignore_changes=["roleName", "iamUserAccessToBilling"]
                ),
            ),
        )
        role_arn = pulumi.Output.concat("arn:aws:iam::", account.id, ":role/", self.spec.organization.role_name)
        return LandedAccount(side, account.id, role_arn, account)

    def apart(
        self, groups: dict[str, pulumi.CustomResource], accounts: dict[str, LandedAccount]
    ) -> list[pulumi.Resource]:
        made: list[pulumi.Resource] = []
        for side in ("training", "serving"):
            made += self._attached(
                f"{self.prefix}-{side}-apart",
                accounts[other(side)].account_id.apply(apart_policy),
                {side: groups[side]},
                f"accelstack: keep {side} principals off the {other(side)} account",
            )
        return made

    def member_provider(self, account: LandedAccount) -> aws.Provider:
        return aws.Provider(
            f"{self.prefix}-{account.side}-aws",
            region=self.spec.account.region,
            allowed_account_ids=[account.account_id],
            assume_roles=[
                aws.ProviderAssumeRoleArgs(role_arn=account.deploy_role_arn, session_name=f"accelstack-{self.prefix}")
            ],
            # The side tag says which account the provider reaches (the packs judge its quota requests by it).
            default_tags=aws.ProviderDefaultTagsArgs(
                tags={"accelstack:workload": "landing", "accelstack:stack": self.prefix, TAG_SIDE: account.side}
            ),
            opts=pulumi.ResourceOptions(parent=self.opts.parent, depends_on=[account.resource]),
        )

    def inside(self, account: LandedAccount, needs: list[QuotaNeed]) -> list[pulumi.Resource]:
        provider = self.member_provider(account)
        opts = pulumi.ResourceOptions(parent=self.opts.parent, provider=provider)
        made: list[pulumi.Resource] = []
        for need in needs:
            code = need.code
            made.append(
                aws.servicequotas.ServiceQuota(
                    f"{self.prefix}-{account.side}-{need.region}-{code}",
                    service_code=SERVICE_CODE,
                    quota_code=code,
                    value=float(need.amount),
                    region=need.region,
                    opts=opts,
                )
            )
        side = self.spec.side(account.side)
        made.append(
            aws.budgets.Budget(
                f"{self.prefix}-{account.side}-budget",
                name=f"accelstack-{account.side}",
                budget_type="COST",
                time_unit="MONTHLY",
                limit_amount=f"{side.monthly_budget_usd:.2f}",
                limit_unit="USD",
                notifications=[
                    aws.budgets.BudgetNotificationArgs(
                        comparison_operator="GREATER_THAN",
                        notification_type=kind,
                        threshold=threshold,
                        threshold_type="PERCENTAGE",
                        subscriber_email_addresses=list(self.spec.organization.alert_emails),
                    )
                    for kind, threshold in BUDGET_ALERTS
                ],
                opts=opts,
            )
        )
        return made


def mock_account_id(name: str) -> str:
    """A 12-digit account id for a mocked aws.organizations.Account (its resource id is the account id)."""
    return str(int(hashlib.sha256(name.encode()).hexdigest(), 16))[:12]


def build_landing(spec: LandingStack, plan: LandingPlan) -> LandingRecipe:
    """The landing stack, from the management account: the provider pinned to it (and its deploy role)."""
    account = spec.account
    if not isinstance(account, AwsAccount):
        raise TypeError(f"stack {spec.stack}: an AWS landing stack needs an AWS account block")
    root = pulumi.ComponentResource("accelstack:aws:LandingStack", spec.stack)
    provider = aws.Provider(
        f"{spec.stack}-aws",
        region=account.region,
        allowed_account_ids=[account.id],
        assume_roles=(
            [aws.ProviderAssumeRoleArgs(role_arn=account.deploy_role, session_name=f"accelstack-{spec.stack}")]
            if account.deploy_role
            else None
        ),
        default_tags=aws.ProviderDefaultTagsArgs(
            tags={"accelstack:workload": "landing", "accelstack:stack": spec.stack}
        ),
        opts=pulumi.ResourceOptions(parent=root),
    )
    parts = AwsLandingParts(spec, plan, pulumi.ResourceOptions(parent=root, provider=provider))
    return LandingRecipe(spec.stack, parts, pulumi.ResourceOptions(parent=root))
