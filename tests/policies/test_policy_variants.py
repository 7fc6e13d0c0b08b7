"""Generated variants: every alternate spelling of each rule's risk, applied to the shipped exports.

`test_policy_real_mutations.py` holds one realistic edit per rule. Here each risk is spelled every way
the packs must see through, generated as the product of its axes (principal spellings x action
spellings, condition forms, split address ranges, alias type tokens, other fleet kinds, Not-forms),
so a rule that matches one shape fails visibly. Beside it, legitimate changes (realistic PRs) must
draw no verdict at all. Kill rate and false-positive rate are printed (`pytest -s`, or in the summary
with `-rA`).
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from test_policy_real_mutations import (
    ASG,
    BUCKET,
    BUCKET_POLICY,
    KMS_KEY,
    LISTENER,
    LT,
    PROVIDER,
    QUEUE,
    ROLE,
    ROLE_POLICY,
    SCALING_POLICY,
    SERVING,
    SERVING_ACCOUNT,
    SG,
    SG_INGRESS,
    SUBNET,
    TRAINING,
    TRAINING_ACCOUNT,
    VERSIONING,
    Doc,
    add,
    add_statement,
    edit_json_string,
    edit_props,
    entry,
    previewed,
    put,
    set_props,
    sides,
)

from accelstack.engine.policy_runner import policy_verdicts

OUTSIDE_ACCOUNT = "333333333333"
CHECKPOINTS_POLICY = ("aws-training-storage-checkpoints-policy", BUCKET_POLICY)
CHECKPOINTS_ARN = "arn:aws:s3:::acme-train-checkpoints"
LIFECYCLE = "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"
DRA = "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"


@dataclass(frozen=True)
class Variant:
    id: str
    stack: str
    apply: Callable[[Doc], Any]
    policy: str  # a mandatory verdict of this policy (or its -final twin) kills the variant


def grant(
    principal: Any,
    action_key: str,
    actions: Any,
    resource: Any = f"{CHECKPOINTS_ARN}/models/*",
    condition: dict[str, Any] | None = None,
    principal_key: str = "Principal",
) -> dict[str, Any]:
    statement = {"Effect": "Allow", principal_key: principal, action_key: actions, "Resource": resource}
    if condition:
        statement["Condition"] = condition
    return statement


def with_provider(change: Callable[[dict[str, Any]], None]) -> Callable[[Doc], Any]:
    def apply(doc: Doc) -> None:
        provider = next(r for r in doc["deployment"]["resources"] if r["type"] == PROVIDER)
        for props in sides(provider):
            change(props)

    return apply


def chain(*steps: Callable[[Doc], Any]) -> Callable[[Doc], None]:
    def apply(doc: Doc) -> None:
        for step in steps:
            step(doc)

    return apply


def edit_policy(name: str, type_token: str, key: str, change: Callable[[Any], None]) -> Callable[[Doc], Any]:
    return edit_props(name, type_token, lambda p: p.__setitem__(key, edit_json_string(p[key], change)))


# --- cross-account write paths -------------------------------------------------------------------

SERVING_PRINCIPALS = {
    "root-arn": {"AWS": f"arn:aws:iam::{SERVING_ACCOUNT}:root"},
    "bare-account": {"AWS": SERVING_ACCOUNT},
    "role-arn": {"AWS": f"arn:aws:iam::{SERVING_ACCOUNT}:role/any"},
}
WRITE_ACTIONS = {
    "put": ("Action", "s3:PutObject"),
    "put-wildcard": ("Action", "s3:Put*"),
    "delete-case": ("Action", "S3:DeleteObject"),
    "service-star": ("Action", "s3:*"),
    "not-action": ("NotAction", "s3:GetObject"),
}
# Principal "*" narrowed by a condition that still admits the other account, an org, or any account.
LOOSE_CONDITIONS = {
    "none": None,
    "org-id": {"StringEquals": {"aws:PrincipalOrgID": "o-abc123"}},
    "other-account": {"StringEquals": {"aws:PrincipalAccount": SERVING_ACCOUNT}},
    "account-wildcard": {"StringLike": {"aws:PrincipalAccount": "*"}},
    "if-exists": {"StringEqualsIfExists": {"aws:PrincipalAccount": TRAINING_ACCOUNT}},
    "not-equals": {"StringNotEquals": {"aws:PrincipalAccount": TRAINING_ACCOUNT}},
    "arn-like-any": {"ArnLike": {"aws:PrincipalArn": "arn:aws:iam::*:role/*"}},
}

VARIANTS: list[Variant] = []
for (p_id, principal), (a_id, (key, actions)) in itertools.product(SERVING_PRINCIPALS.items(), WRITE_ACTIONS.items()):
    VARIANTS.append(
        Variant(
            f"bucket-grant-{p_id}-{a_id}",
            TRAINING,
            add_statement(*CHECKPOINTS_POLICY, "policy", grant(principal, key, actions)),
            "cross-account-read-only",
        )
    )
for c_id, condition in LOOSE_CONDITIONS.items():
    VARIANTS.append(
        Variant(
            f"bucket-star-{c_id}",
            TRAINING,
            add_statement(*CHECKPOINTS_POLICY, "policy", grant("*", "Action", "s3:PutObject", condition=condition)),
            "cross-account-read-only",
        )
    )
    VARIANTS.append(
        Variant(
            f"key-star-{c_id}",
            TRAINING,
            add_statement(
                "aws-training-storage-key",
                KMS_KEY,
                "policy",
                grant({"AWS": "*"}, "Action", "kms:Decrypt", "*", condition),
            ),
            "cross-account-read-only",
        )
    )
VARIANTS += [
    Variant(
        "bucket-not-principal",
        TRAINING,
        add_statement(
            *CHECKPOINTS_POLICY,
            "policy",
            grant(
                {"AWS": f"arn:aws:iam::{TRAINING_ACCOUNT}:root"}, "Action", "s3:GetObject", principal_key="NotPrincipal"
            ),
        ),
        "cross-account-read-only",
    ),
    Variant(
        "bucket-outside-account",
        TRAINING,
        add_statement(*CHECKPOINTS_POLICY, "policy", grant({"AWS": OUTSIDE_ACCOUNT}, "Action", "s3:GetObject")),
        "cross-account-read-only",
    ),
    Variant(
        "read-whole-bucket",
        TRAINING,
        add_statement(
            *CHECKPOINTS_POLICY,
            "policy",
            grant(SERVING_PRINCIPALS["root-arn"], "Action", "s3:GetObject", f"{CHECKPOINTS_ARN}/*"),
        ),
        "cross-account-read-only",
    ),
    Variant(
        "read-prefix-wildcard",
        TRAINING,
        add_statement(
            *CHECKPOINTS_POLICY,
            "policy",
            grant(SERVING_PRINCIPALS["root-arn"], "Action", "s3:GetObject", f"{CHECKPOINTS_ARN}/mod*"),
        ),
        "cross-account-read-only",
    ),
    Variant(
        "list-without-prefix",
        TRAINING,
        add_statement(
            *CHECKPOINTS_POLICY,
            "policy",
            grant(SERVING_PRINCIPALS["root-arn"], "Action", "s3:ListBucket", CHECKPOINTS_ARN),
        ),
        "cross-account-read-only",
    ),
    Variant(
        "key-grants-serving-encrypt",
        TRAINING,
        add_statement(
            "aws-training-storage-key",
            KMS_KEY,
            "policy",
            grant(SERVING_PRINCIPALS["root-arn"], "Action", ["kms:Decrypt", "kms:GenerateDataKey"], "*"),
        ),
        "cross-account-read-only",
    ),
    Variant(
        "kms-grant-resource",
        TRAINING,
        add(
            TRAINING,
            "aws:kms/grant:Grant",
            "aws-training-serving-writes",
            {
                "keyId": "aws-training-storage-key-id",
                "granteePrincipal": f"arn:aws:iam::{SERVING_ACCOUNT}:root",
                "operations": ["Encrypt", "GenerateDataKey"],
            },
        ),
        "cross-account-read-only",
    ),
    Variant(
        "kms-grant-outside",
        TRAINING,
        add(
            TRAINING,
            "aws:kms/grant:Grant",
            "aws-training-outside",
            {
                "keyId": "aws-training-storage-key-id",
                "granteePrincipal": f"arn:aws:iam::{OUTSIDE_ACCOUNT}:role/x",
                "operations": ["Decrypt"],
            },
        ),
        "cross-account-read-only",
    ),
    Variant(
        "serving-identity-writes-training-queue",
        SERVING,
        add_statement(
            "aws-serving-replica-queues",
            ROLE_POLICY,
            "policy",
            {
                "Effect": "Allow",
                "Action": "sqs:SendMessage",
                "Resource": f"arn:aws:sqs:us-east-1:{TRAINING_ACCOUNT}:jobs",
            },
        ),
        "cross-account-read-only",
    ),
    Variant(
        "serving-assumes-training-role",
        SERVING,
        add_statement(
            "aws-serving-replica-queues",
            ROLE_POLICY,
            "policy",
            {"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": f"arn:aws:iam::{TRAINING_ACCOUNT}:role/deploy"},
        ),
        "cross-account-read-only",
    ),
    Variant(
        "training-identity-reads-any-account-key",
        TRAINING,
        add_statement(
            "aws-training-node-storage",
            ROLE_POLICY,
            "policy",
            {"Effect": "Allow", "Action": "kms:Decrypt", "Resource": "arn:aws:kms:*:*:key/*"},
        ),
        "cross-account-read-only",
    ),
    Variant(
        "dead-letters-in-outside-account",
        SERVING,
        edit_props(
            "aws-serving-requests",
            QUEUE,
            lambda p: p.__setitem__(
                "redrivePolicy",
                json.dumps(
                    {"deadLetterTargetArn": f"arn:aws:sqs:us-east-1:{OUTSIDE_ACCOUNT}:dlq", "maxReceiveCount": 5}
                ),
            ),
        ),
        "cross-account-read-only",
    ),
    Variant(
        "queue-inline-policy-public",
        SERVING,
        set_props(
            "aws-serving-requests",
            QUEUE,
            policy=json.dumps({"Version": "2012-10-17", "Statement": [grant("*", "Action", "sqs:SendMessage", "*")]}),
        ),
        "cross-account-read-only",
    ),
]
for s_id, condition in {
    "no-sub": {"StringEquals": {"token.actions.githubusercontent.com:aud": "sts.amazonaws.com"}},
    "repo-star": {"StringLike": {"token.actions.githubusercontent.com:sub": "repo:*"}},
    "star": {"StringLike": {"token.actions.githubusercontent.com:sub": "*"}},
}.items():
    VARIANTS.append(
        Variant(
            f"oidc-trust-{s_id}",
            TRAINING,
            add_statement(
                "aws-training-node",
                ROLE,
                "assumeRolePolicy",
                {
                    "Effect": "Allow",
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": condition,
                    "Principal": {
                        "Federated": f"arn:aws:iam::{TRAINING_ACCOUNT}:oidc-provider/token.actions.githubusercontent.com"
                    },
                },
            ),
            "cross-account-read-only",
        )
    )

# --- data loss -----------------------------------------------------------------------------------

for bucket in ("checkpoints", "datasets"):
    for status in ("Suspended", "Disabled"):
        VARIANTS.append(
            Variant(
                f"versioning-{status.lower()}-{bucket}",
                TRAINING,
                edit_props(
                    f"aws-training-storage-{bucket}-versioning",
                    VERSIONING,
                    put(status, "versioningConfiguration", "status"),
                ),
                "bucket-versioning",
            )
        )
    VARIANTS += [
        Variant(
            f"lifecycle-expires-current-{bucket}",
            TRAINING,
            edit_props(
                f"aws-training-storage-{bucket}-lifecycle",
                LIFECYCLE,
                lambda p: p["rules"].append(
                    {"id": "purge", "status": "Enabled", "filter": {"prefix": ""}, "expiration": {"days": 30}}
                ),
            ),
            "no-scheduled-data-loss",
        ),
        Variant(
            f"force-destroy-{bucket}",
            TRAINING,
            set_props(f"aws-training-storage-{bucket}", BUCKET, forceDestroy=True),
            "no-scheduled-data-loss",
        ),
    ]
VARIANTS += [
    Variant(
        "lustre-link-exports-deletes",
        TRAINING,
        edit_props(
            "aws-training-storage-checkpoints",
            DRA,
            put(["NEW", "CHANGED", "DELETED"], "s3", "autoExportPolicy", "events"),
        ),
        "no-scheduled-data-loss",
    ),
    Variant(
        "unprotected-volume",
        TRAINING,
        lambda doc: entry(doc, "aws-training-slurmctld-state", "aws:ebs/volume:Volume").update(protect=False),
        "protect-stateful",
    ),
    Variant(
        "unprotected-bucket-v2-alias",
        TRAINING,
        add(TRAINING, "aws:s3/bucketV2:BucketV2", "aws-training-scratch", {}),
        "protect-stateful",
    ),
    Variant(
        "unprotected-efs",
        TRAINING,
        add(TRAINING, "aws:efs/fileSystem:FileSystem", "aws-training-home", {"encrypted": True}),
        "protect-stateful",
    ),
]

# --- exposure ------------------------------------------------------------------------------------

CLUSTER_SG = ("aws-training-net-cluster", SG)


def ingress(name: str, **source: Any) -> Callable[[Doc], Any]:
    return add(
        TRAINING,
        SG_INGRESS,
        name,
        {"securityGroupId": "aws-training-net-cluster-id", "ipProtocol": "tcp", "fromPort": 22, "toPort": 22, **source},
        depends={"securityGroupId": CLUSTER_SG},
    )


VARIANTS += [
    Variant(
        "ingress-split-halves",
        TRAINING,
        chain(ingress("ssh-low", cidrIpv4="0.0.0.0/1"), ingress("ssh-high", cidrIpv4="128.0.0.0/1")),
        "no-internet-ingress",
    ),
    Variant("ingress-public-block", TRAINING, ingress("ssh-block", cidrIpv4="8.0.0.0/7"), "no-internet-ingress"),
    Variant("ingress-ipv6-global", TRAINING, ingress("ssh-v6", cidrIpv6="2000::/3"), "no-internet-ingress"),
    Variant("ingress-ipv4-mapped-v6", TRAINING, ingress("ssh-mapped", cidrIpv6="::ffff:0:0/96"), "no-internet-ingress"),
    Variant(
        "ingress-legacy-rule-kind",
        TRAINING,
        add(
            TRAINING,
            "aws:ec2/securityGroupRule:SecurityGroupRule",
            "ssh-legacy",
            {
                "type": "ingress",
                "securityGroupId": "aws-training-net-cluster-id",
                "protocol": "-1",
                "fromPort": 0,
                "toPort": 0,
                "ipv6CidrBlocks": ["::/0"],
            },
        ),
        "no-internet-ingress",
    ),
    Variant(
        "eip-on-head",
        TRAINING,
        add(TRAINING, "aws:ec2/eip:Eip", "aws-training-head-ip", {"domain": "vpc", "instance": "aws-training-head-id"}),
        "no-public-ip-on-nodes",
    ),
    Variant(
        "eip-association-on-head",
        TRAINING,
        add(
            TRAINING,
            "aws:ec2/eipAssociation:EipAssociation",
            "aws-training-head-ip",
            {"allocationId": "eipalloc-1", "instanceId": "aws-training-head-id"},
        ),
        "no-public-ip-on-nodes",
    ),
    Variant(
        "ipv6-on-node-interface",
        TRAINING,
        edit_props("aws-training-nodes", LT, put(1, "networkInterfaces", "0", "ipv6AddressCount")),
        "no-public-ip-on-nodes",
    ),
    Variant(
        "subnet-assigns-ipv6",
        TRAINING,
        set_props("aws-training-net-cluster", SUBNET, assignIpv6AddressOnCreation=True),
        "no-public-ip-on-nodes",
    ),
    Variant(
        "replicas-in-public-subnets",
        SERVING,
        lambda doc: [
            edit_props(
                "aws-serving-replicas",
                ASG,
                lambda p: p.__setitem__("vpcZoneIdentifiers", ["aws-serving-net-public-a-id"]),
            )(doc),
            entry(doc, "aws-serving-replicas", ASG)["propertyDependencies"].update(
                vpcZoneIdentifiers=[entry(doc, "aws-serving-net-public-a", SUBNET)["urn"]]
            ),
        ],
        "nodes-in-private-subnets",
    ),
    Variant(
        "listener-protocol-omitted",
        SERVING,
        edit_props(
            "aws-serving-http-redirect",
            LISTENER,
            lambda p: (
                p.pop("protocol"),
                p.__setitem__("defaultActions", [{"type": "forward", "targetGroupArn": "tg"}]),
            ),
        ),
        "https-listeners",
    ),
]

# --- identity ------------------------------------------------------------------------------------

for e_id, actions in {
    "exact": ["iam:PassRole", "ec2:RunInstances"],
    "wildcards": ["iam:Pass*", "ec2:Run*"],
    "lambda": ["iam:PassRole", "lambda:CreateFunction", "lambda:InvokeFunction"],
}.items():
    VARIANTS.append(
        Variant(
            f"escalation-{e_id}",
            TRAINING,
            add_statement(
                "aws-training-node-storage",
                ROLE_POLICY,
                "policy",
                {"Effect": "Allow", "Action": actions, "Resource": "*"},
            ),
            "iam-least-privilege",
        )
    )
VARIANTS += [
    Variant(
        "not-action-allow",
        TRAINING,
        add_statement(
            "aws-training-node-storage",
            ROLE_POLICY,
            "policy",
            {"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"},
        ),
        "iam-least-privilege",
    ),
    Variant(
        "permissions-management-on-star",
        TRAINING,
        add_statement(
            "aws-training-node-storage",
            ROLE_POLICY,
            "policy",
            {"Effect": "Allow", "Action": "iam:PutRolePolicy", "Resource": "*"},
        ),
        "iam-least-privilege",
    ),
    Variant(
        "service-star-spelled-as-pattern",
        TRAINING,
        add_statement(
            "aws-training-node-storage",
            ROLE_POLICY,
            "policy",
            {"Effect": "Allow", "Action": "s3:*", "Resource": "arn:aws:s3:::*"},
        ),
        "iam-least-privilege",
    ),
    Variant(
        "role-managed-admin",
        SERVING,
        set_props("aws-serving-replica", ROLE, managedPolicyArns=["arn:aws:iam::aws:policy/AdministratorAccess"]),
        "iam-least-privilege",
    ),
    Variant(
        "role-managed-full-access",
        SERVING,
        set_props("aws-serving-replica", ROLE, managedPolicyArns=["arn:aws:iam::aws:policy/AmazonS3FullAccess"]),
        "iam-least-privilege",
    ),
    Variant(
        "role-inline-star",
        SERVING,
        set_props(
            "aws-serving-replica",
            ROLE,
            inlinePolicies=[
                {
                    "name": "debug",
                    "policy": json.dumps(
                        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
                    ),
                }
            ],
        ),
        "iam-least-privilege",
    ),
]

# --- serving hygiene and separation --------------------------------------------------------------

VARIANTS += [
    Variant(
        "spot-market-capitalized",
        SERVING,
        edit_props("aws-serving-replica", LT, lambda p: p.__setitem__("instanceMarketOptions", {"marketType": "Spot"})),
        "no-spot-serving",
    ),
    Variant(
        "spot-ec2-fleet",
        SERVING,
        add(
            SERVING,
            "aws:ec2/fleet:Fleet",
            "aws-serving-burst",
            {"targetCapacitySpecification": {"defaultTargetCapacityType": "spot", "totalTargetCapacity": 2}},
        ),
        "no-spot-serving",
    ),
    Variant(
        "spot-eks-node-group",
        SERVING,
        add(
            SERVING,
            "aws:eks/nodeGroup:NodeGroup",
            "aws-serving-eks",
            {"capacityType": "SPOT", "clusterName": "x", "nodeRoleArn": "arn", "subnetIds": []},
        ),
        "no-spot-serving",
    ),
    Variant(
        "spot-max-price-on-group",
        SERVING,
        edit_props(
            "aws-serving-replicas",
            ASG,
            lambda p: p.__setitem__(
                "mixedInstancesPolicy", {"instancesDistribution": {"spotMaxPrice": "1.00"}, "launchTemplate": {}}
            ),
        ),
        "no-spot-serving",
    ),
    Variant(
        "predictive-scaling-on-cpu",
        SERVING,
        lambda doc: add(
            SERVING,
            SCALING_POLICY,
            "aws-serving-predictive",
            {
                "autoscalingGroupName": "accelstack-aws-serving-replicas",
                "policyType": "PredictiveScaling",
                "predictiveScalingConfiguration": {
                    "metricSpecification": {
                        "targetValue": 50,
                        "predefinedMetricPairSpecification": {"predefinedMetricType": "ASGCPUUtilization"},
                    }
                },
            },
            depends={"autoscalingGroupName": ("aws-serving-replicas", ASG)},
        )(doc),
        "serving-scales-on-queue-depth",
    ),
    Variant(
        "lb-alias-token-in-training",
        TRAINING,
        add(
            TRAINING,
            "aws:alb/loadBalancer:LoadBalancer",
            "aws-training-ui",
            {"internal": False, "enableDeletionProtection": True},
        ),
        "workload-resource-kinds",
    ),
    Variant(
        "lb-v2-alias-token-in-training",
        TRAINING,
        add(
            TRAINING,
            "aws:elasticloadbalancingv2/loadBalancer:LoadBalancer",
            "aws-training-ui2",
            {"enableDeletionProtection": True},
        ),
        "workload-resource-kinds",
    ),
    Variant(
        "aws-native-provider-unpinned",
        TRAINING,
        lambda doc: doc["deployment"]["resources"].append(
            {
                "urn": "urn:pulumi:aws-training::accelstack::pulumi:providers:aws-native::native",
                "custom": True,
                "id": "native-id",
                "type": "pulumi:providers:aws-native",
                "inputs": {"region": "us-east-1"},
                "outputs": {"region": "us-east-1"},
            }
        ),
        "provider-account",
    ),
    Variant(
        "command-with-ambient-credentials",
        TRAINING,
        lambda doc: doc["deployment"]["resources"].extend(
            [
                {
                    "urn": "urn:pulumi:aws-training::accelstack::pulumi:providers:command::default",
                    "custom": True,
                    "id": "cmd",
                    "type": "pulumi:providers:command",
                    "inputs": {},
                    "outputs": {},
                },
                {
                    "urn": "urn:pulumi:aws-training::accelstack::command:local:Command::sync",
                    "custom": True,
                    "id": "sync",
                    "type": "command:local:Command",
                    "inputs": {"create": "aws s3 sync s3://a s3://b"},
                    "outputs": {},
                    "provider": "urn:pulumi:aws-training::accelstack::pulumi:providers:command::default::cmd",
                },
            ]
        ),
        "known-resource-kinds",
    ),
    Variant(
        "command-provider-unknown",
        TRAINING,
        lambda doc: doc["deployment"]["resources"].append(
            {
                "urn": "urn:pulumi:aws-training::accelstack::pulumi:providers:command::cmd",
                "custom": True,
                "id": "cmd",
                "type": "pulumi:providers:command",
                "inputs": {},
                "outputs": {},
            }
        ),
        "provider-account",
    ),
    Variant(
        "unknown-aws-kind",
        SERVING,
        add(SERVING, "aws:sagemaker/endpoint:Endpoint", "aws-serving-sm", {"endpointConfigName": "x"}),
        "known-resource-kinds",
    ),
]

# --- legitimate changes: realistic PRs that must draw no verdict ---------------------------------

LEGITIMATE: list[Variant] = [
    Variant(
        "serve-another-adapter",
        SERVING,
        edit_policy(
            "aws-serving-replica-model-read",
            ROLE_POLICY,
            "policy",
            lambda d: d["Statement"][0]["Resource"].append(f"{CHECKPOINTS_ARN}/models/adapters/initech-hr/*"),
        ),
        "",
    ),
    Variant("ssh-from-the-vpc", TRAINING, ingress("ssh-vpc", cidrIpv4="10.20.0.0/16"), ""),
    Variant("ssh-from-shared-cgnat", TRAINING, ingress("ssh-cgnat", cidrIpv4="100.64.0.0/10"), ""),
    Variant(
        "keep-noncurrent-longer",
        TRAINING,
        edit_props(
            "aws-training-storage-checkpoints-lifecycle",
            LIFECYCLE,
            put({"noncurrentDays": 90}, "rules", "1", "noncurrentVersionExpiration"),
        ),
        "",
    ),
    Variant(
        "newer-tls-policy",
        SERVING,
        set_props("aws-serving-https", LISTENER, sslPolicy="ELBSecurityPolicy-TLS13-1-3-2021-06"),
        "",
    ),
    Variant(
        "key-for-lambda-in-own-account",
        TRAINING,
        add_statement(
            "aws-training-storage-key",
            KMS_KEY,
            "policy",
            grant(
                {"AWS": "*"},
                "Action",
                ["kms:Decrypt"],
                "*",
                {
                    "StringEquals": {
                        "kms:CallerAccount": TRAINING_ACCOUNT,
                        "kms:ViaService": "lambda.us-east-1.amazonaws.com",
                    }
                },
            ),
        ),
        "",
    ),
    Variant(
        "github-oidc-for-one-repo",
        TRAINING,
        add_statement(
            "aws-training-node",
            ROLE,
            "assumeRolePolicy",
            {
                "Effect": "Allow",
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Principal": {
                    "Federated": f"arn:aws:iam::{TRAINING_ACCOUNT}:oidc-provider/token.actions.githubusercontent.com"
                },
                "Condition": {
                    "StringEquals": {
                        "token.actions.githubusercontent.com:aud": "sts.amazonaws.com",
                        "token.actions.githubusercontent.com:sub": "repo:acme/infra:ref:refs/heads/main",
                    }
                },
            },
        ),
        "",
    ),
    Variant(
        "nodes-publish-metrics",
        TRAINING,
        add_statement(
            "aws-training-node-storage",
            ROLE_POLICY,
            "policy",
            {"Effect": "Allow", "Action": ["cloudwatch:PutMetricData"], "Resource": "*"},
        ),
        "",
    ),
    Variant(
        "describe-instances",
        TRAINING,
        add_statement(
            "aws-training-node-storage",
            ROLE_POLICY,
            "policy",
            {"Effect": "Allow", "Action": ["ec2:DescribeInstances", "ec2:DescribeTags"], "Resource": "*"},
        ),
        "",
    ),
    Variant("bigger-replica-group", SERVING, set_props("aws-serving-replicas", ASG, maxSize=16), ""),
    Variant(
        "deny-statement-added",
        TRAINING,
        add_statement(
            *CHECKPOINTS_POLICY,
            "policy",
            {
                "Effect": "Deny",
                "NotPrincipal": {"AWS": f"arn:aws:iam::{TRAINING_ACCOUNT}:root"},
                "Action": "s3:DeleteObject",
                "Resource": f"{CHECKPOINTS_ARN}/*",
            },
        ),
        "",
    ),
    Variant(
        "read-artifact-versions",
        TRAINING,
        edit_policy(
            *CHECKPOINTS_POLICY,
            "policy",
            lambda d: d["Statement"][1].__setitem__("Action", ["s3:GetObject", "s3:GetObjectVersion"]),
        ),
        "",
    ),
]


def _run(variant: Variant) -> list[Any]:
    result = previewed(variant.stack)
    doc = copy.deepcopy(result.export)
    variant.apply(doc)
    assert doc != result.export, f"{variant.id} changed nothing"
    return policy_verdicts(doc, result.spec)


def _killed(variant: Variant, verdicts: list[Any]) -> bool:
    return any(v.mandatory and v.policy in (variant.policy, f"{variant.policy}-final") for v in verdicts)


@pytest.mark.parametrize("stack", [TRAINING, SERVING])
def test_every_generated_variant_is_caught(stack: str, capsys: pytest.CaptureFixture[str]) -> None:
    variants = [v for v in VARIANTS if v.stack == stack]
    survivors = []
    for variant in variants:
        verdicts = _run(variant)
        if not _killed(variant, verdicts):
            survivors.append(
                f"{variant.id}: expected mandatory {variant.policy}; got {[v.line() for v in verdicts] or 'nothing'}"
            )
    with capsys.disabled():
        print(
            f"\n{stack}: generated variants killed {len(variants) - len(survivors)}/{len(variants)} "
            f"= {(len(variants) - len(survivors)) / len(variants):.0%}"
        )
    assert not survivors, "\n".join(survivors)


def test_legitimate_changes_draw_no_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    flagged = []
    for variant in LEGITIMATE:
        verdicts = _run(variant)
        if verdicts:
            flagged.append(f"{variant.id}: {[v.line() for v in verdicts]}")
    with capsys.disabled():
        print(
            f"\nlegitimate changes flagged (false positives): {len(flagged)}/{len(LEGITIMATE)} = {len(flagged) / len(LEGITIMATE):.0%}"
        )
    assert not flagged, "\n".join(flagged)


def test_variant_ids_are_unique() -> None:
    ids = [v.id for v in VARIANTS + LEGITIMATE]
    assert len(ids) == len(set(ids))
