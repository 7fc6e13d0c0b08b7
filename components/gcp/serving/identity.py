"""The replicas' service account: pull from the request subscription, publish to the response topic,
write logs and metrics. The read of the model artifacts is granted on the TRAINING project's bucket
(objectViewer on models/ only, through an IAM condition), by the serving stack when serving.artifactAccount
names that project: the deploy identity needs setIamPolicy on that bucket; without it the training
project's owner adds the same binding."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from accelstack.components.gcp.provider import resource_id

MODELS_PREFIX = "models/"


def bucket_of(uri: str) -> str:
    return uri.removeprefix("gs://").split("/", 1)[0]


# Service account ids: 6..30 characters, [a-z]([-a-z0-9]*[a-z0-9]) (iam.serviceAccounts.create).
def replica_account(svc: Any, name: str) -> gcp.serviceaccount.Account:
    account = gcp.serviceaccount.Account(
        f"{name}-replica",
        account_id=resource_id(name, "replica", 30),
        display_name=f"{name} serving replicas",
        opts=svc.child,
    )
    member = account.member
    q = svc.queues
    grants: list[pulumi.Resource] = [
        gcp.pubsub.SubscriptionIAMMember(
            f"{name}-replica-subscriber", subscription=q["request-subscription"].name,
            role="roles/pubsub.subscriber", member=member, opts=svc.child,
        ),
        gcp.pubsub.TopicIAMMember(
            f"{name}-replica-publisher", topic=q["responses"].name, role="roles/pubsub.publisher", member=member,
            opts=svc.child,
        ),
    ]  # fmt: skip
    if svc.serving.artifact_account:
        bucket = bucket_of(svc.serving.model.weights_uri)
        grants.append(
            gcp.storage.BucketIAMMember(
                f"{name}-replica-models",
                bucket=bucket,
                role="roles/storage.objectViewer",
                member=member,
                condition=gcp.storage.BucketIAMMemberConditionArgs(
                    title="models-prefix-only",
                    expression=(f'resource.name.startsWith("projects/_/buckets/{bucket}/objects/{MODELS_PREFIX}")'),
                ),
                opts=svc.child,
            )
        )
    svc.replica_grants = grants
    return account


# Cloud KMS rotation: 90 days (rotation_period is seconds with an "s" suffix, at least 1 day).
KEY_ROTATION = "7776000s"


def kms_key(svc: Any, name: str) -> gcp.kms.CryptoKey:
    """The Pub/Sub topics' customer-managed key. Key rings and keys cannot be deleted (only their versions
    destroyed), so both are protected and retained. The Pub/Sub service agent must hold
    encrypterDecrypter before a topic names the key, or topic creation fails
    (https://cloud.google.com/pubsub/docs/encryption#using-cmek)."""
    keep = pulumi.ResourceOptions.merge(svc.child, pulumi.ResourceOptions(protect=True, retain_on_delete=True))
    ring = gcp.kms.KeyRing(f"{name}-keys", location=svc.region, opts=keep)
    key = gcp.kms.CryptoKey(
        f"{name}-queues", key_ring=ring.id, purpose="ENCRYPT_DECRYPT", rotation_period=KEY_ROTATION, opts=keep
    )
    svc.key_grant = gcp.kms.CryptoKeyIAMMember(
        f"{name}-queues-pubsub-agent",
        crypto_key_id=key.id,
        role="roles/cloudkms.cryptoKeyEncrypterDecrypter",
        member=svc.project_number.apply(lambda n: f"serviceAccount:service-{n}@gcp-sa-pubsub.iam.gserviceaccount.com"),
        opts=svc.child,
    )
    return key
