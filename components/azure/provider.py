"""The stack's one explicit azure-native provider, pinned to the stack's subscription, tenant and location,
and the resource group everything of the stack lives in.

azure-native has no guard like the AWS provider's `allowed_account_ids`: the pin is the explicit
`subscription_id`/`tenant_id` here (the spec checks the subscription is the stack's side, the separation
pack checks the provider's inputs), and azure-native has no default tags either, so every taggable
resource passes `tags=stack_tags(spec)` itself (the conformance suite checks each one).
"""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure_native

from accelstack.clouds.azure import names
from accelstack.spec import StackSpec
from accelstack.spec.accounts import AzureAccount


def account_of(spec: StackSpec) -> AzureAccount:
    account = spec.account
    if not isinstance(account, AzureAccount):
        raise TypeError(
            f"stack {spec.stack}: the Azure provider needs an Azure account block, got {type(account).__name__}"
        )
    return account


def stack_tags(spec: StackSpec) -> dict[str, str]:
    """Tags every Azure resource carries. Stable across config edits (the config digest would make every
    edit an update of every resource); scale sets add the digest themselves, as AWS's groups do."""
    return {"accelstack:workload": spec.workload, "accelstack:stack": spec.stack}


def landed_subscription(spec: StackSpec, landed: str) -> str:
    """The landing stack's subscription for this stack's side, which must be account.subscriptionId."""
    configured = account_of(spec).subscription_id
    if landed.lower() != configured.lower():
        raise ValueError(
            f"stack {spec.stack}: account.subscriptionId {configured} is not the {spec.workload} subscription "
            f"{spec.landing.stack if spec.landing else 'the landing stack'} made ({landed}); set it to {landed}"
        )
    return landed


def azure_provider(spec: StackSpec, parent: pulumi.Resource) -> azure_native.Provider:
    """Deploys only into the stack's subscription and tenant, in its location; as the deploy identity
    (a service principal or user-assigned managed identity's client id) when the account names one."""
    account = account_of(spec)
    subscription: pulumi.Input[str] = account.subscription_id
    if spec.landing is not None:
        # The landing stack made the subscription (components/azure/landing.py): the provider deploys into the
        # one made for this stack's side, read from the landing stack's outputs rather than copied by hand.
        landing = pulumi.StackReference(
            f"{spec.stack}-landing", stack_name=spec.landing.stack, opts=pulumi.ResourceOptions(parent=parent)
        )
        # ARM assigns a subscription's id when the landing stack creates it, and this stack writes its
        # subscription into ARM ids (role definitions, gateway ids): account.subscriptionId must be the one made
        # for this side, and a stack pointed at any other subscription fails here rather than deploy across sides.
        subscription = landing.require_output(f"{spec.workload}AccountId").apply(
            lambda landed: landed_subscription(spec, str(landed))
        )
    return azure_native.Provider(
        f"{spec.stack}-azure-native",
        subscription_id=subscription,
        tenant_id=account.tenant_id,
        location=account.region,
        client_id=account.deploy_identity,
        opts=pulumi.ResourceOptions(parent=parent),
    )


def resource_group(spec: StackSpec, opts: pulumi.ResourceOptions) -> azure_native.resources.ResourceGroup:
    """The stack's resource group. Its name is fixed (`<stack>-rg`, not auto-named): it is part of every
    child's id, and a rename replaces everything in it, so it is protected like the state it holds."""
    account = account_of(spec)
    return azure_native.resources.ResourceGroup(
        f"{spec.stack}-rg",
        resource_group_name=names.resource_group_name(spec.stack),
        location=account.region,
        tags=stack_tags(spec),
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(protect=True)),
    )
