"""The stack's one explicit vultr provider, bound to the account its API key belongs to, and the secrets the stack
reads by reference (the API key, the load balancer's certificate): the stack file names where each is kept, never
the value (accelstack.spec.accounts.SECRET_REFERENCE)."""

from __future__ import annotations

import os

import ediri_vultr as vultr
import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings

from accelstack.spec import StackSpec
from accelstack.spec.accounts import VultrAccount

# Vultr's API answers 429 past 30 requests per second per key (docs.vultr.com/reference/api: rate limit): the
# provider paces itself under it and retries what was refused.
API_RATE_LIMIT_MS = 500
API_RETRY_LIMIT = 5


def account_of(spec: StackSpec) -> VultrAccount:
    account = spec.account
    if not isinstance(account, VultrAccount):
        raise TypeError(
            f"stack {spec.stack}: the Vultr provider needs a Vultr account block, got {type(account).__name__}"
        )
    return account


def stack_tags(spec: StackSpec) -> list[str]:
    """Vultr tags are plain strings: `accelstack:workload=serving`, `accelstack:stack=<name>`."""
    return [f"accelstack:workload={spec.workload}", f"accelstack:stack={spec.stack}"]


def _offline() -> bool:
    """Under Pulumi mocks (`accelstack preview` offline, unit tests): no deployer's secrets exist there."""
    return isinstance(settings.SETTINGS.monitor, pulumi_mocks.MockMonitor)


def secret_value(reference: str, what: str) -> pulumi.Output[str]:
    """The secret `reference` names (env:<VARIABLE> or config:<namespace>:<key>), as a secret Output. Missing at
    deploy time is an error naming the reference; offline it is a placeholder (nothing is created)."""
    kind, _, rest = reference.partition(":")
    value: pulumi.Input[str] | None
    if kind == "env":
        value = os.environ.get(rest)
    else:
        namespace, _, key = rest.partition(":")
        value = pulumi.Config(namespace).get_secret(key)
    if value is None:
        if _offline():
            return pulumi.Output.secret(f"<{what} from {reference}>")
        raise ValueError(
            f"{what}: {reference} is not set; "
            + (
                f"export {rest} before `pulumi up`"
                if kind == "env"
                else f"`pulumi config set --secret {rest.replace(':', ':', 1)} ...`"
            )
        )
    return pulumi.Output.secret(value)


def vultr_provider(spec: StackSpec, parent: pulumi.Resource) -> vultr.Provider:
    """Deploys only into the account of the referenced API key (Vultr's only account binding)."""
    account = account_of(spec)
    return vultr.Provider(
        f"{spec.stack}-vultr",
        api_key=secret_value(account.api_key_secret, "the Vultr API key"),
        rate_limit=API_RATE_LIMIT_MS,
        retry_limit=API_RETRY_LIMIT,
        opts=pulumi.ResourceOptions(parent=parent),
    )
