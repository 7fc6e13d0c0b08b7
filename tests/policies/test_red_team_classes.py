"""A red team's pass over the issue's classes of misses (issue 28, "How the misses passed"), on AWS, Azure and GCP.

Every attack is one realistic edit of a shipped stack's own export (`accelstack preview`'s, previewed once per
stack) spelled in a way the other policy tests do not use: another resource kind or property carrying the same
meaning, another principal encoding, another route to "become", write, forward or expose. Both packs run through
the analyzer path the CLI uses; an attack is stopped when either pack returns a MANDATORY verdict (the unmutated
stacks get none at all, so any mandatory verdict is the edit's). The kill rate, by class and cloud, is printed.

Beside them, legitimate changes a maintainer would make must draw no verdict at all (no false positives).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from red_team_edits import (
    Edit,
    add,
    allow,
    at,
    both,
    document,
    drop_key,
    edit,
    put,
    rename,
    unprotect,
    with_statement,
)
from red_team_suite import (
    BECOME,
    CAPACITY,
    CLASSES,
    CONDITION,
    DATA_LOSS,
    ESCALATION,
    FIELD,
    LOGGING,
    NETWORK,
    PLACEMENT,
    PRINCIPAL,
    WAF,
    Change,
    attack_cases,
    report_kill_rate,
    stopped,
    verdicts_after,
)

# --- AWS --------------------------------------------------------------------------------------------------------------
AT, AS = "aws-training", "aws-serving"
TRAIN_ACCT, SERVE_ACCT, THIRD_ACCT = "111111111111", "222222222222", "333333333333"
A_BUCKET, A_BUCKET_POLICY = "aws:s3/bucket:Bucket", "aws:s3/bucketPolicy:BucketPolicy"
A_ROLE, A_ROLE_POLICY = "aws:iam/role:Role", "aws:iam/rolePolicy:RolePolicy"
A_KEY, A_LT, A_ASG = "aws:kms/key:Key", "aws:ec2/launchTemplate:LaunchTemplate", "aws:autoscaling/group:Group"
A_WAF = "aws:wafv2/webAcl:WebAcl"
CKPT = "acme-train-checkpoints"
CKPT_ARN = f"arn:aws:s3:::{CKPT}"
TRAIN_NODE_ROLE = f"arn:aws:iam::{TRAIN_ACCT}:role/aws-training-node"
TRAIN_KEY = f"arn:aws:kms:us-east-1:{TRAIN_ACCT}:key/aws-training-storage-key"
SERVE_KEY = f"arn:aws:kms:us-east-1:{SERVE_ACCT}:key/aws-serving-key"
SERVE_ROOT = f"arn:aws:iam::{SERVE_ACCT}:root"
SERVE_ROLE = f"arn:aws:iam::{SERVE_ACCT}:role/aws-serving-replica"
CKPT_POLICY = ("aws-training-storage-checkpoints-policy", A_BUCKET_POLICY)
SERVE_QUEUES = ("aws-serving-replica-queues", A_ROLE_POLICY)
RATE_RULE = "rules.0"


def serving_role_policy(name: str, *statements: dict[str, Any]) -> Edit:
    """A customer-managed policy attached to serving's replica role (PolicyAttachment, the legacy exclusive kind)."""
    policy_arn = f"arn:aws:iam::{SERVE_ACCT}:policy/{name}"
    return both(
        add("aws:iam/policy:Policy", name, {"name": name, "policy": json.dumps(document(*statements))}),
        add(
            "aws:iam/policyAttachment:PolicyAttachment",
            f"{name}-attach",
            {"name": name, "policyArn": policy_arn, "roles": ["aws-serving-replica"]},
            depends={"roles": ("aws-serving-replica", A_ROLE)},
        ),
    )


AWS = [
    # --- principals the pack cannot place ---
    Change(
        "aws-star-with-ifexists-account",
        AT,
        with_statement(
            *CKPT_POLICY,
            "policy",
            allow(
                "s3:GetObject",
                f"{CKPT_ARN}/*",
                "*",
                {"StringEqualsIfExists": {"aws:PrincipalAccount": TRAIN_ACCT}},
            ),
        ),
        PRINCIPAL,
    ),
    Change(
        "aws-star-inside-principal-list",
        AT,
        with_statement(
            *CKPT_POLICY,
            "policy",
            allow("s3:GetObject", f"{CKPT_ARN}/*", {"AWS": [f"arn:aws:iam::{TRAIN_ACCT}:root", "*"]}),
        ),
        PRINCIPAL,
    ),
    Change(
        "aws-not-principal-allow",
        AT,
        with_statement(
            *CKPT_POLICY,
            "policy",
            {
                "Effect": "Allow",
                "NotPrincipal": {"AWS": f"arn:aws:iam::{TRAIN_ACCT}:root"},
                "Action": "s3:GetObject",
                "Resource": f"{CKPT_ARN}/*",
            },
        ),
        PRINCIPAL,
    ),
    Change(
        "aws-cognito-trust-without-audience",
        AT,
        with_statement(
            "aws-training-node",
            A_ROLE,
            "assumeRolePolicy",
            {
                "Effect": "Allow",
                "Principal": {"Federated": "cognito-identity.amazonaws.com"},
                "Action": "sts:AssumeRoleWithWebIdentity",
            },
        ),
        PRINCIPAL,
    ),
    Change(
        "aws-third-account-role-on-key",
        AT,
        with_statement(
            "aws-training-storage-key",
            A_KEY,
            "policy",
            allow(["kms:Decrypt"], "*", {"AWS": f"arn:aws:iam::{THIRD_ACCT}:role/analytics"}),
        ),
        PRINCIPAL,
    ),
    # --- become: trust and passing/assuming roles on the other side, a machine wearing the other side ---
    Change(
        "aws-trust-star-pinned-to-serving-account",
        AT,
        with_statement(
            "aws-training-node",
            A_ROLE,
            "assumeRolePolicy",
            {
                "Effect": "Allow",
                "Principal": {"AWS": "*"},
                "Action": "sts:AssumeRole",
                "Condition": {"StringEquals": {"aws:PrincipalAccount": SERVE_ACCT}},
            },
            as_object=True,
        ),
        BECOME,
    ),
    Change(
        "aws-customer-policy-passes-training-roles",
        AS,
        serving_role_policy("pass-training", allow("iam:PassRole", f"arn:aws:iam::{TRAIN_ACCT}:role/*")),
        BECOME,
    ),
    Change(
        "aws-inline-role-policy-not-resource-assume",
        AS,
        put(
            "aws-serving-replica",
            A_ROLE,
            inlinePolicies=[
                {
                    "name": "hop",
                    "policy": document(
                        {
                            "Effect": "Allow",
                            "Action": "sts:AssumeRole",
                            "NotResource": f"arn:aws:iam::{SERVE_ACCT}:role/*",
                        }
                    ),
                }
            ],
        ),
        BECOME,
    ),
    Change(
        "aws-serving-launch-template-wears-training-profile",
        AS,
        at(
            "aws-serving-replica",
            A_LT,
            "iamInstanceProfile",
            {"arn": f"arn:aws:iam::{TRAIN_ACCT}:instance-profile/aws-training-node"},
        ),
        BECOME,
    ),
    Change(
        "aws-lambda-runs-as-training-role",
        AS,
        add(
            "aws:lambda/function:Function",
            "aws-serving-sync",
            {"role": TRAIN_NODE_ROLE, "runtime": "python3.12", "handler": "main.handler", "packageType": "Zip"},
        ),
        BECOME,
    ),
    # --- the read path loses its condition ---
    Change(
        "aws-list-without-prefix-condition",
        AS,
        with_statement(*SERVE_QUEUES, "policy", allow("s3:ListBucket", CKPT_ARN)),
        CONDITION,
    ),
    Change(
        "aws-key-decrypt-without-via-service",
        AT,
        with_statement("aws-training-storage-key", A_KEY, "policy", allow(["kms:Decrypt"], "*", {"AWS": SERVE_ROOT})),
        CONDITION,
    ),
    # --- the same meaning in another property or kind ---
    Change(
        "aws-kms-grant-to-serving-role",
        AT,
        add(
            "aws:kms/grant:Grant",
            "aws-training-key-grant",
            {"keyId": TRAIN_KEY, "granteePrincipal": SERVE_ROLE, "operations": ["Decrypt", "GenerateDataKey"]},
        ),
        FIELD,
    ),
    Change(
        "aws-access-point-policy-writes",
        AT,
        add(
            "aws:s3/accessPoint:AccessPoint",
            "aws-training-ckpt-ap",
            {
                "bucket": CKPT,
                "name": "ckpt",
                "policy": json.dumps(
                    document(
                        allow(
                            "s3:PutObject",
                            f"arn:aws:s3:us-east-1:{TRAIN_ACCT}:accesspoint/ckpt/object/*",
                            {"AWS": SERVE_ROOT},
                        )
                    )
                ),
            },
        ),
        FIELD,
    ),
    Change(
        "aws-bucket-acl-v2-all-users",
        AT,
        add(
            "aws:s3/bucketAclV2:BucketAclV2",
            "aws-training-ckpt-acl",
            {
                "bucket": CKPT,
                "accessControlPolicy": {
                    "owner": {"id": "owner"},
                    "grants": [
                        {
                            "grantee": {"type": "Group", "uri": "http://acs.amazonaws.com/groups/global/AllUsers"},
                            "permission": "READ",
                        }
                    ],
                },
            },
        ),
        FIELD,
    ),
    Change(
        "aws-secret-policy-to-serving",
        AT,
        add(
            "aws:secretsmanager/secretPolicy:SecretPolicy",
            "aws-training-munge-share",
            {
                "secretArn": f"arn:aws:secretsmanager:us-east-1:{TRAIN_ACCT}:secret:aws-training-munge-key",
                "policy": json.dumps(document(allow("secretsmanager:GetSecretValue", "*", {"AWS": SERVE_ROOT}))),
            },
        ),
        FIELD,
    ),
    Change(
        "aws-bucket-policy-object-wildcard-put",
        AT,
        with_statement(*CKPT_POLICY, "policy", allow("s3:Put*", f"{CKPT_ARN}/*", {"AWS": SERVE_ROOT}), as_object=True),
        FIELD,
    ),
    # --- where data is written, forwarded or encrypted ---
    Change(
        "aws-cloudtrail-to-serving-bucket",
        AT,
        add(
            "aws:cloudtrail/trail:Trail",
            "aws-training-trail",
            {
                "name": "training",
                "s3BucketName": "aws-serving-alb-logs",
                "isMultiRegionTrail": True,
                "enableLogFileValidation": True,
            },
        ),
        PLACEMENT,
    ),
    Change(
        "aws-firehose-to-serving-bucket",
        AT,
        add(
            "aws:kinesis/firehoseDeliveryStream:FirehoseDeliveryStream",
            "aws-training-export",
            {
                "destination": "extended_s3",
                "extendedS3Configuration": {
                    "bucketArn": "arn:aws:s3:::aws-serving-alb-logs",
                    "roleArn": f"arn:aws:iam::{TRAIN_ACCT}:role/firehose",
                },
            },
        ),
        PLACEMENT,
    ),
    Change(
        "aws-flow-logs-to-serving-bucket",
        AT,
        put(
            "aws-training-net-flow-logs",
            "aws:ec2/flowLog:FlowLog",
            logDestination="arn:aws:s3:::aws-serving-net-flow-logs/vpc-flow-logs",
        ),
        PLACEMENT,
    ),
    Change(
        "aws-lustre-on-serving-key",
        AT,
        put("aws-training-storage-lustre", "aws:fsx/lustreFileSystem:LustreFileSystem", kmsKeyId=SERVE_KEY),
        PLACEMENT,
    ),
    Change(
        "aws-snapshot-shared-with-serving",
        AT,
        add(
            "aws:ec2/snapshotCreateVolumePermission:SnapshotCreateVolumePermission",
            "aws-training-state-share",
            {"snapshotId": "snap-0123456789abcdef0", "accountId": SERVE_ACCT},
        ),
        PLACEMENT,
    ),
    Change(
        "aws-image-launch-permission-to-all",
        AT,
        add(
            "aws:ec2/amiLaunchPermission:AmiLaunchPermission",
            "aws-training-node-image-public",
            {"imageId": "ami-0123456789abcdef0", "group": "all"},
        ),
        PLACEMENT,
    ),
    # --- network paths ---
    Change(
        "aws-ram-shares-training-subnet-with-serving",
        AT,
        both(
            add(
                "aws:ram/resourceShare:ResourceShare",
                "aws-training-share",
                {"name": "subnets", "allowExternalPrincipals": True},
            ),
            add(
                "aws:ram/resourceAssociation:ResourceAssociation",
                "aws-training-share-subnet",
                {"resourceArn": f"arn:aws:ec2:us-east-1:{TRAIN_ACCT}:subnet/subnet-0abc", "resourceShareArn": "share"},
            ),
            add(
                "aws:ram/principalAssociation:PrincipalAssociation",
                "aws-training-share-serving",
                {"principal": SERVE_ACCT, "resourceShareArn": "share"},
            ),
        ),
        NETWORK,
    ),
    Change(
        "aws-legacy-sg-rule-from-serving-group",
        AT,
        add(
            "aws:ec2/securityGroupRule:SecurityGroupRule",
            "aws-training-from-serving",
            {
                "type": "ingress",
                "fromPort": 22,
                "toPort": 22,
                "protocol": "tcp",
                "securityGroupId": "aws-training-net-cluster-id",
                "sourceSecurityGroupId": f"{SERVE_ACCT}/sg-0123456789abcdef0",
            },
        ),
        NETWORK,
    ),
    Change(
        "aws-inline-group-block-admits-serving-group",
        AT,
        edit(
            "aws-training-net-cluster",
            "aws:ec2/securityGroup:SecurityGroup",
            lambda p: p.__setitem__(
                "ingress",
                [
                    {
                        "fromPort": 0,
                        "toPort": 65535,
                        "protocol": "tcp",
                        "securityGroups": [f"{SERVE_ACCT}/sg-0fedcba9876543210"],
                    }
                ],
            ),
        ),
        NETWORK,
    ),
    # --- escalation through roles neither `*` nor basic ---
    Change(
        "aws-attach-and-put-role-policy",
        AS,
        with_statement(*SERVE_QUEUES, "policy", allow(["iam:AttachRolePolicy", "iam:PutRolePolicy"], "*")),
        ESCALATION,
    ),
    Change(
        "aws-create-policy-version",
        AS,
        serving_role_policy("versions", allow(["iam:CreatePolicyVersion", "iam:SetDefaultPolicyVersion"], "*")),
        ESCALATION,
    ),
    # --- logging or encryption off ---
    Change(
        "aws-waf-logging-filter-drops-everything",
        AS,
        put(
            "aws-serving-waf-logs",
            "aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration",
            loggingFilter={"defaultBehavior": "DROP", "filters": []},
        ),
        LOGGING,
    ),
    Change(
        "aws-ebs-default-encryption-off",
        AT,
        add("aws:ebs/encryptionByDefault:EncryptionByDefault", "aws-training-ebs-default", {"enabled": False}),
        LOGGING,
    ),
    Change(
        "aws-flow-log-rejects-only",
        AS,
        put("aws-serving-net-flow-logs", "aws:ec2/flowLog:FlowLog", trafficType="REJECT"),
        LOGGING,
    ),
    Change(
        "aws-queue-without-any-encryption",
        AS,
        edit(
            "aws-serving-requests",
            "aws:sqs/queue:Queue",
            lambda p: p.update(kmsMasterKeyId=None, sqsManagedSseEnabled=False),
        ),
        LOGGING,
    ),
    # --- data loss ---
    Change(
        "aws-inline-lifecycle-expires-checkpoints",
        AT,
        put(
            "aws-training-storage-checkpoints",
            A_BUCKET,
            lifecycleRules=[{"enabled": True, "id": "purge", "expiration": {"days": 1}}],
        ),
        DATA_LOSS,
    ),
    Change(
        "aws-inline-versioning-off",
        AT,
        put("aws-training-storage-checkpoints", A_BUCKET, versioning={"enabled": False}),
        DATA_LOSS,
    ),
    Change(
        "aws-force-destroy-checkpoints",
        AT,
        put("aws-training-storage-checkpoints", A_BUCKET, forceDestroy=True),
        DATA_LOSS,
    ),
    Change(
        "aws-noncurrent-versions-expire-in-a-day",
        AT,
        edit(
            "aws-training-storage-checkpoints-lifecycle",
            "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
            lambda p: p["rules"].append(
                {
                    "id": "purge-versions",
                    "status": "Enabled",
                    "filter": {"prefix": ""},
                    "noncurrentVersionExpiration": {"noncurrentDays": 1},
                }
            ),
        ),
        DATA_LOSS,
    ),
    # --- WAF bypass ---
    Change("aws-rate-rule-captcha", AS, at("aws-serving-edge", A_WAF, f"{RATE_RULE}.action", {"captcha": {}}), WAF),
    Change(
        "aws-rate-rule-scoped-to-one-path",
        AS,
        at(
            "aws-serving-edge",
            A_WAF,
            f"{RATE_RULE}.statement.rateBasedStatement.scopeDownStatement",
            {
                "byteMatchStatement": {
                    "searchString": "/admin",
                    "fieldToMatch": {"uriPath": {}},
                    "positionalConstraint": "STARTS_WITH",
                    "textTransformations": [{"priority": 0, "type": "NONE"}],
                }
            },
        ),
        WAF,
    ),
    Change(
        "aws-rate-keyed-on-query-argument",
        AS,
        at(
            "aws-serving-edge",
            A_WAF,
            f"{RATE_RULE}.statement.rateBasedStatement",
            {
                "aggregateKeyType": "CUSTOM_KEYS",
                "limit": 600,
                "evaluationWindowSec": 60,
                "customKeys": [
                    {"queryArgument": {"name": "session", "textTransformations": [{"priority": 0, "type": "NONE"}]}}
                ],
            },
        ),
        WAF,
    ),
    Change(
        "aws-rate-aggregated-constant",
        AS,
        at("aws-serving-edge", A_WAF, f"{RATE_RULE}.statement.rateBasedStatement.aggregateKeyType", "CONSTANT"),
        WAF,
    ),
    Change(
        "aws-allow-half-the-internet-first",
        AS,
        edit(
            "aws-serving-edge",
            A_WAF,
            lambda p: p["rules"].insert(
                0,
                {
                    "name": "trusted",
                    "priority": -1,
                    "action": {"allow": {}},
                    "statement": {
                        "ipSetReferenceStatement": {
                            "arn": f"arn:aws:wafv2:us-east-1:{SERVE_ACCT}:regional/ipset/halves/1"
                        }
                    },
                    "visibilityConfig": {
                        "cloudwatchMetricsEnabled": True,
                        "metricName": "t",
                        "sampledRequestsEnabled": True,
                    },
                },
            ),
        ),
        WAF,
    ),
    Change(
        "aws-association-on-another-load-balancer",
        AS,
        put(
            "aws-serving-edge",
            "aws:wafv2/webAclAssociation:WebAclAssociation",
            resourceArn=f"arn:aws:elasticloadbalancing:us-east-1:{SERVE_ACCT}:loadbalancer/app/other/1",
        ),
        WAF,
    ),
    # --- serving capacity ---
    Change(
        "aws-serving-half-spot-mixed-policy",
        AS,
        edit(
            "aws-serving-replicas",
            A_ASG,
            lambda p: p.update(
                mixedInstancesPolicy={
                    "instancesDistribution": {"onDemandBaseCapacity": 0, "onDemandPercentageAboveBaseCapacity": 50},
                    "launchTemplate": {"launchTemplateSpecification": p.pop("launchTemplate")},
                }
            ),
        ),
        CAPACITY,
    ),
    Change(
        "aws-serving-capacity-block-market",
        AS,
        at("aws-serving-replica", A_LT, "instanceMarketOptions", {"marketType": "capacity-block"}),
        CAPACITY,
    ),
    Change(
        "aws-serving-spot-instance-request",
        AS,
        add(
            "aws:ec2/spotInstanceRequest:SpotInstanceRequest",
            "aws-serving-extra",
            {
                "ami": "ami-0123456789abcdef0",
                "instanceType": "g5.xlarge",
                "spotType": "persistent",
                "tags": {"accelstack:workload": "serving"},
            },
        ),
        CAPACITY,
    ),
]

# --- Azure ------------------------------------------------------------------------------------------------------------
ZT, ZS = "azure-training", "azure-serving"
TRAIN_SUB, SERVE_SUB = "3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c", "7e6d5c4b-3a29-4817-b6f5-e4d3c2b1a098"
Z_ASSIGN = "azure-native:authorization:RoleAssignment"
Z_ACCOUNT = "azure-native:storage:StorageAccount"
Z_BLOBS = "azure-native:storage:BlobServiceProperties"
Z_VMSS = "azure-native:compute:VirtualMachineScaleSet"
Z_WAF = "azure-native:network:WebApplicationFirewallPolicy"
STRANGER = "0f0f0f0f-0000-4000-8000-00000000000f"  # an object id no stack creates
TRAIN_RG = f"/subscriptions/{TRAIN_SUB}/resourceGroups/azure-training-rg"
SERVE_RG = f"/subscriptions/{SERVE_SUB}/resourceGroups/azure-serving-rg"
TRAIN_CKPT_ACCOUNT = f"{TRAIN_RG}/providers/Microsoft.Storage/storageAccounts/azure-training-storage-checkpoints"
TRAIN_NODES_ID = f"{TRAIN_RG}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/azure-training-nodes-id"
SERVE_REPLICAS = ("azure-serving-id-replicas", "azure-native:managedidentity:UserAssignedIdentity")
ROLES = {
    "vm-contributor": "9980e02c-c2be-4d73-94e8-173b1dc7cf3c",
    "managed-identity-contributor": "e40ec5ca-96e0-45a2-b4ff-59039f2c2b59",
    "storage-account-contributor": "17d1049b-9a84-46fb-8f53-869881c3d3ab",
    "blob-data-owner": "b7e6dc6d-f1e8-4753-8033-0f276bb0955b",
    "blob-data-reader": "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1",
    "uaa": "18d7d88d-d35e-4fb5-a5c3-7773c20a72d9",
    "key-vault-administrator": "00482a5a-887f-4fb3-b363-3b7fe8e74483",
    "reader": "acdd72a7-3629-48b2-a1c1-60a0f8b3f3a0",
}


def role(subscription: str, name: str) -> str:
    return f"/subscriptions/{subscription}/providers/Microsoft.Authorization/roleDefinitions/{ROLES[name]}"


def replicas_assigned(name: str, scope: str, role_name: str, **extra: Any) -> Edit:
    """Serving's replica identity given a role (its principal id comes from the identity, as the program wires it)."""
    return add(
        Z_ASSIGN,
        name,
        {
            "scope": scope,
            "roleDefinitionId": role(SERVE_SUB, role_name),
            "principalId": "22222222-2222-2222-2222-222222222222",
            "principalType": "ServicePrincipal",
            **extra,
        },
        depends={"principalId": SERVE_REPLICAS},
    )


AZURE = [
    Change(
        "azure-stranger-service-principal-at-resource-group",
        ZT,
        add(
            Z_ASSIGN,
            "azure-training-partner-reads",
            {
                "scope": TRAIN_RG,
                "roleDefinitionId": role(TRAIN_SUB, "blob-data-reader"),
                "principalId": STRANGER,
                "principalType": "ServicePrincipal",
            },
        ),
        PRINCIPAL,
    ),
    Change(
        "azure-federated-credential-foreign-issuer",
        ZT,
        add(
            "azure-native:managedidentity:FederatedIdentityCredential",
            "azure-training-nodes-aks",
            {
                "resourceName": "azure-training-nodes-id",
                "resourceGroupName": "azure-training-rg",
                "issuer": "https://eastus.oic.prod-aks.azure.com/tenant/serving-cluster/",
                "subject": "system:serviceaccount:default:replica",
                "audiences": ["api://AzureADTokenExchange"],
            },
        ),
        PRINCIPAL,
    ),
    Change(
        "azure-container-public-blob-access",
        ZT,
        both(
            put("azure-training-storage-checkpoints", Z_ACCOUNT, allowBlobPublicAccess=True),
            put("azure-training-storage-checkpoints", "azure-native:storage:BlobContainer", publicAccess="Blob"),
        ),
        PRINCIPAL,
    ),
    Change(
        "azure-serving-vm-contributor-on-training-scale-set",
        ZS,
        replicas_assigned(
            "azure-serving-run-command",
            f"{TRAIN_RG}/providers/Microsoft.Compute/virtualMachineScaleSets/azure-training-nodes",
            "vm-contributor",
        ),
        BECOME,
    ),
    Change(
        "azure-serving-identity-contributor-on-training-identity",
        ZS,
        replicas_assigned("azure-serving-mi-contrib", TRAIN_NODES_ID, "managed-identity-contributor"),
        BECOME,
    ),
    Change(
        "azure-serving-scale-set-wears-training-identity",
        ZS,
        at(
            "azure-serving-replicas",
            Z_VMSS,
            "identity",
            {"type": "SystemAssigned, UserAssigned", "userAssignedIdentities": [TRAIN_NODES_ID]},
        ),
        BECOME,
    ),
    Change(
        "azure-serving-vm-wears-training-identity",
        ZS,
        add(
            "azure-native:compute:VirtualMachine",
            "azure-serving-debug",
            {
                "resourceGroupName": "azure-serving-rg",
                "hardwareProfile": {"vmSize": "Standard_D2s_v5"},
                "identity": {"type": "UserAssigned", "userAssignedIdentities": {TRAIN_NODES_ID: {}}},
            },
        ),
        BECOME,
    ),
    Change(
        "azure-models-condition-always-true",
        ZS,
        put(
            "azure-serving-id-replicas-models",
            Z_ASSIGN,
            condition="((!(ActionMatches{'Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read'})) OR "
            "(@Resource[Microsoft.Storage/storageAccounts/blobServices/containers/blobs:path] StringStartsWith ''))",
        ),
        CONDITION,
    ),
    Change(
        "azure-models-condition-version-one",
        ZS,
        put("azure-serving-id-replicas-models", Z_ASSIGN, conditionVersion="1.0", condition="true"),
        CONDITION,
    ),
    Change(
        "azure-storage-account-contributor-lists-keys",
        ZS,
        replicas_assigned("azure-serving-keys", TRAIN_CKPT_ACCOUNT, "storage-account-contributor"),
        FIELD,
    ),
    Change(
        "azure-blob-owner-at-container-scope",
        ZS,
        replicas_assigned(
            "azure-serving-owns-models",
            f"{TRAIN_CKPT_ACCOUNT}/blobServices/default/containers/azure-training-storage-checkpoints",
            "blob-data-owner",
        ),
        FIELD,
    ),
    Change(
        "azure-shared-key-access-on",
        ZT,
        put("azure-training-storage-checkpoints", Z_ACCOUNT, allowSharedKeyAccess=True),
        FIELD,
    ),
    Change(
        "azure-disk-encrypted-by-serving-set",
        ZT,
        put(
            "azure-training-slurmctld-state",
            "azure-native:compute:Disk",
            encryption={
                "type": "EncryptionAtRestWithCustomerKey",
                "diskEncryptionSetId": f"{SERVE_RG}/providers/Microsoft.Compute/diskEncryptionSets/serving-des",
            },
        ),
        PLACEMENT,
    ),
    Change(
        "azure-diagnostics-to-training-event-hub",
        ZS,
        at(
            "azure-serving-gateway-logs",
            "azure-native:monitor:DiagnosticSetting",
            "eventHubAuthorizationRuleId",
            f"{TRAIN_RG}/providers/Microsoft.EventHub/namespaces/train-hub/authorizationRules/RootManageSharedAccessKey",
        ),
        PLACEMENT,
    ),
    Change(
        "azure-datasets-network-rule-admits-serving-subnet",
        ZT,
        edit(
            "azure-training-storage-datasets",
            Z_ACCOUNT,
            lambda p: p["networkRuleSet"]["virtualNetworkRules"].append(
                {
                    "action": "Allow",
                    "virtualNetworkResourceId": f"{SERVE_RG}/providers/Microsoft.Network/virtualNetworks/azure-serving-net-vnet/subnets/azure-serving-net-replicas",
                }
            ),
        ),
        NETWORK,
    ),
    Change(
        "azure-hub-connection-to-serving-vnet",
        ZT,
        add(
            "azure-native:network:HubVirtualNetworkConnection",
            "azure-training-hub",
            {
                "resourceGroupName": "azure-training-rg",
                "virtualHubName": "training-hub",
                "remoteVirtualNetwork": {
                    "id": f"{SERVE_RG}/providers/Microsoft.Network/virtualNetworks/azure-serving-net-vnet"
                },
            },
        ),
        NETWORK,
    ),
    Change(
        "azure-serving-uaa-on-own-subscription",
        ZS,
        replicas_assigned("azure-serving-self-admin", f"/subscriptions/{SERVE_SUB}", "uaa"),
        ESCALATION,
    ),
    Change(
        "azure-key-vault-administrator-to-serving",
        ZS,
        replicas_assigned(
            "azure-serving-vault-admin",
            f"{TRAIN_RG}/providers/Microsoft.KeyVault/vaults/azure-training-06badb-kv",
            "key-vault-administrator",
        ),
        ESCALATION,
    ),
    Change(
        "azure-lustre-on-platform-keys",
        ZT,
        drop_key("azure-training-storage-lustre", "azure-native:storagecache:AmlFilesystem", "encryptionSettings"),
        LOGGING,
    ),
    Change(
        "azure-scale-set-disks-on-serving-set",
        ZT,
        at(
            "azure-training-nodes",
            Z_VMSS,
            "virtualMachineProfile.storageProfile.osDisk.managedDisk.diskEncryptionSet",
            {"id": f"{SERVE_RG}/providers/Microsoft.Compute/diskEncryptionSets/serving-des"},
        ),
        PLACEMENT,
    ),
    Change(
        "azure-versions-deleted-after-a-day",
        ZT,
        at(
            "azure-training-storage-checkpoints",
            "azure-native:storage:ManagementPolicy",
            "policy.rules.0.definition.actions.version.delete.daysAfterCreationGreaterThan",
            1.0,
        ),
        DATA_LOSS,
    ),
    Change(
        "azure-https-only-off-and-tls10",
        ZT,
        put("azure-training-storage-checkpoints", Z_ACCOUNT, enableHttpsTrafficOnly=False, minimumTlsVersion="TLS1_0"),
        LOGGING,
    ),
    Change(
        "azure-gateway-diagnostics-metrics-only",
        ZS,
        put(
            "azure-serving-gateway-logs",
            "azure-native:monitor:DiagnosticSetting",
            logs=[],
            metrics=[{"category": "AllMetrics", "enabled": True}],
        ),
        LOGGING,
    ),
    Change(
        "azure-soft-delete-off",
        ZT,
        at("azure-training-storage-checkpoints", Z_BLOBS, "deleteRetentionPolicy", {"enabled": False}),
        DATA_LOSS,
    ),
    Change(
        "azure-versioning-off",
        ZT,
        put("azure-training-storage-checkpoints", Z_BLOBS, isVersioningEnabled=False),
        DATA_LOSS,
    ),
    Change(
        "azure-lifecycle-deletes-base-blobs",
        ZT,
        edit(
            "azure-training-storage-checkpoints",
            "azure-native:storage:ManagementPolicy",
            lambda p: p["policy"]["rules"].append(
                {
                    "enabled": True,
                    "name": "purge",
                    "type": "Lifecycle",
                    "definition": {
                        "actions": {"baseBlob": {"delete": {"daysAfterModificationGreaterThan": 1}}},
                        "filters": {"blobTypes": ["blockBlob"]},
                    },
                }
            ),
        ),
        DATA_LOSS,
    ),
    Change(
        "azure-vault-purge-protection-off",
        ZT,
        at("azure-training-storage-kv", "azure-native:keyvault:Vault", "properties.enablePurgeProtection", False),
        DATA_LOSS,
    ),
    Change(
        "azure-waf-policy-disabled",
        ZS,
        at("azure-serving-waf", Z_WAF, "policySettings.state", "Disabled"),
        WAF,
    ),
    Change(
        "azure-allow-every-uri-first",
        ZS,
        edit(
            "azure-serving-waf",
            Z_WAF,
            lambda p: p["customRules"].insert(
                0,
                {
                    "name": "everyone",
                    "priority": 1,
                    "ruleType": "MatchRule",
                    "action": "Allow",
                    "state": "Enabled",
                    "matchConditions": [
                        {
                            "matchVariables": [{"variableName": "RequestUri"}],
                            "operator": "Contains",
                            "matchValues": ["/"],
                        }
                    ],
                },
            ),
        ),
        WAF,
    ),
    Change(
        "azure-rate-grouped-by-nothing",
        ZS,
        at(
            "azure-serving-waf",
            Z_WAF,
            "customRules.0.groupByUserSession",
            [{"groupByVariables": [{"variableName": "None"}]}],
        ),
        WAF,
    ),
    Change(
        "azure-rate-grouped-by-geography",
        ZS,
        at(
            "azure-serving-waf",
            Z_WAF,
            "customRules.0.groupByUserSession",
            [{"groupByVariables": [{"variableName": "GeoLocation"}]}],
        ),
        WAF,
    ),
    Change(
        "azure-serving-spot-vm",
        ZS,
        add(
            "azure-native:compute:VirtualMachine",
            "azure-serving-extra",
            {
                "resourceGroupName": "azure-serving-rg",
                "hardwareProfile": {"vmSize": "Standard_NC24ads_A100_v4"},
                "priority": "Spot",
                "evictionPolicy": "Delete",
                "tags": {"accelstack:workload": "serving"},
            },
        ),
        CAPACITY,
    ),
    Change(
        "azure-autoscale-nightly-profile-to-zero",
        ZS,
        edit(
            "azure-serving-autoscale",
            "azure-native:monitor:AutoscaleSetting",
            lambda p: p["profiles"].append(
                {
                    "name": "nights",
                    "capacity": {"minimum": "0", "maximum": "0", "default": "0"},
                    "rules": [],
                    "recurrence": {
                        "frequency": "Week",
                        "schedule": {"timeZone": "UTC", "days": ["Monday"], "hours": [20], "minutes": [0]},
                    },
                }
            ),
        ),
        CAPACITY,
    ),
    # --- the read path's keys and network, other spellings (the artifact account is the policy context's) ---
    Change(
        "azure-shared-key-left-out",  # the API's default (null) is on
        ZT,
        drop_key("azure-training-storage-checkpoints", Z_ACCOUNT, "allowSharedKeyAccess"),
        FIELD,
    ),
    Change(
        "azure-sas-policy-with-keys-on",
        ZT,
        put(
            "azure-training-storage-checkpoints",
            Z_ACCOUNT,
            allowSharedKeyAccess="true",
            sasPolicy={"sasExpirationPeriod": "365.00:00:00", "expirationAction": "Log"},
        ),
        FIELD,
    ),
    Change(
        "azure-serving-logs-account-shared-key",
        ZS,
        put("azure-serving-logs", Z_ACCOUNT, allowSharedKeyAccess=True),
        FIELD,
    ),
    Change(
        "azure-artifact-account-sftp-local-user",
        ZT,
        both(
            put("azure-training-storage-checkpoints", Z_ACCOUNT, isHnsEnabled=True, isSftpEnabled=True),
            add(
                "azure-native:storage:LocalUser",
                "azure-training-ckpt-sftp",
                {
                    "accountName": "acmetrainckpts",
                    "resourceGroupName": "azure-training-rg",
                    "username": "reader",
                    "hasSshKey": True,
                    "permissionScopes": [
                        {"service": "blob", "resourceName": "azure-training-storage-checkpoints", "permissions": "rl"}
                    ],
                },
            ),
        ),
        FIELD,
    ),
    Change(
        "azure-checkpoint-account-admits-serving-workspace",
        ZT,
        edit(
            "azure-training-storage-checkpoints",
            Z_ACCOUNT,
            lambda p: (
                p["networkRuleSet"]
                .setdefault("resourceAccessRules", [])
                .append(
                    {
                        "tenantId": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
                        "resourceId": f"{SERVE_RG}/providers/Microsoft.MachineLearningServices/workspaces/serving-ml",
                    }
                )
            ),
        ),
        NETWORK,
    ),
    Change(
        "azure-datasets-admits-every-workspace",
        ZT,
        edit(
            "azure-training-storage-datasets",
            Z_ACCOUNT,
            lambda p: (
                p["networkRuleSet"]
                .setdefault("resourceAccessRules", [])
                .append(
                    {
                        "tenantId": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
                        "resourceId": "/subscriptions/*/resourceGroups/*/providers/Microsoft.MachineLearningServices/workspaces/*",
                    }
                )
            ),
        ),
        NETWORK,
    ),
    Change(
        "azure-datasets-private-endpoint-in-serving-vnet",
        ZT,
        add(
            "azure-native:network:PrivateEndpoint",
            "azure-training-datasets-pe",
            {
                "resourceGroupName": "azure-training-rg",
                "subnet": {
                    "id": f"{SERVE_RG}/providers/Microsoft.Network/virtualNetworks/azure-serving-net-vnet/subnets/azure-serving-net-replicas"
                },
                "privateLinkServiceConnections": [
                    {
                        "name": "blob",
                        "privateLinkServiceId": f"{TRAIN_RG}/providers/Microsoft.Storage/storageAccounts/azure-training-storage-datasets",
                        "groupIds": ["blob"],
                    }
                ],
            },
        ),
        NETWORK,
    ),
    Change(
        "azure-serving-private-endpoint-to-datasets",
        ZS,
        add(
            "azure-native:network:PrivateEndpoint",
            "azure-serving-datasets-pe",
            {
                "resourceGroupName": "azure-serving-rg",
                "subnet": {
                    "id": f"{SERVE_RG}/providers/Microsoft.Network/virtualNetworks/azure-serving-net-vnet/subnets/azure-serving-net-replicas"
                },
                "manualPrivateLinkServiceConnections": [
                    {
                        "name": "blob",
                        "privateLinkServiceId": f"{TRAIN_RG}/providers/Microsoft.Storage/storageAccounts/azure-training-storage-datasets",
                        "groupIds": ["blob"],
                    }
                ],
            },
        ),
        NETWORK,
    ),
    Change(
        "azure-artifact-account-anonymous-reads",
        ZT,
        put("azure-training-storage-checkpoints", Z_ACCOUNT, allowBlobPublicAccess=True),
        PRINCIPAL,
    ),
    Change(
        "azure-serving-custom-role-lists-artifact-keys",
        ZS,
        both(
            add(
                "azure-native:authorization:RoleDefinition",
                "azure-serving-key-lister",
                {
                    "roleName": "key lister",
                    "scope": TRAIN_CKPT_ACCOUNT,
                    "assignableScopes": [TRAIN_CKPT_ACCOUNT],
                    "permissions": [
                        {
                            "actions": [
                                "Microsoft.Storage/storageAccounts/listKeys/action",
                                "Microsoft.Storage/storageAccounts/ListAccountSas/action",
                            ]
                        }
                    ],
                },
            ),
            add(
                Z_ASSIGN,
                "azure-serving-lists-keys",
                {
                    "scope": TRAIN_CKPT_ACCOUNT,
                    "roleDefinitionId": "/subscriptions/7e6d5c4b-3a29-4817-b6f5-e4d3c2b1a098/providers/Microsoft.Authorization/roleDefinitions/azure-serving-key-lister",
                    "principalId": "22222222-2222-2222-2222-222222222222",
                    "principalType": "ServicePrincipal",
                },
                depends={"principalId": SERVE_REPLICAS},
            ),
        ),
        FIELD,
    ),
]

# --- GCP --------------------------------------------------------------------------------------------------------------
GT, GS = "gcp-training", "gcp-serving"
G_BUCKET, G_ARMOR = "gcp:storage/bucket:Bucket", "gcp:compute/securityPolicy:SecurityPolicy"
G_TEMPLATE = "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate"
G_CKPT = "acme-train-checkpoints"
G_REPLICA = "serviceAccount:gcp-serving-replica@acme-serve.iam.gserviceaccount.com"
G_REPLICA_EMAIL = "gcp-serving-replica@acme-serve.iam.gserviceaccount.com"
G_NODES_SA = "projects/acme-train/serviceAccounts/gcp-training-nodes@acme-train.iam.gserviceaccount.com"
G_NODES_EMAIL = "gcp-training-nodes@acme-train.iam.gserviceaccount.com"
SERVE_KMS = "projects/acme-serve/locations/us-central1/keyRings/gcp-serving-keys/cryptoKeys/gcp-serving-queues"


def bucket_member(name: str, member: str, role_name: str, **extra: Any) -> Edit:
    return add(
        "gcp:storage/bucketIAMMember:BucketIAMMember",
        name,
        {"bucket": G_CKPT, "member": member, "role": role_name, **extra},
    )


GCP = [
    Change(
        "gcp-all-authenticated-in-policy-data",
        GT,
        add(
            "gcp:storage/bucketIAMPolicy:BucketIAMPolicy",
            "gcp-training-ckpt-policy",
            {
                "bucket": G_CKPT,
                "policyData": json.dumps(
                    {"bindings": [{"role": "roles/storage.objectViewer", "members": ["allAuthenticatedUsers"]}]}
                ),
            },
        ),
        PRINCIPAL,
    ),
    Change(
        "gcp-workload-identity-pool-set",
        GT,
        add(
            "gcp:projects/iAMMember:IAMMember",
            "gcp-training-pool-reads",
            {
                "project": "acme-train",
                "role": "roles/storage.objectViewer",
                "member": "principalSet://iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/ci/*",
            },
        ),
        PRINCIPAL,
    ),
    Change(
        "gcp-domain-member",
        GT,
        bucket_member("gcp-training-domain", "domain:partner.example", "roles/storage.objectViewer"),
        PRINCIPAL,
    ),
    Change(
        "gcp-gke-workload-identity-member",
        GT,
        bucket_member(
            "gcp-training-gke", "serviceAccount:acme-serve.svc.id.goog[default/replica]", "roles/storage.objectViewer"
        ),
        PRINCIPAL,
    ),
    Change(
        "gcp-workforce-subject",
        GT,
        bucket_member(
            "gcp-training-workforce",
            "principal://iam.googleapis.com/locations/global/workforcePools/contractors/subject/alice",
            "roles/storage.objectAdmin",
        ),
        PRINCIPAL,
    ),
    Change(
        "gcp-service-account-user-binding",
        GT,
        add(
            "gcp:serviceaccount/iAMBinding:IAMBinding",
            "gcp-training-nodes-users",
            {"serviceAccountId": G_NODES_SA, "role": "roles/iam.serviceAccountUser", "members": [G_REPLICA]},
        ),
        BECOME,
    ),
    Change(
        "gcp-workload-identity-user-in-sa-policy",
        GT,
        add(
            "gcp:serviceaccount/iAMPolicy:IAMPolicy",
            "gcp-training-nodes-policy",
            {
                "serviceAccountId": G_NODES_SA,
                "policyData": json.dumps(
                    {"bindings": [{"role": "roles/iam.workloadIdentityUser", "members": [G_REPLICA]}]}
                ),
            },
        ),
        BECOME,
    ),
    Change(
        "gcp-key-admin-on-training-project",
        GT,
        add(
            "gcp:projects/iAMMember:IAMMember",
            "gcp-training-serving-keys",
            {"project": "acme-train", "role": "roles/iam.serviceAccountKeyAdmin", "member": G_REPLICA},
        ),
        BECOME,
    ),
    Change(
        "gcp-folder-token-creator",
        GS,
        add(
            "gcp:folder/iAMMember:IAMMember",
            "gcp-serving-folder-tokens",
            {"folder": "folders/1234567890", "role": "roles/iam.serviceAccountTokenCreator", "member": G_REPLICA},
        ),
        BECOME,
    ),
    Change(
        "gcp-cloud-run-as-training-sa",
        GS,
        add(
            "gcp:cloudrunv2/service:Service",
            "gcp-serving-sidecar",
            {
                "location": "us-central1",
                "template": {"serviceAccount": G_NODES_EMAIL, "containers": [{"image": "us-docker.pkg.dev/x/y"}]},
            },
        ),
        BECOME,
    ),
    Change(
        "gcp-function-as-training-sa",
        GS,
        add(
            "gcp:cloudfunctionsv2/function:Function",
            "gcp-serving-hook",
            {"location": "us-central1", "serviceConfig": {"serviceAccountEmail": G_NODES_EMAIL}},
        ),
        BECOME,
    ),
    Change(
        "gcp-models-read-time-bound-only",
        GS,
        put(
            "gcp-serving-replica-models",
            "gcp:storage/bucketIAMMember:BucketIAMMember",
            condition={"title": "until-2100", "expression": 'request.time < timestamp("2100-01-01T00:00:00Z")'},
        ),
        CONDITION,
    ),
    Change(
        "gcp-models-condition-ends-with",
        GS,
        put(
            "gcp-serving-replica-models",
            "gcp:storage/bucketIAMMember:BucketIAMMember",
            condition={"title": "any-safetensors", "expression": 'resource.name.endsWith(".safetensors")'},
        ),
        CONDITION,
    ),
    Change(
        "gcp-storage-admin-binding-to-serving",
        GT,
        add(
            "gcp:storage/bucketIAMBinding:BucketIAMBinding",
            "gcp-training-ckpt-admins",
            {"bucket": G_CKPT, "role": "roles/storage.admin", "members": [G_REPLICA]},
        ),
        FIELD,
    ),
    Change(
        "gcp-kms-decrypter-binding-to-serving",
        GT,
        add(
            "gcp:kms/cryptoKeyIAMBinding:CryptoKeyIAMBinding",
            "gcp-training-key-serving",
            {
                "cryptoKeyId": "projects/acme-train/locations/us-central1/keyRings/gcp-training-keys/cryptoKeys/gcp-training-data",
                "role": "roles/cloudkms.cryptoKeyEncrypterDecrypter",
                "members": [G_REPLICA],
            },
        ),
        FIELD,
    ),
    Change(
        "gcp-secret-accessor-to-serving",
        GT,
        add(
            "gcp:secretmanager/secretIamBinding:SecretIamBinding",
            "gcp-training-munge-serving",
            {
                "secretId": "projects/acme-train/secrets/gcp-training-munge-key",
                "role": "roles/secretmanager.secretAccessor",
                "members": [G_REPLICA],
            },
        ),
        FIELD,
    ),
    Change(
        "gcp-bucket-access-logs-to-serving",
        GT,
        put("gcp-training-checkpoints", G_BUCKET, logging={"logBucket": "acme-serve-logs"}),
        PLACEMENT,
    ),
    Change(
        "gcp-subscription-writes-training-bucket",
        GS,
        at(
            "gcp-serving-requests",
            "gcp:pubsub/subscription:Subscription",
            "cloudStorageConfig",
            {"bucket": G_CKPT, "filenamePrefix": "requests/"},
        ),
        PLACEMENT,
    ),
    Change(
        "gcp-disk-on-serving-key",
        GT,
        put("gcp-training-slurmctld-state", "gcp:compute/disk:Disk", diskEncryptionKey={"kmsKeySelfLink": SERVE_KMS}),
        PLACEMENT,
    ),
    Change(
        "gcp-organization-sink-to-training-bucket",
        GS,
        add(
            "gcp:logging/organizationSink:OrganizationSink",
            "gcp-serving-org-sink",
            {"orgId": "123456789", "destination": f"storage.googleapis.com/{G_CKPT}", "includeChildren": True},
        ),
        PLACEMENT,
    ),
    Change(
        "gcp-ncc-spoke-on-serving-hub",
        GT,
        add(
            "gcp:networkconnectivity/spoke:Spoke",
            "gcp-training-spoke",
            {
                "location": "global",
                "hub": "projects/acme-serve/locations/global/hubs/serving-hub",
                "linkedVpcNetwork": {"uri": "projects/acme-train/global/networks/gcp-training-gpu1"},
            },
        ),
        NETWORK,
    ),
    Change(
        "gcp-vpn-tunnel-to-serving-gateway",
        GT,
        add(
            "gcp:compute/vPNTunnel:VPNTunnel",
            "gcp-training-tunnel",
            {
                "region": "us-central1",
                "sharedSecret": "x",
                "vpnGateway": "projects/acme-train/regions/us-central1/vpnGateways/t",
                "peerGcpGateway": "projects/acme-serve/regions/us-central1/vpnGateways/s",
            },
        ),
        NETWORK,
    ),
    Change(
        "gcp-service-account-admin-on-training",
        GT,
        add(
            "gcp:projects/iAMBinding:IAMBinding",
            "gcp-training-sa-admins",
            {"project": "acme-train", "role": "roles/iam.serviceAccountAdmin", "members": [G_REPLICA]},
        ),
        ESCALATION,
    ),
    Change(
        "gcp-kms-admin-on-training-key",
        GT,
        add(
            "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember",
            "gcp-training-key-admin",
            {
                "cryptoKeyId": "projects/acme-train/locations/us-central1/keyRings/gcp-training-keys/cryptoKeys/gcp-training-data",
                "role": "roles/cloudkms.admin",
                "member": G_REPLICA,
            },
        ),
        ESCALATION,
    ),
    Change(
        "gcp-audit-exempts-training-nodes",
        GT,
        at(
            "gcp-training-storage-data-access-logs",
            "gcp:projects/iAMAuditConfig:IAMAuditConfig",
            "auditLogConfigs.0.exemptedMembers",
            [f"serviceAccount:{G_NODES_EMAIL}"],
        ),
        LOGGING,
    ),
    Change(
        "gcp-backend-log-sample-rate-zero",
        GS,
        at("gcp-serving-backend", "gcp:compute/backendService:BackendService", "logConfig.sampleRate", 0.0),
        LOGGING,
    ),
    Change(
        "gcp-flow-sampling-zero",
        GS,
        at("gcp-serving-replicas", "gcp:compute/subnetwork:Subnetwork", "logConfig.flowSampling", 0.0),
        LOGGING,
    ),
    Change("gcp-bucket-cmek-dropped", GT, drop_key("gcp-training-checkpoints", G_BUCKET, "encryption"), LOGGING),
    Change(
        "gcp-soft-delete-zero",
        GT,
        put("gcp-training-checkpoints", G_BUCKET, softDeletePolicy={"retentionDurationSeconds": 0}),
        DATA_LOSS,
    ),
    Change(
        "gcp-versioning-off", GT, put("gcp-training-checkpoints", G_BUCKET, versioning={"enabled": False}), DATA_LOSS
    ),
    Change(
        "gcp-lifecycle-deletes-live-objects",
        GT,
        edit(
            "gcp-training-checkpoints",
            G_BUCKET,
            lambda p: p["lifecycleRules"].append({"action": {"type": "Delete"}, "condition": {"age": 1}}),
        ),
        DATA_LOSS,
    ),
    Change(
        "gcp-noncurrent-deleted-after-a-day",
        GT,
        at("gcp-training-checkpoints", G_BUCKET, "lifecycleRules.0.condition.daysSinceNoncurrentTime", 1.0),
        DATA_LOSS,
    ),
    Change("gcp-force-destroy", GT, put("gcp-training-checkpoints", G_BUCKET, forceDestroy=True), DATA_LOSS),
    Change("gcp-unprotected-lustre", GT, unprotect("gcp-training-lustre", "gcp:lustre/instance:Instance"), DATA_LOSS),
    Change(
        "gcp-rate-keyed-on-all",
        GS,
        at("gcp-serving-armor", G_ARMOR, "rules.0.rateLimitOptions.enforceOnKey", "ALL"),
        WAF,
    ),
    Change(
        "gcp-rate-keyed-on-region",
        GS,
        at("gcp-serving-armor", G_ARMOR, "rules.0.rateLimitOptions.enforceOnKey", "REGION_CODE"),
        WAF,
    ),
    Change(
        "gcp-armor-moved-to-edge-policy",
        GS,
        rename(
            "gcp-serving-backend", "gcp:compute/backendService:BackendService", "securityPolicy", "edgeSecurityPolicy"
        ),
        WAF,
    ),
    Change(
        "gcp-exceed-action-allows",
        GS,
        at("gcp-serving-armor", G_ARMOR, "rules.0.rateLimitOptions.exceedAction", "allow"),
        WAF,
    ),
    Change(
        "gcp-serving-preemptible-flag",
        GS,
        at("gcp-serving-replica", G_TEMPLATE, "scheduling", {"preemptible": True, "automaticRestart": False}),
        CAPACITY,
    ),
    Change(
        "gcp-serving-vm-on-a-stop-schedule",
        GS,
        both(
            add(
                "gcp:compute/resourcePolicy:ResourcePolicy",
                "gcp-serving-nights",
                {
                    "region": "us-central1",
                    "instanceSchedulePolicy": {"timeZone": "UTC", "vmStopSchedule": {"schedule": "0 20 * * *"}},
                },
            ),
            add(
                "gcp:compute/instance:Instance",
                "gcp-serving-extra",
                {
                    "zone": "us-central1-a",
                    "machineType": "g2-standard-8",
                    "resourcePolicies": ["projects/acme-serve/regions/us-central1/resourcePolicies/gcp-serving-nights"],
                    "labels": {"accelstack-workload": "serving"},
                },
            ),
        ),
        CAPACITY,
    ),
]

ATTACKS = AWS + AZURE + GCP

# --- legitimate changes: none may draw a verdict ----------------------------------------------------------------------
LEGITIMATE = [
    Change(
        "aws-serving-reads-another-model-prefix",
        AS,
        with_statement(
            "aws-serving-replica-model-read",
            A_ROLE_POLICY,
            "policy",
            allow("s3:GetObject", f"{CKPT_ARN}/models/mistral-7b/*"),
        ),
    ),
    Change(
        "aws-serving-own-queue-policy-as-object",
        AS,
        with_statement(
            *SERVE_QUEUES,
            "policy",
            allow("sqs:GetQueueUrl", f"arn:aws:sqs:us-east-1:{SERVE_ACCT}:aws-serving-requests"),
            as_object=True,
        ),
    ),
    Change("aws-higher-asg-maximum", AS, put("aws-serving-replicas", A_ASG, maxSize=12.0)),
    Change(
        "aws-checkpoint-lifecycle-archives",
        AT,
        edit(
            "aws-training-storage-checkpoints-lifecycle",
            "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
            lambda p: p["rules"].append(
                {
                    "id": "archive",
                    "status": "Enabled",
                    "filter": {"prefix": "runs/"},
                    "transitions": [{"days": 90, "storageClass": "GLACIER_IR"}],
                }
            ),
        ),
    ),
    Change(
        "aws-stricter-waf-limit",
        AS,
        at("aws-serving-edge", A_WAF, f"{RATE_RULE}.statement.rateBasedStatement.limit", 300.0),
    ),
    Change(
        "aws-training-key-tagged",
        AT,
        put("aws-training-storage-key", A_KEY, tags={"owner": "ml-platform"}),
    ),
    Change(
        "azure-serving-reader-on-own-group",
        ZS,
        replicas_assigned("azure-serving-own-reader", SERVE_RG, "reader"),
    ),
    Change(
        "azure-artifact-account-admits-second-replica-subnet",
        ZT,
        edit(
            "azure-training-storage-checkpoints",
            Z_ACCOUNT,
            lambda p: p["networkRuleSet"]["virtualNetworkRules"].append(
                {
                    "action": "Allow",
                    "virtualNetworkResourceId": f"{SERVE_RG}/providers/Microsoft.Network/virtualNetworks/azure-serving-net-vnet/subnets/azure-serving-net-replicas-2",
                }
            ),
        ),
    ),
    Change(
        "azure-artifact-account-sas-lifetime-capped",  # keys stay off: the policy only bounds a SAS's life
        ZT,
        put(
            "azure-training-storage-checkpoints",
            Z_ACCOUNT,
            sasPolicy={"sasExpirationPeriod": "0.01:00:00", "expirationAction": "Block"},
        ),
    ),
    Change(
        "azure-datasets-admits-another-training-subnet",
        ZT,
        edit(
            "azure-training-storage-datasets",
            Z_ACCOUNT,
            lambda p: p["networkRuleSet"]["virtualNetworkRules"].append(
                {
                    "action": "Allow",
                    "virtualNetworkResourceId": f"{TRAIN_RG}/providers/Microsoft.Network/virtualNetworks/azure-training-net-vnet/subnets/azure-training-net-tools",
                }
            ),
        ),
    ),
    Change(
        "azure-longer-soft-delete",
        ZT,
        at("azure-training-storage-checkpoints", Z_BLOBS, "deleteRetentionPolicy.days", 60.0),
    ),
    Change(
        "azure-stricter-waf-threshold", ZS, at("azure-serving-waf", Z_WAF, "customRules.0.rateLimitThreshold", 300.0)
    ),
    Change(
        "azure-autoscale-higher-maximum",
        ZS,
        at("azure-serving-autoscale", "azure-native:monitor:AutoscaleSetting", "profiles.0.capacity.maximum", "12"),
    ),
    Change(
        "gcp-training-head-reads-datasets-binding",
        GT,
        add(
            "gcp:storage/bucketIAMBinding:BucketIAMBinding",
            "gcp-training-datasets-viewers",
            {
                "bucket": "acme-train-datasets",
                "role": "roles/storage.objectViewer",
                "members": ["serviceAccount:gcp-training-head@acme-train.iam.gserviceaccount.com"],
            },
        ),
    ),
    Change(
        "gcp-longer-soft-delete",
        GT,
        put("gcp-training-checkpoints", G_BUCKET, softDeletePolicy={"retentionDurationSeconds": "5184000"}),
    ),
    Change(
        "gcp-stricter-rate-limit",
        GS,
        at("gcp-serving-armor", G_ARMOR, "rules.0.rateLimitOptions.rateLimitThreshold.count", 300.0),
    ),
    Change(
        "gcp-autoscaler-higher-maximum",
        GS,
        at(
            "gcp-serving-autoscaler",
            "gcp:compute/regionAutoscaler:RegionAutoscaler",
            "autoscalingPolicy.maxReplicas",
            12.0,
        ),
    ),
    Change(
        "aws-noncurrent-versions-kept-sixty-days",
        AT,
        edit(
            "aws-training-storage-checkpoints-lifecycle",
            "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
            lambda p: p["rules"].append(
                {
                    "id": "old-versions",
                    "status": "Enabled",
                    "filter": {"prefix": "runs/"},
                    "noncurrentVersionExpiration": {"noncurrentDays": 60},
                }
            ),
        ),
    ),
    Change(
        "aws-rule-from-own-account-group",
        AT,
        add(
            "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
            "aws-training-from-own-group",
            {
                "securityGroupId": "aws-training-net-cluster-id",
                "ipProtocol": "tcp",
                "fromPort": 6817,
                "toPort": 6817,
                "referencedSecurityGroupId": f"{TRAIN_ACCT}/sg-0123456789abcdef0",
            },
        ),
    ),
    Change(
        "azure-weekday-profile-keeps-replicas",
        ZS,
        edit(
            "azure-serving-autoscale",
            "azure-native:monitor:AutoscaleSetting",
            lambda p: p["profiles"].append(
                {
                    "name": "weekdays",
                    "capacity": {"minimum": "2", "maximum": "8", "default": "2"},
                    "rules": [],
                    "recurrence": {
                        "frequency": "Week",
                        "schedule": {"timeZone": "UTC", "days": ["Monday"], "hours": [8], "minutes": [0]},
                    },
                }
            ),
        ),
    ),
    Change(
        "azure-versions-kept-sixty-days",
        ZT,
        at(
            "azure-training-storage-checkpoints",
            "azure-native:storage:ManagementPolicy",
            "policy.rules.0.definition.actions.version.delete.daysAfterCreationGreaterThan",
            60.0,
        ),
    ),
    Change(
        "gcp-checkpoint-logs-to-own-bucket",
        GT,
        put(
            "gcp-training-checkpoints",
            G_BUCKET,
            logging={"logBucket": "acme-train-datasets", "logObjectPrefix": "usage/"},
        ),
    ),
    Change(
        "gcp-flow-logs-sampled-less",
        GS,
        at("gcp-serving-replicas", "gcp:compute/subnetwork:Subnetwork", "logConfig.flowSampling", 0.1),
    ),
    # Scale to zero when the queue is empty: the spec allows replicas.min 0 (accelstack/spec/models.py Replicas).
    Change(
        "azure-autoscale-minimum-zero",
        ZS,
        at("azure-serving-autoscale", "azure-native:monitor:AutoscaleSetting", "profiles.0.capacity.minimum", "0"),
    ),
    Change(
        "gcp-autoscaler-minimum-zero",
        GS,
        at(
            "gcp-serving-autoscaler",
            "gcp:compute/regionAutoscaler:RegionAutoscaler",
            "autoscalingPolicy.minReplicas",
            0,
        ),
    ),
    Change(
        "gcp-models-narrower-prefix",
        GS,
        put(
            "gcp-serving-replica-models",
            "gcp:storage/bucketIAMMember:BucketIAMMember",
            condition={
                "title": "one-model",
                "expression": 'resource.name.startsWith("projects/_/buckets/acme-train-checkpoints/objects/models/llama/")',
            },
        ),
    ),
]


# Survivors not fixed yet, each with why (strict: the test fails once a fix stops it, so the entry goes).
OPEN: dict[str, str] = {}


@pytest.mark.parametrize("attack", attack_cases(ATTACKS, OPEN))
def test_every_attack_is_stopped(attack: Change) -> None:
    verdicts = verdicts_after(attack)
    assert stopped(verdicts), f"{attack.id} ({attack.kind}) passed both packs: {[v.line() for v in verdicts]}"


@pytest.mark.parametrize("change", LEGITIMATE, ids=[c.id for c in LEGITIMATE])
def test_legitimate_changes_draw_no_verdict(change: Change) -> None:
    verdicts = verdicts_after(change)
    assert not verdicts, [v.line() for v in verdicts]


def test_the_table_spans_every_class_on_every_cloud() -> None:
    assert len({a.id for a in ATTACKS}) == len(ATTACKS)
    assert set(OPEN) <= {a.id for a in ATTACKS}
    assert len(LEGITIMATE) >= 10
    for cloud, table in (("aws", AWS), ("azure", AZURE), ("gcp", GCP)):
        assert all(a.id.startswith(cloud) for a in table)
        missing = set(CLASSES) - {a.kind for a in table} - {CONDITION if cloud == "aws" else ""}
        assert not missing, (cloud, missing)


def test_kill_rate(capsys: pytest.CaptureFixture[str]) -> None:
    """Prints the kill rate by class and cloud (the per-attack test above is what fails)."""
    with capsys.disabled():
        tried, _ = report_kill_rate("red team", ATTACKS, LEGITIMATE, ("aws", "azure", "gcp"))
    assert tried == len(ATTACKS)
