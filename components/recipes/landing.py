"""The landing recipe: the neutral order a landing stack is built in, over a cloud's typed landing parts.

Order matters at the API: each side's container group and its guardrails come first, so an account is
created (or moved) into a group whose policies already apply; the accounts next; then what names both accounts
(the guardrail that keeps each side's principals off the other's resources), and last what is created inside
each account through its deploy role (quota requests, budget). The recipe owns the outputs the workload stacks
read through a stack reference (`accelstack.components.landing_outputs`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import pulumi

from accelstack.planner.landing_plan import LandingPlan, QuotaNeed
from accelstack.spec.landing import SIDES, LandingStack

STACK_REFERENCE = "pulumi:pulumi:StackReference"


def landing_reference_outputs(args: Any, account_id: str, **per_side: str) -> dict[str, Any]:
    """What a stack reference to a landing stack answers under each cloud's mocks: the recipe's outputs for this
    stack's account on either side (`per_side`: more of them, e.g. AWS's DeployRoleArn)."""
    values = {"AccountId": account_id, **per_side}
    landed = {f"{side}{key}": value for side in SIDES for key, value in values.items()}
    return {"name": args.inputs.get("name", args.name), "outputs": landed, "secretOutputNames": []}


@dataclass(frozen=True)
class LandedAccount:
    """A side's account as the parts made it: its id and the role the workload stacks' providers assume."""

    side: str
    account_id: pulumi.Output[str]
    deploy_role_arn: pulumi.Output[str] | None  # None: the cloud has no role to assume (GCP impersonates)
    resource: pulumi.Resource  # what the resources inside it wait for


class LandingParts(ABC):
    """A cloud's landing resources. Each method creates them under `self.opts` (the component's parent and
    the management account's provider) and returns what the next step needs."""

    def __init__(self, spec: LandingStack, plan: LandingPlan, opts: pulumi.ResourceOptions):
        self.spec = spec
        self.plan = plan
        self.opts = opts

    @property
    def prefix(self) -> str:
        """Resource names start with the stack's name."""
        return self.spec.stack

    @abstractmethod
    def group(self, side: str) -> pulumi.CustomResource:
        """The side's container group (an AWS OU); its id is what guardrails attach to."""

    @abstractmethod
    def guardrails(self, groups: dict[str, pulumi.CustomResource]) -> list[pulumi.Resource]:
        """The policies that need no account id, attached to the groups; the accounts wait for them."""

    @abstractmethod
    def account(self, side: str, group: pulumi.CustomResource, after: list[pulumi.Resource]) -> LandedAccount:
        """The side's account in its group, created after `after`."""

    @abstractmethod
    def apart(
        self, groups: dict[str, pulumi.CustomResource], accounts: dict[str, LandedAccount]
    ) -> list[pulumi.Resource]:
        """The guardrails that name the other side's account."""

    @abstractmethod
    def inside(self, account: LandedAccount, needs: list[QuotaNeed]) -> list[pulumi.Resource]:
        """What is created in the account itself (through its deploy role): quota requests, the budget."""

    def side_outputs(self, side: str) -> dict[str, pulumi.Input[Any]]:
        """What else the side's workload stacks read from the landing stack (exported as `<side><Key>`), beyond
        its account id and deploy role: none unless the cloud makes something they use (OCI: its nodes' dynamic
        group)."""
        return {}


class LandingRecipe(pulumi.ComponentResource):
    """A landing stack on any cloud; `outputs` holds what the workload stacks read from it."""

    def __init__(self, name: str, parts: LandingParts, opts: pulumi.ResourceOptions | None = None):
        super().__init__("accelstack:landing:Landing", name, None, opts)
        parts.opts = pulumi.ResourceOptions.merge(parts.opts, pulumi.ResourceOptions(parent=self))
        self.parts = parts
        self.groups = {side: parts.group(side) for side in SIDES}
        self.guardrails = parts.guardrails(self.groups)
        self.accounts = {side: parts.account(side, self.groups[side], self.guardrails) for side in SIDES}
        self.apart = parts.apart(self.groups, self.accounts)
        self.inside = {side: parts.inside(self.accounts[side], parts.plan.side_needs(side)) for side in SIDES}
        self.outputs = self.landing_outputs()
        self.register_outputs(self.outputs)

    def landing_outputs(self) -> dict[str, pulumi.Input[Any]]:
        exported: dict[str, pulumi.Input[Any]] = {}
        for side, account in self.accounts.items():
            exported[f"{side}AccountId"] = account.account_id
            if account.deploy_role_arn is not None:
                exported[f"{side}DeployRoleArn"] = account.deploy_role_arn
            exported[f"{side}GroupId"] = self.groups[side].id
            exported.update({f"{side}{key}": value for key, value in self.parts.side_outputs(side).items()})
        exported["quotaRequests"] = [
            {"side": n.side, "region": n.region, "quota": n.quota, "unit": n.unit, "amount": n.amount}
            for n in self.parts.plan.needs
        ]
        return exported
