"""The stack's KMS key policy, shared by training and serving keys, and the VPC flow-log key's policy.

The account administers the key through IAM, and AWS services may use it on behalf of this account's
service-linked roles only: the Auto Scaling (EBS volumes of launched instances), FSx S3-access and
Batch service-linked roles cannot be named before they exist, and a key policy naming a missing role
is rejected (MalformedPolicyDocumentException). So the statement takes any principal, narrowed by
`aws:PrincipalArn` to the service-role path every service-linked role lives under
(`role/aws-service-role/...`, IAM User Guide "Using service-linked roles"): an ordinary user or role
of the account cannot decrypt through S3 or EC2 without a KMS permission in its own IAM policy,
unlike the AWS managed aws/ebs pattern this replaces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

KEY_USE_ACTIONS = [
    "kms:Encrypt",
    "kms:Decrypt",
    "kms:ReEncrypt*",
    "kms:GenerateDataKey*",
    "kms:CreateGrant",
    "kms:DescribeKey",
]


def service_host(service: str, region: str) -> str:
    """`kms:ViaService` value of a service in a Region (AWS KMS developer guide, kms:ViaService).
    Not checked for the China partition, whose endpoints end in .amazonaws.com.cn."""
    return f"{service}.{region}.amazonaws.com"


def service_linked_roles(account_id: str, partition: str = "aws") -> str:
    """Every service-linked role of the account (their path is fixed by IAM)."""
    return f"arn:{partition}:iam::{account_id}:role/aws-service-role/*"


def account_administers_key(account_id: str, partition: str = "aws") -> dict[str, Any]:
    """The account root may do anything with the key, so IAM policies of the account decide who uses
    it (AWS KMS developer guide, "Default key policy": without it no IAM policy can grant the key)."""
    return {
        "Sid": "AccountAdministersKeyThroughIam",
        "Effect": "Allow",
        "Principal": {"AWS": f"arn:{partition}:iam::{account_id}:root"},
        "Action": "kms:*",
        "Resource": "*",
    }


def stack_key_policy(
    account_id: str,
    region: str,
    via_services: Sequence[str],
    *,
    sid: str,
    partition: str = "aws",
    extra_statements: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    hosts = [service_host(service, region) for service in via_services]
    return {
        "Version": "2012-10-17",
        "Statement": [
            account_administers_key(account_id, partition),
            {
                "Sid": sid,
                "Effect": "Allow",
                "Principal": {"AWS": "*"},
                "Action": KEY_USE_ACTIONS,
                "Resource": "*",
                "Condition": {
                    "StringEquals": {
                        "kms:CallerAccount": account_id,
                        "kms:ViaService": hosts[0] if len(hosts) == 1 else hosts,
                    },
                    "ArnLike": {"aws:PrincipalArn": service_linked_roles(account_id, partition)},
                },
            },
            *extra_statements,
        ],
    }


def flow_log_key_policy(account_id: str, region: str, partition: str) -> dict[str, Any]:
    """A VPC's flow-log key (network.flow_log_key): the account administers it through IAM (whoever reads the logs
    needs kms:Decrypt in their own policy), and log delivery may use it for this account's flow logs
    in this Region only. Without the delivery statement S3 refuses delivery's writes to the SSE-KMS
    bucket (VPC user guide, "Required key policy for use with SSE-KMS"; CloudWatch Logs user guide,
    "Logs sent to Amazon S3", "Amazon S3 bucket server-side encryption": these actions, with the
    aws:SourceAccount and aws:SourceArn confused-deputy conditions, in the key policy)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            account_administers_key(account_id, partition),
            {
                "Sid": "FlowLogDeliveryUsesKey",
                "Effect": "Allow",
                "Principal": {"Service": "delivery.logs.amazonaws.com"},
                "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"],
                "Resource": "*",
                "Condition": {
                    "StringEquals": {"aws:SourceAccount": account_id},
                    "ArnLike": {"aws:SourceArn": f"arn:{partition}:logs:{region}:{account_id}:*"},
                },
            },
        ],
    }
