"""The replicas: launch template (IMDSv2, encrypted gp3 root, the boot script) and the Auto Scaling
group with its launch hook, warm pool and rolling instance refresh."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws

from accelstack.components.aws.boot_data import ec2_user_data_base64
from accelstack.components.aws.images import ROOT_DEVICE
from accelstack.components.aws.provider import group_tags, launch_template_tag_specifications
from accelstack.components.aws.serving.hook import READY_HOOK, READY_HOOK_HEARTBEAT_TIMEOUT_SECONDS, replica_group_name
from accelstack.components.aws.serving.user_data import replica_user_data
from accelstack.components.handoff.boot import artifact_handoff_values
from accelstack.components.recipes.serving import ReplicaAdmission
from accelstack.planner.serving_plan import ROOT_VOLUME_IOPS, ROOT_VOLUME_THROUGHPUT_MIBPS

if TYPE_CHECKING:
    from accelstack.components.aws.serving.service import AwsServingParts


GROUP_METRICS = [
    "GroupInServiceInstances",  # the denominator of backlog per instance
    "GroupDesiredCapacity",
    "GroupPendingInstances",
    "GroupTotalInstances",
    "GroupMinSize",
    "GroupMaxSize",
    "WarmPoolWarmedCapacity",
    "WarmPoolPendingCapacity",
    "WarmPoolDesiredCapacity",
]


def replica_group(
    svc: AwsServingParts, name: str, profile: aws.iam.InstanceProfile, admission: ReplicaAdmission | None
) -> aws.autoscaling.Group:
    """The group, its launch template (booting with `profile`, the replicas' role) and warm pool. With
    `admission` the replicas run the admission proxy; without, the queue worker on the stack's queues."""
    serving, plan = svc.serving, svc.plan
    replicas = serving.replicas
    group_name = replica_group_name(name)
    queues = svc.queues
    user_data: pulumi.Input[str]
    reader = svc.artifact_reader
    fetch = artifact_handoff_values(serving, reader)  # weights on another cloud: its reader's fetch lines
    if admission is not None:
        user_data = fetch.apply(
            lambda lines: ec2_user_data_base64(
                replica_user_data(
                    serving, plan, region=svc.region, group_name=group_name, hook_name=READY_HOOK,
                    admission=admission, fetch=lines,
                )
            )
        )  # fmt: skip
    else:
        assert queues is not None, "without admission on the replicas, the replicas drain the stack's queues"
        user_data = pulumi.Output.all(queues["requests"].url, queues["responses"].url, fetch).apply(
            lambda urls: ec2_user_data_base64(
                replica_user_data(
                    serving,
                    plan,
                    region=svc.region,
                    group_name=group_name,
                    hook_name=READY_HOOK,
                    request_queue_url=urls[0],
                    response_queue_url=urls[1],
                    fetch=urls[2],
                )
            )
        )
    template = aws.ec2.LaunchTemplate(
        f"{name}-replica",
        image_id=replicas.image_id,
        instance_type=replicas.instance_type,
        iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(arn=profile.arn),
        metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
            http_endpoint="enabled",
            http_tokens="required",  # IMDSv2 only
            http_put_response_hop_limit=1,  # the server container runs with host networking
        ),
        network_interfaces=[
            aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                device_index=0,
                associate_public_ip_address="false",
                security_groups=[svc.replica_sg.id],
                delete_on_termination="true",
            )
        ],
        block_device_mappings=[
            aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name=ROOT_DEVICE,
                ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                    volume_type="gp3",
                    volume_size=plan.root_volume_gib,
                    # Weight loading reads from here: 1000 MiB/s needs >= 4000 IOPS (gp3 0.25 MiB/s per IOPS).
                    throughput=ROOT_VOLUME_THROUGHPUT_MIBPS,
                    iops=ROOT_VOLUME_IOPS,
                    encrypted="true",
                    kms_key_id=svc.key.arn,
                    delete_on_termination="true",
                ),
            )
        ],
        monitoring=aws.ec2.LaunchTemplateMonitoringArgs(enabled=True),
        ebs_optimized="true",
        user_data=user_data,
        tag_specifications=launch_template_tag_specifications(svc.spec, f"{name}-replica"),
        update_default_version=True,
        opts=svc.child,
    )
    svc.launch_template = template
    return aws.autoscaling.Group(
        f"{name}-replicas",
        name=group_name,
        min_size=replicas.min,
        max_size=replicas.max,
        vpc_zone_identifiers=svc.vpc.private_subnet_ids,
        # On-demand only: no mixed-instances policy, no spot market options anywhere.
        # A numbered version, not "$Latest": each new template version changes the group, which is
        # what starts the instance refresh (the str: the group takes the version as a string).
        launch_template=aws.autoscaling.GroupLaunchTemplateArgs(
            id=template.id, version=template.latest_version.apply(str)
        ),
        target_group_arns=[svc.target_group.arn],
        health_check_type="ELB",
        health_check_grace_period=plan.health_check_grace_seconds,
        # Scaling ignores a new instance's metrics until it could be serving (most come from the pool).
        default_instance_warmup=plan.warm_start_seconds,
        enabled_metrics=GROUP_METRICS,
        metrics_granularity="1Minute",
        initial_lifecycle_hooks=[
            aws.autoscaling.GroupInitialLifecycleHookArgs(
                name=READY_HOOK,
                lifecycle_transition="autoscaling:EC2_INSTANCE_LAUNCHING",
                heartbeat_timeout=READY_HOOK_HEARTBEAT_TIMEOUT_SECONDS,
                default_result="ABANDON",  # a replica that never gets ready is replaced, not served
            )
        ],
        warm_pool=aws.autoscaling.GroupWarmPoolArgs(
            pool_state="Stopped",  # pay for EBS only; image and weights stay on the volume
            min_size=plan.warm_pool_size,
            max_group_prepared_capacity=replicas.min + plan.warm_pool_size,
            instance_reuse_policy=aws.autoscaling.GroupWarmPoolInstanceReusePolicyArgs(reuse_on_scale_in=True),
        ),
        # The refresh replaces the warm pool's stopped instances too, after the live ones (the Auto Scaling API
        # reports both: InstanceRefreshProgressDetails LivePoolProgress / WarmPoolProgress), so a scale-out
        # never starts an old-model replica once the refresh is done.
        instance_refresh=aws.autoscaling.GroupInstanceRefreshArgs(
            strategy="Rolling",
            preferences=aws.autoscaling.GroupInstanceRefreshPreferencesArgs(
                # Launch the new model's replica before retiring an old one: capacity never dips.
                min_healthy_percentage=100,
                max_healthy_percentage=200,
                # No instance_warmup: a replica enters InService only once the launch hook saw it
                # serve, and the refresh then waits default_instance_warmup (AWS recommends that
                # over a refresh-only override).
                skip_matching=True,
                # No auto_rollback: EC2 Auto Scaling refuses it when the launch template's image is
                # a Systems Manager parameter (the default `resolve:ssm:` DLAMI), and the provider
                # updates the group's template before the refresh, so a rollback would redeploy
                # the new version anyway (terraform-provider-aws #34189). A replica that never
                # gets ready is abandoned by the launch hook and the refresh fails instead.
            ),
        ),
        # `up` waits for min replicas: the boot script's full budget, one hook timeout after its last
        # heartbeat, and the first health verdict.
        wait_for_capacity_timeout=f"{math.ceil((plan.lifecycle_heartbeat_seconds + READY_HOOK_HEARTBEAT_TIMEOUT_SECONDS + plan.health_check_grace_seconds) / 60)}m",
        tags=group_tags(svc.tags, f"{name}-replica"),
        # Replicas read weights and complete the launch hook with their role at boot.
        opts=pulumi.ResourceOptions(
            parent=svc.parent,
            depends_on=[*svc.replica_role_policies, *(reader.grants if reader else []), *svc.artifact_copies],
        ),
    )
