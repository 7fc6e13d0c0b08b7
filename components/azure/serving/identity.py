"""The serving identities and their least data-plane roles.

- Replicas: a user-assigned identity that receives from the request queue and sends to the response queue
  (Azure Service Bus Data Receiver / Sender, scoped to each queue), and reads the model weights.
- The gateway: its own user-assigned identity that reads the listener certificate's secret from Key Vault
  (Key Vault Secrets User on that secret; learn.microsoft.com/azure/application-gateway/key-vault-certs).
- The Standby Pool resource provider: Virtual Machine Contributor, Network Contributor and Managed Identity
  Operator on the resource group, before the pool exists
  (learn.microsoft.com/azure/virtual-machine-scale-sets/standby-pools-configure-permissions).

The gateway and the standby pool use their grants when they are created: each waits for them to propagate
(`gateway_ready`, `standby_ready`: components/propagation.py). The replicas use theirs from their first boot on,
and the queue worker and the weights download retry.

The weights live in the TRAINING subscription's storage account. When serving.artifactAccount names that
subscription, this stack assigns Storage Blob Data Reader there with a role assignment condition (Azure ABAC,
learn.microsoft.com/azure/storage/blobs/storage-auth-abac-examples): reads only under the weights' container and
prefix, listing only in that container, both only in the weights' storage account. The scope is the training
subscription because a Blob URL does not say which resource group holds the account (and a scope must); the
condition narrows it to the account and container (a container of the same name in another account of that
subscription stays closed). The
deploy identity needs roleAssignments/write there (Role Based Access Control Administrator, itself conditioned).
"""

from __future__ import annotations

import uuid

import pulumi
import pulumi_azure_native as azure_native

from accelstack.clouds.azure import catalog
from accelstack.clouds.azure.rules import blob_uri_parts
from accelstack.clouds.azure.serving_rules import certificate_secret
from accelstack.components.azure.serving.placement import Placement
from accelstack.components.azure.serving.queue import AdmissionQueue
from accelstack.components.propagation import PropagationWaits
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.copies import own_cloud_artifact_account
from accelstack.spec.models import ServingSpec

# Built-in role definition ids (learn.microsoft.com/azure/role-based-access-control/built-in-roles).
SERVICE_BUS_DATA_RECEIVER = "4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0"
SERVICE_BUS_DATA_SENDER = "69a216fc-b8fb-44d8-bc22-1f3c2cd27a39"
STORAGE_BLOB_DATA_READER = "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1"
KEY_VAULT_SECRETS_USER = "4633458b-17de-408a-b874-0445c86b69e6"
VIRTUAL_MACHINE_CONTRIBUTOR = "9980e02c-c2be-4d73-94e8-173b1dc7cf3c"
NETWORK_CONTRIBUTOR = "4d97b98b-1d4f-4787-a291-c67834d212e7"
MANAGED_IDENTITY_OPERATOR = "f1a07417-d97a-45cb-824c-7a7467783830"
STANDBY_POOL_ROLES = {
    "vm-contributor": VIRTUAL_MACHINE_CONTRIBUTOR,
    "network-contributor": NETWORK_CONTRIBUTOR,
    "identity-operator": MANAGED_IDENTITY_OPERATOR,
}
BLOB_READ = "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read"
# ABAC attributes (learn.microsoft.com/azure/storage/blobs/storage-auth-abac-attributes: "Account name",
# "Container name", "Blob path").
ACCOUNT_NAME = "@Resource[Microsoft.Storage/storageAccounts:name]"
CONTAINER_NAME = "@Resource[Microsoft.Storage/storageAccounts/blobServices/containers:name]"
BLOB_PATH = "@Resource[Microsoft.Storage/storageAccounts/blobServices/containers/blobs:path]"


def role_definition(subscription_id: str, role: str) -> str:
    return f"/subscriptions/{subscription_id}/providers/Microsoft.Authorization/roleDefinitions/{role}"


def assignment_name(*parts: str) -> str:
    """Role assignment names are GUIDs; a stable one per (scope, principal, role) keeps re-runs idempotent."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "accelstack:" + ":".join(parts)))


def models_read_condition(weights_uri: str) -> str | None:
    """An ABAC condition (version 2.0) that lets blob reads happen only under the weights' account, container and
    prefix, and blob listing only in that account's container; None if `weights_uri` is not a Blob URL."""
    parts = blob_uri_parts(weights_uri)
    if parts is None:
        return None
    account, container, prefix = parts
    read = f"ActionMatches{{'{BLOB_READ}'}} AND NOT SubOperationMatches{{'Blob.List'}}"
    listing = f"ActionMatches{{'{BLOB_READ}'}} AND SubOperationMatches{{'Blob.List'}}"
    in_container = f"{ACCOUNT_NAME} StringEquals '{account}' AND {CONTAINER_NAME} StringEquals '{container}'"
    under_prefix = f" AND {BLOB_PATH} StringStartsWith '{prefix}/'" if prefix else ""
    return f"((!({read})) OR ({in_container}{under_prefix})) AND ((!({listing})) OR ({in_container}))"


def grant(placement: Placement, name: str, scope: pulumi.Input[str], role: str, principal: pulumi.Input[str],
          *, subscription_id: str | None = None, condition: str | None = None) -> pulumi.Resource:  # fmt: skip
    """A role assignment, a child of the service (not of `ServingIdentities`: its URN predates that component)."""
    return azure_native.authorization.RoleAssignment(
        name,
        scope=scope,
        role_definition_id=role_definition(subscription_id or placement.subscription_id, role),
        principal_id=principal,
        principal_type="ServicePrincipal",  # skips the directory lookup that races a new identity's replication
        condition=condition,
        condition_version="2.0" if condition else None,
        # A new condition (another model) replaces the assignment; Azure refuses a second one with the same
        # principal, role and scope (RoleAssignmentExists), so the old goes first. Replicas hold their weights.
        opts=pulumi.ResourceOptions.merge(placement.opts, pulumi.ResourceOptions(delete_before_replace=True))
        if condition
        else placement.opts,
    )


class ServingIdentities(pulumi.ComponentResource):
    """`replicas` and `gateway` (user-assigned identities), `replica_grants`, `gateway_grants`,
    `standby_grants` (each a list of role assignments), and what the gateway and the standby pool wait for
    instead of their bare grants: `gateway_ready`, `standby_ready` (their propagation)."""

    def __init__(
        self,
        name: str,
        serving: ServingSpec,
        plan: ServingPlan,
        queue: AdmissionQueue | None,
        placement: Placement,
        *,
        standby_pool_principal_id: str | None,
    ):
        super().__init__("accelstack:azure:ServingIdentities", name, None, placement.opts)
        child = pulumi.ResourceOptions(parent=self)
        rg, tags = placement.resource_group.name, placement.tags
        self.replicas = azure_native.managedidentity.UserAssignedIdentity(
            f"{name}-replicas", resource_group_name=rg, tags=tags, opts=child
        )
        self.gateway = azure_native.managedidentity.UserAssignedIdentity(
            f"{name}-gateway", resource_group_name=rg, tags=tags, opts=child
        )
        replica = self.replicas.principal_id
        # Without a queue (admission on the replicas) the replicas only read the models.
        self.replica_grants: list[pulumi.Resource] = (
            [
                grant(placement, f"{name}-replicas-receive", queue.requests.id, SERVICE_BUS_DATA_RECEIVER, replica),
                grant(placement, f"{name}-replicas-reply", queue.responses.id, SERVICE_BUS_DATA_SENDER, replica),
            ]
            if queue is not None
            else []
        )
        # The training subscription holds the checkpoint account; weights copied from another cloud (a copy's
        # source account is that cloud's) are in this stack's own subscription's store.
        training_subscription = own_cloud_artifact_account(serving.artifact_account, "azure") or (
            placement.subscription_id if serving.artifact_account and serving.model.copy_from else None
        )
        condition = models_read_condition(serving.model.weights_uri)
        if training_subscription and condition is not None:  # else: handoff
            self.replica_grants.append(
                grant(
                    placement,
                    f"{name}-replicas-models",
                    f"/subscriptions/{training_subscription}",
                    STORAGE_BLOB_DATA_READER,
                    replica,
                    subscription_id=training_subscription,
                    condition=condition,
                )
            )
        self.gateway_grants: list[pulumi.Resource] = [
            grant(
                placement,
                f"{name}-gateway-certificate",
                certificate_secret_scope(serving.load_balancer.certificate),
                KEY_VAULT_SECRETS_USER,
                self.gateway.principal_id,
            )
        ]
        self.standby_grants: list[pulumi.Resource] = []
        principal = standby_pool_principal_id
        if plan.warm_pool_size > 0 and principal:
            self.standby_grants = [
                grant(placement, f"{name}-standby-{label}", placement.resource_group.id, role, principal)
                for label, role in STANDBY_POOL_ROLES.items()
            ]
        # The gateway reads its certificate from Key Vault at creation (else its HTTPS listener is disabled); the
        # pool's provider creates and deallocates VMs as soon as the pool exists.
        waits = PropagationWaits(name, self)
        self.gateway_ready = waits.after(
            f"{name}-gateway-certificate", self.gateway_grants, catalog.KEY_VAULT_RBAC_PROPAGATION_SECONDS
        )
        self.standby_ready = waits.after(f"{name}-standby", self.standby_grants, catalog.RBAC_PROPAGATION_SECONDS)
        self.register_outputs({"replicas": self.replicas.id, "gateway": self.gateway.id})


def certificate_secret_scope(certificate: str) -> str:
    """The certificate's secret, by its ARM id (the spec rules check the form)."""
    match = certificate_secret(certificate)
    if match is None:
        raise ValueError(f"serving.loadBalancer.certificate: {certificate!r} is not a Key Vault secret's resource id")
    return match.group(0)


def certificate_secret_uri(certificate: str) -> str:
    """What the gateway's sslCertificates take: the versionless secret URI, so renewals are picked up."""
    match = certificate_secret(certificate)
    if match is None:
        raise ValueError(f"serving.loadBalancer.certificate: {certificate!r} is not a Key Vault secret's resource id")
    return f"https://{match['vault']}.vault.azure.net/secrets/{match['secret']}"
