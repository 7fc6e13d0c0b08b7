"""AWS Batch, the managed training scheduler on AWS: a multi-node parallel compute environment in the cluster
subnet and placement group, on the training parts' EFA launch template (no image: Batch picks the ECS-optimized
GPU image), a job queue, and a multi-node job definition template with every EFA device and the Lustre mount.
"""

from __future__ import annotations

import json
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText

import pulumi
import pulumi_aws as aws

from accelstack.clouds.aws.catalog import ACCELERATED_INSTANCES
from accelstack.components import slurm
from accelstack.components.aws.handles import TrainingHandles
from accelstack.components.base import SchedulerResult
from accelstack.components.node_syntax import shell_word
from accelstack.spec.models import TrainingStack

# AWS Batch: ECS-optimized GPU image (has the ECS agent Batch needs), chosen by Batch from
# image_type: the launch template carries no image (an image there would win over image_type).
# Amazon Linux 2023: AWS ends support for the AL2 ECS images, and Batch's default moves to AL2023
# (Batch API Ec2Configuration). EFA software and Lustre come from the launch template's user data.
BATCH_IMAGE_TYPE = "ECS_AL2023_NVIDIA"
BATCH_ROOT_DEVICE = "/dev/xvda"  # Amazon Linux's root device name (Ubuntu's is /dev/sda1)
# The EFA installer (EC2 User Guide, "Get started with EFA and NCCL": install the EFA software).
EFA_INSTALLER_URL = "https://efa-installer.amazonaws.com/aws-efa-installer-latest.tar.gz"


def efa_device_count(instance_type: str) -> int:
    itype = ACCELERATED_INSTANCES.get(instance_type)
    return itype.fabric_interfaces if itype is not None else 0


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
    source = shell_word(slurm.lustre_source(dns_name, mount_name))
    path = shell_word(mount_path)
    commands = [
        "dnf install -y lustre-client",
        f"mkdir -p {path}",
        f"mount -t lustre -o {slurm.LUSTRE_MOUNT_OPTIONS} {source} {path}",
    ]
    if checkpoints:
        commands.append(f"install -d -m 1777 {shell_word(checkpoints)}")
    # JSON is YAML: the document is data, whatever a value holds; each command is one `bash -c` argument.
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
