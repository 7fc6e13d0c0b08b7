"""Training storage on Azure: the stack's Key Vault key, the dataset and checkpoint storage accounts, and
Azure Managed Lustre importing the dataset container (Blob integration, "HSM").

- Encryption: a customer-managed RSA key in the stack's Key Vault (RBAC, purge protection: required for a
  storage account's customer-managed key, learn.microsoft.com/azure/storage/common/customer-managed-keys-
  overview), used by both storage accounts and the file system through the stack's storage identity
  (a user-assigned identity holding "Key Vault Crypto Service Encryption User" on the key, granted, and
  propagated, before anything uses it: components/propagation.py). Exported as `encryptionKey`. The VMs'
  disks keep platform-managed keys (a disk encryption set is not built yet).
- Datasets: their own account; shared-key access stays on and hierarchical namespace off, as the Blob
  integration requires, with its logging container apart from the data container (amlfs-prerequisites,
  "Blob integration prerequisites").
- Checkpoints: their own account, no shared key (identities only), blob versioning, soft delete for blobs
  and containers, old versions expiring after `noncurrentVersionDays`; the account and container are
  protected and retained on delete. Managed Lustre exports only to the container it imports from, so the
  Slurm head node copies completed checkpoints here (never deleting or overwriting: components/slurm).
- Later data: the Blob integration imports its prefix at creation only; an import job imports it again whenever
  `training.storage.lustre.importTrigger` changes (`_import_job`).
- The "HPC Cache Resource Provider" service principal holds Storage Account Contributor and Storage Blob
  Data Contributor on the dataset account BEFORE the file system is created (amlfs-prerequisites): the
  file system waits for both role assignments to propagate ("up to five minutes", the same page).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence

import pulumi
import pulumi_azure_native as azure_native

from accelstack.clouds.azure import catalog, names
from accelstack.clouds.azure.rules import blob_uri_parts
from accelstack.components.azure.provider import account_of, stack_tags
from accelstack.components.propagation import PropagationWaits
from accelstack.planner.training_plan import PlannedFileSystem
from accelstack.spec.models import TrainingStack

# Built-in role definition ids (learn.microsoft.com/azure/role-based-access-control/built-in-roles).
STORAGE_ACCOUNT_CONTRIBUTOR = "17d1049b-9a84-46fb-8f53-869881c3d3ab"
STORAGE_BLOB_DATA_CONTRIBUTOR = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"
STORAGE_BLOB_DATA_READER = "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1"  # read and list, nothing else
KEY_VAULT_SECRETS_USER = "4633458b-17de-408a-b874-0445c86b69e6"  # read secret contents
KEY_VAULT_CRYPTO_SERVICE_ENCRYPTION_USER = "e147488a-f6f5-4113-8e2d-b22465e65bf6"  # get, wrap, unwrap keys

# Storage Blob Data Contributor also deletes blobs: checkpoint writers get a custom role without delete.
BLOBS = "Microsoft.Storage/storageAccounts/blobServices/containers/blobs"
CHECKPOINT_WRITER_ACTIONS = ("Microsoft.Storage/storageAccounts/blobServices/containers/read",)
CHECKPOINT_WRITER_DATA_ACTIONS = (f"{BLOBS}/read", f"{BLOBS}/write", f"{BLOBS}/add/action")

KEY_SIZE = 3072
# Managed Lustre takes a 2048-bit RSA key, nothing else ("Use customer-managed encryption keys with Azure Managed
# Lustre": key type RSA, size 2048): the file system gets its own key (the storage accounts keep theirs).
FILE_SYSTEM_KEY_SIZE = 2048
# Key Vault soft delete keeps a deleted vault and its keys 7-90 days (keyvault VaultProperties docs).
VAULT_SOFT_DELETE_DAYS = 90
# Blob soft delete: 1-365 days (learn.microsoft.com/azure/storage/blobs/soft-delete-blob-overview).
BLOB_SOFT_DELETE_MAX_DAYS = 365
# The file system's maintenance window (required by the API): a weekend night.
MAINTENANCE_WINDOW = {"day_of_week": "Saturday", "time_of_day_utc": "23:00"}
HSM_LOGGING_CONTAINER = "lustre-hsm-logs"


def role_definition(subscription_id: str, role: str) -> str:
    return f"/subscriptions/{subscription_id}/providers/Microsoft.Authorization/roleDefinitions/{role}"


def vault_name(spec: TrainingStack) -> str:
    """The stack's Key Vault: its name is global (accelstack.clouds.azure.names.vault_name)."""
    return names.vault_name(spec.stack, account_of(spec).subscription_id)


def vault_firewall(subnets: Sequence[pulumi.Input[str] | None]) -> dict[str, object]:
    """The vault's firewall: nothing but the listed subnets (each with the Microsoft.KeyVault service endpoint,
    which Azure checks when the rule is written: the subnet ids are the Subnet resources' outputs, so the vault
    waits for them) and Azure's trusted services. Trusted, and so let through by the bypass: Azure Storage
    (the accounts' customer-managed key) and Azure Machine Learning (its workspace's secrets); Managed Lustre
    is not on the list, but its key docs ask for the bypass with "selected networks", and its subnet is listed
    too (learn.microsoft.com/azure/key-vault/general/overview-vnet-service-endpoints, "Trusted services").
    The deployer's keys and secrets are ARM resources (Microsoft.KeyVault/vaults/keys, /secrets): the firewall
    filters the data plane only, not "deployment of secrets or keys through ARM templates" (same page)."""
    return {
        "default_action": "Deny",
        "bypass": "AzureServices",
        "ip_rules": [],
        "virtual_network_rules": [{"id": subnet} for subnet in subnets if subnet is not None],
    }


def hsm_logging_container(data_container: str) -> str:
    return HSM_LOGGING_CONTAINER if data_container != HSM_LOGGING_CONTAINER else f"{HSM_LOGGING_CONTAINER}-2"


def soft_delete_days(noncurrent_version_days: int) -> int:
    return min(noncurrent_version_days, BLOB_SOFT_DELETE_MAX_DAYS)


def checkpoint_writer_role_id(spec: TrainingStack) -> str:
    """A stable GUID for the stack's custom role (a role definition's name must be a GUID)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"accelstack:{account_of(spec).subscription_id}:{spec.stack}:ckpt"))


def _stateful(parent: pulumi.Resource, **extra: object) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions(parent=parent, protect=True, retain_on_delete=True, **extra)  # type: ignore[arg-type]


class TrainingStorage(pulumi.ComponentResource):
    """`vault`, `key`, `storage_identity`, `dataset_account`, `dataset_container`, `checkpoint_account`,
    `checkpoint_container` (None without checkpoints), `file_system` (None without Lustre), and what the
    outputs and nodes need: `encryption_key`, `lustre_address`, `lustre_mount_name`."""

    def __init__(
        self,
        name: str,
        spec: TrainingStack,
        resource_group: pulumi.Input[str],
        resource_group_id: pulumi.Input[str],
        lustre_subnet_id: pulumi.Input[str] | None,
        zone: str,
        opts: pulumi.ResourceOptions,
        nodes_subnet_id: pulumi.Input[str] | None = None,
        *,
        file_system: PlannedFileSystem | None,
    ):
        super().__init__("accelstack:azure:TrainingStorage", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        account = account_of(spec)
        tags = stack_tags(spec)
        storage = spec.training.storage
        self._subscription = account.subscription_id
        self._resource_group = resource_group
        self._nodes_subnet_id = nodes_subnet_id
        self._reader_subnets = spec.training.artifact_reader_subnets
        self._reader_addresses = spec.training.artifact_reader_addresses
        self.waits = PropagationWaits(name, self)

        self.vault = azure_native.keyvault.Vault(
            f"{name}-kv",
            vault_name=vault_name(spec),
            resource_group_name=resource_group,
            properties={
                "tenant_id": account.tenant_id,
                "sku": {"family": "A", "name": "standard"},
                "enable_rbac_authorization": True,  # roles, not access policies: one model for every grant
                "enable_soft_delete": True,
                "soft_delete_retention_in_days": VAULT_SOFT_DELETE_DAYS,
                "enable_purge_protection": True,  # a customer-managed key's vault must have it
                # The nodes and the Slurm head (or Azure Machine Learning's compute) share the nodes' subnet.
                "network_acls": vault_firewall(
                    [nodes_subnet_id, lustre_subnet_id if file_system is not None else None]
                ),
                # publicNetworkAccess stays at the SDK's "enabled": the firewall above is what "selected
                # networks" means, and Managed Lustre's customer-managed key needs the public endpoint on
                # (customer-managed-encryption-keys: "Public Access - Must be enabled").
            },
            tags=tags,
            opts=_stateful(self),
        )
        self.key = azure_native.keyvault.Key(
            f"{name}-key",
            resource_group_name=resource_group,
            vault_name=self.vault.name,
            key_name="accelstack-data",
            properties={"kty": "RSA", "key_size": KEY_SIZE, "key_ops": ["wrapKey", "unwrapKey"]},
            tags=tags,
            opts=_stateful(self),
        )
        self.encryption_key = self.key.key_uri
        # One identity for the storage services' access to the key: the accounts and the file system.
        self.storage_identity = azure_native.managedidentity.UserAssignedIdentity(
            f"{name}-storage-id", resource_group_name=resource_group, tags=tags, opts=child
        )
        key_grant = self.grant(
            f"{name}-storage-id-key",
            self.key.id,
            KEY_VAULT_CRYPTO_SERVICE_ENCRYPTION_USER,
            self.storage_identity.principal_id,
        )
        # What every account encrypting with the key waits for: the grant, propagated in Key Vault.
        key_usable = self._key_usable = self.waits.after(
            f"{name}-storage-id-key", [key_grant], catalog.KEY_VAULT_RBAC_PROPAGATION_SECONDS
        )

        datasets = blob_uri_parts(storage.datasets.uri)
        if datasets is None:  # the spec rules refuse it first
            raise ValueError(f"training.storage.datasets.uri: {storage.datasets.uri!r} is not a Blob Storage URL")
        self.dataset_account = self._account(
            f"{name}-datasets",
            datasets[0],
            # Only Managed Lustre's Blob integration uses the account key (amlfs-prerequisites); without it, off.
            shared_key=file_system is not None,
            depends_on=key_usable,
            tags=tags,
            # Managed Lustre reads its container from its own subnet: Microsoft.StorageCache is no trusted service
            # the firewall's AzureServices bypass admits, and creation fails if it cannot reach the container.
            reader_subnets=[lustre_subnet_id] if file_system is not None and lustre_subnet_id is not None else [],
        )
        self.dataset_container = azure_native.storage.BlobContainer(
            f"{name}-datasets",
            resource_group_name=resource_group,
            account_name=self.dataset_account.name,
            container_name=datasets[1],
            public_access="None",
            opts=_stateful(self),
        )
        self.dataset_uri = storage.datasets.uri

        self.checkpoint_account: azure_native.storage.StorageAccount | None = None
        self.checkpoint_container: azure_native.storage.BlobContainer | None = None
        self.checkpoint_uri: str | None = None
        if storage.checkpoints is not None:
            checkpoints = blob_uri_parts(storage.checkpoints.uri)
            if checkpoints is None:
                raise ValueError(
                    f"training.storage.checkpoints.uri: {storage.checkpoints.uri!r} is not a Blob Storage URL"
                )
            self._checkpoints(
                name, checkpoints[0], checkpoints[1], storage.checkpoints.noncurrent_version_days, key_usable, tags
            )
            self.checkpoint_uri = storage.checkpoints.uri
            self.checkpoint_writer = azure_native.authorization.RoleDefinition(
                f"{name}-checkpoint-writer",
                role_definition_id=checkpoint_writer_role_id(spec),
                # Custom role names are unique in the tenant, and two subscriptions of one tenant may each run a
                # stack of the same name: the subscription makes it this stack's.
                role_name=f"accelstack {spec.stack} checkpoint writer ({account.subscription_id})",
                description="Read, list and write checkpoint blobs; never delete (Storage Blob Data Contributor would)",
                role_type="CustomRole",
                scope=resource_group_id,
                assignable_scopes=[resource_group_id],
                permissions=[
                    {
                        "actions": list(CHECKPOINT_WRITER_ACTIONS),
                        "data_actions": list(CHECKPOINT_WRITER_DATA_ACTIONS),
                    }
                ],
                opts=child,
            )
            # Assignments name a role by its subscription-level id (built-in and custom alike); derived from the
            # definition's own output so they wait for it.
            writer_guid = checkpoint_writer_role_id(spec)
            self.checkpoint_writer_role: pulumi.Output[str] = self.checkpoint_writer.id.apply(
                lambda _: role_definition(account.subscription_id, writer_guid)
            )

        self.file_system: azure_native.storagecache.AmlFilesystem | None = None
        self.lustre_address: pulumi.Output[str] | None = None
        self.lustre_mount_name: pulumi.Output[str] | None = None
        if file_system is not None and lustre_subnet_id is not None:
            self._file_system(name, spec, file_system, datasets[1], lustre_subnet_id, zone, key_usable, tags)
        self.register_outputs({"encryptionKey": self.encryption_key})

    def grant(
        self,
        name: str,
        scope: pulumi.Input[str],
        role: str,
        principal_id: pulumi.Input[str],
        principal_type: str = "ServicePrincipal",
        role_id: pulumi.Input[str] | None = None,
    ) -> azure_native.authorization.RoleAssignment:
        """A role assignment of built-in `role` (or the full `role_id`) to a principal on `scope`.
        principalType stated: a new identity's principal may not have replicated yet, and Azure then
        refuses the assignment unless it is told the type (learn.microsoft.com/azure/role-based-access-control/
        role-assignments-template#new-service-principal)."""
        return azure_native.authorization.RoleAssignment(
            name,
            scope=scope,
            role_definition_id=role_id if role_id is not None else role_definition(self._subscription, role),
            principal_id=principal_id,
            principal_type=principal_type,
            opts=pulumi.ResourceOptions(parent=self),
        )

    @property
    def key_usable(self) -> list[pulumi.Resource]:
        """What a service encrypting with the stack key through `storage_identity` waits for (the grant, propagated)."""
        return self._key_usable

    def workspace_account(
        self, name: str, account_name: str, tags: dict[str, str]
    ) -> azure_native.storage.StorageAccount:
        """The Azure Machine Learning workspace's own account (job logs, outputs, code snapshots), hardened as
        the checkpoint account is: no shared key (the workspace reads its system datastores with identities),
        the stack's key, the nodes' subnet and trusted services only. Protected: it holds every job's record."""
        return self._account(name, account_name, shared_key=False, depends_on=self._key_usable, tags=tags)

    def _account(
        self,
        name: str,
        account_name: str,
        shared_key: bool,
        depends_on: list[pulumi.Resource],
        tags: dict[str, str],
        reader_subnets: Sequence[pulumi.Input[str]] = (),
        reader_addresses: Sequence[str] = (),
    ) -> azure_native.storage.StorageAccount:
        admitted = ([self._nodes_subnet_id] if self._nodes_subnet_id is not None else []) + list(reader_subnets)
        # Readers on other clouds fetch from the internet through their NAT: the firewall applies to every data-plane
        # request however it is authorized (storage-network-security, "IP network rules"), so their egress addresses
        # are admitted by IP rule (IPRuleArgs: i_p_address_or_range, action Allow; validated by the Azure rules).
        address_rules = [{"i_p_address_or_range": address, "action": "Allow"} for address in reader_addresses]
        return azure_native.storage.StorageAccount(
            name,
            account_name=account_name,
            resource_group_name=self._resource_group,
            kind="StorageV2",
            sku={"name": "Standard_LRS"},
            access_tier="Hot",
            is_hns_enabled=False,  # Blob integration does not take hierarchical namespace accounts
            allow_blob_public_access=False,
            allow_shared_key_access=shared_key,
            default_to_o_auth_authentication=True,
            enable_https_traffic_only=True,
            minimum_tls_version="TLS1_2",
            # Not reachable from the internet: the nodes' subnet (its Microsoft.Storage service endpoint), the
            # serving replicas' subnets the checkpoint account lets read models (artifactReaderSubnets), the file
            # system's subnet on the dataset account (Managed Lustre is not a trusted service: the bypass does not
            # admit it), and trusted Azure services only. Uploading a dataset from outside the VNet needs a rule
            # for that network (docs/deploy-azure.md).
            public_network_access="Enabled" if admitted or address_rules else "Disabled",
            network_rule_set={
                "default_action": "Deny",
                "bypass": "AzureServices",
                "virtual_network_rules": [
                    {"virtual_network_resource_id": subnet, "action": "Allow"} for subnet in admitted
                ],
                **({"ip_rules": address_rules} if address_rules else {}),
            },
            identity={"type": "UserAssigned", "user_assigned_identities": [self.storage_identity.id]},
            encryption={
                "key_source": "Microsoft.Keyvault",
                "key_vault_properties": {"key_name": self.key.name, "key_vault_uri": self.vault.properties.vault_uri},
                "encryption_identity": {"encryption_user_assigned_identity": self.storage_identity.id},
                "require_infrastructure_encryption": True,
                "services": {"blob": {"enabled": True, "key_type": "Account"}},
            },
            tags=tags,
            # The identity must hold its key role, propagated, before the account encrypts with the key: Azure
            # checks the key's access when the account is created.
            opts=_stateful(self, depends_on=depends_on),
        )

    def _checkpoints(
        self,
        name: str,
        account_name: str,
        container: str,
        noncurrent_days: int,
        key_usable: list[pulumi.Resource],
        tags: dict[str, str],
    ) -> None:
        self.checkpoint_account = self._account(
            f"{name}-checkpoints",
            account_name,
            shared_key=False,
            depends_on=key_usable,
            tags=tags,
            reader_subnets=self._reader_subnets,
            reader_addresses=self._reader_addresses,
        )
        days = soft_delete_days(noncurrent_days)
        azure_native.storage.BlobServiceProperties(
            f"{name}-checkpoints",
            resource_group_name=self._resource_group,
            account_name=self.checkpoint_account.name,
            blob_services_name="default",
            is_versioning_enabled=True,
            delete_retention_policy={"enabled": True, "days": days},
            container_delete_retention_policy={"enabled": True, "days": days},
            opts=_stateful(self),
        )
        azure_native.storage.ManagementPolicy(
            f"{name}-checkpoints",
            resource_group_name=self._resource_group,
            account_name=self.checkpoint_account.name,
            management_policy_name="default",
            policy={
                "rules": [
                    {
                        "name": "expire-old-checkpoint-versions",
                        "type": "Lifecycle",
                        "enabled": True,
                        "definition": {
                            "filters": {"blob_types": ["blockBlob"], "prefix_match": [f"{container}/"]},
                            # Only previous versions expire; current checkpoints never do.
                            "actions": {"version": {"delete": {"days_after_creation_greater_than": noncurrent_days}}},
                        },
                    }
                ]
            },
            opts=_stateful(self),
        )
        self.checkpoint_container = azure_native.storage.BlobContainer(
            f"{name}-checkpoints",
            resource_group_name=self._resource_group,
            account_name=self.checkpoint_account.name,
            container_name=container,
            public_access="None",
            opts=_stateful(self),
        )

    def _file_system(
        self,
        name: str,
        spec: TrainingStack,
        lustre: PlannedFileSystem,
        data_container: str,
        subnet_id: pulumi.Input[str],
        zone: str,
        key_usable: list[pulumi.Resource],
        tags: dict[str, str],
    ) -> None:
        principal = account_of(spec).hpc_cache_principal_id
        if principal is None:
            raise ValueError("account.hpcCachePrincipalId: required with training.storage.lustre")
        logs = azure_native.storage.BlobContainer(
            f"{name}-lustre-logs",
            resource_group_name=self._resource_group,
            account_name=self.dataset_account.name,
            container_name=hsm_logging_container(data_container),  # must differ from the data container
            public_access="None",
            opts=_stateful(self),
        )
        # amlfs-prerequisites: both roles on the storage account, for the HPC Cache Resource Provider, before
        # the file system exists (its creation checks access and fails otherwise), propagated ("It can take up to
        # five minutes for the role settings to propagate", the same page).
        provider_grants = [
            self.grant(f"{name}-hpc-cache-{label}", self.dataset_account.id, role, principal)
            for label, role in (
                ("account-contributor", STORAGE_ACCOUNT_CONTRIBUTOR),
                ("blob-contributor", STORAGE_BLOB_DATA_CONTRIBUTOR),
            )
        ]
        self.file_system_key = azure_native.keyvault.Key(
            f"{name}-lustre-key",
            resource_group_name=self._resource_group,
            vault_name=self.vault.name,
            key_name="accelstack-lustre",
            properties={"kty": "RSA", "key_size": FILE_SYSTEM_KEY_SIZE, "key_ops": ["wrapKey", "unwrapKey"]},
            tags=tags,
            opts=_stateful(self),
        )
        file_system_key_grant = self.grant(
            f"{name}-storage-id-lustre-key",
            self.file_system_key.id,
            KEY_VAULT_CRYPTO_SERVICE_ENCRYPTION_USER,
            self.storage_identity.principal_id,
        )
        prefix = "/" + (blob_uri_parts(spec.training.storage.datasets.uri) or ("", "", ""))[2]
        self.file_system = azure_native.storagecache.AmlFilesystem(
            f"{name}-lustre",
            resource_group_name=self._resource_group,
            sku={"name": lustre.tier},
            storage_capacity_ti_b=lustre.capacity_gib / catalog.TIB_GIB,
            filesystem_subnet=subnet_id,
            zones=[zone],  # exactly one zone (the API's AmlFilesystem.zones)
            maintenance_window=MAINTENANCE_WINDOW,
            hsm={
                "settings": {
                    "container": self.dataset_container.id,
                    "logging_container": logs.id,
                    # Blob names under the prefix are imported at creation; blobs added later need an import job.
                    "import_prefixes_initial": [prefix],
                }
            },
            identity={"type": "UserAssigned", "user_assigned_identities": [self.storage_identity.id]},
            encryption_settings={
                "key_encryption_key": {
                    "key_url": self.file_system_key.key_uri_with_version,
                    "source_vault": {"id": self.vault.id},
                }
            },
            tags=tags,
            # Each wait runs from when its grants exist: the file system's key waits beside the accounts' key
            # (both granted early); the provider's roles, granted on the dataset account once it exists, after it.
            opts=_stateful(
                self,
                depends_on=[
                    *self.waits.after(f"{name}-hpc-cache", provider_grants, catalog.RBAC_PROPAGATION_SECONDS),
                    *key_usable,
                    *self.waits.after(
                        f"{name}-storage-id-lustre-key",
                        [file_system_key_grant],
                        catalog.KEY_VAULT_RBAC_PROPAGATION_SECONDS,
                    ),
                ],
            ),
        )
        trigger = spec.training.storage.lustre.import_trigger if spec.training.storage.lustre else None
        if trigger is not None:
            self.import_job = self._import_job(name, prefix, trigger, tags)
        client = self.file_system.client_info
        self.lustre_address = client.apply(lambda info: (info.mgs_address if info else None) or "")
        # Managed Lustre's file system name is always "lustrefs" (its mount command: <mgs>@tcp:/lustrefs).
        self.lustre_mount_name = pulumi.Output.from_input("lustrefs")

    def _import_job(
        self, name: str, prefix: str, trigger: str, tags: dict[str, str]
    ) -> azure_native.storagecache.ImportJob:
        """The dataset prefix imported again, for blobs uploaded after creation (the Blob integration imports at
        creation only: amlfs-prerequisites). An import job runs once, when created, and cannot be changed
        (ImportJob, API 2024-03-01: only its tags update), so its name follows the trigger: a new trigger is a new
        job, which replaces the last one's record, never the file system. Blobs already on the file system are
        skipped (conflict mode Skip), as Managed Lustre's importData skips existing files on Google Cloud."""
        assert self.file_system is not None
        digest = hashlib.sha256(trigger.encode()).hexdigest()[:12]
        return azure_native.storagecache.ImportJob(
            f"{name}-lustre-import",
            resource_group_name=self._resource_group,
            aml_filesystem_name=self.file_system.name,
            import_job_name=f"import-{digest}",  # letters, digits and hyphens, starting and ending with one
            location=self.file_system.location,
            import_prefixes=[prefix],
            conflict_resolution_mode="Skip",
            maximum_errors=0,  # the job fails at the first error that is not a conflict (the API's default)
            tags={**tags, "accelstack-import-trigger": trigger},
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.file_system]),
        )
