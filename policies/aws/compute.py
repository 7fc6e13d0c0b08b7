"""How the guardrails read AWS compute: secrets in user data and Batch jobs, privileged jobs, spot capacity,
queue-depth scaling. Each check names the trusted rule it mirrors (Checkov CKV_AWS_xx, Trivy AVD-AWS-xxxx,
an AWS doc) or says it is ours."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..common import as_list, decode, of_type, truthy
from ..links import each_referrer, referrers_of
from ..readers import count_of, decode_user_data, secrets_in
from ..readers import name_of as _name
from ..vendor import tokens_of
from .concepts import AWS
from .storage import BUCKET, bucket_named

SCALING_POLICIES = tokens_of(AWS, "scaling-policy")
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
JOB_DEFINITION = "aws:batch/jobDefinition:JobDefinition"
ASG = "aws:autoscaling/group:Group"
METRIC_ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
LAUNCH_CONFIGURATION = "aws:ec2/launchConfiguration:LaunchConfiguration"
CAPACITY_BLOCK = "aws:ec2/capacityBlockReservation:CapacityBlockReservation"
SCHEDULED_ACTION = "aws:autoscaling/schedule:Schedule"
SPOT_TYPES = ("aws:ec2/spotInstanceRequest:SpotInstanceRequest", "aws:ec2/spotFleetRequest:SpotFleetRequest")
QUEUE_METRIC = re.compile(r"ApproximateNumberOfMessages|Backlog|QueueDepth", re.IGNORECASE)
CPU_METRIC = re.compile(r"CPUUtilization", re.IGNORECASE)
# Without a queue, the requests each replica receives at the load balancer (the serving recipe's direct topology).
LOAD_BALANCER_METRICS = frozenset(
    {("predefined", "ALBRequestCountPerTarget"), ("AWS/ApplicationELB", "RequestCountPerTarget")}
)


# --- user data -----------------------------------------------------------------------------------


def _job_containers(resource: Any) -> list[Any]:
    """The containers of a Batch job definition: containerProperties, and every node range's container
    (nodeProperties.nodeRangeProperties[].container); both arrive as JSON strings or objects."""
    containers = []
    single = decode(resource.props.get("containerProperties"))
    if hasattr(single, "get"):
        containers.append(single)
    nodes = decode(resource.props.get("nodeProperties"))
    for node_range in as_list(nodes.get("nodeRangeProperties") if hasattr(nodes, "get") else None):
        container = node_range.get("container") if hasattr(node_range, "get") else None
        if hasattr(container, "get"):
            containers.append(container)
    return containers


def _user_data(resource: Any) -> str:
    props = resource.props
    if resource.resource_type == LAUNCH_TEMPLATE:
        return decode_user_data(props.get("userData"), base64_encoded=True)
    if resource.resource_type == INSTANCE:
        return decode_user_data(props.get("userData"), base64_encoded=False) + decode_user_data(
            props.get("userDataBase64"), base64_encoded=True
        )
    return ""


def check_no_secrets_in_user_data(resource: Any) -> Iterable[str]:
    """No secrets in user data (it is readable by anyone with ec2:DescribeInstanceAttribute and from
    IMDS): Checkov CKV_AWS_46, Trivy AVD-AWS-0029 / AVD-AWS-0129; nor in a Batch job definition's container
    command or environment (readable with batch:DescribeJobDefinitions): the intent of Checkov CKV_AWS_45 (no
    secrets in environment variables), and Batch's own `secrets` field is where they belong."""
    if resource.resource_type in (LAUNCH_TEMPLATE, INSTANCE):
        for what in secrets_in(_user_data(resource)):
            yield f"{_name(resource)} user data embeds {what}; fetch it at boot from Secrets Manager or SSM"
    if resource.resource_type == JOB_DEFINITION:
        for container in _job_containers(resource):
            # The environment as the container sees it (NAME=value lines), beside the command's words.
            environment = [e for e in as_list(container.get("environment")) if hasattr(e, "get")]
            text = "\n".join(
                [json.dumps(container.get("command"), default=str)]
                + [f"{e.get('name')}={e.get('value')}" for e in environment]
            )
            for what in secrets_in(text):
                yield f"{_name(resource)} job container embeds {what}; pass it through the job definition's secrets"


def check_batch_not_privileged(resource: Any) -> Iterable[str]:
    """Batch job containers are not privileged (Checkov CKV_AWS_210): the fabric's devices are passed one by one
    (linuxParameters.devices), which is all EFA needs."""
    if resource.resource_type != JOB_DEFINITION:
        return
    for container in _job_containers(resource):
        if truthy(container.get("privileged")):
            yield f"{_name(resource)} runs a privileged job container; pass the devices it needs instead"


# --- capacity and scaling ------------------------------------------------------------------------


def spot_usage(resource: Any) -> str | None:
    """Why a resource runs on spot capacity, or None."""
    kind, props = resource.resource_type, resource.props
    if kind in SPOT_TYPES:
        return "is a spot request"
    if kind in (LAUNCH_TEMPLATE, INSTANCE):
        market = props.get("instanceMarketOptions") or {}
        if str(market.get("marketType") or "").lower() == "spot" or market.get("spotOptions"):
            return "requests spot instances (instanceMarketOptions)"
    if kind == "aws:ec2/fleet:Fleet":
        capacity = props.get("targetCapacitySpecification") or {}
        if (
            str(capacity.get("defaultTargetCapacityType") or "").lower() == "spot"
            or float(capacity.get("spotTargetCapacity") or 0) > 0
        ):
            return "is an EC2 fleet with spot capacity"
    if kind == "aws:eks/nodeGroup:NodeGroup" and str(props.get("capacityType") or "").upper() == "SPOT":
        return "is a spot node group (capacityType SPOT)"
    if kind == ASG:
        mixed = props.get("mixedInstancesPolicy") or {}
        if mixed and (mixed.get("instancesDistribution") or {}).get("spotMaxPrice"):
            return "sets a spot max price (mixedInstancesPolicy.instancesDistribution.spotMaxPrice)"
        distribution = mixed.get("instancesDistribution") if mixed else None
        if distribution is not None:
            on_demand = distribution.get("onDemandPercentageAboveBaseCapacity")
            if on_demand is not None and int(on_demand) < 100:
                return f"runs {100 - int(on_demand)}% spot above its on-demand base"
    if kind == "aws:batch/computeEnvironment:ComputeEnvironment":
        compute = props.get("computeResources") or {}
        if str(compute.get("type") or "").upper() in ("SPOT", "FARGATE_SPOT"):
            return "is a spot compute environment"
    if kind == LAUNCH_CONFIGURATION and props.get("spotPrice"):
        return "bids for spot instances (spotPrice)"
    return None


def time_limited_usage(resource: Any) -> str | None:
    """Capacity that ends at a set time: a Capacity Block (instanceMarketOptions.marketType capacity-block, an EKS
    node group of capacityType CAPACITY_BLOCK; the instances are terminated when the block ends:
    https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-capacity-blocks.html), a purchased block, or a scheduled
    action that takes the group away (max or desired size 0)."""
    kind, props = resource.resource_type, resource.props
    if kind in (LAUNCH_TEMPLATE, INSTANCE):
        market = props.get("instanceMarketOptions") or {}
        if str(market.get("marketType") or "").lower() == "capacity-block":
            return "runs in a Capacity Block (instanceMarketOptions.marketType capacity-block), ended at a set time"
    if kind == "aws:eks/nodeGroup:NodeGroup" and str(props.get("capacityType") or "").upper() == "CAPACITY_BLOCK":
        return "is a Capacity Block node group (capacityType CAPACITY_BLOCK), ended at a set time"
    if kind == CAPACITY_BLOCK:
        return "buys a Capacity Block, which ends at a set time"
    if kind == SCHEDULED_ACTION:
        sizes = [count_of(props.get(k)) for k in ("maxSize", "desiredCapacity")]
        if 0 in sizes:
            return "takes the group to zero on a schedule (aws.autoscaling.Schedule)"
    return None


def check_no_spot_serving(resource: Any) -> Iterable[str]:
    """Serving replicas never run on spot or time-limited capacity: a reclaimed replica drops in-flight requests
    and the queue-depth scaler cannot replace it in time; a Capacity Block ends the fleet at a set time. Ours."""
    if why := spot_usage(resource) or time_limited_usage(resource):
        yield f"{_name(resource)} {why}; serving replica groups must be on-demand (or reserved)"


def check_spot_training_checkpoints(resources: Sequence[Any], pattern: str) -> Iterable[tuple[str, str]]:
    """Spot training only with a checkpoint location: a reclaimed node must not lose the run. Ours
    (AWS guidance for spot training: https://docs.aws.amazon.com/sagemaker/latest/dg/model-managed-spot-training.html)."""
    if any(bucket_named(pattern, b) for b in of_type(resources, *BUCKET)):
        return
    for resource in resources:
        if why := spot_usage(resource):
            yield (
                resource.urn,
                (
                    f"{_name(resource)} {why} but the stack has no checkpoint bucket; "
                    "set training.storage.checkpoints or use on-demand capacity"
                ),
            )


def _metric_refs(node: Any, found: list[tuple[str, str]]) -> None:
    """Every metric a scaling configuration names, at any depth: predefined metric types (target
    tracking, predictive pairs / scaling / load metrics) and (namespace, metricName) pairs."""
    if hasattr(node, "items"):
        predefined = node.get("predefinedMetricType")
        if predefined:
            found.append(("predefined", str(predefined)))
        if node.get("metricName"):
            found.append((str(node.get("namespace")), str(node.get("metricName"))))
        for _key, value in node.items():
            _metric_refs(value, found)
    elif isinstance(node, Sequence) and not isinstance(node, str):
        for item in node:
            _metric_refs(item, found)


def _metrics_of_policy(policy: Any) -> list[tuple[str, str]]:
    """(namespace, metric name) pairs a scaling policy tracks, of every policy kind (target tracking,
    predictive, application auto scaling); step/simple policies get theirs from their alarms."""
    found: list[tuple[str, str]] = []
    for key in (
        "targetTrackingConfiguration",
        "predictiveScalingConfiguration",
        "targetTrackingScalingPolicyConfiguration",
    ):
        value = policy.props.get(key)
        if value:
            _metric_refs(value, found)
    return found


def _metrics_of_alarm(alarm: Any) -> list[tuple[str, str]]:
    found = []
    if alarm.props.get("metricName"):
        found.append((str(alarm.props.get("namespace")), str(alarm.props.get("metricName"))))
    for query in as_list(alarm.props.get("metricQueries")):
        metric = query.get("metric") or {}
        if metric.get("metricName"):
            found.append((str(metric.get("namespace")), str(metric.get("metricName"))))
    return found


def _is_queue_metric(namespace: str, metric: str) -> bool:
    return namespace == "AWS/SQS" or bool(QUEUE_METRIC.search(metric))


def _is_cpu_metric(namespace: str, metric: str) -> bool:
    return metric == "ASGAverageCPUUtilization" or bool(CPU_METRIC.search(metric))


def _fixed_fleet_size(group: Any) -> int | None:
    """The size of a group that cannot scale: minSize equal to maxSize (and desiredCapacity, when set); None
    otherwise or when a size is not a plain number (an unknown value is not a fixed fleet)."""
    keys = ("minSize", "maxSize", *(("desiredCapacity",) if group.props.get("desiredCapacity") is not None else ()))
    sizes = [count_of(group.props.get(key)) for key in keys]
    return sizes[0] if None not in sizes and len(set(sizes)) == 1 else None


def check_serving_scales_on_queue_depth(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """Serving replica groups scale on the requests they own, never on CPU: GPU inference is bound by the GPU,
    so CPU stays low while requests queue up. The requests owned are the admission queue's depth (AWS: scaling
    based on Amazon SQS, https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-using-sqs-queue.html) or,
    without a queue, the ALB's requests per target (ALBRequestCountPerTarget); a group that cannot scale (min =
    max >= 1, no scaling policy) is a fixed fleet and passes. Ours."""
    policies = of_type(resources, *SCALING_POLICIES)
    alarms = of_type(resources, METRIC_ALARM)
    for group in of_type(resources, ASG):
        linked = referrers_of(group, policies, "autoscalingGroupName", keys=("name", "id"))
        metrics: list[tuple[str, str, str]] = []
        for policy in linked:
            metrics += [(_name(policy), ns, m) for ns, m in _metrics_of_policy(policy)]
            for alarm in each_referrer(policy, alarms, "alarmActions", keys=("arn",)):
                metrics += [(_name(alarm), ns, m) for ns, m in _metrics_of_alarm(alarm)]
        cpu = sorted({who for who, ns, m in metrics if _is_cpu_metric(ns, m)})
        fixed = _fixed_fleet_size(group)
        if cpu:
            yield group.urn, f"replica group {_name(group)} scales on CPU ({', '.join(cpu)}); scale on queue depth"
        elif not linked and fixed is not None and fixed >= 1:
            continue  # a fixed fleet: nothing scales it
        elif not any(_is_queue_metric(ns, m) or (ns, m) in LOAD_BALANCER_METRICS for _, ns, m in metrics):
            yield (
                group.urn,
                (
                    f"replica group {_name(group)} has no scaling policy on the requests its replicas own "
                    "(AWS/SQS ApproximateNumberOfMessagesVisible, a backlog-per-replica metric, or without a queue "
                    "ALBRequestCountPerTarget), and is not a fixed fleet (minSize = maxSize >= 1)"
                ),
            )
