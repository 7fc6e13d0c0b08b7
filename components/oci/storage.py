"""The training stack's stateful storage on OCI: a Vault with the stack key, the dataset and (versioned) checkpoint
buckets, File Storage with Lustre sized from the plan, and its Object Storage link that imports the dataset when
asked. Every stateful resource is protected and retained: a day-2 `up` never replaces or deletes it.

Lustre's capacity is the plan's GiB as OCI's GB step holding it exactly (`catalog.gb_for_gib`): nothing is rounded.
The link imports from the dataset prefix into the import path (start_import_from_object_trigger, incremented by a
change of `importTrigger`), without overwriting (is_overwrite false) and never deleting; checkpoints go to their own
bucket through the Slurm head's copy (the link exports only to the prefix it imports from).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pulumi
import pulumi_oci as oci

from accelstack.clouds.oci import catalog, names
from accelstack.components.oci.network import TrainingNetwork
from accelstack.components.propagation import PropagationWaits
from accelstack.planner.training_plan import PlannedFileSystem
from accelstack.spec.models import TrainingStack
from accelstack.spec.uris import split_bucket_uri

STATEFUL = pulumi.ResourceOptions(protect=True, retain_on_delete=True)


def import_trigger(trigger: str | None) -> int:
    """The link's integer trigger from the spec's importTrigger text: 1 at creation, a new number per new text."""
    if trigger is None:
        return 1
    return int(hashlib.sha256(trigger.encode()).hexdigest()[:7], 16) + 2


def object_storage_prefix(namespace: str, uri: str) -> str:
    """`<namespace>:/<bucket>/<prefix>`, as the link takes it."""
    bucket, prefix = split_bucket_uri(uri)
    return f"{namespace}:/{bucket}/{prefix}".rstrip("/")


@dataclass
class TrainingStorage:
    namespace: pulumi.Output[str]
    vault: oci.kms.Vault
    key: oci.kms.Key
    dataset_bucket_name: str
    checkpoint_bucket_name: str | None
    file_system: oci.lustre.FileStorageLustreFileSystem | None = None
    link: oci.lustre.FileStorageObjectStorageLink | None = None
    lustre_policy: oci.identity.Policy | None = None


def training_storage(
    name: str,
    spec: TrainingStack,
    plan_fs: PlannedFileSystem | None,
    network: TrainingNetwork,
    availability_domain: pulumi.Input[str],
    compartment_id: str,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> TrainingStorage:
    storage = spec.training.storage
    common = {"compartment_id": compartment_id, "freeform_tags": tags}
    stateful = pulumi.ResourceOptions.merge(opts, STATEFUL)
    namespace = oci.objectstorage.get_namespace_output(
        compartment_id=compartment_id, opts=pulumi.InvokeOptions(parent=opts.parent, provider=opts.provider)
    ).namespace
    # A virtual private vault (its own partition of the HSM) holding the stack key; deleting one is scheduled,
    # never immediate, and the stack retains it anyway.
    vault = oci.kms.Vault(f"{name}-vault", display_name=f"{name}-vault", vault_type="DEFAULT", **common, opts=stateful)
    key = oci.kms.Key(
        f"{name}-key",
        display_name=f"{name}-key",
        key_shape={"algorithm": "AES", "length": 32},
        management_endpoint=vault.management_endpoint,
        protection_mode="HSM",
        **common,
        opts=stateful,
    )
    dataset_bucket, _ = split_bucket_uri(storage.datasets.uri)
    bucket_common = {**common, "namespace": namespace, "kms_key_id": key.id, "access_type": "NoPublicAccess"}
    if storage.datasets.create:
        oci.objectstorage.Bucket(f"{name}-datasets", name=dataset_bucket, **bucket_common, opts=stateful)
    checkpoint_bucket = None
    if storage.checkpoints is not None:
        checkpoint_bucket, _ = split_bucket_uri(storage.checkpoints.uri)
        # Versioned: an object the head's copy would replace keeps its earlier versions.
        oci.objectstorage.Bucket(
            f"{name}-checkpoints", name=checkpoint_bucket, versioning="Enabled", **bucket_common, opts=stateful
        )
    result = TrainingStorage(namespace, vault, key, dataset_bucket, checkpoint_bucket)
    if plan_fs is not None and storage.lustre is not None:
        _lustre(name, spec, plan_fs, network, availability_domain, compartment_id, tags, opts, result)
    return result


def _lustre(
    name: str,
    spec: TrainingStack,
    plan_fs: PlannedFileSystem,
    network: TrainingNetwork,
    availability_domain: pulumi.Input[str],
    compartment_id: str,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
    result: TrainingStorage,
) -> None:
    lustre = spec.training.storage.lustre
    assert lustre is not None
    common = {"compartment_id": compartment_id, "freeform_tags": tags}
    # "allow service lustrefs to use virtual-network-family in ...": without it the service cannot place its
    # servers in the subnet (docs.oracle.com/iaas/Content/lustre/manage-file-systems.htm, Required IAM Policy).
    # Scoped to the stack's compartment (where the VCN and subnet are), not the tenancy: a tenancy-wide grant would
    # reach the serving compartment's networks too, which the separation pack refuses. A policy attached to the
    # compartment may grant in it (policysyntax: "where the policy is attached"); the link reads the dataset bucket.
    result.lustre_policy = oci.identity.Policy(
        f"{name}-lustre-service",
        compartment_id=compartment_id,
        name=names.iam_name(name, "lustre-service"),
        description=f"accelstack {name}: File Storage with Lustre places its servers and links its buckets",
        statements=[
            f"allow service lustrefs to use virtual-network-family in compartment id {compartment_id}",
            f"allow service lustrefs to read objects in compartment id {compartment_id} "
            f"where target.bucket.name = '{result.dataset_bucket_name}'",
        ],
        freeform_tags=tags,
        opts=opts,
    )
    parent = opts.parent
    if parent is None:  # the training component passes its own children's options (ctx.child)
        raise ValueError(f"{name}: the Lustre file system needs a parent component for its propagation wait")
    result.file_system = oci.lustre.FileStorageLustreFileSystem(
        f"{name}-lustre",
        availability_domain=availability_domain,
        capacity_in_gbs=catalog.gb_for_gib(plan_fs.capacity_gib),
        performance_tier=plan_fs.tier,
        file_system_name=names.lustre_name(name),
        display_name=f"{name}-lustre",
        subnet_id=network.subnet.id,
        nsg_ids=[network.lustre_nsg.id],
        kms_key_id=result.key.id,
        # Jobs run as their users: root on a node stays root on the file system only where the head needs it.
        root_squash_configuration={"identity_squash": "NONE"},
        **common,
        opts=pulumi.ResourceOptions.merge(
            opts,
            pulumi.ResourceOptions(
                protect=True,
                retain_on_delete=True,
                # The service places its servers under the policy above at creation: after it has propagated.
                depends_on=PropagationWaits(name, parent).after(
                    f"{name}-lustre-service", [result.lustre_policy], catalog.IAM_PROPAGATION_SECONDS
                ),
            ),
        ),
    )
    import_path = plan_fs.import_path.strip("/")
    result.link = oci.lustre.FileStorageObjectStorageLink(
        f"{name}-dataset-link",
        availability_domain=availability_domain,
        lustre_file_system_id=result.file_system.id,
        file_system_path=f"/{import_path}" if import_path else "/",
        object_storage_prefix=result.namespace.apply(
            lambda ns: object_storage_prefix(ns, spec.training.storage.datasets.uri)
        ),
        is_overwrite=False,  # a file already on Lustre (a checkpoint, an edit) is never replaced by an import
        start_import_from_object_trigger=import_trigger(lustre.import_trigger),
        display_name=f"{name}-dataset-link",
        **common,
        opts=opts,
    )
