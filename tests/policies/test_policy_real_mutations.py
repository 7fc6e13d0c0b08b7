"""Mutation testing on the shipped stacks' own exports: what a careless pull request would change.

`test_policy_rules.py` mutates hand-built baselines; here each shipped stack is previewed once (the
real program under mocks, `accelstack preview`'s export) and every mutation is one realistic edit of a
deep copy of that export. Both packs run through the analyzer path the CLI uses (`policy_verdicts`:
Configure, Analyze per resource, AnalyzeStack). A mutation is caught when a MANDATORY verdict of the
expected policy names the resource the PR touched; the kill rate (caught / tried) is printed.
The unmutated exports get no verdict at all (no false positives, advisory included).
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from accelstack.engine.policy_runner import UNKNOWN, Verdict, policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack
from accelstack.spec.problems import SpecError

REPO = Path(__file__).resolve().parents[2]
TRAINING, SERVING, FINETUNE = "aws-training", "aws-serving", "aws-finetune"
GCP_TRAINING = "gcp-training"
AZURE_TRAINING, AZURE_SERVING = "azure-training", "azure-serving"
TRAINING_ACCOUNT, SERVING_ACCOUNT = "111111111111", "222222222222"
# AWS's documented example credentials (never valid), shaped like the real thing.
EXAMPLE_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
EXAMPLE_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PEM_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
HF_TOKEN = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"  # 34 letters, split so scanners skip this file

Doc = dict[str, Any]
BUCKET = "aws:s3/bucket:Bucket"
SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
PAB = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
VERSIONING = "aws:s3/bucketVersioning:BucketVersioning"
BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
KMS_KEY = "aws:kms/key:Key"
SG = "aws:ec2/securityGroup:SecurityGroup"
SG_INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
VOLUME = "aws:ebs/volume:Volume"
SUBNET = "aws:ec2/subnet:Subnet"
ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
PROVIDER = "pulumi:providers:aws"
QUEUE = "aws:sqs/queue:Queue"
LISTENER = "aws:lb/listener:Listener"
LB = "aws:lb/loadBalancer:LoadBalancer"
ASG = "aws:autoscaling/group:Group"
SCALING_POLICY = "aws:autoscaling/policy:Policy"
PLACEMENT_GROUP = "aws:ec2/placementGroup:PlacementGroup"


@cache
def previewed(stack: str) -> PreviewResult:
    """One preview per stack and test process (each runs the real program in a worker, ~1.5 s)."""
    return preview_stack(REPO / "stacks" / f"Pulumi.{stack}.yaml", [], REPO)


# --- editing an export ---------------------------------------------------------------------------


def entry(doc: Doc, name: str, type_token: str) -> dict[str, Any]:
    matches = [r for r in doc["deployment"]["resources"] if r["type"] == type_token and r["urn"].endswith(f"::{name}")]
    assert len(matches) == 1, f"{type_token} {name}: {len(matches)} resources in the export"
    return matches[0]


def sides(resource: dict[str, Any]) -> list[dict[str, Any]]:
    """Inputs (what Analyze sees) and outputs (the final state AnalyzeStack sees) change together."""
    return [resource[side] for side in ("inputs", "outputs") if isinstance(resource.get(side), dict)]


def edit_json_string(value: str, change: Callable[[Any], None]) -> str:
    document = json.loads(value)
    change(document)
    return json.dumps(document)


def edit_user_data(resource: dict[str, Any], change: Callable[[str], str]) -> None:
    """Launch templates carry base64 user data; the PR edits the script the template renders."""
    for props in sides(resource):
        text = base64.b64decode(props["userData"]).decode()
        changed = change(text)
        assert changed != text, "the user-data edit did not apply"
        props["userData"] = base64.b64encode(changed.encode()).decode()


def provider_reference(doc: Doc) -> str:
    return next(r["provider"] for r in doc["deployment"]["resources"] if r["type"].startswith("aws:"))


def add_resource(
    doc: Doc,
    stack: str,
    type_token: str,
    name: str,
    inputs: dict[str, Any],
    *,
    depends: dict[str, str] | None = None,
    protect: bool = False,
) -> str:
    """Add a resource as the program would register it (explicit provider, parent the stack); `depends`
    maps a property to the URN of the resource it was computed from (the engine's property deps)."""
    stack_urn = doc["deployment"]["resources"][0]["urn"]
    urn = f"urn:pulumi:{stack}::accelstack::{type_token}::{name}"
    property_dependencies = {prop: [target] for prop, target in (depends or {}).items()}
    doc["deployment"]["resources"].append(
        {
            "urn": urn,
            "custom": True,
            "id": f"{name}-id",
            "type": type_token,
            "inputs": copy.deepcopy(inputs),
            "outputs": {**copy.deepcopy(inputs), "id": f"{name}-id"},
            "parent": stack_urn,
            "protect": protect,
            "provider": provider_reference(doc),
            "dependencies": sorted({u for urns in property_dependencies.values() for u in urns}),
            "propertyDependencies": property_dependencies,
        }
    )
    return urn


def drop_resource(doc: Doc, name: str, type_token: str) -> None:
    doc["deployment"]["resources"].remove(entry(doc, name, type_token))


# --- the mutations -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutation:
    id: str
    stack: str
    # Edits the export in place; returns the URN of the resource a verdict must name.
    apply: Callable[[Doc], str]
    policy: str  # the rule that must catch it (mandatory)


def naming(target: tuple[str, str], apply: Callable[[Doc], str]) -> Callable[[Doc], str]:
    """The verdict names another resource than the one edited (a bucket, for its versioning)."""

    def wrapped(doc: Doc) -> str:
        apply(doc)
        return entry(doc, *target)["urn"]

    return wrapped


def set_props(name: str, type_token: str, **values: Any) -> Callable[[Doc], str]:
    def apply(doc: Doc) -> str:
        resource = entry(doc, name, type_token)
        for props in sides(resource):
            props.update(copy.deepcopy(values))
        return resource["urn"]

    return apply


def edit_props(name: str, type_token: str, change: Callable[[dict[str, Any]], None]) -> Callable[[Doc], str]:
    def apply(doc: Doc) -> str:
        resource = entry(doc, name, type_token)
        for props in sides(resource):
            change(props)
        return resource["urn"]

    return apply


def unprotect(name: str, type_token: str) -> Callable[[Doc], str]:
    def apply(doc: Doc) -> str:
        resource = entry(doc, name, type_token)
        assert resource["protect"], f"{name} was not protected to begin with"
        resource["protect"] = False
        return resource["urn"]

    return apply


def drop(name: str, type_token: str, *, named: tuple[str, str]) -> Callable[[Doc], str]:
    def apply(doc: Doc) -> str:
        drop_resource(doc, name, type_token)
        return entry(doc, *named)["urn"]

    return apply


def add(
    stack: str,
    type_token: str,
    name: str,
    inputs: dict[str, Any],
    depends: dict[str, tuple[str, str]] | None = None,
    protect: bool = False,
) -> Callable[[Doc], str]:
    def apply(doc: Doc) -> str:
        deps = {prop: entry(doc, *target)["urn"] for prop, target in (depends or {}).items()}
        return add_resource(doc, stack, type_token, name, inputs, depends=deps, protect=protect)

    return apply


def add_statement(name: str, type_token: str, key: str, statement: dict[str, Any]) -> Callable[[Doc], str]:
    return edit_props(
        name,
        type_token,
        lambda p: p.__setitem__(key, edit_json_string(p[key], lambda d: d["Statement"].append(statement))),
    )


def edit_statement(name: str, type_token: str, key: str, sid: str, **changes: Any) -> Callable[[Doc], str]:
    def change(document: Any) -> None:
        statement = next(s for s in document["Statement"] if s.get("Sid") == sid)
        statement.update(changes)

    return edit_props(name, type_token, lambda p: p.__setitem__(key, edit_json_string(p[key], change)))


def edit_provider(change: Callable[[dict[str, Any]], None]) -> Callable[[Doc], str]:
    def apply(doc: Doc) -> str:
        provider = next(r for r in doc["deployment"]["resources"] if r["type"] == PROVIDER)
        for props in sides(provider):
            change(props)
        return provider["urn"]

    return apply


def provider_json(key: str, change: Callable[[Any], Any]) -> Callable[[Doc], str]:
    def edit(props: dict[str, Any]) -> None:
        props[key] = json.dumps(change(json.loads(props[key])))

    return edit_provider(edit)


def user_data(name: str, change: Callable[[str], str]) -> Callable[[Doc], str]:
    def apply(doc: Doc) -> str:
        resource = entry(doc, name, LT)
        edit_user_data(resource, change)
        return resource["urn"]

    return apply


def in_cloud_config_runcmd(line: str) -> Callable[[str], str]:
    return lambda text: text.replace("\nruncmd:\n", f"\nruncmd:\n- {line}\n", 1)


def in_cloud_config_files(path: str, content: str) -> Callable[[str], str]:
    indented = "".join(f"    {row}\n" for row in content.splitlines())
    return lambda text: text.replace(
        "\nwrite_files:\n", f"\nwrite_files:\n- path: {path}\n  permissions: '0600'\n  content: |\n{indented}", 1
    )


def in_bash_script(lines: str) -> Callable[[str], str]:
    return lambda text: text.replace("set -euo pipefail\n", f"set -euo pipefail\n{lines}", 1)


def pop(*path: str) -> Callable[[dict[str, Any]], None]:
    def change(props: dict[str, Any]) -> None:
        node: Any = props
        for key in path[:-1]:
            node = node[int(key)] if isinstance(node, list) else node[key]
        assert path[-1] in node, f"{'.'.join(path)} is not set"
        del node[path[-1]]

    return change


def put(value: Any, *path: str) -> Callable[[dict[str, Any]], None]:
    def change(props: dict[str, Any]) -> None:
        node: Any = props
        for key in path[:-1]:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(path[-1]) if isinstance(node, list) else path[-1]] = copy.deepcopy(value)

    return change


T, S = TRAINING, SERVING
CHECKPOINTS = ("aws-training-storage-checkpoints", BUCKET)
CLUSTER_SG = ("aws-training-net-cluster", SG)
REPLICAS_SG = ("aws-serving-replicas", SG)
ALL_ACTIONS_ON_ALL = {"Sid": "Debug", "Effect": "Allow", "Action": "s3:*", "Resource": "*"}

MUTATIONS = [
    # --- stateful resources: protect, encryption, versioning, public access ---
    Mutation("unprotect-checkpoints-bucket", T, unprotect(*CHECKPOINTS), "protect-stateful"),
    Mutation("unprotect-lustre", T, unprotect("aws-training-storage-lustre", LUSTRE), "protect-stateful"),
    Mutation("unprotect-kms-key", T, unprotect("aws-training-storage-key", KMS_KEY), "protect-stateful"),
    Mutation("unprotect-flow-log-key", S, unprotect("aws-serving-net-flow-logs", KMS_KEY), "protect-stateful"),
    Mutation("unprotect-alb-logs-bucket", S, unprotect("aws-serving-alb-logs", BUCKET), "protect-stateful"),
    Mutation(
        "drop-checkpoints-sse",
        T,
        drop("aws-training-storage-checkpoints-encryption", SSE, named=CHECKPOINTS),
        "bucket-encryption",
    ),
    Mutation(
        "sse-without-default-encryption",
        T,
        edit_props(
            "aws-training-storage-checkpoints-encryption", SSE, pop("rules", "0", "applyServerSideEncryptionByDefault")
        ),
        "encryption-at-rest",
    ),
    Mutation(
        "checkpoints-sse-downgraded-from-kms",
        T,
        edit_props(
            "aws-training-storage-checkpoints-encryption",
            SSE,
            put({"sseAlgorithm": "AES256"}, "rules", "0", "applyServerSideEncryptionByDefault"),
        ),
        "bucket-encryption",
    ),
    Mutation(
        "lustre-without-kms-key",
        T,
        edit_props("aws-training-storage-lustre", LUSTRE, pop("kmsKeyId")),
        "encryption-at-rest",
    ),
    Mutation(
        "slurmctld-volume-unencrypted",
        T,
        set_props("aws-training-slurmctld-state", VOLUME, encrypted=False),
        "encryption-at-rest",
    ),
    Mutation(
        "node-root-volume-unencrypted",
        T,
        edit_props("aws-training-nodes", LT, put("false", "blockDeviceMappings", "0", "ebs", "encrypted")),
        "encryption-at-rest",
    ),
    Mutation(
        "requests-queue-unencrypted",
        S,
        edit_props("aws-serving-requests", QUEUE, pop("kmsMasterKeyId")),
        "encryption-at-rest",
    ),
    Mutation(
        "pab-block-public-policy-off",
        T,
        set_props("aws-training-storage-checkpoints-public-access", PAB, blockPublicPolicy=False),
        "no-public-buckets",
    ),
    Mutation(
        "drop-checkpoints-pab",
        T,
        drop("aws-training-storage-checkpoints-public-access", PAB, named=CHECKPOINTS),
        "bucket-public-access-block",
    ),
    Mutation(
        "suspend-checkpoints-versioning",
        T,
        naming(
            CHECKPOINTS,
            edit_props(
                "aws-training-storage-checkpoints-versioning",
                VERSIONING,
                put("Suspended", "versioningConfiguration", "status"),
            ),
        ),
        "bucket-versioning",
    ),
    Mutation(
        "drop-checkpoints-versioning",
        T,
        drop("aws-training-storage-checkpoints-versioning", VERSIONING, named=CHECKPOINTS),
        "bucket-versioning",
    ),
    # --- network exposure ---
    Mutation(
        "ssh-from-internet-on-cluster-sg",
        T,
        add(
            T,
            SG_INGRESS,
            "aws-training-net-cluster-ssh",
            {
                "securityGroupId": "aws-training-net-cluster-id",
                "cidrIpv4": "0.0.0.0/0",
                "ipProtocol": "tcp",
                "fromPort": 22,
                "toPort": 22,
            },
            depends={"securityGroupId": CLUSTER_SG},
        ),
        "no-internet-ingress",
    ),
    Mutation(
        "inline-ssh-from-internet-on-cluster-sg",
        T,
        set_props(
            *CLUSTER_SG, ingress=[{"protocol": "tcp", "fromPort": 22, "toPort": 22, "cidrBlocks": ["0.0.0.0/0"]}]
        ),
        "no-internet-ingress",
    ),
    Mutation(
        "inference-port-from-internet",
        S,
        add(
            S,
            SG_INGRESS,
            "aws-serving-replicas-public",
            {
                "securityGroupId": "aws-serving-replicas-id",
                "cidrIpv4": "0.0.0.0/0",
                "ipProtocol": "tcp",
                "fromPort": 8000,
                "toPort": 8000,
            },
            depends={"securityGroupId": REPLICAS_SG},
        ),
        "no-internet-ingress",
    ),
    Mutation(
        "https-from-internet-straight-to-replicas",
        S,
        add(
            S,
            SG_INGRESS,
            "aws-serving-replicas-https",
            {
                "securityGroupId": "aws-serving-replicas-id",
                "cidrIpv6": "::/0",
                "ipProtocol": "tcp",
                "fromPort": 443,
                "toPort": 443,
            },
            depends={"securityGroupId": REPLICAS_SG},
        ),
        "internet-ingress-only-to-load-balancer",
    ),
    Mutation(
        "imds-optional-on-nodes",
        T,
        edit_props("aws-training-nodes", LT, put("optional", "metadataOptions", "httpTokens")),
        "imdsv2-required",
    ),
    Mutation(
        "imds-optional-on-head",
        T,
        edit_props("aws-training-head", INSTANCE, put("optional", "metadataOptions", "httpTokens")),
        "imdsv2-required",
    ),
    Mutation(
        "imds-optional-on-replicas",
        S,
        edit_props("aws-serving-replica", LT, put("optional", "metadataOptions", "httpTokens")),
        "imdsv2-required",
    ),
    Mutation(
        "public-ip-on-node-interface",
        T,
        edit_props("aws-training-nodes", LT, put("true", "networkInterfaces", "0", "associatePublicIpAddress")),
        "no-public-ip-on-nodes",
    ),
    Mutation(
        "public-ip-on-replica-interface",
        S,
        edit_props("aws-serving-replica", LT, put(True, "networkInterfaces", "0", "associatePublicIpAddress")),
        "no-public-ip-on-nodes",
    ),
    Mutation(
        "cluster-subnet-maps-public-ips",
        T,
        set_props("aws-training-net-cluster", SUBNET, mapPublicIpOnLaunch=True),
        "no-public-ip-on-nodes",
    ),
    # --- IAM ---
    Mutation(
        "s3-star-on-star-in-node-policy",
        T,
        add_statement("aws-training-node-storage", ROLE_POLICY, "policy", ALL_ACTIONS_ON_ALL),
        "iam-least-privilege",
    ),
    Mutation(
        "s3-star-on-every-bucket-in-node-policy",
        T,
        add_statement(
            "aws-training-node-storage",
            ROLE_POLICY,
            "policy",
            {"Effect": "Allow", "Action": ["s3:*"], "Resource": ["arn:aws:s3:::*", "arn:aws:s3:::*/*"]},
        ),
        "iam-least-privilege",
    ),
    Mutation(
        "s3-full-access-attached-to-node-role",
        T,
        add(
            T,
            ATTACHMENT,
            "aws-training-node-s3",
            {"role": "aws-training-node-id", "policyArn": "arn:aws:iam::aws:policy/AmazonS3FullAccess"},
            depends={"role": ("aws-training-node", ROLE)},
        ),
        "iam-least-privilege",
    ),
    Mutation(
        "admin-attached-to-replica-role",
        S,
        add(
            S,
            ATTACHMENT,
            "aws-serving-replica-admin",
            {"role": "aws-serving-replica-id", "policyArn": "arn:aws:iam::aws:policy/AdministratorAccess"},
            depends={"role": ("aws-serving-replica", ROLE)},
        ),
        "iam-least-privilege",
    ),
    Mutation(
        "node-role-trusts-every-account",
        T,
        edit_statement(
            "aws-training-node", ROLE, "assumeRolePolicy", None, Principal={"Service": "ec2.amazonaws.com", "AWS": "*"}
        ),
        "cross-account-read-only",
    ),
    # --- secrets in user data (base64 in the template, as EC2 gets it) ---
    Mutation(
        "aws-keys-in-node-user-data-file",
        T,
        user_data(
            "aws-training-nodes",
            in_cloud_config_files(
                "/etc/profile.d/aws.sh",
                f"export AWS_ACCESS_KEY_ID={EXAMPLE_KEY_ID}\nexport AWS_SECRET_ACCESS_KEY={EXAMPLE_SECRET}",
            ),
        ),
        "no-secrets-in-user-data",
    ),
    Mutation(
        "aws-secret-via-aws-configure-in-node-user-data",
        T,
        user_data(
            "aws-training-nodes", in_cloud_config_runcmd(f"aws configure set aws_secret_access_key {EXAMPLE_SECRET}")
        ),
        "no-secrets-in-user-data",
    ),
    Mutation(
        "ssh-private-key-in-node-user-data",
        T,
        user_data("aws-training-nodes", in_cloud_config_files("/root/.ssh/id_ed25519", PEM_KEY)),
        "no-secrets-in-user-data",
    ),
    Mutation(
        "ssh-private-key-in-replica-user-data",
        S,
        user_data("aws-serving-replica", in_bash_script(f"cat > /root/.ssh/id_ed25519 <<'EOF'\n{PEM_KEY}EOF\n")),
        "no-secrets-in-user-data",
    ),
    Mutation(
        "hf-token-in-replica-user-data",
        S,
        user_data("aws-serving-replica", in_bash_script(f"export HF_TOKEN={HF_TOKEN}\n")),
        "no-secrets-in-user-data",
    ),
    # --- state and the serving front door ---
    Mutation(
        "drop-requests-redrive-policy",
        S,
        lambda doc: (
            edit_props("aws-serving-requests", QUEUE, pop("redrivePolicy"))(doc),
            entry(doc, "aws-serving-requests", QUEUE)["propertyDependencies"].pop("redrivePolicy"),
        )[0],
        "queue-dlq",
    ),
    Mutation(
        "https-listener-to-http-forward",
        S,
        lambda doc: edit_props(
            "aws-serving-https",
            LISTENER,
            lambda p: (p.update(protocol="HTTP", port=8080), p.pop("sslPolicy"), p.pop("certificateArn")),
        )(doc),
        "https-listeners",
    ),
    Mutation(
        "redirect-listener-forwards",
        S,
        edit_props(
            "aws-serving-http-redirect",
            LISTENER,
            put(
                [{"type": "forward", "targetGroupArn": "arn:aws:lb:us-east-1:111111111111:aws-serving-replicas"}],
                "defaultActions",
            ),
        ),
        "https-listeners",
    ),
    Mutation(
        "listener-allows-tls-1-0",
        S,
        set_props("aws-serving-https", LISTENER, sslPolicy="ELBSecurityPolicy-TLS13-1-0-2021-06"),
        "https-listeners",
    ),
    Mutation(
        "listener-forward-secrecy-tls-1-0",
        S,
        set_props("aws-serving-https", LISTENER, sslPolicy="ELBSecurityPolicy-FS-2018-06"),
        "https-listeners",
    ),
    Mutation(
        "anyone-may-enqueue-requests",
        S,
        add(
            S,
            "aws:sqs/queuePolicy:QueuePolicy",
            "aws-serving-requests-policy",
            {
                "queueUrl": "https://sqs.us-east-1.amazonaws.com/222222222222/aws-serving-requests",
                "policy": json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Principal": "*",
                                "Action": "sqs:SendMessage",
                                "Resource": "arn:aws:sqs:us-east-1:222222222222:aws-serving-requests",
                            }
                        ],
                    }
                ),
            },
            depends={"queueUrl": ("aws-serving-requests", QUEUE)},
        ),
        "cross-account-read-only",
    ),
    Mutation(
        "alb-deletion-protection-off",
        S,
        set_props("aws-serving-alb", LB, enableDeletionProtection=False),
        "lb-deletion-protection",
    ),
    # --- capacity and scaling ---
    Mutation(
        "spot-market-on-replica-template",
        S,
        set_props(
            "aws-serving-replica",
            LT,
            instanceMarketOptions={"marketType": "spot", "spotOptions": {"spotInstanceType": "one-time"}},
        ),
        "no-spot-serving",
    ),
    Mutation(
        "spot-mix-on-replica-group",
        S,
        set_props(
            "aws-serving-replicas",
            ASG,
            mixedInstancesPolicy={
                "instancesDistribution": {
                    "onDemandPercentageAboveBaseCapacity": 0,
                    "spotAllocationStrategy": "price-capacity-optimized",
                },
                "launchTemplate": {"launchTemplateSpecification": {"launchTemplateId": "aws-serving-replica-id"}},
            },
        ),
        "no-spot-serving",
    ),
    Mutation(
        "cpu-target-tracking-on-replicas",
        S,
        naming(
            ("aws-serving-replicas", ASG),
            add(
                S,
                SCALING_POLICY,
                "aws-serving-cpu",
                {
                    "autoscalingGroupName": "accelstack-aws-serving-replicas",
                    "policyType": "TargetTrackingScaling",
                    "targetTrackingConfiguration": {
                        "predefinedMetricSpecification": {"predefinedMetricType": "ASGAverageCPUUtilization"},
                        "targetValue": 60,
                    },
                },
                depends={"autoscalingGroupName": ("aws-serving-replicas", ASG)},
            ),
        ),
        "serving-scales-on-queue-depth",
    ),
    Mutation(
        "drop-queue-depth-scaling",
        S,
        drop("aws-serving-backlog-per-instance", SCALING_POLICY, named=("aws-serving-replicas", ASG)),
        "serving-scales-on-queue-depth",
    ),
    # --- separation ---
    Mutation(
        "training-provider-pins-serving-account",
        T,
        provider_json("allowedAccountIds", lambda _: [SERVING_ACCOUNT]),
        "provider-account",
    ),
    Mutation(
        "training-provider-assumes-serving-role",
        T,
        provider_json(
            "assumeRoles",
            lambda roles: [{**roles[0], "roleArn": f"arn:aws:iam::{SERVING_ACCOUNT}:role/accelstack-deploy"}],
        ),
        "provider-account",
    ),
    Mutation(
        "serving-provider-pins-training-account",
        S,
        provider_json("allowedAccountIds", lambda _: [TRAINING_ACCOUNT]),
        "provider-account",
    ),
    Mutation(
        "provider-region-outside-allowlist",
        T,
        edit_provider(lambda p: p.__setitem__("region", "eu-west-1")),
        "allowed-regions",
    ),
    Mutation("bucket-region-outside-allowlist", T, set_props(*CHECKPOINTS, region="ap-south-1"), "allowed-regions"),
    Mutation(
        "serving-may-put-checkpoints",
        T,
        edit_statement(
            "aws-training-storage-checkpoints-policy",
            BUCKET_POLICY,
            "policy",
            "ArtifactReadersGetObjects",
            Action=["s3:GetObject", "s3:PutObject"],
        ),
        "cross-account-read-only",
    ),
    Mutation(
        "workload-tag-removed-from-provider",
        T,
        provider_json(
            "defaultTags", lambda tags: {"tags": {k: v for k, v in tags["tags"].items() if k != "accelstack:workload"}}
        ),
        "workload-tags",
    ),
    Mutation(
        "internet-facing-lb-in-training",
        T,
        add(
            T,
            LB,
            "aws-training-dashboard",
            {
                "internal": False,
                "loadBalancerType": "application",
                "enableDeletionProtection": True,
                "subnets": ["aws-training-net-nat-id"],
                "securityGroups": ["aws-training-head-id"],
            },
        ),
        "workload-resource-kinds",
    ),
    Mutation(
        "admission-queue-in-training",
        T,
        add(T, QUEUE, "aws-training-jobs", {"sqsManagedSseEnabled": True}),
        "workload-resource-kinds",
    ),
    Mutation(
        "lustre-in-serving",
        S,
        add(
            S,
            LUSTRE,
            "aws-serving-model-cache",
            {"deploymentType": "SCRATCH_2", "storageCapacity": 1200, "subnetIds": "aws-serving-net-private-a-id"},
            protect=True,
        ),
        "workload-resource-kinds",
    ),
    Mutation(
        "placement-group-in-serving",
        S,
        add(S, PLACEMENT_GROUP, "aws-serving-replicas", {"strategy": "cluster"}),
        "workload-resource-kinds",
    ),
    Mutation(
        "efa-on-replica-interface",
        S,
        edit_props("aws-serving-replica", LT, put("efa", "networkInterfaces", "0", "interfaceType")),
        "workload-resource-kinds",
    ),
]


# --- the GCP training stack: the same risks spelled in Google Cloud's kinds ----------------------------

G = GCP_TRAINING
G_BUCKET = "gcp:storage/bucket:Bucket"
G_LUSTRE = "gcp:lustre/instance:Instance"
G_TEMPLATE = "gcp:compute/instanceTemplate:InstanceTemplate"
G_GRANT = "gcp:storage/bucketIAMMember:BucketIAMMember"
G_CHECKPOINTS = ("gcp-training-checkpoints", G_BUCKET)


def _first_nic(change: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda props: props["networkInterfaces"][0].update(copy.deepcopy(change))


MUTATIONS += [
    Mutation("gcp-unprotect-lustre", G, unprotect("gcp-training-lustre", G_LUSTRE), "protect-stateful"),
    Mutation("gcp-unprotect-checkpoints", G, unprotect(*G_CHECKPOINTS), "protect-stateful"),
    Mutation(
        "gcp-unprotect-slurm-state",
        G,
        unprotect("gcp-training-slurmctld-state", "gcp:compute/disk:Disk"),
        "protect-stateful",
    ),
    Mutation(
        "gcp-checkpoints-public-access-inherited",
        G,
        set_props(*G_CHECKPOINTS, publicAccessPrevention="inherited"),
        "no-public-buckets",
    ),
    Mutation(
        "gcp-checkpoints-versioning-off",
        G,
        set_props(*G_CHECKPOINTS, versioning={"enabled": False}),
        "bucket-versioning",
    ),
    Mutation(
        "gcp-lifecycle-deletes-live-checkpoints",
        G,
        edit_props(*G_CHECKPOINTS, lambda p: p["lifecycleRules"][0].update(condition={"age": 30})),
        "no-scheduled-data-loss",
    ),
    Mutation(
        "gcp-lustre-without-the-stack-key",
        G,
        edit_props("gcp-training-lustre", G_LUSTRE, pop("kmsKey")),
        "bucket-encryption",
    ),
    Mutation(
        "gcp-node-template-external-ip",
        G,
        edit_props("gcp-training-node", G_TEMPLATE, _first_nic({"accessConfigs": [{"networkTier": "PREMIUM"}]})),
        "no-public-ip-on-nodes",
    ),
    Mutation(
        "gcp-fabric-nic-external-ipv6",
        G,
        edit_props(
            "gcp-training-node",
            G_TEMPLATE,
            lambda p: p["networkInterfaces"][3].update(ipv6AccessConfigs=[{"networkTier": "PREMIUM"}]),
        ),
        "no-public-ip-on-nodes",
    ),
    Mutation(
        "gcp-iap-ssh-opened-to-the-internet",
        G,
        set_props(
            "gcp-training-net-iap-ssh", "gcp:compute/firewall:Firewall", sourceRanges=["0.0.0.0/1", "128.0.0.0/1"]
        ),
        "no-internet-ingress",
    ),
    Mutation(
        "gcp-lustre-in-another-project",
        G,
        set_props("gcp-training-lustre", G_LUSTRE, project="acme-serve"),
        "pinned-project",
    ),
    Mutation(
        "gcp-serving-account-may-write-checkpoints",
        G,
        set_props(
            "gcp-training-nodes-checkpoints-objectCreator",
            G_GRANT,
            member="serviceAccount:replicas@acme-serve.iam.gserviceaccount.com",
        ),
        "cross-account-read-only",
    ),
    Mutation(
        "gcp-nodes-editor-on-datasets",
        G,
        set_props("gcp-training-nodes-datasets", G_GRANT, role="roles/editor"),
        "iam-least-privilege",
    ),
    Mutation(
        "gcp-import-input-carries-a-key",
        G,
        set_props(
            "gcp-training-lustre-import",
            "pulumi-python:dynamic:Resource",
            trigger=f"{EXAMPLE_KEY_ID}:{EXAMPLE_SECRET}",
        ),
        "no-secrets-in-user-data",
    ),
]


# --- the Azure stacks: the same risks spelled in azure-native's kinds ---------------------------------

AT, AS = AZURE_TRAINING, AZURE_SERVING
A_ACCOUNT = "azure-native:storage:StorageAccount"
A_VMSS = "azure-native:compute:VirtualMachineScaleSet"
A_GRANT = "azure-native:authorization:RoleAssignment"
A_WAF = "azure-native:network:WebApplicationFirewallPolicy"
A_AUTOSCALE = "azure-native:monitor:AutoscaleSetting"
# Built-in roles (learn.microsoft.com/azure/role-based-access-control/built-in-roles): Owner, and Storage Blob
# Data Contributor (read, write and delete blobs).
OWNER = "8e3af657-a8ff-443c-a75c-2fe8c4bcb635"
BLOB_DATA_CONTRIBUTOR = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"


def _role(subscription: str, role: str) -> str:
    return f"/subscriptions/{subscription}/providers/Microsoft.Authorization/roleDefinitions/{role}"


def _first_ip_configuration(change: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def apply(props: dict[str, Any]) -> None:
        nic = props["virtualMachineProfile"]["networkProfile"]["networkInterfaceConfigurations"][0]
        nic["ipConfigurations"][0].update(copy.deepcopy(change))

    return apply


def _first_scale_rule_on(metric: str, namespace: str) -> Callable[[dict[str, Any]], None]:
    return lambda props: props["profiles"][0]["rules"][0]["metricTrigger"].update(
        metricName=metric, metricNamespace=namespace
    )


MUTATIONS += [
    Mutation(
        "azure-unprotect-lustre",
        AT,
        unprotect("azure-training-storage-lustre", "azure-native:storagecache:AmlFilesystem"),
        "protect-stateful",
    ),
    Mutation(
        "azure-unprotect-checkpoint-account",
        AT,
        unprotect("azure-training-storage-checkpoints", A_ACCOUNT),
        "protect-stateful",
    ),
    Mutation(
        "azure-checkpoint-blobs-public",
        AT,
        set_props("azure-training-storage-checkpoints", A_ACCOUNT, allowBlobPublicAccess=True),
        "no-public-buckets",
    ),
    Mutation(
        "azure-dataset-account-tls-1-0",
        AT,
        set_props("azure-training-storage-datasets", A_ACCOUNT, minimumTlsVersion="TLS1_0"),
        "min-tls-1-2",
    ),
    Mutation(
        "azure-nodes-get-public-ips",
        AT,
        edit_props(
            "azure-training-nodes", A_VMSS, _first_ip_configuration({"publicIPAddressConfiguration": {"name": "pip"}})
        ),
        "no-public-ip-on-nodes",
    ),
    Mutation(
        "azure-checkpoint-versioning-off",
        AT,
        set_props(
            "azure-training-storage-checkpoints",
            "azure-native:storage:BlobServiceProperties",
            isVersioningEnabled=False,
        ),
        "bucket-versioning",
    ),
    Mutation(
        "azure-nodes-owner-on-checkpoints",
        AT,
        set_props(
            "azure-training-nodes-checkpoints",
            A_GRANT,
            roleDefinitionId=_role("3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c", OWNER),
        ),
        "iam-least-privilege",
    ),
    Mutation(
        "azure-key-vault-purge-protection-off",
        AT,
        edit_props(
            "azure-training-storage-kv",
            "azure-native:keyvault:Vault",
            lambda p: p["properties"].update(enablePurgeProtection=False),
        ),
        "encryption-at-rest",
    ),
    Mutation(
        "azure-lustre-without-the-stack-key",
        AT,
        edit_props(
            "azure-training-storage-lustre", "azure-native:storagecache:AmlFilesystem", pop("encryptionSettings")
        ),
        "bucket-encryption",
    ),
    Mutation(
        "azure-dataset-account-outside-allowed-regions",
        AT,
        set_props("azure-training-storage-datasets", A_ACCOUNT, location="westeurope"),
        "allowed-regions",
    ),
    Mutation(
        "azure-replicas-scale-on-cpu",
        AS,
        naming(
            ("azure-serving-replicas", A_VMSS),
            edit_props(
                "azure-serving-autoscale",
                A_AUTOSCALE,
                _first_scale_rule_on("Percentage CPU", "microsoft.compute/virtualmachinescalesets"),
            ),
        ),
        "serving-scales-on-queue-depth",
    ),
    Mutation(
        "azure-waf-detection-only",
        AS,
        edit_props("azure-serving-waf", A_WAF, lambda p: p["policySettings"].update(mode="Detection")),
        "waf-rate-limit",
    ),
    Mutation(
        "azure-waf-rate-rule-dropped", AS, set_props("azure-serving-waf", A_WAF, customRules=[]), "waf-rate-limit"
    ),
    Mutation(
        "azure-spot-replicas",
        AS,
        edit_props("azure-serving-replicas", A_VMSS, lambda p: p["virtualMachineProfile"].update(priority="Spot")),
        "no-spot-serving",
    ),
    Mutation(
        "azure-replica-port-open-to-the-internet",
        AS,
        edit_props(
            "azure-serving-net-replicas-nsg",
            "azure-native:network:NetworkSecurityGroup",
            lambda p: p["securityRules"][0].update(sourceAddressPrefix="Internet"),
        ),
        "no-internet-ingress",
    ),
    Mutation(
        "azure-expired-requests-not-dead-lettered",
        AS,
        set_props(
            "azure-serving-queue-requests", "azure-native:servicebus:Queue", deadLetteringOnMessageExpiration=False
        ),
        "queue-dlq",
    ),
    Mutation(
        "azure-service-bus-tls-1-0",
        AS,
        set_props("azure-serving-queue-sb", "azure-native:servicebus:Namespace", minimumTlsVersion="1.0"),
        "min-tls-1-2",
    ),
    Mutation(
        "azure-service-bus-shared-keys",
        AS,
        set_props("azure-serving-queue-sb", "azure-native:servicebus:Namespace", disableLocalAuth=False),
        "queue-identity-auth",
    ),
    Mutation("azure-unprotect-access-logs", AS, unprotect("azure-serving-logs", A_ACCOUNT), "protect-stateful"),
    Mutation(
        "azure-replicas-may-write-training-models",
        AS,
        set_props(
            "azure-serving-id-replicas-models",
            A_GRANT,
            roleDefinitionId=_role("3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c", BLOB_DATA_CONTRIBUTOR),
        ),
        "cross-account-read-only",
    ),
]


def _caught(verdicts: list[Verdict], urn: str, policy: str) -> bool:
    return any(v.mandatory and v.urn == urn and v.policy == policy for v in verdicts)


@pytest.mark.parametrize("stack", [TRAINING, SERVING, GCP_TRAINING, AZURE_TRAINING, AZURE_SERVING])
def test_every_mutation_of_a_shipped_stack_is_caught(stack: str) -> None:
    result = previewed(stack)
    mutations = [m for m in MUTATIONS if m.stack == stack]
    survivors = []
    for mutation in mutations:
        doc = copy.deepcopy(result.export)
        urn = mutation.apply(doc)
        assert doc != result.export, f"{mutation.id} changed nothing"
        verdicts = policy_verdicts(doc, result.spec)
        if not _caught(verdicts, urn, mutation.policy):
            got = "\n    ".join(v.line() for v in verdicts) or "(no verdict)"
            survivors.append(f"{mutation.id}: expected mandatory {mutation.policy} on {urn}; got\n    {got}")
    caught = len(mutations) - len(survivors)
    print(f"\n{stack}: kill rate {caught}/{len(mutations)}")
    assert not survivors, f"{len(survivors)} of {len(mutations)} mutations survived:\n" + "\n".join(survivors)


def test_the_table_covers_both_stacks_and_ids_are_unique() -> None:
    ids = [m.id for m in MUTATIONS]
    assert len(ids) == len(set(ids))
    assert {m.stack for m in MUTATIONS} == {TRAINING, SERVING, GCP_TRAINING, AZURE_TRAINING, AZURE_SERVING}


@pytest.mark.parametrize(
    "stack",
    [
        TRAINING,
        SERVING,
        GCP_TRAINING,
        AZURE_TRAINING,
        AZURE_SERVING,
        pytest.param(FINETUNE, marks=pytest.mark.integration),
    ],
)
def test_unmutated_shipped_stack_has_no_verdict_at_all(stack: str) -> None:
    """No false positives: not even an advisory (a noisy pack gets its policies disabled)."""
    result = previewed(stack)
    assert [v.line() for v in policy_verdicts(result.export, result.spec)] == []


@pytest.mark.parametrize("stack", [TRAINING, FINETUNE])
def test_spot_training_without_checkpoints_is_refused_by_the_spec(stack: str) -> None:
    """The PR that makes training spot and drops checkpoints never reaches the packs: `--set` fails
    validation before the program runs (the guardrail `spot-training-needs-checkpoints` is the
    backstop for stacks written without accelstack's spec)."""
    with pytest.raises(SpecError) as error:
        preview_stack(
            REPO / "stacks" / f"Pulumi.{stack}.yaml",
            ["training.nodes.capacity=spot", "training.storage.checkpoints=null", "training.artifactReaders=[]"],
            REPO,
        )
    assert [p.path for p in error.value.problems] == ["training.storage.checkpoints"]
    assert "spot capacity requires a checkpoint location" in str(error.value)


# --- unknown values: advisory during preview, bound on `up` by the `-final` stack policies -------


def known_export(stack: str) -> tuple[Doc, Any]:
    """The same stack run with preview=False: the mocks resolve every output, as after `pulumi up`."""
    from accelstack.engine.capture import Capture, Registration
    from accelstack.engine.export import deployment_v3
    from accelstack.engine.preview import PROGRAM, PROJECT, run_worker, stack_config
    from accelstack.spec.loader import parse_spec

    raw, config = stack_config(REPO / "stacks" / f"Pulumi.{stack}.yaml", [])
    request = {
        "main": str(REPO / PROGRAM),
        "project_dir": str(REPO),
        "config": config,
        "stack": stack,
        "project": PROJECT,
        "preview": False,
    }
    result = run_worker(request)
    assert result["ok"], result.get("error")
    registrations = [Registration(**data) for data in result["resources"]]
    export = deployment_v3(Capture(PROJECT, stack, False, registrations, result.get("stack_outputs", {})))
    return export, parse_spec(raw, stack)


def unknown_fields(doc: Doc) -> set[tuple[str, str]]:
    """(resource, input) pairs holding Pulumi's unknown sentinel, anywhere inside the value."""
    return {
        (r["urn"].rsplit("::", 1)[-1], key)
        for r in doc["deployment"]["resources"]
        for key, value in (r.get("inputs") or {}).items()
        if UNKNOWN in json.dumps(value)
    }


@pytest.mark.integration
def test_known_outputs_and_preview_give_the_same_verdicts() -> None:
    """Preview leaves some inputs unknown (a role's name, a placement group's name); no rule reads
    them, so the preview export and the known-outputs export get the same (empty) verdicts."""
    preview = previewed(TRAINING)
    known, spec = known_export(TRAINING)
    assert ("aws-training-nodes", "placement") in unknown_fields(preview.export)
    assert unknown_fields(known) == set()
    assert policy_verdicts(preview.export, preview.spec) == policy_verdicts(known, spec) == []


@dataclass(frozen=True)
class Unknowable:
    """A field that a real first `pulumi preview` cannot know (it is computed from other resources'
    outputs: propertyDependencies), the per-resource rule reading it, and its `-final` stack twin."""

    id: str
    name: str
    type_token: str
    prop: str
    violate: Callable[[Any], Any]  # the known (final-state) value, with the mistake in it
    policy: str


UNKNOWABLES = [
    Unknowable(
        "user-data-with-secret",
        "aws-training-nodes",
        LT,
        "userData",
        lambda value: base64.b64encode(
            base64.b64decode(value) + f"\n# AWS_SECRET_ACCESS_KEY={EXAMPLE_SECRET}\n".encode()
        ).decode(),
        "no-secrets-in-user-data",
    ),
    Unknowable(
        "node-policy-s3-star",
        "aws-training-node-storage",
        ROLE_POLICY,
        "policy",
        lambda value: edit_json_string(value, lambda d: d["Statement"].append(ALL_ACTIONS_ON_ALL)),
        "iam-least-privilege",
    ),
    Unknowable(
        "checkpoints-policy-public",
        "aws-training-storage-checkpoints-policy",
        BUCKET_POLICY,
        "policy",
        lambda value: edit_json_string(value, lambda d: d["Statement"][1].update(Principal="*")),
        "no-public-buckets",
    ),
    Unknowable(
        "checkpoints-policy-lets-serving-write",
        "aws-training-storage-checkpoints-policy",
        BUCKET_POLICY,
        "policy",
        lambda value: edit_json_string(
            value, lambda d: d["Statement"][1].update(Action=["s3:GetObject", "s3:PutObject"])
        ),
        "cross-account-read-only",
    ),
]


@pytest.mark.parametrize("case", UNKNOWABLES, ids=[u.id for u in UNKNOWABLES])
def test_stack_policy_catches_what_the_per_resource_pass_cannot_see(case: Unknowable) -> None:
    """Analyze gets the inputs a first preview has (the field unknown): pulumi-policy reports the rule
    as advisory "can't run during preview". AnalyzeStack gets the final state (the field known, with the
    mistake): the `-final` twin reports it MANDATORY on the same resource. With the field unknown on
    both sides nothing is mandatory: preview cannot decide, `up` does."""
    result = previewed(TRAINING)
    doc = copy.deepcopy(result.export)
    resource = entry(doc, case.name, case.type_token)
    assert case.prop in resource["propertyDependencies"], "a real preview would know this value"
    resource["outputs"][case.prop] = case.violate(resource["inputs"][case.prop])
    resource["inputs"][case.prop] = UNKNOWN
    verdicts = policy_verdicts(doc, result.spec)
    on_resource = {(v.policy, v.level) for v in verdicts if v.urn == resource["urn"]}
    assert {(case.policy, "advisory"), (f"{case.policy}-final", "mandatory")} <= on_resource, [
        v.line() for v in verdicts
    ]
    # Every rule reading the unknown field is advisory in the per-resource pass (never a false mandatory).
    assert not [(p, level) for p, level in on_resource if level == "mandatory" and not p.endswith("-final")], (
        on_resource
    )
    advisory = next(v for v in verdicts if v.policy == case.policy)
    assert "can't run" in advisory.message or "unknown" in advisory.message.lower(), advisory.message

    resource["outputs"][case.prop] = UNKNOWN
    verdicts = policy_verdicts(doc, result.spec)
    assert not [v for v in verdicts if v.mandatory], [v.line() for v in verdicts]
    assert (f"{case.policy}-final", "advisory") in {(v.policy, v.level) for v in verdicts}


# --- azure-native's secret osProfile: judged on its inputs, never silently skipped ------------------------


def _head_custom_data_with(secret: str) -> Callable[[Doc], str]:
    """A PR that writes a key into the Slurm head's cloud-init: only the inputs carry it (azure-native stores the
    VM's osProfile output as a secret, which the export redacts)."""

    def apply(doc: Doc) -> str:
        head = entry(doc, "azure-training-head", "azure-native:compute:VirtualMachine")
        profile = head["inputs"]["osProfile"]
        text = base64.b64decode(profile["customData"]).decode()
        profile["customData"] = base64.b64encode(f"{text}\n# {secret}\n".encode()).decode()
        return head["urn"]

    return apply


def test_a_secret_in_the_azure_heads_custom_data_is_caught_though_its_output_is_redacted() -> None:
    """The stack-level `-final` check cannot read the head's osProfile (a secret output, redacted in the export)
    and skips only that resource kind; the resource-level check reads the inputs and catches the key."""
    result = previewed(AZURE_TRAINING)
    head = entry(result.export, "azure-training-head", "azure-native:compute:VirtualMachine")
    assert "ciphertext" in json.dumps(head["outputs"]["osProfile"])  # what the final check cannot read
    doc = copy.deepcopy(result.export)
    urn = _head_custom_data_with(f"aws_secret_access_key={EXAMPLE_SECRET}")(doc)
    verdicts = policy_verdicts(doc, result.spec)
    assert _caught(verdicts, urn, "no-secrets-in-user-data"), [v.line() for v in verdicts]
    # The unedited head draws nothing from either check (the skip is not a failure either).
    assert [v.line() for v in policy_verdicts(result.export, result.spec)] == []
