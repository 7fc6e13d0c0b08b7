"""Azure training artifacts read from GCP or AWS replicas: a user-assigned managed identity in the TRAINING
subscription (its own resource group, in the store's location) with one federated identity credential naming the
replicas' identity exactly, and Storage Blob Data Reader conditioned (ABAC) to the storage account, the container and
the artifact prefix. learn.microsoft.com/entra/workload-id/workload-identity-federation-create-trust-user-assigned-managed-identity.

- Google: issuer https://accounts.google.com, subject the service account's unique id.
- AWS: the serving account's outbound identity federation issuer (IAM's GetWebIdentityToken; the account enables
  it once), subject the replica role's ARN.
Blob URLs do not name the account's resource group, so the scope is the subscription and the condition narrows it.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_azure_native as azure_native

from accelstack.components.azure.serving.identity import (
    BLOB_PATH,
    BLOB_READ,
    CONTAINER_NAME,
    STORAGE_BLOB_DATA_READER,
    assignment_name,
    role_definition,
)
from accelstack.components.handoff import FederatedReader, ReaderValues, ServingIdentity
from accelstack.spec.handoff import ArtifactHandoff

TOKEN_EXCHANGE_AUDIENCE = "api://AzureADTokenExchange"  # the audience Entra's federated credentials take
ACCOUNT_NAME = "@Resource[Microsoft.Storage/storageAccounts:name]"


def prefix_condition(handoff: ArtifactHandoff) -> str:
    """Reads only under the artifact prefixes, listings only of their containers, in their storage accounts."""
    read = f"ActionMatches{{'{BLOB_READ}'}} AND NOT SubOperationMatches{{'Blob.List'}}"
    listing = f"ActionMatches{{'{BLOB_READ}'}} AND SubOperationMatches{{'Blob.List'}}"
    reads = " OR ".join(
        f"({ACCOUNT_NAME} StringEquals '{loc.storage_account}' AND {CONTAINER_NAME} StringEquals '{loc.bucket}'"
        + (f" AND {BLOB_PATH} StringStartsWith '{loc.prefix}'" if loc.prefix else "")
        + ")"
        for loc in handoff.locations
    )
    lists = " OR ".join(
        f"({ACCOUNT_NAME} StringEquals '{loc.storage_account}' AND {CONTAINER_NAME} StringEquals '{loc.bucket}')"
        for loc in handoff.locations
    )
    return f"((!({read})) OR ({reads})) AND ((!({listing})) OR ({lists}))"


def azure_reader(
    name: str, handoff: ArtifactHandoff, identity: ServingIdentity, parent: pulumi.Resource
) -> FederatedReader:
    subscription = handoff.training_account
    provider = azure_native.Provider(
        f"{name}-artifacts-azure",
        subscription_id=subscription,  # the reader lands in the training subscription only
        location=handoff.region,
        opts=pulumi.ResourceOptions(parent=parent),
    )
    opts = pulumi.ResourceOptions(parent=parent, provider=provider)
    # azure-native has no provider-wide default tags (the AWS and GCP readers' providers stamp theirs): the reader's
    # taggable resources carry the serving side's tags themselves, as every Azure component's do.
    tags = {"accelstack:workload": "serving", "accelstack:stack": pulumi.get_stack()}
    group = azure_native.resources.ResourceGroup(
        f"{name}-artifact-reader", location=handoff.region, tags=tags, opts=opts
    )
    reader = azure_native.managedidentity.UserAssignedIdentity(
        f"{name}-artifact-reader", resource_group_name=group.name, location=handoff.region, tags=tags, opts=opts
    )
    if identity.cloud == "gcp":
        issuer: pulumi.Input[str] = "https://accounts.google.com"
        grants: list[pulumi.Resource] = []
    else:
        federation = aws_outbound_federation(name, parent)
        issuer = federation.issuer_identifier
        grants = [federation]
    credential = azure_native.managedidentity.FederatedIdentityCredential(
        f"{name}-artifact-reader",
        resource_group_name=group.name,
        resource_name_=reader.name,
        federated_identity_credential_resource_name=f"{name}-replicas"[:120],
        issuer=issuer,
        subject=identity.subject,  # exactly the replicas' identity; Entra matches it verbatim
        audiences=[TOKEN_EXCHANGE_AUDIENCE],
        opts=opts,
    )
    condition = prefix_condition(handoff)
    assignment = azure_native.authorization.RoleAssignment(
        f"{name}-artifact-read",
        role_assignment_name=assignment_name(subscription, name, "artifact-read"),
        scope=f"/subscriptions/{subscription}",
        role_definition_id=role_definition(subscription, STORAGE_BLOB_DATA_READER),
        principal_id=reader.principal_id,
        principal_type="ServicePrincipal",
        condition=condition,
        condition_version="2.0",
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(delete_before_replace=True)),
    )
    grants += [credential, assignment]
    values = pulumi.Output.all(reader.client_id, reader.tenant_id).apply(
        lambda v: ReaderValues(token_audience=TOKEN_EXCHANGE_AUDIENCE, client_id=v[0], tenant_id=v[1])
    )
    return FederatedReader(handoff, values, grants)


def aws_outbound_federation(name: str, parent: pulumi.Resource) -> Any:
    """The serving account's outbound identity federation (IAM, "Outbound identity federation"): what lets the
    replica role ask STS for a signed JWT (GetWebIdentityToken) another cloud trusts; an account-wide switch,
    declared with the serving account's own provider (the service's)."""
    import pulumi_aws as aws

    return aws.iam.OutboundWebIdentityFederation(
        f"{name}-outbound-federation", opts=pulumi.ResourceOptions(parent=parent)
    )
