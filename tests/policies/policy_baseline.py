"""Known-good, hand-built stack exports (v3) for a training and a serving stack, small enough to read.

Each mutation in test_rules.py changes one field of one of these and must trip exactly one rule.
Links between resources (a bucket and its encryption, an ingress rule and its security group) are
recorded as the engine records them: the value plus `propertyDependencies`.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

TRAINING_ACCOUNT, SERVING_ACCOUNT, SPARE_ACCOUNT = "111111111111", "222222222222", "444444444444"
REGION = "us-east-1"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

CONTEXT = {
    "trainingAccounts": [TRAINING_ACCOUNT, SPARE_ACCOUNT],
    "servingAccounts": [SERVING_ACCOUNT],
    "allowedRegions": [REGION, "us-west-2"],
}


def tags(workload: str, stack: str) -> dict[str, str]:
    return {"accelstack:workload": workload, "accelstack:stack": stack, "accelstack:config-digest": "abc123def456"}


class Builder:
    def __init__(self, stack: str, workload: str, account: str):
        self.stack, self.workload, self.account = stack, workload, account
        self.resources: list[dict[str, Any]] = []
        self.stack_urn = self.urn("pulumi:pulumi:Stack", f"accelstack-{stack}")
        self.resources.append(
            {
                "urn": self.stack_urn,
                "custom": False,
                "type": "pulumi:pulumi:Stack",
                "inputs": {},
                "outputs": {},
                "protect": False,
            }
        )
        provider_inputs = {
            "region": REGION,
            "allowedAccountIds": json.dumps([account]),
            "assumeRoles": json.dumps(
                [{"roleArn": f"arn:aws:iam::{account}:role/accelstack-deploy", "sessionName": stack}]
            ),
            "defaultTags": json.dumps({"tags": tags(workload, stack)}),
        }
        self.provider = self.add("pulumi:providers:aws", f"{stack}-aws", provider_inputs, provider=None)
        self.provider_ref = f"{self.provider['urn']}::{stack}-aws-id"

    def urn(self, type_: str, name: str) -> str:
        return f"urn:pulumi:{self.stack}::accelstack::{type_}::{name}"

    def add(
        self,
        type_: str,
        name: str,
        inputs: dict[str, Any],
        *,
        provider: Any = "stack",
        protect: bool = False,
        links: dict[str, dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """`links` maps an input to the resource it points at (recorded as value and property dependency)."""
        inputs = dict(inputs)
        prop_deps = {}
        for key, target in (links or {}).items():
            if key not in inputs:
                inputs[key] = target["outputs"]["id"]
            prop_deps[key] = [target["urn"]]
        service = type_.split(":")[1].split("/")[0]
        entry = {
            "urn": self.urn(type_, name),
            "custom": True,
            "id": f"{name}-id",
            "type": type_,
            "inputs": inputs,
            "outputs": {**inputs, "id": f"{name}-id", "arn": f"arn:aws:{service}:{REGION}:{self.account}:{name}"},
            "parent": self.stack_urn,
            "protect": protect,
            "dependencies": sorted({u for urns in prop_deps.values() for u in urns}),
            "propertyDependencies": prop_deps,
        }
        if provider == "stack":
            entry["provider"] = self.provider_ref
        self.resources.append(entry)
        return entry

    def _sse_default(self, sse: str) -> dict[str, Any]:
        """KMS encryption names the stack's key (without one S3 uses the AWS managed aws/s3 key)."""
        key = {"kmsMasterKeyId": f"arn:aws:kms:us-east-1:{self.account}:key/acme"} if sse.startswith("aws:kms") else {}
        return {"sseAlgorithm": sse, **key}

    def secure_bucket(
        self, name: str, *, sse: str = "aws:kms", versioned: bool = True, statements=()
    ) -> dict[str, Any]:
        bucket = self.add("aws:s3/bucket:Bucket", name, {"bucket": name}, protect=True)
        bucket["outputs"]["bucket"] = name
        self.add(
            "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
            f"{name}-public-access",
            {
                "blockPublicAcls": True,
                "blockPublicPolicy": True,
                "ignorePublicAcls": True,
                "restrictPublicBuckets": True,
            },
            links={"bucket": bucket},
        )
        self.add(
            "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
            f"{name}-encryption",
            {"rules": [{"applyServerSideEncryptionByDefault": self._sse_default(sse), "bucketKeyEnabled": True}]},
            links={"bucket": bucket},
        )
        if versioned:
            self.add(
                "aws:s3/bucketVersioning:BucketVersioning",
                f"{name}-versioning",
                {"versioningConfiguration": {"status": "Enabled"}},
                links={"bucket": bucket},
            )
        arn = f"arn:aws:s3:::{name}"
        document = {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "DenyInsecureTransport",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": [arn, f"{arn}/*"],
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                },
                *statements,
            ],
        }
        self.add(
            "aws:s3/bucketPolicy:BucketPolicy",
            f"{name}-policy",
            {"policy": json.dumps(document)},
            links={"bucket": bucket},
        )
        return bucket

    def launch_template(self, name: str, *, efa: bool, spot: bool, user_data: str) -> dict[str, Any]:
        node_tags = tags(self.workload, self.stack)
        interfaces = [
            {"deviceIndex": i, "associatePublicIpAddress": "false", **({"interfaceType": "efa"} if efa else {})}
            for i in range(2 if efa else 1)
        ]
        inputs = {
            "userData": base64.b64encode(user_data.encode()).decode(),
            "metadataOptions": {"httpTokens": "required", "httpEndpoint": "enabled", "httpPutResponseHopLimit": 1},
            "networkInterfaces": interfaces,
            "blockDeviceMappings": [{"deviceName": "/dev/sda1", "ebs": {"encrypted": "true", "volumeSize": 200}}],
            "tagSpecifications": [
                {"resourceType": "instance", "tags": {**node_tags, "Name": name}},
                {"resourceType": "volume", "tags": {**node_tags, "Name": name}},
            ],
        }
        if spot:
            inputs["instanceMarketOptions"] = {"marketType": "spot"}
        return self.add("aws:ec2/launchTemplate:LaunchTemplate", name, inputs)

    def group(self, name: str, template: dict[str, Any]) -> dict[str, Any]:
        group_tags = [
            {"key": k, "value": v, "propagateAtLaunch": True} for k, v in tags(self.workload, self.stack).items()
        ]
        group = self.add(
            "aws:autoscaling/group:Group",
            name,
            {
                "name": name,
                "minSize": 1,
                "maxSize": 4,
                "tags": group_tags,
                "launchTemplate": {"id": template["outputs"]["id"], "version": "$Latest"},
            },
        )
        group["outputs"]["name"] = name
        return group

    def export(self) -> dict[str, Any]:
        return {"version": 3, "deployment": {"manifest": {}, "resources": copy.deepcopy(self.resources)}}


TRAINING_USER_DATA = """#cloud-config
write_files:
  - path: /etc/slurm/slurm.conf
    content: |
      ClusterName=accelstack
runcmd:
  - aws secretsmanager get-secret-value --secret-id accelstack/munge --query SecretString --output text | base64 -d > /etc/munge/munge.key
"""


def training_export() -> dict[str, Any]:
    b = Builder("aws-training", "training", TRAINING_ACCOUNT)
    key = b.add("aws:kms/key:Key", "storage-key", {"enableKeyRotation": True}, protect=True)
    datasets = b.secure_bucket("acme-train-datasets", versioned=False)
    checkpoints = b.secure_bucket(
        "acme-train-checkpoints",
        statements=[
            {
                "Sid": "ServingReadsModels",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{SERVING_ACCOUNT}:root"},
                "Action": ["s3:GetObject"],
                "Resource": ["arn:aws:s3:::acme-train-checkpoints/models/*"],
            },
            {
                "Sid": "ServingListsModels",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{SERVING_ACCOUNT}:root"},
                "Action": "s3:ListBucket",
                "Resource": "arn:aws:s3:::acme-train-checkpoints",
                "Condition": {"StringLike": {"s3:prefix": ["models/*"]}},
            },
        ],
    )
    # Server access logs of both data buckets (guardrails bucket-access-logging).
    logs = b.secure_bucket("acme-train-access-logs", sse="AES256")
    for source in (datasets, checkpoints):
        b.add(
            "aws:s3/bucketLogging:BucketLogging",
            f"{source['inputs']['bucket']}-access-logging",
            {"targetPrefix": f"{source['inputs']['bucket']}/"},
            links={"bucket": source, "targetBucket": logs},
        )
    b.add(
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "lustre",
        {"deploymentType": "PERSISTENT_2", "storageCapacity": 4800, "kmsKeyId": key["outputs"]["arn"]},
        protect=True,
    )
    b.add("aws:ec2/placementGroup:PlacementGroup", "nodes", {"strategy": "cluster"})
    b.add("aws:ec2/subnet:Subnet", "cluster", {"cidrBlock": "10.20.0.0/18", "mapPublicIpOnLaunch": False})
    group_sg = b.add("aws:ec2/securityGroup:SecurityGroup", "cluster", {"description": "cluster"})
    b.add(
        "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
        "cluster-from-self",
        {"ipProtocol": "-1", "referencedSecurityGroupId": group_sg["outputs"]["id"]},
        links={"securityGroupId": group_sg},
    )
    role = b.add(
        "aws:iam/role:Role",
        "node",
        {
            "assumeRolePolicy": json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
                    ],
                }
            )
        },
    )
    b.add(
        "aws:iam/rolePolicy:RolePolicy",
        "node-storage",
        {
            "role": "node",
            "policy": json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Action": ["s3:GetObject", "s3:PutObject", "s3:ListBucket"],
                            "Resource": [
                                "arn:aws:s3:::acme-train-checkpoints",
                                "arn:aws:s3:::acme-train-checkpoints/*",
                            ],
                        },
                        {"Effect": "Allow", "Action": ["ec2:DescribeInstances"], "Resource": "*"},
                    ],
                }
            ),
        },
        links={"role": role},
    )
    b.add(
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        "node-ssm",
        {"role": "node", "policyArn": "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"},
    )
    template = b.launch_template("nodes", efa=True, spot=True, user_data=TRAINING_USER_DATA)
    b.group("nodes", template)
    return b.export()


def serving_export() -> dict[str, Any]:
    b = Builder("aws-serving", "serving", SERVING_ACCOUNT)
    b.add("aws:kms/key:Key", "key", {"enableKeyRotation": True}, protect=True)
    b.secure_bucket(
        "acme-alb-logs",
        sse="AES256",
        versioned=False,
        statements=[
            {
                "Effect": "Allow",
                "Principal": {"AWS": "arn:aws:iam::127311923021:root"},
                "Action": "s3:PutObject",
                "Resource": "arn:aws:s3:::acme-alb-logs/alb/*",
            }
        ],
    )
    dead = b.add(
        "aws:sqs/queue:Queue", "dead-letters", {"sqsManagedSseEnabled": True, "messageRetentionSeconds": 1209600}
    )
    b.add(
        "aws:sqs/queue:Queue",
        "requests",
        {
            "sqsManagedSseEnabled": True,
            "redrivePolicy": json.dumps({"deadLetterTargetArn": dead["outputs"]["arn"], "maxReceiveCount": 3}),
        },
    )
    b.add("aws:ec2/subnet:Subnet", "public-a", {"cidrBlock": "10.30.0.0/24", "mapPublicIpOnLaunch": False})
    alb_sg = b.add("aws:ec2/securityGroup:SecurityGroup", "alb", {"description": "load balancer"})
    replicas_sg = b.add("aws:ec2/securityGroup:SecurityGroup", "replicas", {"description": "replicas"})
    for port in (443, 80):
        b.add(
            "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
            f"alb-in-{port}",
            {"ipProtocol": "tcp", "fromPort": port, "toPort": port, "cidrIpv4": "0.0.0.0/0"},
            links={"securityGroupId": alb_sg},
        )
    b.add(
        "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
        "replicas-from-alb",
        {"ipProtocol": "tcp", "fromPort": 8000, "toPort": 8000, "referencedSecurityGroupId": alb_sg["outputs"]["id"]},
        links={"securityGroupId": replicas_sg},
    )
    lb = b.add(
        "aws:lb/loadBalancer:LoadBalancer",
        "alb",
        {
            "internal": False,
            "loadBalancerType": "application",
            "enableDeletionProtection": True,
            "securityGroups": [alb_sg["outputs"]["id"]],
            "accessLogs": {"bucket": "acme-alb-logs", "enabled": True, "prefix": "alb"},
        },
        links={"securityGroups": alb_sg},
    )
    visibility = {"cloudwatchMetricsEnabled": True, "metricName": "edge", "sampledRequestsEnabled": True}
    acl = b.add(
        "aws:wafv2/webAcl:WebAcl",
        "edge",
        {
            "scope": "REGIONAL",
            "defaultAction": {"allow": {}},
            "rules": [
                {
                    "name": "rate-per-client-ip",
                    "priority": 0,
                    "action": {"block": {}},
                    "statement": {"rateBasedStatement": {"aggregateKeyType": "IP", "limit": 600}},
                    "visibilityConfig": visibility,
                },
                {
                    "name": "aws-known-bad-inputs",
                    "priority": 1,
                    "overrideAction": {"none": {}},
                    "statement": {
                        "managedRuleGroupStatement": {
                            "name": "AWSManagedRulesKnownBadInputsRuleSet",
                            "vendorName": "AWS",
                        }
                    },
                    "visibilityConfig": visibility,
                },
            ],
            "visibilityConfig": visibility,
        },
    )
    b.add("aws:wafv2/webAclAssociation:WebAclAssociation", "edge", {}, links={"resourceArn": lb, "webAclArn": acl})
    logs = b.add(
        "aws:cloudwatch/logGroup:LogGroup",
        "waf-logs",
        {
            "name": "aws-waf-logs-edge",
            "kmsKeyId": "arn:aws:kms:us-east-1:222222222222:key/acme",
            "retentionInDays": 365,
        },
    )
    b.add(
        "aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration",
        "waf-logs",
        # An ARN, as the provider takes it (the log group's id is its name).
        {
            "redactedFields": [{"singleHeader": {"name": "authorization"}}],
            "logDestinationConfigs": [logs["outputs"]["arn"]],
        },
        links={"resourceArn": acl, "logDestinationConfigs": logs},
    )
    b.add(
        "aws:lb/listener:Listener",
        "https",
        {
            "protocol": "HTTPS",
            "port": 443,
            "sslPolicy": "ELBSecurityPolicy-TLS13-1-2-2021-06",
            "defaultActions": [{"type": "forward", "targetGroupArn": "arn:aws:elasticloadbalancing:tg"}],
        },
        links={"loadBalancerArn": lb},
    )
    b.add(
        "aws:lb/listener:Listener",
        "http-redirect",
        {
            "protocol": "HTTP",
            "port": 80,
            "defaultActions": [
                {"type": "redirect", "redirect": {"protocol": "HTTPS", "port": "443", "statusCode": "HTTP_301"}}
            ],
        },
        links={"loadBalancerArn": lb},
    )
    template = b.launch_template("replica", efa=False, spot=False, user_data="#!/bin/bash\nsystemctl start vllm\n")
    group = b.group("replicas", template)
    b.add(
        "aws:autoscaling/policy:Policy",
        "backlog-per-replica",
        {
            "autoscalingGroupName": "replicas",
            "policyType": "TargetTrackingScaling",
            "targetTrackingConfiguration": {
                "targetValue": 10,
                "customizedMetricSpecification": {
                    "metrics": [
                        {
                            "id": "m1",
                            "returnData": False,
                            "metricStat": {
                                "stat": "Sum",
                                "metric": {"namespace": "AWS/SQS", "metricName": "ApproximateNumberOfMessagesVisible"},
                            },
                        },
                        {
                            "id": "m2",
                            "returnData": False,
                            "metricStat": {
                                "stat": "Average",
                                "metric": {"namespace": "AWS/AutoScaling", "metricName": "GroupInServiceInstances"},
                            },
                        },
                        {"id": "e1", "expression": "m1 / m2", "returnData": True},
                    ]
                },
            },
        },
        links={"autoscalingGroupName": group},
    )
    return b.export()


def context_for(workload: str) -> dict[str, Any]:
    return {**CONTEXT, "workload": workload}
