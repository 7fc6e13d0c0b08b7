"""GCP's guarded kinds, property by property (iam): judged by the named pack rules (as traced by
`python -m accelstack.engine.schema_report --trace`), inert with the reason, or unjudged with why it matters (policies/schema.py)."""

from __future__ import annotations

NAMING = "inert: naming and display only"
TUNING = "inert: sizing, performance or behaviour tuning: no access, exposure or data-protection meaning"
DATA_LOSS = "data loss or protection (deletion, versioning, backups, retention, where data is copied)"
ENCRYPTION = "encryption at rest: which key, who holds it, how it rotates"
EXPOSURE = "network exposure or authentication path"
GRANT_TARGET = "which resource the grant or attachment applies to (a grant moved to another resource)"
WHO_MAY_ACT = "who may act, as whom, on what"

PROPERTIES: dict[str, dict[str, str]] = {
    "gcp:serviceaccount/account:Account": {
        "createIgnoreAlreadyExists": TUNING,
        "description": NAMING,
        "displayName": NAMING,
        "project": "pinned-project",
    },
    "gcp:projects/iAMMember:IAMMember": {
        "member": "iam-least-privilege, no-public-buckets",
        "project": "cross-account-read-only, cross-account-read-only-final, pinned-project",
        "role": "iam-least-privilege, no-public-buckets",
    },
    "gcp:projects/iAMBinding:IAMBinding": {
        "members": "iam-least-privilege, no-public-buckets",
        "project": "cross-account-read-only, cross-account-read-only-final, pinned-project",
        "role": "iam-least-privilege, no-public-buckets",
    },
    "gcp:projects/iAMPolicy:IAMPolicy": {
        "policyData": "iam-least-privilege, no-public-buckets",
        "project": "cross-account-read-only, cross-account-read-only-final, pinned-project",
    },
    "gcp:storage/bucketIAMMember:BucketIAMMember": {
        "condition": "cross-account-read-only, cross-account-read-only-final",
        "bucket": "cross-account-read-only-final",
        "member": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "role": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
    },
    "gcp:storage/bucketIAMBinding:BucketIAMBinding": {
        "bucket": "cross-account-read-only-final",
        "members": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "role": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
    },
    "gcp:storage/bucketIAMPolicy:BucketIAMPolicy": {
        "bucket": "cross-account-read-only-final",
        "policyData": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
    },
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember": {
        "cryptoKeyId": "cross-account-read-only, cross-account-read-only-final",
        "member": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "role": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
    },
    "gcp:kms/cryptoKeyIAMBinding:CryptoKeyIAMBinding": {
        "cryptoKeyId": "cross-account-read-only, cross-account-read-only-final",
        "members": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "role": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
    },
    "gcp:kms/cryptoKeyIAMPolicy:CryptoKeyIAMPolicy": {
        "cryptoKeyId": "cross-account-read-only, cross-account-read-only-final",
        "policyData": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
    },
    "gcp:kms/keyRingIAMMember:KeyRingIAMMember": {
        "keyRingId": "cross-account-read-only, cross-account-read-only-final",
        "member": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "role": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
    },
    "gcp:kms/keyRingIAMBinding:KeyRingIAMBinding": {
        "keyRingId": "cross-account-read-only, cross-account-read-only-final",
        "members": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "role": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
    },
    "gcp:secretmanager/secretIamMember:SecretIamMember": {
        "member": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "role": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "project": "cross-account-read-only, cross-account-read-only-final, pinned-project",
    },
    "gcp:secretmanager/secretIamBinding:SecretIamBinding": {
        "members": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "role": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "project": "cross-account-read-only, cross-account-read-only-final, pinned-project",
    },
    "gcp:secretmanager/secretIamPolicy:SecretIamPolicy": {
        "policyData": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "project": "cross-account-read-only, cross-account-read-only-final, pinned-project",
    },
    "gcp:pubsub/topicIAMMember:TopicIAMMember": {
        "member": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "role": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "project": "cross-account-read-only, cross-account-read-only-final, pinned-project",
    },
    "gcp:pubsub/topicIAMBinding:TopicIAMBinding": {
        "members": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "role": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "project": "cross-account-read-only, cross-account-read-only-final, pinned-project",
    },
    "gcp:pubsub/topicIAMPolicy:TopicIAMPolicy": {
        "policyData": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "project": "cross-account-read-only, cross-account-read-only-final, pinned-project",
    },
    "gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember": {
        "member": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "role": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "project": "cross-account-read-only, cross-account-read-only-final, pinned-project",
    },
    "gcp:pubsub/subscriptionIAMBinding:SubscriptionIAMBinding": {
        "members": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "role": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "project": "cross-account-read-only, cross-account-read-only-final, pinned-project",
    },
    "gcp:pubsub/subscriptionIAMPolicy:SubscriptionIAMPolicy": {
        "policyData": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "project": "cross-account-read-only, cross-account-read-only-final, pinned-project",
    },
    "gcp:serviceaccount/iAMMember:IAMMember": {
        "serviceAccountId": "cross-account-read-only, cross-account-read-only-final",
        "member": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "role": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
    },
    "gcp:serviceaccount/iAMBinding:IAMBinding": {
        "serviceAccountId": "cross-account-read-only, cross-account-read-only-final",
        "members": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
        "role": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
    },
    "gcp:serviceaccount/iAMPolicy:IAMPolicy": {
        "serviceAccountId": "cross-account-read-only, cross-account-read-only-final",
        "policyData": "cross-account-read-only, cross-account-read-only-final, iam-least-privilege, no-public-buckets",
    },
}

# Properties no rule reads yet, with why they matter (the lead re-runs `python -m accelstack.engine.schema_report`).
UNJUDGED: dict[str, dict[str, str]] = {
    "gcp:serviceaccount/account:Account": {
        "accountId": WHO_MAY_ACT,
        "deletionPolicy": DATA_LOSS,
        "disabled": EXPOSURE,
    },
    "gcp:projects/iAMMember:IAMMember": {
        "condition": WHO_MAY_ACT,
    },
    "gcp:projects/iAMBinding:IAMBinding": {
        "condition": WHO_MAY_ACT,
    },
    "gcp:storage/bucketIAMBinding:BucketIAMBinding": {
        "condition": WHO_MAY_ACT,
    },
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember": {
        "condition": WHO_MAY_ACT,
    },
    "gcp:kms/cryptoKeyIAMBinding:CryptoKeyIAMBinding": {
        "condition": WHO_MAY_ACT,
    },
    "gcp:kms/keyRingIAMMember:KeyRingIAMMember": {
        "condition": WHO_MAY_ACT,
    },
    "gcp:kms/keyRingIAMBinding:KeyRingIAMBinding": {
        "condition": WHO_MAY_ACT,
    },
    "gcp:secretmanager/secretIamMember:SecretIamMember": {
        "secretId": GRANT_TARGET,
        "condition": WHO_MAY_ACT,
    },
    "gcp:secretmanager/secretIamBinding:SecretIamBinding": {
        "secretId": GRANT_TARGET,
        "condition": WHO_MAY_ACT,
    },
    "gcp:secretmanager/secretIamPolicy:SecretIamPolicy": {
        "secretId": GRANT_TARGET,
    },
    "gcp:pubsub/topicIAMMember:TopicIAMMember": {
        "topic": GRANT_TARGET,
        "condition": WHO_MAY_ACT,
    },
    "gcp:pubsub/topicIAMBinding:TopicIAMBinding": {
        "topic": GRANT_TARGET,
        "condition": WHO_MAY_ACT,
    },
    "gcp:pubsub/topicIAMPolicy:TopicIAMPolicy": {
        "topic": GRANT_TARGET,
    },
    "gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember": {
        "subscription": GRANT_TARGET,
        "condition": WHO_MAY_ACT,
    },
    "gcp:pubsub/subscriptionIAMBinding:SubscriptionIAMBinding": {
        "subscription": GRANT_TARGET,
        "condition": WHO_MAY_ACT,
    },
    "gcp:pubsub/subscriptionIAMPolicy:SubscriptionIAMPolicy": {
        "subscription": GRANT_TARGET,
    },
    "gcp:serviceaccount/iAMMember:IAMMember": {
        "condition": WHO_MAY_ACT,
    },
    "gcp:serviceaccount/iAMBinding:IAMBinding": {
        "condition": WHO_MAY_ACT,
    },
}
