"""What the training pieces hand each other: the contract between network/storage, compute and scheduler.

Kept in one small module so `training.py` (compute) and `scheduler.py` (Slurm head node / AWS Batch)
can be written against it independently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

SSM_MANAGED_POLICY = "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"
EC2_ASSUME_ROLE_POLICY = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}


@dataclass
class TrainingHandles:
    """Built by TrainingCluster before compute and scheduler exist."""

    vpc_id: pulumi.Output[str]
    subnet_id: pulumi.Output[str]  # the ONE cluster subnet (EFA and cluster placement need one AZ)
    availability_zone: pulumi.Output[str]
    cluster_security_group_id: pulumi.Output[str]  # all traffic only from itself (EFA requirement)
    placement_group_name: pulumi.Output[str] | None  # None: no cluster placement group (one node, Capacity Block)
    instance_role_name: pulumi.Output[str]
    instance_profile_arn: pulumi.Output[str]
    kms_key_arn: pulumi.Output[str]
    dataset_bucket: pulumi.Output[str]
    checkpoint_bucket: pulumi.Output[str] | None
    lustre_dns_name: pulumi.Output[str] | None
    lustre_mount_name: pulumi.Output[str] | None
    # Builds an EFA launch template (all EFA interfaces, IMDSv2, encrypted EBS, no public IP):
    # (name, raw user data, optional image id); the managed scheduler (Batch) uses it for its compute env.
    make_launch_template: Callable[..., aws.ec2.LaunchTemplate] | None = None
    # Daly's checkpoint interval for this cluster (`accelstack.planner.training_plan`), for job defaults.
    checkpoint_interval_seconds: int | None = None
    # Every policy of the node role (schedulers append theirs): what launches nodes waits for them,
    # so a node never boots before its role may read the munge key, datasets or checkpoints.
    instance_role_policies: list[pulumi.Resource] = field(default_factory=list)
