"""AWS spec rules that need the components' renderers: whether the nodes' user data fits in EC2's limit.

EC2 refuses user data over 16 KB (EC2 User Guide, "Run commands when you launch an EC2 instance with
user data input": "User data is limited to 16 KB, in raw form, before it is base64-encoded"), and
the head node carries slurm.conf, gres.conf, cgroup.conf and its setup script in its user data, so
enough partitions (or features) make `pulumi up` fail at RunInstances, after the network, Lustre
and buckets exist. The size is only known by rendering, which the spec layer cannot do (it sits
below the components), so AWS's registration lists this module among its rule modules (`Cloud.rules`,
imported by name when an AWS stack is validated; see `accelstack.spec.validators`). The serving replicas'
boot script (its worker, model syncs and one line per LoRA adapter) meets the same limit.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelstack.clouds import registry
from accelstack.clouds.aws import catalog
from accelstack.components import slurm
from accelstack.spec.models import ServingStack, StackSpec, TrainingStack
from accelstack.spec.problems import Problem
from accelstack.spec.validators import rule

EC2_USER_DATA_MAX_BYTES = catalog.EC2_USER_DATA_MAX_BYTES


def aws_deploy_values(spec: StackSpec) -> slurm.DeployValues:
    """What the AWS components fill in at deploy time, at its longest realistic length, so the size
    checked here is not below what EC2 will receive (random suffixes as Pulumi and AWS make them)."""
    region, account = spec.account.region, spec.account.account_id
    secret_arn = f"arn:aws-us-gov:secretsmanager:{region}:{account}:secret:{spec.stack}-munge-key-0a1b2c3-AbCdEf"
    return slurm.DeployValues(
        head_address="255.255.255.255",
        lustre_dns_name=f"fs-0123456789abcdef0.fsx.{region}.amazonaws.com.cn",
        lustre_mount_name="abcdefgh",
        munge_key_secret=secret_arn,
        state_volume="vol-0123456789abcdef0",
        checkpoint_interval_seconds=86_400,
    )


@rule(workload="training")
def slurm_user_data_fits_ec2(spec: TrainingStack) -> Iterator[Problem]:
    """The head's and the compute nodes' cloud-init, rendered as the AWS components will, fit in EC2 user data."""
    if spec.training.scheduler.kind != "slurm":
        return
    training = spec.training
    values = aws_deploy_values(spec)
    try:
        nodes = slurm.nodes_for(spec)
        head = slurm.head_cloud_init(spec, nodes, values)
        compute = slurm.compute_cloud_init(spec, nodes, values)
    except ValueError:
        return  # an input another rule reports (unknown preset, non-S3 checkpoint URI) stops rendering
    head_bytes = len(head.encode())
    if head_bytes > EC2_USER_DATA_MAX_BYTES:
        partitions = training.scheduler.partitions
        yield Problem(
            "training.scheduler.partitions",
            f"{len(partitions)} partitions make the head node's user data (slurm.conf and its setup) "
            f"{head_bytes:,} bytes; EC2 accepts at most {EC2_USER_DATA_MAX_BYTES:,}, so the head node could not "
            "launch; use fewer partitions (or features)",
        )
    compute_bytes = len(compute.encode())
    if compute_bytes > EC2_USER_DATA_MAX_BYTES:
        yield Problem(
            "training.scheduler",
            f"the compute nodes' user data is {compute_bytes:,} bytes; EC2 accepts at most "
            f"{EC2_USER_DATA_MAX_BYTES:,}, so no compute node could launch",
        )


@rule(workload="serving")
def replica_user_data_fits_ec2(spec: ServingStack) -> Iterator[Problem]:
    """The replicas' boot script, rendered with the longest queue URLs SQS can give, fits in EC2 user data."""
    from accelstack.components.aws.serving.hook import replica_group_name
    from accelstack.components.aws.serving.user_data import user_data_size_problem
    from accelstack.planner.serving_plan import plan_serving

    problem = user_data_size_problem(
        spec.serving,
        plan_serving(spec.serving, registry.get(spec.cloud).catalog),
        region=spec.account.region,
        account_id=spec.account.account_id,
        group_name=replica_group_name(spec.stack),
    )
    if problem:
        yield Problem("serving.model.adapters", problem.removeprefix("serving.model.adapters: "))
