"""The stack's one explicit gcp provider, pinned to the stack's project and region.

The pin is the provider's `project` (and every resource's `project`, which the components leave unset
or set to the same project: the separation pack checks both). Labels reach every labelled resource
through the provider's `default_labels`. GCP label keys allow only lowercase letters, digits, `-` and
`_`, so the stack's tags are spelled `accelstack-workload`, `accelstack-stack`.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from accelstack.clouds.gcp.names import resource_id as resource_id  # one place for GCP names
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


def gcp_provider(spec: StackSpec, parent: pulumi.Resource) -> gcp.Provider:
    """Deploys only into the stack's project and region; as the deploy service account (impersonated)
    when the account names one."""
    account = account_of(spec)
    project: pulumi.Input[str] = account.project_id
    if spec.landing is not None:
        # The landing stack made the project: the provider takes its id from the landing stack's outputs, so a
        # stack wired to a landing stack deploys into the project made for its side (the landing stack refuses to
        # list a stack whose account.projectId, which its resources name, is not that project: landing_problems).
        landing = pulumi.StackReference(
            f"{spec.stack}-landing", stack_name=spec.landing.stack, opts=pulumi.ResourceOptions(parent=parent)
        )
        project = landing.require_output(f"{spec.workload}AccountId")
    return gcp.Provider(
        f"{spec.stack}-gcp",
        project=project,
        region=account.region,
        impersonate_service_account=account.deploy_service_account,
        default_labels=stack_labels(spec),
        opts=pulumi.ResourceOptions(parent=parent),
    )
