"""The stack's one explicit oci provider, pinned to the stack's tenancy and region.

Separation on OCI is by compartment: the provider signs for the tenancy (`tenancy_ocid`), and every resource the
components create names the stack's compartment (`compartment_id`); the packs check both. Free-form tags reach
each resource from `stack_tags` (the provider has no default tags).
"""

from __future__ import annotations

import pulumi
import pulumi_oci as oci

from accelstack.spec import StackSpec
from accelstack.spec.accounts import OciAccount


def account_of(spec: StackSpec) -> OciAccount:
    account = spec.account
    if not isinstance(account, OciAccount):
        raise TypeError(
            f"stack {spec.stack}: the OCI provider needs an OCI account block, got {type(account).__name__}"
        )
    return account


def stack_tags(spec: StackSpec, digest: str | None = None) -> dict[str, str]:
    """Free-form tags every resource carries (stable across config edits, as on the other clouds)."""
    tags = {"accelstack-workload": spec.workload, "accelstack-stack": spec.stack}
    if digest is not None:
        tags["accelstack-config-digest"] = digest
    return tags


def oci_provider(spec: StackSpec, parent: pulumi.Resource) -> oci.Provider:
    """Deploys only for the stack's tenancy and region; the credentials are the deployer's (~/.oci/config or an
    instance principal), never in the stack."""
    account = account_of(spec)
    return oci.Provider(
        f"{spec.stack}-oci",
        tenancy_ocid=account.tenancy_ocid,
        region=account.region,
        opts=pulumi.ResourceOptions(parent=parent),
    )
