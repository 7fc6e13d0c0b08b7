"""The stack's KMS key policy, shared by training and serving keys.

The account administers the key through IAM, and AWS services may use it on behalf of principals in
this account only (like the AWS managed aws/ebs and aws/s3 keys): the Auto Scaling and FSx
service-linked roles cannot be named before they exist, and a key policy naming a missing role is
rejected (MalformedPolicyDocumentException).
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
            {
                "Sid": "AccountAdministersKeyThroughIam",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:{partition}:iam::{account_id}:root"},
                "Action": "kms:*",
                "Resource": "*",
            },
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
                    }
                },
            },
            *extra_statements,
        ],
    }
