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


def landed_compartment(spec: StackSpec, landed: str) -> str:
    """The landing stack's compartment for this stack's side, which must be account.compartmentOcid."""
    configured = account_of(spec).compartment_ocid
    if landed != configured:
        raise ValueError(
            f"stack {spec.stack}: account.compartmentOcid {configured} is not the {spec.workload} compartment "
            f"{spec.landing.stack if spec.landing else 'the landing stack'} made ({landed}); set it to {landed}"
        )
    return landed


def landed_nodes_group(spec: StackSpec, parent: pulumi.Resource) -> pulumi.Output[str]:
    """The name of the dynamic group the landing stack made for this stack's side (its `<side>NodesGroupName`:
    every instance of the side's compartment, components/oci/landing.py). A reference of its own, beside the
    provider's: a stack reference only reads the landing stack's outputs, and the provider's is made before the
    parts exist."""
    assert spec.landing is not None
    landing = pulumi.StackReference(
        f"{spec.stack}-landing-nodes", stack_name=spec.landing.stack, opts=pulumi.ResourceOptions(parent=parent)
    )
    return landing.require_output(f"{spec.workload}NodesGroupName").apply(str)


def oci_provider(spec: StackSpec, parent: pulumi.Resource) -> oci.Provider:
    """Deploys only for the stack's tenancy and region; the credentials are the deployer's (~/.oci/config or an
    instance principal), never in the stack."""
    account = account_of(spec)
    tenancy: pulumi.Input[str] = account.tenancy_ocid
    if spec.landing is not None:
        # The landing stack made the compartment (components/oci/landing.py) and OCI assigned its OCID, which this
        # stack writes into policy statements and matching rules as text: account.compartmentOcid must be the one
        # made for this side. The provider waits on the check, so a stack pointed at any other compartment fails
        # before it creates anything rather than deploy across sides.
        landing = pulumi.StackReference(
            f"{spec.stack}-landing", stack_name=spec.landing.stack, opts=pulumi.ResourceOptions(parent=parent)
        )
        tenancy = landing.require_output(f"{spec.workload}AccountId").apply(
            lambda landed: landed_compartment(spec, str(landed)) and account.tenancy_ocid
        )
    return oci.Provider(
        f"{spec.stack}-oci",
        tenancy_ocid=tenancy,
        region=account.region,
        opts=pulumi.ResourceOptions(parent=parent),
    )
