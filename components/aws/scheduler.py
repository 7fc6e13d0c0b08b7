"""Slurm on AWS: `SlurmCluster` is the Slurm recipe (accelstack.components.recipes.slurm) over `AwsSlurmParts`;
AWS Batch, the managed scheduler, is in batch.py. The training recipe hands both the handles of the network,
storage and IAM its parts built (handles.py).

A head node with a fixed private address and its slurmctld state on a protected encrypted volume, the munge key
in Secrets Manager under the stack key (readable only by the cluster's and the head's roles), Slurm's
configuration files in an SSM parameter under the stack key (readable only by the head's role), Slurm ports
opened only between the head and the cluster security group, and the compute cloud-init from the neutral
generator (`accelstack.components.slurm`).
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_random as random

from accelstack.clouds.base import Feature
from accelstack.components import slurm
from accelstack.components.aws.boot_data import ec2_user_data_base64, is_compressed
from accelstack.components.aws.handles import EC2_ASSUME_ROLE_POLICY, SSM_MANAGED_POLICY, TrainingHandles
from accelstack.components.aws.kms import service_host
from accelstack.components.aws.node_platform import SLURM_CONFIG_PARAMETER, AwsNodePlatform
from accelstack.components.aws.slurm_accounting import accounting_database
from accelstack.components.node_platform import NodePlatform
from accelstack.components.recipes.implements import implements
from accelstack.components.recipes.slurm import (
    AccountingDatabase,
    HeadNode,
    MungeSecret,
    NodeRole,
    SlurmConfig,
    SlurmParts,
    SlurmRecipe,
    StateVolume,
)

# Same Slurm major on head and nodes: Ubuntu 24.04 ships Slurm 23.11 (dynamic nodes need >= 22.05;
# Ubuntu 22.04's 21.08 lacks `slurmd -Z`). Compute nodes use training.NODE_IMAGE, a 24.04 image too.
# Canonical's public SSM parameter, resolved to an AMI id at deploy time (see `head_image_id`).
GET_PARAMETER_TOKEN = "aws:ssm/getParameter:getParameter"
HEAD_IMAGE_PARAMETER = "/aws/service/canonical/ubuntu/server/24.04/stable/current/{arch}/hvm/ebs-gp3/ami-id"
HEAD_ROOT_GIB = 100
STATE_VOLUME_GIB = 50
STATE_DEVICE_NAME = "/dev/sdf"
# The head takes a fixed address near the top of the cluster subnet, so replacing it (a change of its boot
# setup or a deliberate `--replace`) keeps the address the compute nodes were given.
HEAD_ADDRESS_FROM_TOP = 6
LUSTRE_PORTS = ((988, 988), (1018, 1023))
# Slurm's configuration files (config_delivery's bundle): a SecureString under the stack key. PutParameter updates
# it in place, each value a new parameter version (terraform-provider-aws internal/service/ssm/parameter.go: only
# name, data_type and a tier downgrade force a new parameter). Intelligent-Tiering: the standard tier (free, 4 KB)
# while the bundle fits, the advanced one (8 KB) if it ever outgrows it, rather than a failed `up`
# (docs.aws.amazon.com/systems-manager/latest/userguide/parameter-store-advanced-parameters.html).
SLURM_CONFIG_TIER = "Intelligent-Tiering"


def head_address(subnet_cidr: str) -> str:
    network = ipaddress.ip_network(subnet_cidr)
    # AWS reserves the last address of every subnet (and the first four).
    return str(network.broadcast_address - HEAD_ADDRESS_FROM_TOP)


def head_arch(instance_type: str) -> str:
    """Graviton families carry a `g` right after the generation (m7g, c7gn, r8gd)."""
    return "arm64" if re.match(r"^[a-z]+\d+g", instance_type) else "amd64"


def head_image_id(instance_type: str, parent: pulumi.Resource) -> pulumi.Output[str]:
    """The head's AMI id, read from Canonical's SSM parameter through the stack's provider.

    Not `resolve:ssm:` in `ami`: an `aws.ec2.Instance` with a root_block_device looks the image up
    with DescribeImages before launch, which rejects the alias (InvalidAMIID.Malformed), and the
    instance reads back the real ami-... id, so the alias would force a replacement on every `up`
    (hashicorp/terraform-provider-aws#43488, #43364).

    The invoke by its token, as `aws.ssm.get_parameter_output` sends it: that wrapper's package imports every
    SSM resource class (27-46 ms by `python -X importtime`) for one string. The parent's explicit provider answers."""
    parameter = HEAD_IMAGE_PARAMETER.format(arch=head_arch(instance_type))
    result = pulumi.runtime.invoke_output(
        GET_PARAMETER_TOKEN, {"name": parameter}, opts=pulumi.InvokeOutputOptions(parent=parent)
    )
    return result.apply(lambda found: str(found["value"]))


def secret_read_policy(secret_arn: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "ReadMungeKey",
                    "Effect": "Allow",
                    "Action": ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"],
                    "Resource": [secret_arn],
                }
            ],
        }
    )


def head_policy_document(secret_arn: str, kms_key_arn: str, region: str) -> str:
    """The head reads the munge key; the secret is encrypted with the stack key, so GetSecretValue
    also needs kms:Decrypt on it, through Secrets Manager only."""
    statements = json.loads(secret_read_policy(secret_arn))["Statement"]
    statements.append(
        {
            "Sid": "DecryptMungeKey",
            "Effect": "Allow",
            "Action": ["kms:Decrypt"],
            "Resource": [kms_key_arn],
            "Condition": {"StringEquals": {"kms:ViaService": service_host("secretsmanager", region)}},
        }
    )
    return json.dumps({"Version": "2012-10-17", "Statement": statements})


def config_read_policy_document(parameter_arn: str, kms_key_arn: str, region: str) -> str:
    """The head reads the Slurm configuration parameter, decrypted through SSM with the stack key; nothing else of
    Parameter Store."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "ReadSlurmConfig",
                    "Effect": "Allow",
                    "Action": ["ssm:GetParameter"],
                    "Resource": [parameter_arn],
                },
                {
                    "Sid": "DecryptSlurmConfig",
                    "Effect": "Allow",
                    "Action": ["kms:Decrypt"],
                    "Resource": [kms_key_arn],
                    "Condition": {"StringEquals": {"kms:ViaService": service_host("ssm", region)}},
                },
            ],
        }
    )


def head_data_policy_document(
    dataset_bucket_arn: str | None, checkpoint_bucket_arn: str | None, kms_key_arn: str
) -> dict[str, Any]:
    """What the head needs where the file system cannot link to S3 itself: read the datasets it imports, write
    (never delete) the checkpoints it exports, with the stack key. FSx for Lustre's tiers link through data
    repository associations, so today's stacks never need it; the Slurm recipe asks whenever the generator does."""
    statements: list[dict[str, Any]] = []
    buckets = [arn for arn in (dataset_bucket_arn, checkpoint_bucket_arn) if arn]
    statements.append({"Sid": "ListBuckets", "Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": buckets})
    if dataset_bucket_arn:
        statements.append(
            {
                "Sid": "ReadDatasets",
                "Effect": "Allow",
                "Action": ["s3:GetObject"],
                "Resource": [f"{dataset_bucket_arn}/*"],
            }
        )
    if checkpoint_bucket_arn:
        statements.append(
            {
                "Sid": "WriteCheckpoints",
                "Effect": "Allow",
                "Action": ["s3:PutObject", "s3:AbortMultipartUpload"],
                "Resource": [f"{checkpoint_bucket_arn}/*"],
            }
        )
    statements.append(
        {
            "Sid": "UseStackKey",
            "Effect": "Allow",
            "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
            "Resource": [kms_key_arn],
        }
    )
    return {"Version": "2012-10-17", "Statement": statements}


class AwsSlurmParts(SlurmParts[TrainingHandles]):
    """Slurm's parts on AWS: the munge key in Secrets Manager under the stack key, the head's own role (Session
    Manager and the key, nothing of the data), its security group, an encrypted gp3 state volume, and an
    Ubuntu head at a fixed address near the top of the cluster subnet."""

    def munge_secret(self, key: random.RandomBytes) -> MungeSecret:
        """Stored under the stack key; the nodes read it at boot with their role. Never in user data."""
        name, handles = self.ctx.name, self.handles
        self.secret = aws.secretsmanager.Secret(
            f"{name}-munge-key",
            description=f"accelstack {name}: Slurm munge key (read by the cluster's instance role at boot)",
            kms_key_id=handles.kms_key_arn,
            recovery_window_in_days=7,
            opts=self.ctx.child,
        )
        aws.secretsmanager.SecretVersion(
            f"{name}-munge-key",
            secret_id=self.secret.id,
            # mypy solves Output.secret's Input[T] against an Output as Never; it is Output[str].
            secret_binary=pulumi.Output.secret(key.base64),  # type: ignore[arg-type]
            opts=pulumi.ResourceOptions(parent=self.ctx.parent, additional_secret_outputs=["secretBinary"]),
        )
        return MungeSecret(self.secret.arn, self.secret.arn)

    def nodes_read_secret(self, secret: MungeSecret) -> pulumi.Resource:
        return aws.iam.RolePolicy(
            f"{self.ctx.name}-read-munge-key",
            role=self.handles.instance_role_name,
            policy=secret.reference.apply(secret_read_policy),
            opts=self.ctx.child,
        )

    def head_identity(self, secret: MungeSecret) -> list[pulumi.Resource]:
        self.head_profile, grants = self._head_role(self.ctx.name, self.handles, self.ctx.child)
        return grants

    def slurm_config(self, bundle: str) -> SlurmConfig:
        name, handles = self.ctx.name, self.handles
        self.config_parameter = aws.ssm.Parameter(
            f"{name}-slurm-config",
            name=SLURM_CONFIG_PARAMETER.format(stack=name),
            description=f"accelstack {name}: Slurm configuration files (read by the head node, applied in place)",
            type="SecureString",
            key_id=handles.kms_key_arn,
            tier=SLURM_CONFIG_TIER,
            value=bundle,
            opts=self.ctx.child,
        )
        return SlurmConfig(self.config_parameter.name)

    def head_reads_config(self, config: SlurmConfig) -> list[pulumi.Resource]:
        region = self.ctx.spec.account.region
        return [
            aws.iam.RolePolicy(
                f"{self.ctx.name}-head-read-slurm-config",
                role=self.head_role.id,
                policy=pulumi.Output.all(self.config_parameter.arn, self.handles.kms_key_arn).apply(
                    lambda arns: config_read_policy_document(arns[0], arns[1], region)
                ),
                opts=self.ctx.child,
            )
        ]

    def head_reads_datasets(self) -> list[pulumi.Resource]:
        return [self._head_data_policy("datasets", self.handles.dataset_bucket, None)]

    def head_writes_checkpoints(self) -> list[pulumi.Resource]:
        checkpoints = self.handles.checkpoint_bucket
        assert checkpoints is not None  # the generator exports only to a stated checkpoint store
        return [self._head_data_policy("checkpoints", None, checkpoints)]

    def _head_data_policy(
        self, label: str, datasets: pulumi.Input[str] | None, checkpoints: pulumi.Input[str] | None
    ) -> pulumi.Resource:
        arn = "arn:aws:s3:::{}".format
        return aws.iam.RolePolicy(
            f"{self.ctx.name}-head-{label}",
            role=self.head_role.id,
            policy=pulumi.Output.all(datasets or "", checkpoints or "", self.handles.kms_key_arn).apply(
                lambda v: json.dumps(
                    head_data_policy_document(arn(v[0]) if v[0] else None, arn(v[1]) if v[1] else None, v[2])
                )
            ),
            opts=self.ctx.child,
        )

    def head_network(self) -> None:
        self.head_sg = self._security_groups(self.ctx.name, self.handles, self.ctx.child)

    @implements(Feature.SLURM_ACCOUNTING)
    def accounting_database(self, password: random.RandomPassword) -> AccountingDatabase:
        return accounting_database(self, password)

    def state_volume(self) -> StateVolume:
        name, handles = self.ctx.name, self.handles
        self.volume = aws.ebs.Volume(
            f"{name}-slurmctld-state",
            availability_zone=handles.availability_zone,
            size=STATE_VOLUME_GIB,
            type="gp3",
            encrypted=True,
            kms_key_id=handles.kms_key_arn,
            tags={"Name": f"{name}-slurmctld-state"},
            opts=pulumi.ResourceOptions(parent=self.ctx.parent, protect=True, retain_on_delete=True),
        )
        return StateVolume(self.volume.id)

    def head_boot_address(self) -> pulumi.Input[str]:
        """ "": the head reads its own address from IMDS (its user data predates the AWS-assigned fixed address)."""
        return ""

    def head_node(self, user_data: pulumi.Output[str], waits_for: list[pulumi.Resource]) -> HeadNode:
        ctx, handles = self.ctx, self.handles
        name, parent = ctx.name, ctx.parent
        head_node = ctx.spec.training.scheduler.head_node
        subnet = aws.ec2.get_subnet_output(id=handles.subnet_id, opts=pulumi.InvokeOptions(parent=parent))
        head = aws.ec2.Instance(
            f"{name}-head",
            ami=head_image_id(head_node.instance_type, parent),
            instance_type=head_node.instance_type,
            subnet_id=handles.subnet_id,
            private_ip=subnet.cidr_block.apply(head_address),
            associate_public_ip_address=False,
            vpc_security_group_ids=[self.head_sg.id],
            iam_instance_profile=self.head_profile.name,
            metadata_options=aws.ec2.InstanceMetadataOptionsArgs(
                http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=1
            ),
            root_block_device=aws.ec2.InstanceRootBlockDeviceArgs(
                volume_type="gp3", volume_size=HEAD_ROOT_GIB, encrypted=True, kms_key_id=handles.kms_key_arn
            ),
            # Raw where it fits EC2's 16 KB, else gzip-compressed (the other input is None, so absent).
            user_data=user_data.apply(lambda text: None if is_compressed(text) else text),
            user_data_base64=user_data.apply(lambda text: ec2_user_data_base64(text) if is_compressed(text) else None),
            # cloud-init reads user data at first boot only: a change of the head's setup rebuilds it (its state
            # is on the volume and its address fixed). slurm.conf is not in it (the SSM parameter is), so the
            # node count, node type and partitions never do.
            user_data_replace_on_change=True,
            # One-minute CloudWatch metrics (Checkov CKV_AWS_126): a stuck controller shows within
            # minutes, not five. Changed in place (MonitorInstances), never a rebuild.
            monitoring=True,
            tags={"Name": f"{name}-head", "accelstack:role": "slurm-head"},
            # delete_before_replace: the fixed address. ignore_changes ami: Canonical republishes the
            # parameter every few weeks and a new image must not rebuild the controller on the next
            # `up`; roll it deliberately with `pulumi up --replace <head urn>`.
            # depends_on: the head reads the munge key at boot with its role.
            opts=pulumi.ResourceOptions(
                parent=parent, delete_before_replace=True, ignore_changes=["ami"], depends_on=waits_for
            ),
        )
        aws.ec2.VolumeAttachment(
            f"{name}-slurmctld-state",
            device_name=STATE_DEVICE_NAME,
            volume_id=self.volume.id,
            instance_id=head.id,
            # The state file system is mounted: a live detach sits "busy" until the provider times
            # out. Stopping the head first unmounts it cleanly (the head is being replaced anyway).
            stop_instance_before_detaching=True,
            # A volume attaches to one instance at a time (VolumeInUse): detach before attaching anew.
            opts=pulumi.ResourceOptions(parent=parent, delete_before_replace=True),
        )
        return HeadNode(head.id, head.private_ip)

    def platform(self, role: NodeRole) -> pulumi.Output[NodePlatform]:
        return pulumi.Output.from_input(AwsNodePlatform(self.ctx.spec.account.region))

    def _head_role(
        self, name: str, handles: TrainingHandles, child: pulumi.ResourceOptions
    ) -> tuple[aws.iam.InstanceProfile, list[pulumi.Resource]]:
        """The head's own role: Session Manager and the munge key, nothing of the data. The compute
        role writes checkpoints; the controller has no reason to."""
        role = self.head_role = aws.iam.Role(
            f"{name}-head",
            assume_role_policy=json.dumps(EC2_ASSUME_ROLE_POLICY),
            description=f"accelstack {name}: Slurm head node (munge key, Session Manager)",
            opts=child,
        )
        ssm = aws.iam.RolePolicyAttachment(
            f"{name}-head-ssm", role=role.name, policy_arn=SSM_MANAGED_POLICY, opts=child
        )
        munge = aws.iam.RolePolicy(
            f"{name}-head-read-munge-key",
            role=role.id,
            policy=pulumi.Output.all(self.secret.arn, handles.kms_key_arn).apply(
                lambda arns: head_policy_document(arns[0], arns[1], self.ctx.spec.account.region)
            ),
            opts=child,
        )
        profile = aws.iam.InstanceProfile(f"{name}-head", role=role.name, opts=child)
        return profile, [ssm, munge]

    def _security_groups(
        self, name: str, handles: TrainingHandles, child: pulumi.ResourceOptions
    ) -> aws.ec2.SecurityGroup:
        """The head gets its own group: slurmctld and srun reachable only from the cluster group; the
        cluster group lets the head reach slurmd, srun's tasks and Lustre."""
        head_sg = aws.ec2.SecurityGroup(
            f"{name}-head",
            vpc_id=handles.vpc_id,
            description=f"accelstack {name}: Slurm head node",
            tags={"Name": f"{name}-head"},
            opts=child,
        )
        aws.vpc.SecurityGroupEgressRule(
            f"{name}-head-egress",
            security_group_id=head_sg.id,
            ip_protocol="-1",
            cidr_ipv4="0.0.0.0/0",
            description="package mirrors, Secrets Manager, SSM",
            opts=child,
        )
        srun = slurm.SRUN_PORT_RANGE
        # Lustre's LNet ports only where there is a Lustre file system to reach.
        lustre_ports = LUSTRE_PORTS if handles.lustre_dns_name is not None else ()
        to_head = [("slurmctld", slurm.SLURMCTLD_PORT, slurm.SLURMCTLD_PORT), ("srun", *srun)]
        to_head += [(f"lustre-{low}", low, high) for low, high in lustre_ports]
        for label, low, high in to_head:
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-head-from-cluster-{label}",
                security_group_id=head_sg.id,
                referenced_security_group_id=handles.cluster_security_group_id,
                ip_protocol="tcp",
                from_port=low,
                to_port=high,
                description=f"{label} from the cluster nodes",
                opts=child,
            )
        to_cluster = [("slurmd", slurm.SLURMD_PORT, slurm.SLURMD_PORT), ("srun", *srun)]
        to_cluster += [(f"lustre-{low}", low, high) for low, high in lustre_ports]
        for label, low, high in to_cluster:
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-cluster-from-head-{label}",
                security_group_id=handles.cluster_security_group_id,
                referenced_security_group_id=head_sg.id,
                ip_protocol="tcp",
                from_port=low,
                to_port=high,
                description=f"{label} from the Slurm head node",
                opts=child,
            )
        return head_sg


class SlurmCluster(SlurmRecipe[TrainingHandles]):
    """Slurm on AWS: the Slurm recipe over `AwsSlurmParts`."""

    cloud = "aws"
    parts_class = AwsSlurmParts
    registered_secret_output = "mungeKeySecretArn"
