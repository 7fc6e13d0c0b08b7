"""The replicas' service account: pull from the request subscription, publish to the response topic,
write logs and metrics. The read of the model artifacts is granted on each bucket the weights and adapters are in
(objectViewer on exactly their prefixes, through an IAM condition), by the serving stack when serving.artifactAccount
names where they come from: the TRAINING project's bucket (the deploy identity needs setIamPolicy on it; without it
the training project's owner adds the same binding), or this stack's own bucket a copy wrote them into
(serving.model.copyFrom)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi
import pulumi_gcp as gcp

from accelstack.clouds.gcp import catalog
from accelstack.components.gcp.provider import resource_id
from accelstack.components.handoff.gcp_reader import prefix_condition
from accelstack.components.propagation import PropagationWaits
from accelstack.spec.models import ServingSpec

if TYPE_CHECKING:
    from accelstack.components.gcp.serving.queue import AdmissionQueues


@dataclass(frozen=True)
class ReplicaIdentity:
    """The replicas' service account and its grants (the group waits for them)."""

    account: gcp.serviceaccount.Account
    grants: list[pulumi.Resource]


# Service account ids: 6..30 characters, [a-z]([-a-z0-9]*[a-z0-9]) (iam.serviceAccounts.create).
def models_read_condition(serving: ServingSpec) -> dict[str, str]:
    """Per bucket of the weights and adapters: reads of the objects under their prefixes, and lists of those
    prefixes. `storage.objects.list` is judged on the bucket (resource.name is the bucket's, never an object's), so
    a condition on object names alone denies the listing `gcloud storage rsync` starts with; the list prefix
    attribute keeps the listing to the prefixes (cloud.google.com/storage/docs/access-control/iam#conditions:
    "storage.googleapis.com/objectListPrefix"). The prefixes are the URIs' own, as every cloud reads them (AWS
    model_read_policy, Azure's role condition): a fixed "models/" would leave a copy written elsewhere unreadable."""
    prefixes: dict[str, list[str]] = {}
    for uri in [serving.model.weights_uri, *(adapter.uri for adapter in serving.model.adapters)]:
        bucket, _, path = uri.removeprefix("gs://").partition("/")
        prefix = f"{path.strip('/')}/" if path.strip("/") else ""
        if prefix not in prefixes.setdefault(bucket, []):
            prefixes[bucket].append(prefix)
    return {bucket: prefix_condition(bucket, found) for bucket, found in prefixes.items()}


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
        grants += [
            gcp.storage.BucketIAMMember(
                f"{name}-replica-models" + (f"-{index}" if index else ""),
                bucket=bucket,
                role="roles/storage.objectViewer",
                member=member,
                condition=gcp.storage.BucketIAMMemberConditionArgs(title="models-prefix-only", expression=expression),
                opts=opts,
            )
            for index, (bucket, expression) in enumerate(models_read_condition(serving).items())
        ]
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
