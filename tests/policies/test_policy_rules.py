"""Compliance-policies model: each rule passes on a known-good baseline and a one-field mutation trips
exactly that rule (and its `-final` stack twin, for the checks repeated at stack level), with its
message. Everything runs through pulumi-policy's analyzer servicer (Configure/Analyze/AnalyzeStack).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from policy_baseline import (
    SERVING_ACCOUNT,
    SPARE_ACCOUNT,
    TRAINING_USER_DATA,
    UNKNOWN,
    context_for,
    serving_export,
    training_export,
)

from accelstack.engine.policy_runner import PolicyInputError, run_packs

Doc = dict[str, Any]


def find(doc: Doc, name: str, type_part: str = "") -> dict[str, Any]:
    matches = [r for r in doc["deployment"]["resources"] if r["urn"].endswith(f"::{name}") and type_part in r["type"]]
    assert len(matches) == 1, f"{name} {type_part}: {len(matches)} matches"
    return matches[0]


def set_input(name: str, type_part: str, path: str, value: Any) -> Callable[[Doc], None]:
    """Set (or with value=DELETE, remove) inputs.<path> of one resource, in inputs and outputs alike."""

    def mutate(doc: Doc) -> None:
        resource = find(doc, name, type_part)
        for side in ("inputs", "outputs"):
            node = resource[side]
            keys = path.split(".")
            for key in keys[:-1]:
                node = node[int(key)] if isinstance(node, list) else node[key]
            last = keys[-1]
            if value is DELETE:
                node.pop(last, None)
            elif isinstance(node, list):
                node[int(last)] = value
            else:
                node[last] = value

    return mutate


DELETE = object()


def set_policy(name: str, type_part: str, key: str, change: Callable[[dict], None]) -> Callable[[Doc], None]:
    """Edit a JSON policy document input (bucket policy, role trust, inline policy)."""

    def mutate(doc: Doc) -> None:
        resource = find(doc, name, type_part)
        document = json.loads(resource["inputs"][key])
        change(document)
        resource["inputs"][key] = resource["outputs"][key] = json.dumps(document)

    return mutate


def set_provider(key: str, value: Any) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        provider = next(r for r in doc["deployment"]["resources"] if r["type"] == "pulumi:providers:aws")
        for side in ("inputs", "outputs"):
            if value is DELETE:
                provider[side].pop(key, None)
            else:
                provider[side][key] = value

    return mutate


def set_option(name: str, type_part: str, key: str, value: Any) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        resource = find(doc, name, type_part)
        if value is DELETE:
            resource.pop(key, None)
        else:
            resource[key] = value

    return mutate


def remove(name: str, type_part: str) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        doc["deployment"]["resources"].remove(find(doc, name, type_part))

    return mutate


def add(type_: str, name: str, inputs: dict[str, Any], **extra: Any) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        provider = next(r for r in doc["deployment"]["resources"] if r["type"] == "pulumi:providers:aws")
        stack = doc["deployment"]["resources"][0]["urn"].split("::")[0].split(":")[-1]
        doc["deployment"]["resources"].append(
            {
                "urn": f"urn:pulumi:{stack}::accelstack::{type_}::{name}",
                "custom": True,
                "id": f"{name}-id",
                "type": type_,
                "inputs": inputs,
                "outputs": {**inputs, "id": f"{name}-id"},
                "provider": f"{provider['urn']}::{provider['id']}",
                "protect": False,
                "dependencies": [],
                "propertyDependencies": {},
                **extra,
            }
        )

    return mutate


def rename_everywhere(old: str, new: str) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        doc["deployment"] = json.loads(json.dumps(doc["deployment"]).replace(old, new))

    return mutate


def use_default_provider(name: str, type_part: str) -> Callable[[Doc], None]:
    """Point one resource at an engine-made default provider (same inputs as the stack's)."""

    def mutate(doc: Doc) -> None:
        resources = doc["deployment"]["resources"]
        explicit = next(r for r in resources if r["type"] == "pulumi:providers:aws")
        default = json.loads(json.dumps(explicit))
        default["urn"] = explicit["urn"].rsplit("::", 1)[0] + "::default_7_51_1"
        default["id"] = "default-id"
        resources.insert(resources.index(explicit) + 1, default)
        find(doc, name, type_part)["provider"] = f"{default['urn']}::default-id"

    return mutate


def user_data(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def grant_actions(actions: list[str]) -> Callable[[dict], None]:
    return lambda d: d["Statement"][1].update(Action=actions)


@dataclass
class Mutation:
    id: str
    workload: str
    mutate: Callable[[Doc], None]
    policies: set[str]
    message: str
    context: dict[str, Any] | None = None


LB = "aws:lb/loadBalancer"
LT = "launchTemplate"
POLICY = "bucketPolicy"


def replicas_in_public_subnet(doc: Doc) -> None:
    """The PR routes the replica subnet through an internet gateway and launches the group there."""
    for step in (
        add("aws:ec2/internetGateway:InternetGateway", "igw", {"vpcId": "vpc-1"}),
        add(
            "aws:ec2/routeTable:RouteTable",
            "public",
            {"vpcId": "vpc-1", "routes": [{"cidrBlock": "0.0.0.0/0", "gatewayId": "igw-id"}]},
        ),
        add(
            "aws:ec2/routeTableAssociation:RouteTableAssociation",
            "public-a",
            {"subnetId": "public-a-id", "routeTableId": "public-id"},
        ),
    ):
        step(doc)
    group = find(doc, "replicas", "group:Group")
    group["inputs"]["vpcZoneIdentifiers"] = group["outputs"]["vpcZoneIdentifiers"] = ["public-a-id"]


MUTATIONS = [
    # --- separation ---
    Mutation(
        "no-provider",
        "training",
        set_option("acme-train-datasets", "bucket:Bucket", "provider", DELETE),
        {"explicit-provider"},
        "has no explicit provider",
    ),
    Mutation(
        "default-provider",
        "training",
        use_default_provider("lustre", "lustre"),
        {"explicit-provider"},
        "uses the default provider default_7_51_1",
    ),
    Mutation(
        "provider-serving-account",
        "training",
        set_provider("allowedAccountIds", json.dumps([SERVING_ACCOUNT])),
        {"provider-account"},
        "targets account 222222222222, which is a serving account",
    ),
    Mutation(
        "provider-role-serving-account",
        "training",
        set_provider("assumeRoles", json.dumps([{"roleArn": f"arn:aws:iam::{SERVING_ACCOUNT}:role/deploy"}])),
        {"provider-account"},
        "which is a serving account",
    ),
    Mutation(
        "provider-unpinned",
        "training",
        set_provider("allowedAccountIds", DELETE),
        {"provider-account"},
        "does not pin its account",
    ),
    Mutation(
        "provider-foreign-account",
        "serving",
        set_provider("allowedAccountIds", json.dumps(["333333333333"])),
        {"provider-account"},
        "not a serving account",
    ),
    Mutation(
        "accounts-overlap",
        "training",
        lambda doc: None,
        {"disjoint-accounts"},
        "both list 444444444444",
        context={"servingAccounts": [SERVING_ACCOUNT, SPARE_ACCOUNT]},
    ),
    Mutation(
        "provider-region",
        "training",
        set_provider("region", "eu-west-1"),
        {"allowed-regions"},
        "is in region eu-west-1",
    ),
    Mutation(
        "resource-region",
        "serving",
        set_input("acme-alb-logs", "bucket:Bucket", "region", "ap-south-1"),
        {"allowed-regions"},
        "is in region ap-south-1",
    ),
    Mutation(
        "training-public-lb",
        "training",
        add("aws:lb/loadBalancer:LoadBalancer", "api", {"internal": False, "enableDeletionProtection": True}),
        # An unguarded, unlogged internet-facing ALB is also refused on its own (no web ACL, no access logs).
        {"workload-resource-kinds", "waf-rate-limit", "service-logs"},
        "internet-facing load balancer api in a training stack",
    ),
    Mutation(
        "training-queue",
        "training",
        add(
            "aws:sqs/queue:Queue",
            "jobs",
            {
                "sqsManagedSseEnabled": True,
                "redrivePolicy": json.dumps({"deadLetterTargetArn": "arn:aws:sqs:us-east-1:111111111111:dlq"}),
            },
        ),
        {"workload-resource-kinds"},
        "SQS queue",
    ),
    Mutation(
        "serving-lustre",
        "serving",
        add("aws:fsx/lustreFileSystem:LustreFileSystem", "fs", {"deploymentType": "SCRATCH_2"}, protect=True),
        {"workload-resource-kinds"},
        "Lustre file system (training storage) fs in a serving stack",
    ),
    Mutation(
        "no-account-config",
        "serving",
        lambda doc: None,
        {"accounts-configured"},
        "has no trainingAccounts or servingAccounts config",
        context={"trainingAccounts": [], "servingAccounts": []},
    ),
    Mutation(
        "unknown-aws-kind",
        "serving",
        add("aws:sagemaker/endpoint:Endpoint", "ep", {"endpointConfigName": "x"}),
        {"known-resource-kinds"},
        "a resource kind the packs do not know",
    ),
    Mutation(
        "local-command",
        "training",
        add("command:local:Command", "sync", {"create": "aws s3 sync s3://a s3://b"}),
        {"known-resource-kinds"},
        "package command is not known to the packs",
    ),
    Mutation(
        "replicas-in-public-subnet",
        "serving",
        replicas_in_public_subnet,
        {"nodes-in-private-subnets"},
        "replicas launches nodes in public subnet public-a",
    ),
    Mutation(
        "force-destroy-checkpoints",
        "training",
        set_input("acme-train-checkpoints", "s3/bucket:Bucket", "forceDestroy", True),
        {"no-scheduled-data-loss"},
        "acme-train-checkpoints sets forceDestroy",
    ),
    Mutation(
        "serving-placement-group",
        "serving",
        add("aws:ec2/placementGroup:PlacementGroup", "pg", {"strategy": "cluster"}),
        {"workload-resource-kinds"},
        "placement group",
    ),
    Mutation(
        "serving-efa",
        "serving",
        set_input("replica", LT, "networkInterfaces.0.interfaceType", "efa"),
        {"workload-resource-kinds"},
        "attaches EFA interfaces in a serving stack",
    ),
    Mutation(
        "grant-serving-write",
        "training",
        set_policy("acme-train-checkpoints-policy", POLICY, "policy", grant_actions(["s3:GetObject", "s3:PutObject"])),
        {"cross-account-read-only", "cross-account-read-only-final"},
        "(s3:PutObject): arn:aws:iam::222222222222:root (the serving account 222222222222) can write bucket acme-train-checkpoints",
    ),
    Mutation(
        "grant-foreign",
        "training",
        set_policy(
            "acme-train-checkpoints-policy",
            POLICY,
            "policy",
            lambda d: d["Statement"][1].update(Principal={"AWS": "arn:aws:iam::999999999999:root"}),
        ),
        {"cross-account-read-only", "cross-account-read-only-final"},
        "neither a training nor a serving account",
    ),
    Mutation(
        "role-trusts-serving",
        "training",
        set_policy(
            "node",
            "iam/role:Role",
            "assumeRolePolicy",
            lambda d: d["Statement"][0].update(Principal={"AWS": f"arn:aws:iam::{SERVING_ACCOUNT}:root"}),
        ),
        {"cross-account-read-only", "cross-account-read-only-final"},
        "arn:aws:iam::222222222222:root (the serving account 222222222222) can become role node",
    ),
    Mutation(
        "provider-no-stack-tag",
        "training",
        set_provider("defaultTags", json.dumps({"tags": {"accelstack:workload": "training"}})),
        {"workload-tags"},
        "defaultTags lack accelstack:stack",
    ),
    Mutation(
        "tag-override",
        "training",
        set_input("acme-train-datasets", "bucket:Bucket", "tags", {"accelstack:workload": "serving"}),
        {"workload-tags"},
        "overrides tag accelstack:workload=serving",
    ),
    Mutation(
        "group-untagged",
        "serving",
        set_input("replicas", "group:Group", "tags", []),
        {"workload-tags"},
        "autoscaling group replicas must tag",
    ),
    Mutation(
        "template-volume-untagged",
        "training",
        set_input("nodes", LT, "tagSpecifications.1.tags", {}),
        {"workload-tags"},
        "tagSpecifications[volume] lack",
    ),
    # --- guardrails ---
    Mutation(
        "sse-no-algorithm",
        "training",
        set_input("acme-train-datasets-encryption", "Encryption", "rules.0.applyServerSideEncryptionByDefault", {}),
        {"encryption-at-rest"},
        "no default encryption algorithm",
    ),
    Mutation(
        "bucket-no-sse",
        "serving",
        remove("acme-alb-logs-encryption", "Encryption"),
        {"bucket-encryption"},
        "bucket acme-alb-logs has no server-side encryption configuration",
    ),
    Mutation(
        "lustre-no-kms",
        "training",
        set_input("lustre", "lustre", "kmsKeyId", DELETE),
        {"encryption-at-rest"},
        "Lustre file system lustre has no kmsKeyId",
    ),
    Mutation(
        "queue-unencrypted",
        "serving",
        set_input("requests", "Queue", "sqsManagedSseEnabled", False),
        {"encryption-at-rest"},
        "queue requests is not encrypted",
    ),
    Mutation(
        "ebs-unencrypted",
        "training",
        set_input("nodes", LT, "blockDeviceMappings.0.ebs.encrypted", "false"),
        {"encryption-at-rest"},
        "EBS volume /dev/sda1 is not encrypted",
    ),
    Mutation(
        "pab-off",
        "training",
        set_input("acme-train-checkpoints-public-access", "PublicAccess", "restrictPublicBuckets", False),
        {"no-public-buckets"},
        "leaves restrictPublicBuckets off",
    ),
    Mutation(
        "bucket-no-pab",
        "training",
        remove("acme-train-datasets-public-access", "PublicAccess"),
        {"bucket-public-access-block"},
        "bucket acme-train-datasets has no public access block",
    ),
    Mutation(
        "bucket-public-acl",
        "serving",
        set_input("acme-alb-logs", "bucket:Bucket", "acl", "public-read"),
        # A public ACL is also an access-graph edge: every account reads the bucket.
        {"no-public-buckets", "cross-account-read-only", "cross-account-read-only-final"},
        "uses the public ACL public-read",
    ),
    Mutation(
        "policy-public",
        "training",
        set_policy(
            "acme-train-datasets-policy",
            POLICY,
            "policy",
            lambda d: d["Statement"].append(
                {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::x/*"}
            ),
        ),
        {"no-public-buckets", "no-public-buckets-final", "cross-account-read-only", "cross-account-read-only-final"},
        "allows s3:GetObject to everyone",
    ),
    Mutation(
        "ingress-ssh",
        "serving",
        set_input("alb-in-443", "IngressRule", "fromPort", 22),
        {"no-internet-ingress"},
        "allows ingress from 0.0.0.0/0 on tcp 22-443",
    ),
    Mutation(
        "training-ingress",
        "training",
        set_input("cluster-from-self", "IngressRule", "cidrIpv6", "::/0"),
        {"no-internet-ingress", "internet-ingress-only-to-load-balancer"},
        "allows ingress from ::/0 on all ports",
    ),
    Mutation(
        "ingress-not-lb",
        "serving",
        set_input("alb", LB, "internal", True),
        {"internet-ingress-only-to-load-balancer"},
        "but no internet-facing load balancer uses that group",
    ),
    Mutation(
        "node-public-ip",
        "training",
        set_input("nodes", LT, "networkInterfaces.1.associatePublicIpAddress", "true"),
        {"no-public-ip-on-nodes"},
        "gives interface 1 a public IP",
    ),
    Mutation(
        "subnet-public-ip",
        "serving",
        set_input("public-a", "Subnet", "mapPublicIpOnLaunch", True),
        {"no-public-ip-on-nodes"},
        "subnet public-a maps public IPs on launch",
    ),
    Mutation(
        "batch-privileged-job",
        "training",
        add(
            "aws:batch/jobDefinition:JobDefinition",
            "multinode",
            {
                "type": "multinode",
                "nodeProperties": json.dumps(
                    {
                        "numNodes": 2,
                        "mainNode": 0,
                        "nodeRangeProperties": [
                            {"targetNodes": "0:1", "container": {"image": "ubuntu:24.04", "privileged": True}}
                        ],
                    }
                ),
            },
        ),
        {"batch-not-privileged"},
        "runs a privileged job container",
    ),
    Mutation(
        "imdsv1",
        "serving",
        set_input("replica", LT, "metadataOptions.httpTokens", "optional"),
        {"imdsv2-required"},
        "does not require IMDSv2",
    ),
    Mutation(
        "user-data-access-key",
        "serving",
        set_input("replica", LT, "userData", user_data("#!/bin/bash\nexport AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n")),
        {"no-secrets-in-user-data", "no-secrets-in-user-data-final"},
        "embeds an AWS access key id",
    ),
    Mutation(
        "user-data-private-key",
        "training",
        set_input("nodes", LT, "userData", user_data(TRAINING_USER_DATA + "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n")),
        {"no-secrets-in-user-data", "no-secrets-in-user-data-final"},
        "embeds a private key",
    ),
    Mutation(
        "user-data-munge-key",
        "training",
        set_input(
            "nodes",
            LT,
            "userData",
            user_data(
                TRAINING_USER_DATA.replace(
                    "runcmd:", "  - path: /etc/munge/munge.key\n    encoding: b64\n    content: c2VjcmV0\nruncmd:"
                )
            ),
        ),
        {"no-secrets-in-user-data", "no-secrets-in-user-data-final"},
        "embeds the content of /etc/munge/munge.key",
    ),
    Mutation(
        "iam-star",
        "training",
        set_policy("node-storage", "rolePolicy", "policy", lambda d: d["Statement"][0].update(Action="*")),
        {"iam-least-privilege", "iam-least-privilege-final"},
        "allows every action",
    ),
    Mutation(
        "iam-s3-star",
        "training",
        set_policy("node-storage", "rolePolicy", "policy", lambda d: d["Statement"][1].update(Action="s3:*")),
        {"iam-least-privilege", "iam-least-privilege-final"},
        "allows every s3 action (s3:*) on every resource",
    ),
    Mutation(
        "iam-admin",
        "training",
        set_input("node-ssm", "Attachment", "policyArn", "arn:aws:iam::aws:policy/AdministratorAccess"),
        # ... and, in the access graph, sts:AssumeRole on every account's roles: a become across sides.
        {
            "iam-least-privilege",
            "iam-least-privilege-final",
            "cross-account-read-only",
            "cross-account-read-only-final",
        },
        "attaches arn:aws:iam::aws:policy/AdministratorAccess",
    ),
    Mutation(
        "bucket-unprotected",
        "training",
        set_option("acme-train-checkpoints", "bucket:Bucket", "protect", False),
        {"protect-stateful"},
        "bucket acme-train-checkpoints is not protected",
    ),
    Mutation(
        "kms-unprotected",
        "serving",
        set_option("key", "kms/key", "protect", False),
        {"protect-stateful"},
        "KMS key key is not protected",
    ),
    Mutation(
        "lustre-unprotected",
        "training",
        set_option("lustre", "lustre", "protect", False),
        {"protect-stateful"},
        "Lustre file system lustre is not protected",
    ),
    Mutation(
        "versioning-suspended",
        "training",
        set_input("acme-train-checkpoints-versioning", "Versioning", "versioningConfiguration.status", "Suspended"),
        {"bucket-versioning"},
        "versioning is suspended",
    ),
    Mutation(
        "versioning-missing",
        "training",
        remove("acme-train-checkpoints-versioning", "Versioning"),
        {"bucket-versioning"},
        "versioning is off",
    ),
    Mutation(
        "queue-no-dlq",
        "serving",
        set_input("requests", "Queue", "redrivePolicy", DELETE),
        {"queue-dlq"},
        "has no dead-letter queue",
    ),
    Mutation(
        "http-forward",
        "serving",
        set_input("http-redirect", "listener", "defaultActions", [{"type": "forward", "targetGroupArn": "tg"}]),
        {"https-listeners"},
        "HTTP listener http-redirect must only redirect to HTTPS",
    ),
    Mutation(
        "tls-old",
        "serving",
        set_input("https", "listener", "sslPolicy", "ELBSecurityPolicy-2016-08"),
        {"https-listeners"},
        "allows TLS < 1.2",
    ),
    Mutation(
        "lb-unprotected",
        "serving",
        set_input("alb", LB, "enableDeletionProtection", False),
        {"lb-deletion-protection"},
        "load balancer alb has no deletion protection",
    ),
    Mutation(
        "serving-spot-template",
        "serving",
        set_input("replica", LT, "instanceMarketOptions", {"marketType": "spot"}),
        {"no-spot-serving"},
        "requests spot instances",
    ),
    Mutation(
        "serving-spot-group",
        "serving",
        set_input(
            "replicas",
            "group:Group",
            "mixedInstancesPolicy",
            {"instancesDistribution": {"onDemandPercentageAboveBaseCapacity": 50}},
        ),
        {"no-spot-serving"},
        "runs 50% spot",
    ),
    Mutation(
        "spot-no-checkpoints",
        "training",
        rename_everywhere("acme-train-checkpoints", "acme-train-scratch"),
        {"spot-training-needs-checkpoints"},
        "no checkpoint bucket",
    ),
    Mutation(
        "scale-on-cpu",
        "serving",
        set_input(
            "backlog-per-replica",
            "Policy",
            "targetTrackingConfiguration",
            {"targetValue": 60, "predefinedMetricSpecification": {"predefinedMetricType": "ASGAverageCPUUtilization"}},
        ),
        {"serving-scales-on-queue-depth"},
        "scales on CPU",
    ),
    Mutation(
        "no-scaling-policy",
        "serving",
        remove("backlog-per-replica", "autoscaling/policy"),
        {"serving-scales-on-queue-depth"},
        "has no scaling policy on the requests its replicas own",
    ),
]

BASELINES = {"training": training_export, "serving": serving_export}


def verdicts_for(mutation: Mutation) -> list[Any]:
    doc = BASELINES[mutation.workload]()
    mutation.mutate(doc)
    return run_packs(doc, context={**context_for(mutation.workload), **(mutation.context or {})})


@pytest.mark.parametrize("workload", sorted(BASELINES))
def test_baseline_passes_every_policy(workload: str) -> None:
    assert run_packs(BASELINES[workload](), context=context_for(workload)) == []


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.id for m in MUTATIONS])
def test_mutation_trips_exactly_its_rule(mutation: Mutation) -> None:
    verdicts = verdicts_for(mutation)
    assert {v.policy for v in verdicts} == mutation.policies, [v.line() for v in verdicts]
    assert all(v.mandatory for v in verdicts)
    assert any(mutation.message in v.message for v in verdicts), [v.message for v in verdicts]


def test_every_policy_has_a_mutation() -> None:
    from accelstack.engine.policy_runner import default_packs

    names = {p.name for pack in default_packs() for p in pack.policies}
    covered = {name for m in MUTATIONS for name in m.policies}
    # policies/guardrails/observability.py: mutated on the shipped stacks (test_policy_observability.py).
    from test_policy_observability import MUTATIONS as OBSERVABILITY_MUTATIONS

    covered |= {m.policy for m in OBSERVABILITY_MUTATIONS}
    # Azure- and GCP-only policies (min-tls-1-2, waf-rate-limit, ...): test_policy_multicloud.py.
    from test_policy_multicloud import MUTATIONS as MULTICLOUD_MUTATIONS

    covered |= {m.policy for m in MULTICLOUD_MUTATIONS}
    # The reachability view's policies: mutated on the shipped stacks of every cloud (test_reachability.py).
    from test_reachability import CASES as REACHABILITY_CASES

    covered |= {case.policy for case in REACHABILITY_CASES if case.policy}
    # Issue 28's no-rule classes on every cloud (service-logs, soft-delete-retention, ...): test_guardrails_no_rule.py.
    from test_guardrails_no_rule import CAUGHT

    covered |= {c.policy for c in CAUGHT}
    # Issue 31's cross-cloud reader: mutated on the six pairs (test_cross_cloud_handoff_pack.py).
    from test_cross_cloud_handoff_pack import CAUGHT as HANDOFF_CAUGHT

    covered |= set(HANDOFF_CAUGHT)
    # Issue 31's copy handoff: mutated on hand-built copies (test_artifact_copy_pack.py).
    from test_artifact_copy_pack import CAUGHT as COPY_CAUGHT

    covered |= set(COPY_CAUGHT)
    # Issue 32's landing stacks: mutated on the landing example's export (tests/landing/test_landing_packs.py).
    from tests.landing.test_landing_packs import MUTATIONS as LANDING_MUTATIONS

    covered |= {policy for _, policy in LANDING_MUTATIONS.values()}
    assert names - covered == set()


def test_kill_rate_is_total(capsys: pytest.CaptureFixture[str]) -> None:
    caught = sum(1 for m in MUTATIONS if mutation_caught(m))
    with capsys.disabled():
        print(f"\npolicy mutation kill rate: {caught}/{len(MUTATIONS)} = {caught / len(MUTATIONS):.0%}")
    assert caught == len(MUTATIONS)


def mutation_caught(mutation: Mutation) -> bool:
    return any(v.mandatory and v.policy in mutation.policies for v in verdicts_for(mutation))


# --- CLI semantics: enforcement levels, config, unknowns --------------------------------------------


def test_enforcement_level_is_configurable_per_policy() -> None:
    mutation = next(m for m in MUTATIONS if m.id == "group-untagged")
    doc = serving_export()
    mutation.mutate(doc)
    advisory = run_packs(doc, context=context_for("serving"), config={"workload-tags": "advisory"})
    assert [(v.policy, v.level) for v in advisory] == [("workload-tags", "advisory")]
    assert (
        run_packs(doc, context=context_for("serving"), config={"workload-tags": {"enforcementLevel": "disabled"}}) == []
    )
    everything = run_packs(doc, context=context_for("serving"), config={"all": "advisory"})
    assert everything and not any(v.mandatory for v in everything)


def test_unknown_values_are_advisory_during_preview() -> None:
    doc = training_export()
    policy = find(doc, "acme-train-checkpoints-policy", POLICY)
    policy["inputs"]["policy"] = policy["outputs"]["policy"] = UNKNOWN
    verdicts = run_packs(doc, context=context_for("training"))
    assert verdicts and not any(v.mandatory for v in verdicts)
    assert {v.policy for v in verdicts} >= {
        "cross-account-read-only",
        "cross-account-read-only-final",
        "no-public-buckets",
    }
    assert all("during preview" in v.message and ".policy" in v.message for v in verdicts)


def test_invalid_policy_config_is_bad_input() -> None:
    with pytest.raises(PolicyInputError, match="trainingAccounts"):
        run_packs(training_export(), config={"provider-account": {"trainingAccounts": "111111111111"}})
    with pytest.raises(PolicyInputError, match="unknown config property 'nope'"):
        run_packs(training_export(), config={"provider-account": {"nope": 1}})
    with pytest.raises(PolicyInputError, match="enforcement level 'fatal'"):
        run_packs(training_export(), config={"all": "fatal"})


def test_workload_comes_from_provider_tags_without_config() -> None:
    """The Pulumi CLI may run the packs with no config: the side comes from the provider's tags."""
    doc = training_export()
    add("aws:lb/loadBalancer:LoadBalancer", "api", {"internal": False, "enableDeletionProtection": True})(doc)
    verdicts = run_packs(doc)
    # The side comes from the tags (the training-only kind rule fires); with no accounts known, serving's
    # account in the artifact grant is an unknown account, so the allowlist refuses it too.
    assert {v.policy for v in verdicts if v.mandatory} == {
        "accounts-configured",
        "workload-resource-kinds",
        "waf-rate-limit",  # the added load balancer has no web ACL
        "service-logs",  # ... and no access logs
        "cross-account-read-only",
        "cross-account-read-only-final",
    }
    # ... and without account config the separation pack fails loudly instead of passing vacuously.
    assert any("has no trainingAccounts or servingAccounts config" in v.message for v in verdicts)
