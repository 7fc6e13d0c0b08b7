"""The AWS nodes' user data as the AWS components will render it, at its longest, for the spec rule that holds
it to EC2's limit (`accelstack.spec.catalog_rules.boot_data_fits_the_clouds_limit`; the limit is the AWS
description's `boot_data_limit`).

The head node carries slurm.conf, gres.conf, cgroup.conf and its setup script in its user data, so enough
partitions (or features) would make `pulumi up` fail at RunInstances, after the network, Lustre and buckets
exist; the serving replicas' boot script (its worker, model syncs and one line per LoRA adapter) meets the same
limit. The size is only known by rendering, which the spec layer cannot do (it sits below the components), so
AWS's registration lists this module among its rule modules (`Cloud.rules`, imported by name when an AWS stack
is validated).
"""

from __future__ import annotations

from collections.abc import Iterator

from accelstack.clouds import registry
from accelstack.components import slurm
from accelstack.spec.catalog_rules import BootData, boot_data
from accelstack.spec.models import ServingStack, StackSpec, TrainingStack

# SQS queue names are at most 80 characters (CreateQueue `QueueName`): the replicas' queue URLs at their longest.
SQS_QUEUE_NAME_MAX = 80


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


@boot_data(workload="training")
def slurm_nodes_user_data(spec: TrainingStack) -> Iterator[BootData]:
    """The head's and the compute nodes' cloud-init, rendered as the AWS components will."""
    if spec.training.scheduler.kind != "slurm":
        return
    values = aws_deploy_values(spec)
    try:
        nodes = slurm.nodes_for(spec)
        head = slurm.head_cloud_init(spec, nodes, values)
        compute = slurm.compute_cloud_init(spec, nodes, values)
    except ValueError:
        return  # an input another rule reports (unknown preset, non-S3 checkpoint URI) stops rendering
    yield BootData(
        "training.scheduler.partitions",
        "the head node",
        head,
        cause=f"{len(spec.training.scheduler.partitions)} partitions",
        remedy="use fewer partitions (or features): the head node boots with slurm.conf and its setup",
    )
    yield BootData("training.scheduler", "the compute nodes", compute)


@boot_data(workload="serving")
def replica_user_data_at_its_longest(spec: ServingStack) -> Iterator[BootData]:
    """The replicas' boot script, rendered with the longest queue URLs SQS can give."""
    from accelstack.components.aws.serving.hook import READY_HOOK, replica_group_name
    from accelstack.components.aws.serving.user_data import replica_user_data
    from accelstack.planner.serving_plan import plan_serving

    serving = spec.serving
    longest_url = (
        f"https://sqs.{spec.account.region}.amazonaws.com/{spec.account.account_id}/{'q' * SQS_QUEUE_NAME_MAX}"
    )
    text = replica_user_data(
        serving,
        plan_serving(serving, registry.get(spec.cloud).catalog),
        region=spec.account.region,
        group_name=replica_group_name(spec.stack),
        hook_name=READY_HOOK,
        request_queue_url=longest_url,
        response_queue_url=longest_url,
    )
    yield BootData(
        "serving.model.adapters",
        "the replicas",
        text,
        cause=f"{len(serving.model.adapters)} adapter(s)",
        remedy="serve fewer adapters per stack or shorten their names and URIs",
    )
