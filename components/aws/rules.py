"""The AWS nodes' user data as the AWS components will render it, at its longest, for the spec rule that holds
it to EC2's limit (`accelstack.spec.catalog_rules.boot_data_fits_the_clouds_limit`; the limit is the AWS
description's `boot_data_limit`).

The head node carries its setup script in its user data, and its Slurm configuration files (slurm.conf,
gres.conf, cgroup.conf) in an SSM parameter, so enough partitions (or features) would make `pulumi up` fail at
PutParameter, after the network, Lustre and buckets exist; the serving replicas' boot script (its worker, model
syncs and one line per LoRA adapter) meets EC2's limit. The size is only known by rendering, which the spec layer cannot do (it sits below the components), so
AWS's registration lists this module among its rule modules (`Cloud.rules`, imported by name when an AWS stack
is validated).
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterator

from accelstack.clouds import registry
from accelstack.clouds.aws.catalog import SSM_PARAMETER_MAX_BYTES
from accelstack.components import slurm
from accelstack.components.aws.network import SSM_ENDPOINT_SERVICES, carve_serving_subnets, carve_training_subnets
from accelstack.components.aws.node_platform import SLURM_CONFIG_PARAMETER
from accelstack.components.aws.slurm_accounting import server_ca as rds_server_ca
from accelstack.components.slurm import accounting
from accelstack.components.slurm.config_delivery import config_bundle
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec.address_rules import CarvedRange, carves
from accelstack.spec.catalog_rules import BootData, boot_data
from accelstack.spec.models import ServingStack, StackSpec, TrainingStack
from accelstack.spec.problems import Problem
from accelstack.spec.validators import rule

# SQS queue names are at most 80 characters (CreateQueue `QueueName`): the replicas' queue URLs at their longest.
SQS_QUEUE_NAME_MAX = 80
# VPC User Guide, "Subnet CIDR blocks": AWS keeps the first four addresses and the last of every subnet.
SUBNET_RESERVED_ADDRESSES = 5
# ELB User Guide, "Subnets for your load balancer": each subnet of an ALB needs at least 8 free addresses.
ALB_FREE_ADDRESSES = 8


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
        slurm_config=SLURM_CONFIG_PARAMETER.format(stack=spec.stack),
        state_volume="vol-0123456789abcdef0",
        # An RDS endpoint (the autonamed identifier: 63 characters at most), its CA bundle's fetch, and its password
        # secret's ARN.
        accounting_storage=accounting.Storage(
            f"{'d' * 63}.c0a1b2c3d4e5.{region}.rds.amazonaws.com.cn", rds_server_ca(region)
        ),
        accounting_password_secret=f"arn:aws-us-gov:secretsmanager:{region}:{account}:secret:{spec.stack}-slurmdbd-password-0a1b2c3-AbCdEf",
        checkpoint_interval_seconds=86_400,
    )


@boot_data(workload="training")
def slurm_nodes_user_data(spec: TrainingStack) -> Iterator[BootData]:
    """The head's and the compute nodes' cloud-init, rendered as the AWS components will."""
    if spec.training.scheduler.kind != "slurm":
        return
    try:
        values = aws_deploy_values(spec)  # a Region that is not plain words refuses the CA name: its rule reports it
        nodes = slurm.nodes_for(spec)
        head = slurm.head_cloud_init(spec, nodes, values)
        compute = slurm.compute_cloud_init(spec, nodes, values)
    except ValueError:
        return  # an input another rule reports (unknown preset, non-S3 checkpoint URI) stops rendering
    # The head's user data no longer follows the partitions (slurm.conf is in the SSM parameter, checked below).
    yield BootData("training.scheduler", "the head node", head)
    # pyxis and enroot take about 5 KB of it: the first thing to give up where a node carries more (checkpoint restore).
    containers = "; set training.scheduler.containers: none" if spec.training.scheduler.containers == "pyxis" else ""
    yield BootData("training.scheduler", "the compute nodes", compute, remedy=containers.removeprefix("; "))


@rule(workload="training")
def slurm_config_fits_its_parameter(spec: TrainingStack) -> Iterator[Problem]:
    """The head's Slurm configuration files, bundled as the Slurm recipe stores them, fit an SSM parameter (the
    value's size; PutParameter refuses more)."""
    if spec.training.scheduler.kind != "slurm":
        return
    try:
        size = len(config_bundle(slurm.config_files(spec, slurm.nodes_for(spec))).encode())
    except ValueError:
        return  # an input another rule reports stops rendering
    if size > SSM_PARAMETER_MAX_BYTES:
        yield Problem(
            "training.scheduler.partitions",
            f"{len(spec.training.scheduler.partitions)} partitions make the head's Slurm configuration (slurm.conf, "
            f"gres.conf, cgroup.conf, compressed) {size:,} bytes; an SSM parameter holds at most "
            f"{SSM_PARAMETER_MAX_BYTES:,}, so `pulumi up` would fail; use fewer partitions (or features)",
        )


@boot_data(workload="serving")
def replica_user_data_at_its_longest(spec: ServingStack) -> Iterator[BootData]:
    """The replicas' boot script, rendered with the longest queue URLs SQS can give."""
    from accelstack.components.aws.serving.hook import READY_HOOK, replica_group_name
    from accelstack.components.aws.serving.user_data import replica_user_data

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


# --- address plans (accelstack.spec.address_rules) ---------------------------------------------------


@carves(workload="training")
def training_ranges(spec: TrainingStack) -> Iterator[CarvedRange]:
    """The cluster subnet (one address per node: its EFA devices beyond the primary ENA interface are efa-only, with
    no address; the Slurm head; one interface per Systems Manager endpoint) and the NAT gateway's public subnet,
    carved as components.aws.network carves them. FSx for Lustre's ENIs are not counted: AWS does not document how
    many a file system takes, and the /20 cluster subnet leaves thousands spare."""
    network = spec.training.network
    if network.vpc_id is not None or network.vpc_cidr is None:
        return
    path, vpc, reserved = "training.network.vpcCidr", "the VPC", SUBNET_RESERVED_ADDRESSES
    subnets = carve_training_subnets(network.vpc_cidr)
    yield CarvedRange(path, "the VPC range", ipaddress.IPv4Network(network.vpc_cidr))
    holds = (
        (spec.training.nodes.count, "nodes"),
        (1, "Slurm head"),
        (len(SSM_ENDPOINT_SERVICES), "Systems Manager endpoint interfaces"),
    )
    yield CarvedRange(path, "the cluster subnet", ipaddress.IPv4Network(subnets.cluster), vpc, reserved, holds)
    nat = ((1, "NAT gateway"),)
    yield CarvedRange(path, "the NAT subnet", ipaddress.IPv4Network(subnets.public), vpc, reserved, nat)


@carves(workload="serving")
def serving_ranges(spec: ServingStack) -> Iterator[CarvedRange]:
    """One private subnet per zone for the replicas (the group at replicas.max, the instance refresh's replacements,
    which MaxHealthyPercentage 200 lets double the group, and the warm pool, spread evenly over the zones) and one
    public subnet per zone for the ALB (8 free addresses per subnet, ELB User Guide "Subnets for your load
    balancer") and a NAT gateway."""
    network = spec.serving.network
    if network.vpc_id is not None or network.vpc_cidr is None:
        return
    path, vpc, reserved = "serving.network.vpcCidr", "the VPC", SUBNET_RESERVED_ADDRESSES
    subnets = carve_serving_subnets(network.vpc_cidr)
    zones = len(subnets.private)
    replicas = spec.serving.replicas
    warm = plan_serving(spec.serving, registry.get(spec.cloud).catalog).warm_pool_size
    yield CarvedRange(path, "the VPC range", ipaddress.IPv4Network(network.vpc_cidr))
    holds = (
        (math.ceil(replicas.max / zones), f"replicas (serving.replicas.max over {zones} zones)"),
        (math.ceil(replicas.max / zones), "instance refresh replacements (MaxHealthyPercentage 200)"),
        (math.ceil(warm / zones), "warm pool instances"),
    )
    for index, block in enumerate(subnets.private):
        name = f"the replicas' subnet {index + 1}"
        yield CarvedRange(path, name, ipaddress.IPv4Network(block), vpc, reserved, holds)
    edge = ((ALB_FREE_ADDRESSES, "free addresses the ALB needs"), (1, "NAT gateway"))
    for index, block in enumerate(subnets.public):
        name = f"the public subnet {index + 1}"
        yield CarvedRange(path, name, ipaddress.IPv4Network(block), vpc, reserved, edge)
