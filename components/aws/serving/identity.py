"""The serving stack's identities: its KMS key (replica volumes, queues, WAF logs) and the replica
role (read the model prefix, drain the admission queue, complete its own launch hook)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_aws as aws

from accelstack.components.aws.handles import EC2_ASSUME_ROLE_POLICY
from accelstack.components.aws.kms import service_host, stack_key_policy
from accelstack.components.aws.serving.edge import waf_log_group_name
from accelstack.spec.copies import own_cloud_artifact_account
from accelstack.spec.handoff import store_cloud
from accelstack.spec.models import ServingSpec
from accelstack.spec.uris import split_bucket_uri

if TYPE_CHECKING:
    from accelstack.components.aws.serving.service import AwsServingParts


def serving_key_policy(
    account_id: str, region: str, partition: str, *, waf_log_group: str | None = None
) -> dict[str, Any]:
    """Replica volumes (encrypted EBS launched by Auto Scaling) use the key through EC2; the queues'
    producers and consumers use it through their IAM permissions. CloudWatch Logs encrypts the WAF
    log group with it: CreateLogGroup with a key fails unless the key policy lets the Region's logs
    service principal use it, for that log group only (CloudWatch Logs user guide, "Encrypt log data
    in CloudWatch Logs using AWS KMS", kms:EncryptionContext:aws:logs:arn)."""
    logs = []
    if waf_log_group:
        logs.append(
            {
                "Sid": "CloudWatchLogsEncryptsTheWafLogGroup",
                "Effect": "Allow",
                "Principal": {"Service": f"logs.{region}.amazonaws.com"},
                "Action": ["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
                "Resource": "*",
                "Condition": {
                    "ArnEquals": {
                        "kms:EncryptionContext:aws:logs:arn": f"arn:{partition}:logs:{region}:{account_id}:log-group:{waf_log_group}"
                    }
                },
            }
        )
    return stack_key_policy(
        account_id, region, ["ec2"], sid="EbsThroughEc2InThisAccount", partition=partition, extra_statements=logs
    )


# --- Cross-account model read -----------------------------------------------------------------------


def model_read_policy(serving: ServingSpec, account_id: str, partition: str) -> dict[str, Any]:
    """Read-only access to exactly the model's and adapters' prefixes: GetObject below each prefix,
    ListBucket limited to it, and KMS decrypt only through S3 (the training account's key)."""
    locations = sorted(
        {split_bucket_uri(u) for u in [serving.model.weights_uri, *(a.uri for a in serving.model.adapters)]}
    )
    # A copy's source account is another cloud's: the copied weights are this account's, under its own keys.
    key_account = own_cloud_artifact_account(serving.artifact_account, "aws") or account_id
    statements: list[dict[str, Any]] = [
        {
            "Sid": "ReadModelArtifacts",
            "Effect": "Allow",
            "Action": ["s3:GetObject"],
            "Resource": [f"arn:{partition}:s3:::{bucket}/{prefix}*" for bucket, prefix in locations],
        }
    ]
    for index, bucket in enumerate(sorted({bucket for bucket, _ in locations})):
        statements.append(
            {
                "Sid": f"ListModelPrefix{index}",
                "Effect": "Allow",
                "Action": ["s3:ListBucket"],
                "Resource": f"arn:{partition}:s3:::{bucket}",
                "Condition": {"StringLike": {"s3:prefix": [f"{p}*" for b, p in locations if b == bucket]}},
            }
        )
    # The artifact bucket (and so its key) may be in another Region than this stack: the spec names
    # its account, not its Region. S3 calls KMS in the bucket's Region, so any Region, via S3 only.
    statements.append(
        {
            "Sid": "DecryptModelArtifactsViaS3",
            "Effect": "Allow",
            "Action": ["kms:Decrypt"],
            "Resource": f"arn:{partition}:kms:*:{key_account}:key/*",
            "Condition": {"StringLike": {"kms:ViaService": service_host("s3", "*")}},
        }
    )
    return {"Version": "2012-10-17", "Statement": statements}


# KMS: EBS volumes and queues. Auto Scaling launches replicas as its service-linked role, which
# must be able to use the key or instances with encrypted volumes fail to launch. The role is
# not named here: it exists only once the account's first group is created, and KMS refuses a
# key policy naming a missing principal (MalformedPolicyDocumentException) -- exactly the case
# in a fresh serving account. The statement is the AWS managed aws/ebs key's: any principal of
# this account, only through EC2 in this Region (the service-linked role calls KMS via EC2).
def kms_key(svc: AwsServingParts, name: str) -> aws.kms.Key:
    policy = serving_key_policy(svc.account_id, svc.region, svc.partition, waf_log_group=waf_log_group_name(name))
    key = aws.kms.Key(
        f"{name}-key",
        description=f"accelstack serving {name}: replica volumes and admission queues",
        enable_key_rotation=True,
        deletion_window_in_days=30,
        policy=json.dumps(policy),
        # Encrypts replica volumes (weights) and queued requests: deleting it loses them.
        opts=pulumi.ResourceOptions.merge(svc.child, pulumi.ResourceOptions(protect=True, retain_on_delete=True)),
    )
    aws.kms.Alias(
        f"{name}-key",
        name=f"alias/accelstack-{name}-serving",
        target_key_id=key.key_id,
        # Alias names are unique per account and Region: a replacement must free the name first.
        opts=pulumi.ResourceOptions(parent=svc.parent, delete_before_replace=True),
    )
    return key


def model_read_grant(svc: AwsServingParts, name: str, role: aws.iam.Role) -> list[aws.iam.RolePolicy]:
    """Weights on S3: read the model prefixes. Weights on another cloud (accelstack.spec.handoff): the reader there
    trusts this role; from Azure, the role asks STS for its signed web identity token (outbound federation)."""
    serving = svc.serving
    if serving.model.weights_uri.startswith("s3://"):
        policy = model_read_policy(serving, svc.account_id, svc.partition)
    elif store_cloud(serving.model.weights_uri) == "azure":
        statement = {
            "Sid": "OwnWebIdentityToken",
            "Effect": "Allow",
            "Action": "sts:GetWebIdentityToken",
            "Resource": "*",
        }
        policy = {"Version": "2012-10-17", "Statement": [statement]}
    else:
        return []  # Cloud Storage: the pool signs nothing; the instance role's own credentials sign GetCallerIdentity
    return [aws.iam.RolePolicy(f"{name}-replica-model-read", role=role.id, policy=json.dumps(policy), opts=svc.child)]


def replica_role(svc: AwsServingParts, name: str, group_name: str) -> aws.iam.InstanceProfile:
    partition, region, account = svc.partition, svc.region, svc.account_id
    role = aws.iam.Role(
        f"{name}-replica",
        assume_role_policy=json.dumps(EC2_ASSUME_ROLE_POLICY),
        description="accelstack serving replica: read the model prefix, drain the admission queue",
        opts=svc.child,
    )
    svc.replica_role_policies = [
        aws.iam.RolePolicyAttachment(
            f"{name}-replica-{policy}",
            role=role.name,
            policy_arn=f"arn:{partition}:iam::aws:policy/{policy}",
            opts=svc.child,
        )
        for policy in ("AmazonSSMManagedInstanceCore", "CloudWatchAgentServerPolicy")
    ]
    svc.replica_role = role
    model_read = model_read_grant(svc, name, role)
    launch_hook = {
        "Sid": "CompleteOwnLaunchHook",
        "Effect": "Allow",
        "Action": ["autoscaling:CompleteLifecycleAction", "autoscaling:RecordLifecycleActionHeartbeat"],
        "Resource": f"arn:{partition}:autoscaling:{region}:{account}:autoScalingGroup:*:autoScalingGroupName/{group_name}",
    }
    queues = svc.queues
    if queues is None:  # admission on the replicas: no queue to drain, only the launch hook to complete
        hook_policy = aws.iam.RolePolicy(
            f"{name}-replica-launch-hook",
            role=role.id,
            policy=json.dumps({"Version": "2012-10-17", "Statement": [launch_hook]}),
            opts=svc.child,
        )
        svc.replica_role_policies += [*model_read, hook_policy]
        return aws.iam.InstanceProfile(f"{name}-replica", role=role.name, opts=svc.child)
    queue_policy = pulumi.Output.all(queues["requests"].arn, queues["responses"].arn, svc.key.arn).apply(
        lambda arns: json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Sid": "DrainRequests",
                        "Effect": "Allow",
                        "Action": [
                            "sqs:ReceiveMessage",
                            "sqs:DeleteMessage",
                            "sqs:ChangeMessageVisibility",
                            "sqs:GetQueueAttributes",
                        ],
                        "Resource": arns[0],
                    },
                    {"Sid": "SendResponses", "Effect": "Allow", "Action": ["sqs:SendMessage"], "Resource": arns[1]},
                    {
                        "Sid": "QueueEncryption",
                        "Effect": "Allow",
                        "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
                        "Resource": arns[2],
                    },
                    launch_hook,
                ],
            }
        )
    )
    queues_policy = aws.iam.RolePolicy(f"{name}-replica-queues", role=role.id, policy=queue_policy, opts=svc.child)
    svc.replica_role_policies += [*model_read, queues_policy]
    return aws.iam.InstanceProfile(f"{name}-replica", role=role.name, opts=svc.child)
