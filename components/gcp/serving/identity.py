"""The replicas' service account: pull from the request subscription, publish to the response topic,
write logs and metrics. The read of the model artifacts is granted on the TRAINING project's bucket
(objectViewer on models/ only, through an IAM condition), by the serving stack when serving.artifactAccount
names that project: the deploy identity needs setIamPolicy on that bucket; without it the training
project's owner adds the same binding."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi
import pulumi_gcp as gcp

from accelstack.clouds.gcp import catalog
from accelstack.components.gcp.provider import resource_id
from accelstack.components.propagation import PropagationWaits
from accelstack.spec.models import ServingSpec

if TYPE_CHECKING:
    from accelstack.components.gcp.serving.queue import AdmissionQueues

MODELS_PREFIX = "models/"


def bucket_of(uri: str) -> str:
    return uri.removeprefix("gs://").split("/", 1)[0]


@dataclass(frozen=True)
class ReplicaIdentity:
    """The replicas' service account and its grants (the group waits for them)."""

    account: gcp.serviceaccount.Account
    grants: list[pulumi.Resource]


# Service account ids: 6..30 characters, [a-z]([-a-z0-9]*[a-z0-9]) (iam.serviceAccounts.create).
def models_read_condition(bucket: str) -> str:
    """Reads of the objects under the models prefix, and lists of that prefix. `storage.objects.list` is judged
    on the bucket (resource.name is the bucket's, never an object's), so a condition on object names alone denies
    the listing `gcloud storage rsync` starts with; the list prefix attribute keeps the listing to the prefix
    (cloud.google.com/storage/docs/access-control/iam#conditions: "storage.googleapis.com/objectListPrefix")."""
    return (
        f'resource.name.startsWith("projects/_/buckets/{bucket}/objects/{MODELS_PREFIX}") || '
        f'(resource.type == "storage.googleapis.com/Bucket" && '
        f'api.getAttribute("storage.googleapis.com/objectListPrefix", "").startsWith("{MODELS_PREFIX}"))'
    )


def replica_account(
    name: str, serving: ServingSpec, queues: AdmissionQueues | None, opts: pulumi.ResourceOptions
) -> ReplicaIdentity:
    """The replicas' service account: pull requests and publish responses (with a queue), read the models."""
    account = gcp.serviceaccount.Account(
        f"{name}-replica",
        account_id=resource_id(name, "replica", 30),
        display_name=f"{name} serving replicas",
        opts=opts,
    )
    member = account.member
    grants: list[pulumi.Resource] = [
        gcp.pubsub.SubscriptionIAMMember(
            f"{name}-replica-subscriber", subscription=queues.request_subscription.name,
            role="roles/pubsub.subscriber", member=member, opts=opts,
        ),
        gcp.pubsub.TopicIAMMember(
            f"{name}-replica-publisher", topic=queues.responses.name, role="roles/pubsub.publisher", member=member,
            opts=opts,
        ),
    ] if queues is not None else []  # fmt: skip
    if serving.artifact_account and serving.model.weights_uri.startswith("gs://"):  # else: components.handoff
        bucket = bucket_of(serving.model.weights_uri)
        grants.append(
            gcp.storage.BucketIAMMember(
                f"{name}-replica-models",
                bucket=bucket,
                role="roles/storage.objectViewer",
                member=member,
                condition=gcp.storage.BucketIAMMemberConditionArgs(
                    title="models-prefix-only",
                    expression=models_read_condition(bucket),
                ),
                opts=opts,
            )
        )
    return ReplicaIdentity(account, grants)


# Cloud KMS rotation: 90 days (rotation_period is seconds with an "s" suffix, at least 1 day).
KEY_ROTATION = "7776000s"


@dataclass(frozen=True)
class QueueKey:
    """The topics' key, the Pub/Sub agent's grant on it, and what a topic naming the key waits for: the grant,
    propagated (`usable`)."""

    key: gcp.kms.CryptoKey
    agent_grant: gcp.kms.CryptoKeyIAMMember
    usable: list[pulumi.Resource]


def stack_key(name: str, region: str, opts: pulumi.ResourceOptions) -> gcp.kms.CryptoKey:
    """The stack's key ring and key. Key rings and keys cannot be deleted (only their versions destroyed), so both
    are protected and retained, and a stack without a queue (admission.kind replica) keeps them too: switching
    topology never asks Pulumi to delete a protected resource."""
    keep = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(protect=True, retain_on_delete=True))
    ring = gcp.kms.KeyRing(f"{name}-keys", location=region, opts=keep)
    return gcp.kms.CryptoKey(
        f"{name}-queues", key_ring=ring.id, purpose="ENCRYPT_DECRYPT", rotation_period=KEY_ROTATION, opts=keep
    )


def kms_key(
    name: str, region: str, pubsub_agent: pulumi.Output[str], opts: pulumi.ResourceOptions, waits: PropagationWaits
) -> QueueKey:
    """The Pub/Sub topics' customer-managed key (`stack_key`). The Pub/Sub service agent must hold
    encrypterDecrypter before a topic names the key, or topic creation fails
    (https://cloud.google.com/pubsub/docs/encryption#using-cmek): the topics wait for it to propagate."""
    key = stack_key(name, region, opts)
    agent_grant = gcp.kms.CryptoKeyIAMMember(
        f"{name}-queues-pubsub-agent",
        crypto_key_id=key.id,
        role="roles/cloudkms.cryptoKeyEncrypterDecrypter",
        member=pubsub_agent,  # created before it is named: a fresh project has no Pub/Sub agent yet
        opts=opts,
    )
    return QueueKey(
        key,
        agent_grant,
        waits.after(f"{name}-queues-pubsub-agent", [agent_grant], catalog.IAM_PROPAGATION_SECONDS),
    )
