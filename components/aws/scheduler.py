"""Training schedulers on AWS: Slurm (head node + dynamic compute nodes) or AWS Batch (managed).

The training recipe builds the scheduler the spec names from the handles of the network, storage and IAM
its parts built (see `handles.py`): `SlurmCluster` (the Slurm recipe over `AwsSlurmParts`) or `BatchScheduler`. Slurm: a head node with a fixed private address and its slurmctld state on
a protected encrypted volume, the munge key as a Pulumi secret in Secrets Manager (readable only by
the cluster's instance role), Slurm ports opened only between the head and the cluster security
group, and the compute cloud-init (from `accelstack.components.slurm`). Managed: an AWS Batch multi-node
parallel compute environment in the cluster subnet and placement group, on the EFA launch template.
"""

from __future__ import annotations

import ipaddress
import json
import re
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_random as random

from accelstack.clouds.aws.catalog import ACCELERATED_INSTANCES
from accelstack.components import slurm
from accelstack.components.aws.handles import EC2_ASSUME_ROLE_POLICY, SSM_MANAGED_POLICY, TrainingHandles
from accelstack.components.aws.kms import service_host
from accelstack.components.aws.node_platform import AwsNodePlatform
from accelstack.components.base import SchedulerResult
from accelstack.components.node_platform import NodePlatform
from accelstack.components.recipes.slurm import (
    HeadNode,
    MungeSecret,
    NodeRole,
    SlurmParts,
    SlurmRecipe,
    StateVolume,
)
from accelstack.spec.models import TrainingStack

# Same Slurm major on head and nodes: Ubuntu 24.04 ships Slurm 23.11 (dynamic nodes need >= 22.05;
# Ubuntu 22.04's 21.08 lacks `slurmd -Z`). Compute nodes use training.NODE_IMAGE, a 24.04 image too.
# Canonical's public SSM parameter, resolved to an AMI id at deploy time (see `head_image_id`).
GET_PARAMETER_TOKEN = "aws:ssm/getParameter:getParameter"
HEAD_IMAGE_PARAMETER = "/aws/service/canonical/ubuntu/server/24.04/stable/current/{arch}/hvm/ebs-gp3/ami-id"
HEAD_ROOT_GIB = 100
STATE_VOLUME_GIB = 50
STATE_DEVICE_NAME = "/dev/sdf"
# The head takes a fixed address near the top of the cluster subnet, so replacing it (for a config
# change) keeps the address the compute nodes were given.
HEAD_ADDRESS_FROM_TOP = 6
LUSTRE_PORTS = ((988, 988), (1018, 1023))
# AWS Batch: ECS-optimized GPU image (has the ECS agent Batch needs), chosen by Batch from
# image_type: the launch template carries no image (an image there would win over image_type).
# Amazon Linux 2023: AWS ends support for the AL2 ECS images, and Batch's default moves to AL2023
# (Batch API Ec2Configuration). EFA software and Lustre come from the launch template's user data.
BATCH_IMAGE_TYPE = "ECS_AL2023_NVIDIA"
BATCH_ROOT_DEVICE = "/dev/xvda"  # Amazon Linux's root device name (Ubuntu's is /dev/sda1)
# The EFA installer (EC2 User Guide, "Get started with EFA and NCCL": install the EFA software).
EFA_INSTALLER_URL = "https://efa-installer.amazonaws.com/aws-efa-installer-latest.tar.gz"


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


def efa_device_count(instance_type: str) -> int:
    itype = ACCELERATED_INSTANCES.get(instance_type)
    return itype.fabric_interfaces if itype is not None else 0


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
            user_data=user_data,
            # slurm.conf lives in user data: a Slurm change rebuilds the head (and only a Slurm
            # change: the user data carries nothing else of the spec); its state is on the volume
            # and its address is fixed, so nothing else changes.
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


def efa_boothook() -> str:
    """The EFA driver and libfabric on a Batch node, before the ECS agent starts: a cloud-boothook
    running the EFA installer once per instance, as aws-samples/aws-batch-efa's launch template does
    (AWS Batch EFA guide: "The AMI has the EFA driver loaded"). Skipped where the image has it."""
    install = (
        f"test -x /opt/amazon/efa/bin/fi_info || {{ cd /tmp && curl -fsSL --retry 5 {EFA_INSTALLER_URL} "
        "-o aws-efa-installer.tar.gz && tar -xf aws-efa-installer.tar.gz && cd aws-efa-installer && ./efa_installer.sh -y; }"
    )
    return f"#cloud-boothook\ncloud-init-per once accelstack_efa_install bash -c '{install}'\n"


def batch_user_data(cloud_config: str, boothook: str | None = None) -> str:
    """AWS Batch only takes launch-template user data as MIME multi-part."""
    message = MIMEMultipart(boundary="==ACCELSTACK==")
    if boothook is not None:
        message.attach(MIMEText(boothook, "cloud-boothook"))
    message.attach(MIMEText(cloud_config, "cloud-config"))
    return message.as_string()


def batch_cloud_config(mount_path: str | None, dns_name: str, mount_name: str, checkpoints: str | None) -> str:
    """Amazon Linux 2023 (the ECS GPU image): Lustre client from its repositories, mounted where jobs expect it."""
    if mount_path is None:
        return "#cloud-config\n{}\n"
    source = f"{dns_name}@tcp:/{mount_name}"
    commands = [
        "dnf install -y lustre-client",
        f"mkdir -p {mount_path}",
        f"mount -t lustre -o {slurm.LUSTRE_MOUNT_OPTIONS} {source} {mount_path}",
    ]
    if checkpoints:
        commands.append(f"install -d -m 1777 {checkpoints}")
    return "#cloud-config\n" + json.dumps({"runcmd": [["bash", "-c", c] for c in commands]}, indent=1) + "\n"


def efa_devices(instance_type: str) -> list[dict]:
    """Batch container devices for every EFA of the instance (AWS Batch EFA guide: hostPath and
    containerPath /dev/infiniband/uverbsN, permissions READ, WRITE, MKNOD)."""
    return [
        {
            "hostPath": f"/dev/infiniband/uverbs{index}",
            "containerPath": f"/dev/infiniband/uverbs{index}",
            "permissions": ["READ", "WRITE", "MKNOD"],
        }
        for index in range(efa_device_count(instance_type))
    ]


def multinode_job_properties(spec: TrainingStack, image: str = "public.ecr.aws/docker/library/ubuntu:24.04") -> dict:
    """Node properties of the multi-node training template: every node gets all the instance's GPUs
    and the Lustre mount as a host volume (checkpoints included)."""
    training = spec.training
    itype = ACCELERATED_INSTANCES.get(training.nodes.instance_type)
    resources = []
    if itype is not None:
        resources.append({"type": "VCPU", "value": str(max(1, itype.vcpus - 4))})
        resources.append({"type": "MEMORY", "value": str(int(itype.memory_gib * 1024 * 0.9))})
        if itype.vendor == "nvidia":
            resources.append({"type": "GPU", "value": str(itype.accelerators)})
    lustre = training.storage.lustre
    volumes, mounts = [], []
    if lustre is not None:
        volumes.append({"name": "lustre", "host": {"sourcePath": lustre.mount_path}})
        mounts.append({"sourceVolume": "lustre", "containerPath": lustre.mount_path, "readOnly": False})
    container = {
        "image": image,
        "command": ["bash", "-c", "echo replace with your training command; sleep 60"],
        "resourceRequirements": resources,
        "volumes": volumes,
        "mountPoints": mounts,
        # Every EFA device (one per network card: 32 on p5.48xlarge; mapping only uverbs0 leaves the
        # job one card's bandwidth) and huge shared memory for NCCL.
        "linuxParameters": {"sharedMemorySize": 65536, "devices": efa_devices(training.nodes.instance_type)},
        "ulimits": [{"name": "memlock", "softLimit": -1, "hardLimit": -1}],
        "privileged": False,
    }
    return {
        "numNodes": training.nodes.count,
        "mainNode": 0,
        "nodeRangeProperties": [{"targetNodes": f"0:{training.nodes.count - 1}", "container": container}],
    }


class BatchScheduler(pulumi.ComponentResource):
    def __init__(self, spec: TrainingStack, digest: str, handles: TrainingHandles, opts: pulumi.ResourceOptions):
        super().__init__("accelstack:aws:BatchScheduler", f"{spec.stack}-batch", None, opts)
        training = spec.training
        assert handles.make_launch_template is not None
        name = spec.stack
        child = pulumi.ResourceOptions(parent=self)
        itype = ACCELERATED_INSTANCES.get(training.nodes.instance_type)
        vcpus = itype.vcpus if itype else 1
        if training.nodes.capacity == "spot":
            # CreateComputeEnvironment: "Multi-node parallel jobs aren't supported on Spot Instances";
            # a SPOT environment would leave every multi-node job RUNNABLE forever.
            raise ValueError(
                "training.nodes.capacity: spot is not supported with training.scheduler.kind managed "
                "(AWS Batch multi-node parallel jobs cannot run on Spot); use on-demand or capacity-block, "
                "or scheduler kind slurm"
            )

        # Batch's EC2 instances join ECS: the cluster's instance role also needs the ECS agent's policy.
        handles.instance_role_policies.append(
            aws.iam.RolePolicyAttachment(
                f"{name}-batch-ecs-instance",
                role=handles.instance_role_name,
                policy_arn="arn:aws:iam::aws:policy/service-role/AmazonEC2ContainerServiceforEC2Role",
                opts=child,
            )
        )
        lustre = training.storage.lustre
        checkpoints = training.storage.checkpoints
        lustre_dns = handles.lustre_dns_name or pulumi.Output.from_input("")
        lustre_mount = handles.lustre_mount_name or pulumi.Output.from_input("")
        user_data = pulumi.Output.all(lustre_dns, lustre_mount).apply(
            lambda v: batch_user_data(
                batch_cloud_config(
                    lustre.mount_path if lustre else None, v[0], v[1], checkpoints.path if checkpoints else None
                ),
                efa_boothook() if efa_device_count(training.nodes.instance_type) else None,
            )
        )
        template = handles.make_launch_template(f"{name}-batch", user_data, None, BATCH_ROOT_DEVICE)
        self.compute_environment = aws.batch.ComputeEnvironment(
            f"{name}-batch",
            type="MANAGED",
            # No service_role: Batch uses its service-linked role (AWSServiceRoleForBatch).
            compute_resources=aws.batch.ComputeEnvironmentComputeResourcesArgs(
                type="EC2",  # multi-node parallel jobs run on EC2 (not Spot) environments only
                # BEST_FIT_PROGRESSIVE keeps to the one instance type and placement group.
                allocation_strategy="BEST_FIT_PROGRESSIVE",
                min_vcpus=0,
                max_vcpus=training.nodes.count * vcpus,
                instance_types=[training.nodes.instance_type],
                subnets=[handles.subnet_id],
                # No security_group_ids: the launch template's EFA interfaces carry the cluster group,
                # and Batch refuses both ("Either compute environment Security Groups or Network
                # Interfaces in Launch template are exclusively allowed").
                placement_group=handles.placement_group_name,
                instance_role=handles.instance_profile_arn,
                launch_template=aws.batch.ComputeEnvironmentComputeResourcesLaunchTemplateArgs(
                    launch_template_id=template.id, version=template.latest_version.apply(str)
                ),
                ec2_configurations=[
                    aws.batch.ComputeEnvironmentComputeResourcesEc2ConfigurationArgs(image_type=BATCH_IMAGE_TYPE)
                ],
            ),
            # Instances join ECS with the node role at boot: its policies first.
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(handles.instance_role_policies)),
        )
        self.queue = aws.batch.JobQueue(
            f"{name}-training",
            priority=1,
            state="ENABLED",
            compute_environment_orders=[
                aws.batch.JobQueueComputeEnvironmentOrderArgs(order=1, compute_environment=self.compute_environment.arn)
            ],
            opts=child,
        )
        self.job_definition = aws.batch.JobDefinition(
            f"{name}-multinode",
            type="multinode",
            node_properties=json.dumps(multinode_job_properties(spec)),
            # A lost node fails the whole multi-node job; retry it (from its checkpoint) on infrastructure
            # failures, not on the job's own errors.
            retry_strategy=aws.batch.JobDefinitionRetryStrategyArgs(
                attempts=3,
                evaluate_on_exits=[
                    aws.batch.JobDefinitionRetryStrategyEvaluateOnExitArgs(
                        on_status_reason="Host EC2*", action="RETRY"
                    ),
                    aws.batch.JobDefinitionRetryStrategyEvaluateOnExitArgs(on_reason="*", action="EXIT"),
                ],
            ),
            opts=child,
        )
        outputs: dict[str, pulumi.Input] = {
            "scheduler": "aws-batch",
            "managedJobQueue": self.queue.arn,
            "managedJobDefinition": self.job_definition.arn,
            "managedCompute": self.compute_environment.arn,
        }
        self.result = SchedulerResult(needs_compute_group=False, outputs=outputs, component=self)
        self.register_outputs(outputs)


class SlurmCluster(SlurmRecipe[TrainingHandles]):
    """Slurm on AWS: the Slurm recipe over `AwsSlurmParts`."""

    cloud = "aws"
    parts_class = AwsSlurmParts
    registered_secret_output = "mungeKeySecretArn"
