"""Training storage on Google Cloud: the stack's Cloud KMS key, the dataset and checkpoint buckets, and
Managed Lustre on a private services access connection, importing the dataset prefix from Cloud Storage.

- Encryption: one customer-managed key (protected and retained: key rings and keys cannot be deleted), used
  by both buckets (`encryption.defaultKmsKeyName`), Managed Lustre (`kmsKey`) and the Slurm head's state
  disk. Each Google service agent that encrypts for us holds encrypterDecrypter on the key BEFORE the
  resource that names it is created (a bucket, instance or disk naming a key its agent cannot use fails at
  create time: cloud.google.com/storage/docs/encryption/using-customer-managed-keys#prereqs,
  cloud.google.com/managed-lustre/docs/cmek, cloud.google.com/compute/docs/disks/customer-managed-encryption),
  and that resource waits for the grant to propagate (`key_usable`, components/propagation.py).
- Buckets: uniform bucket-level access, public access prevention enforced, soft delete, versioned; old versions
  expire (checkpoints after `noncurrentVersionDays`, datasets after 30 days), live objects never. Both are
  protected and retained on delete.
- Managed Lustre: in the GPU zone, on the system VPC through a private services access connection (a /20
  peering range, allocated and connected first: the instance cannot be created before the peering is
  ACTIVE, cluster-toolkit modules/file-system/managed-lustre). Tier (throughput per TiB) and capacity come
  from the neutral keys, validated against the tier table. Pulumi has no field for staging from Cloud
  Storage: `LustreImport` calls importData after the Lustre service agent can read the bucket (without
  that grant the import "may fail silently leaving an empty lustre instance", Cluster Toolkit README), and
  checks that objects arrived.
  It runs at creation and again whenever `training.storage.lustre.importTrigger` changes.
- Checkpoints: Managed Lustre exports only when asked (exportData, one operation per call), so the Slurm
  head copies completed checkpoints to the bucket on a timer, never deleting or overwriting (components/slurm).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from accelstack.clouds.gcp import catalog
from accelstack.clouds.gcp.rules import LUSTRE_FILESYSTEM
from accelstack.components.gcp.apis import project_apis
from accelstack.components.gcp.lustre_import import LustreImport
from accelstack.components.gcp.network import TrainingNetwork
from accelstack.components.gcp.provider import resource_id
from accelstack.components.propagation import PropagationWaits
from accelstack.planner.training_plan import PlannedFileSystem
from accelstack.spec.models import TrainingStack
from accelstack.spec.uris import split_bucket_uri

ENCRYPTER = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
OBJECT_VIEWER = "roles/storage.objectViewer"  # get and list objects
OBJECT_CREATOR = "roles/storage.objectCreator"  # create objects; no delete, so no overwrite either
KEY_ROTATION = "7776000s"  # 90 days
# Soft delete keeps deleted objects 7..90 days (cloud.google.com/storage/docs/soft-delete#retention-duration).
SOFT_DELETE_MIN_DAYS, SOFT_DELETE_MAX_DAYS = 7, 90
DAY = 86_400
# Datasets are versioned like checkpoints (an overwritten shard can be restored); old versions expire after 30
# days, as on AWS (components/aws/storage.py DATASET_NONCURRENT_VERSION_DAYS).
DATASET_NONCURRENT_DAYS = 30


def soft_delete_seconds(noncurrent_version_days: int) -> str:
    days = min(max(noncurrent_version_days, SOFT_DELETE_MIN_DAYS), SOFT_DELETE_MAX_DAYS)
    return str(days * DAY)


def service_agent(project_number: pulumi.Output[str], domain: str) -> pulumi.Output[str]:
    """A Google service agent's IAM member (cloud.google.com/iam/docs/service-agents), for an agent that exists
    as soon as its API is enabled (Compute Engine's). Agents created on first use come from `created_agent`."""
    return project_number.apply(lambda number: f"serviceAccount:service-{number}@{domain}")


# Agents that do not exist on a fresh project until something asks for them: a grant naming one fails ("Service
# account ... does not exist"; terraform-provider-google #7611, #9730). ServiceIdentity creates and returns it
# (`gcloud beta services identity create`, as Cluster Toolkit's managed-lustre module says to run).
AGENT_SERVICES = {
    "lustre": "lustre.googleapis.com",
    "filestore": "file.googleapis.com",
    "pubsub": "pubsub.googleapis.com",
    "sql": "sqladmin.googleapis.com",  # Cloud SQL's agent, for CMEK (cloud.google.com/sql/docs/mysql/cmek)
}


def created_agent(stack: str, project_id: str, key: str, opts: pulumi.ResourceOptions) -> pulumi.Output[str]:
    """The IAM member of the service agent of AGENT_SERVICES[key], created if the project has none yet."""
    identity = gcp.projects.ServiceIdentity(
        f"{stack}-{key}-agent", project=project_id, service=AGENT_SERVICES[key], opts=opts
    )
    return identity.email.apply(lambda email: f"serviceAccount:{email}")


def _stateful(opts: pulumi.ResourceOptions, **extra: Any) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(protect=True, retain_on_delete=True, **extra))


class TrainingStorage(pulumi.ComponentResource):
    """What the cluster and the Slurm head use: `key`, `dataset_bucket`, `checkpoint_bucket` (None without
    checkpoints), `file_system` and `lustre_import` (None without Lustre), `lustre_address` and
    `lustre_mount_name` (the client mount source's two halves), `key_grants` (each service agent's grant on the
    key) and `key_usable(agent)` (what a resource naming the key waits for: that grant, propagated)."""

    def __init__(
        self,
        name: str,
        spec: TrainingStack,
        network: TrainingNetwork,
        project_number: pulumi.Output[str],
        opts: pulumi.ResourceOptions,
        *,
        file_system: PlannedFileSystem | None,
    ):
        super().__init__("accelstack:gcp:TrainingStorage", name, None, opts)
        self.spec = spec
        stack = spec.stack
        storage = spec.training.storage
        region = spec.account.region  # type: ignore[attr-defined]
        child = pulumi.ResourceOptions(parent=self)
        self.waits = PropagationWaits(stack, self)
        self._key_usable: dict[str, list[pulumi.Resource]] = {}
        self._psa_connection: gcp.servicenetworking.Connection | None = None

        ring = gcp.kms.KeyRing(f"{stack}-keys", location=region, opts=_stateful(child))
        self.key = gcp.kms.CryptoKey(
            f"{stack}-data",
            key_ring=ring.id,
            purpose="ENCRYPT_DECRYPT",
            rotation_period=KEY_ROTATION,
            opts=_stateful(child),
        )
        project_id = spec.account.project_id  # type: ignore[attr-defined]
        members = {
            "storage": project_apis(stack).storage_agent(self),
            "compute": service_agent(project_number, "compute-system.iam.gserviceaccount.com"),
        }
        managed_lustre = file_system is not None and file_system.tier not in catalog.FILESTORE_TIERS
        if managed_lustre:
            self.lustre_agent = members["lustre"] = created_agent(stack, project_id, "lustre", child)
        self.key_grants: dict[str, pulumi.Resource] = {
            role: gcp.kms.CryptoKeyIAMMember(
                f"{stack}-key-{role}", crypto_key_id=self.key.id, role=ENCRYPTER, member=members[role], opts=child
            )
            for role in ("storage", "lustre", "compute")
            if role in members
        }
        self.dataset_bucket_name, dataset_prefix = split_bucket_uri(storage.datasets.uri)
        self.dataset_bucket = (
            self._bucket(f"{stack}-datasets", self.dataset_bucket_name, DATASET_NONCURRENT_DAYS)
            if storage.datasets.create
            else None
        )
        self.checkpoint_bucket: gcp.storage.Bucket | None = None
        self.checkpoint_bucket_name: str | None = None
        if storage.checkpoints is not None:
            self.checkpoint_bucket_name, _ = split_bucket_uri(storage.checkpoints.uri)
            if storage.checkpoints.create:
                self.checkpoint_bucket = self._bucket(
                    f"{stack}-checkpoints", self.checkpoint_bucket_name, storage.checkpoints.noncurrent_version_days
                )

        # Who read or wrote which object: Cloud Audit Logs' Data Access logs for Cloud Storage, which Google
        # recommends over the buckets' legacy usage logs (cloud.google.com/storage/docs/access-logs) and which
        # are off by default. Authoritative for storage.googleapis.com in the project (google_project_iam_audit_config).
        self.data_access_logs = gcp.projects.IAMAuditConfig(
            f"{stack}-storage-data-access-logs",
            project=project_id,
            service="storage.googleapis.com",
            audit_log_configs=[
                gcp.projects.IAMAuditConfigAuditLogConfigArgs(log_type=log_type)
                for log_type in ("DATA_READ", "DATA_WRITE")
            ],
            opts=child,
        )
        self.file_system: gcp.lustre.Instance | gcp.filestore.Instance | None = None
        self.lustre_import: LustreImport | None = None
        self.lustre_address: pulumi.Output[str] | None = None
        self.lustre_mount_name: pulumi.Output[str] | None = None
        if file_system is not None:
            if file_system.tier in catalog.FILESTORE_TIERS:
                self._filestore(network, project_number, catalog.FILESTORE_TIERS[file_system.tier], file_system)
            else:
                self._lustre(network, project_number, dataset_prefix, file_system)
        self.register_outputs({})

    def _bucket(self, resource_name: str, bucket: str, noncurrent_days: int) -> gcp.storage.Bucket:
        """A versioned bucket whose old versions (never live objects) expire after `noncurrent_days`."""
        spec = self.spec
        return gcp.storage.Bucket(
            resource_name,
            name=bucket,
            location=spec.account.region.upper(),  # type: ignore[attr-defined]
            storage_class="STANDARD",
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            versioning={"enabled": True},
            soft_delete_policy={"retention_duration_seconds": soft_delete_seconds(noncurrent_days)},
            encryption={"default_kms_key_name": self.key.id},
            lifecycle_rules=[
                {
                    "action": {"type": "Delete"},
                    "condition": {"days_since_noncurrent_time": noncurrent_days, "with_state": "ARCHIVED"},
                }
            ],
            # A bucket with objects is never deleted by an `up` (force_destroy false is the default; said here).
            force_destroy=False,
            opts=_stateful(pulumi.ResourceOptions(parent=self), depends_on=self.key_usable("storage")),
        )

    def key_usable(self, agent: str) -> list[pulumi.Resource]:
        """What a resource naming the key waits for: `agent`'s grant on it (`key_grants`), propagated. One wait per
        agent, shared by everything that agent encrypts."""
        if agent not in self._key_usable:
            self._key_usable[agent] = self.waits.after(
                f"{self.spec.stack}-key-{agent}", [self.key_grants[agent]], catalog.IAM_PROPAGATION_SECONDS
            )
        return self._key_usable[agent]

    def private_services_access(self, network: TrainingNetwork) -> gcp.servicenetworking.Connection:
        """The peering Managed Lustre, Filestore and Cloud SQL are reached through (the last quarter's /20): one per
        VPC, made by whichever asks first."""
        made = self._psa_connection
        if made is None:
            made = self._psa_connection = self._private_services_access(network)
        return made

    def _private_services_access(self, network: TrainingNetwork) -> gcp.servicenetworking.Connection:
        stack = self.spec.stack
        child = pulumi.ResourceOptions(parent=self)
        peering = gcp.compute.GlobalAddress(
            f"{stack}-lustre-peering",
            purpose="VPC_PEERING",
            address_type="INTERNAL",
            address=str(network.lustre_peering.network_address),
            prefix_length=network.lustre_peering.prefixlen,
            network=network.system.id,
            opts=child,
        )
        connection = gcp.servicenetworking.Connection(
            f"{stack}-lustre-psa",
            network=network.system.id,
            service="servicenetworking.googleapis.com",
            reserved_peering_ranges=[peering.name],
            # Deleting the peering while another producer uses it fails; leave it with the network.
            deletion_policy="ABANDON",
            opts=child,
        )
        return connection

    def _filestore(
        self,
        network: TrainingNetwork,
        project_number: pulumi.Output[str],
        tier: catalog.FilestoreTier,
        share: PlannedFileSystem,
    ) -> None:
        """Filestore (NFS) where Managed Lustre's minimum would oversize a small cluster: on the same private
        services access connection, encrypted with the stack's key (its service agent granted first:
        cloud.google.com/filestore/docs/cmek). No link to Cloud Storage: the Slurm head (or Cluster Director's
        login node) copies the dataset in and the checkpoints out (components/slurm)."""
        spec = self.spec
        stack = spec.stack
        connection = self.private_services_access(network)
        agent = gcp.kms.CryptoKeyIAMMember(
            f"{stack}-key-filestore",
            crypto_key_id=self.key.id,
            role=ENCRYPTER,
            member=created_agent(stack, spec.account.project_id, "filestore", pulumi.ResourceOptions(parent=self)),  # type: ignore[attr-defined]
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.key_grants["filestore"] = agent
        instance = gcp.filestore.Instance(
            f"{stack}-filestore",
            name=resource_id(stack, "shared", 63),
            location=network.zone,
            tier=tier.api_tier,
            file_shares={"name": catalog.FILESTORE_SHARE, "capacity_gb": share.capacity_gib},
            networks=[{"network": network.system.id, "modes": ["MODE_IPV4"], "connect_mode": "PRIVATE_SERVICE_ACCESS"}],
            kms_key_name=self.key.id,
            # The API refuses a delete while this is on: a second lock beside Pulumi's protect.
            deletion_protection_enabled=True,
            deletion_protection_reason="accelstack: datasets and checkpoints",
            description=f"accelstack {stack}: datasets and checkpoints",
            opts=_stateful(pulumi.ResourceOptions(parent=self), depends_on=[connection, *self.key_usable("filestore")]),
        )
        self.file_system = instance
        self.lustre_address = instance.networks.apply(lambda networks: (networks[0].ip_addresses or [""])[0])
        self.lustre_mount_name = pulumi.Output.from_input(catalog.FILESTORE_SHARE)

    def _lustre(
        self,
        network: TrainingNetwork,
        project_number: pulumi.Output[str],
        dataset_prefix: str,
        lustre: PlannedFileSystem,
    ) -> None:
        spec = self.spec
        stack = spec.stack
        child = pulumi.ResourceOptions(parent=self)
        connection = self.private_services_access(network)
        self.file_system = gcp.lustre.Instance(
            f"{stack}-lustre",
            instance_id=resource_id(stack, "lustre", 63),
            location=network.zone,
            filesystem=LUSTRE_FILESYSTEM,
            capacity_gib=str(lustre.capacity_gib),
            per_unit_storage_throughput=str(lustre.throughput_per_tib),
            network=network.system.id,
            kms_key=self.key.id,
            description=f"accelstack {stack}: datasets and checkpoints",
            opts=_stateful(child, depends_on=[connection, *self.key_usable("lustre")]),
        )
        # mount_point is "<address>@tcp:/<filesystem>"; the generator mounts "<address>@tcp:/<name>".
        self.lustre_address = self.file_system.mount_point.apply(lambda mp: (mp or "").split("@", 1)[0])
        self.lustre_mount_name = self.file_system.filesystem

        reader = gcp.storage.BucketIAMMember(
            f"{stack}-lustre-reads-datasets",
            bucket=self.dataset_bucket.name if self.dataset_bucket is not None else self.dataset_bucket_name,
            role=OBJECT_VIEWER,
            member=self.lustre_agent,
            opts=child,
        )
        prefix = dataset_prefix.strip("/")
        datasets = spec.training.storage.datasets
        trigger = spec.training.storage.lustre.import_trigger if spec.training.storage.lustre else None
        # importData runs once per call: at creation, and again (a replacement of this operation, never of the
        # instance) whenever the neutral import trigger changes. A bucket this `up` creates is empty at creation,
        # so only an existing bucket, or a trigger the operator set after uploading, must bring objects.
        self.lustre_import = LustreImport(
            f"{stack}-lustre-import",
            project=spec.account.project_id,  # type: ignore[attr-defined]
            zone=network.zone,
            instance_id=self.file_system.instance_id,
            gcs_uri=f"gs://{self.dataset_bucket_name}/{prefix + '/' if prefix else ''}",
            lustre_path=lustre.import_path,
            expect_objects=not datasets.create or trigger is not None,
            trigger=trigger,
            impersonate_service_account=spec.account.deploy_service_account,  # type: ignore[attr-defined]
            # Without the read, importData may "fail silently leaving an empty lustre instance": the grant has
            # propagated first (its wait runs while the instance is created, so it costs no time).
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[
                    *self.waits.after(f"{stack}-lustre-reads-datasets", [reader], catalog.IAM_PROPAGATION_SECONDS),
                    self.file_system,
                ],
            ),
        )

    def grant(
        self, resource_name: str, bucket: pulumi.Input[str], role: str, member: pulumi.Input[str]
    ) -> pulumi.Resource:
        return gcp.storage.BucketIAMMember(
            resource_name, bucket=bucket, role=role, member=member, opts=pulumi.ResourceOptions(parent=self)
        )
