"""The stack's one explicit gcp provider, pinned to the stack's project and region.

The pin is the provider's `project` (and every resource's `project`, which the components leave unset
or set to the same project: the separation pack checks both). Labels reach every labelled resource
through the provider's `default_labels`. GCP label keys allow only lowercase letters, digits, `-` and
`_`, so the stack's tags are spelled `accelstack-workload`, `accelstack-stack`.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from accelstack.spec import StackSpec
from accelstack.spec.accounts import GcpAccount

CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"  # IAM decides what a VM may do, not scopes


def account_of(spec: StackSpec) -> GcpAccount:
    account = spec.account
    if not isinstance(account, GcpAccount):
        raise TypeError(f"stack {spec.stack}: the GCP provider needs a GCP account block, got {type(account).__name__}")
    return account


def stack_labels(spec: StackSpec) -> dict[str, str]:
    """Labels every resource carries (stable across config edits, as on AWS)."""
    return {"accelstack-workload": spec.workload, "accelstack-stack": spec.stack}


def resource_id(stack: str, suffix: str, limit: int) -> str:
    """An id Google takes for a resource the stack names itself (service accounts: 6..30 characters, Managed
    Lustre instances: 1..63; both start with a letter and end with a letter or digit): `<stack>-<suffix>`,
    the stack's part shortened (never the suffix, so a long stack name cannot make two ids collide) and
    prefixed with "s" when the stack name starts with a digit (stack names may)."""
    base = stack if stack[:1].isalpha() else f"s{stack}"
    base = base[: limit - len(suffix) - 1].rstrip("-")
    return f"{base}-{suffix}"


def gcp_provider(spec: StackSpec, parent: pulumi.Resource) -> gcp.Provider:
    """Deploys only into the stack's project and region; as the deploy service account (impersonated)
    when the account names one."""
    account = account_of(spec)
    return gcp.Provider(
        f"{spec.stack}-gcp",
        project=account.project_id,
        region=account.region,
        impersonate_service_account=account.deploy_service_account,
        default_labels=stack_labels(spec),
        opts=pulumi.ResourceOptions(parent=parent),
    )
