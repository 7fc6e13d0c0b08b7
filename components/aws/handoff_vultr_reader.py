"""AWS training artifacts read from Vultr replicas (no instance identity to federate): an IAM role in the TRAINING
account, declared by the serving stack through a second aws provider pinned to it, allowed only GetObject under the
artifact prefixes, a ListBucket limited to them (s3:prefix) and Decrypt through S3 (components/handoff/aws_reader.py
read_policy), trusted by the deploying principal only; and one STS session of it per replica
(components/aws/handoff_session.py), started from the replica's clock, narrowed by a session policy to the same reads,
its credentials carried in the replica's user data (the fetch: components/handoff/s3_session.py).

The trust names the deployer (serving.artifactDeployer) by `aws:PrincipalArn`, with its account's root as the
principal: IAM pins a role named as a principal to its unique id, so an IAM Identity Center role that is re-provisioned
(same ARN, new id) would silently stop matching, while aws:PrincipalArn is the role's ARN, path included, for every
session of it (docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-principalarn;
reference_policies_elements_principal.html, "IAM role principals"). The deployer's own policies must allow
sts:AssumeRole on the role.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from accelstack.components.aws.handoff_session import MOST_SECONDS, AwsSession
from accelstack.components.handoff import ReaderValues
from accelstack.components.handoff.aws_reader import read_policy, training_provider
from accelstack.components.handoff.per_replica import PerReplicaReader
from accelstack.spec.handoff import ArtifactHandoff


def deployer_trust(deployer: str) -> dict[str, Any]:
    """sts:AssumeRole for exactly the deployer's role or user (by aws:PrincipalArn), nobody else of its account."""
    account = deployer.split(":")[4]
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "DeployerStartsReplicaSessions",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{account}:root"},
                "Action": "sts:AssumeRole",
                "Condition": {"ArnEquals": {"aws:PrincipalArn": deployer}},
            }
        ],
    }


@dataclass(frozen=True)
class S3SessionReader(PerReplicaReader):
    """The reader role's ARN; `replica_credentials` starts one replica's session."""

    role_arn: Any = None  # pulumi.Output[str]
    policy: str = ""
    role_grants: tuple[pulumi.Resource, ...] = ()

    def replica_credentials(
        self, name: str, index: int, clock: pulumi.Output[str], parent: pulumi.Resource
    ) -> pulumi.Output[list[str]]:
        session = AwsSession(
            f"{name}-replica-{index}-weights-session",
            role_arn=self.role_arn,
            session_name=f"accelstack-{name}-replica-{index}"[:64],
            policy=self.policy,
            duration_seconds=min(MOST_SECONDS, self.handoff.url_lifetime_minutes * 60),
            region=self.handoff.region,
            clock=clock,
            # The role's permissions first: a session started before them reads nothing until they land.
            opts=pulumi.ResourceOptions(parent=parent, depends_on=list(self.role_grants)),
        )
        self.grants.append(session)
        return pulumi.Output.all(session.access_key_id, session.secret_access_key, session.session_token).apply(
            lambda keys: [
                f"AWS_ACCESS_KEY_ID={keys[0]}",
                f"AWS_SECRET_ACCESS_KEY={keys[1]}",
                f"AWS_SESSION_TOKEN={keys[2]}",
            ]
        )


def reader(name: str, handoff: ArtifactHandoff, parent: pulumi.Resource) -> S3SessionReader:
    opts = pulumi.ResourceOptions(parent=parent, provider=training_provider(name, handoff, parent))
    policy = json.dumps(read_policy(handoff), separators=(",", ":"))
    role = aws.iam.Role(
        f"{name}-artifact-reader",
        name=f"accelstack-{name}-vultr-reader"[:64],
        assume_role_policy=json.dumps(deployer_trust(handoff.deployer)),
        description=f"accelstack serving {name} (vultr): per-replica sessions reading the published model prefix",
        max_session_duration=MOST_SECONDS,
        opts=opts,
    )
    read = aws.iam.RolePolicy(f"{name}-artifact-read", role=role.id, policy=policy, opts=opts)
    values = pulumi.Output.from_input(ReaderValues(token_audience=""))
    return S3SessionReader(handoff, values, [role, read], role_arn=role.arn, policy=policy, role_grants=(role, read))
