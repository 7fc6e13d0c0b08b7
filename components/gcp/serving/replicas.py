"""The replicas: a regional instance template of on-demand GPU VMs without external IPs, and the
regional managed instance group that keeps them, with a standby pool of stopped, pre-pulled VMs
(target_stopped_size) sized by the planner's warm pool."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp

from accelstack.clouds.gcp import names
from accelstack.components.gcp.images import REPLICA_IMAGE
from accelstack.components.gcp.serving.edge import NAMED_PORT, REPLICA_TAG
from accelstack.components.gcp.serving.identity import ReplicaIdentity
from accelstack.components.gcp.serving.queue import AdmissionQueues
from accelstack.components.gcp.serving.user_data import replica_user_data
from accelstack.components.handoff import FederatedReader
from accelstack.components.handoff.boot import artifact_handoff_values
from accelstack.components.recipes.serving import ReplicaAdmission
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import ServingSpec

# standbyPolicy.initialDelaySec: 0..3600 (compute v1 InstanceGroupManagerStandbyPolicy).
STANDBY_MAX_INITIAL_DELAY_SECONDS = 3600
# A regional group spreads over up to three of the region's zones when none are named (compute docs, "About
# regional MIGs"); a fixed maxSurge/maxUnavailable of a regional group must be 0 or at least its zone count.
REGIONAL_GROUP_ZONES = 3


def replica_group(
    name: str,
    serving: ServingSpec,
    plan: ServingPlan,
    *,
    project_id: str,
    region: str,
    subnet: gcp.compute.Subnetwork,
    queues: AdmissionQueues | None,
    identity: ReplicaIdentity,
    health: gcp.compute.HealthCheck,
    opts: pulumi.ResourceOptions,
    admission: ReplicaAdmission | None = None,
    reader: FederatedReader | None = None,
    copies: Sequence[pulumi.Resource] = (),
) -> gcp.compute.RegionInstanceGroupManager:
    """The group heals on `health` and starts after the replicas' grants exist. Its replicas run the queue worker on
    `queues`, or without them the admission proxy (`admission`). A fixed fleet (scaling fixed) has no autoscaler:
    the group holds the spec's size itself."""
    user_data: pulumi.Input[str]
    handoff = artifact_handoff_values(serving, reader)
    if queues is None:
        user_data = handoff.apply(
            lambda fetch: replica_user_data(serving, plan, project=project_id, admission=admission, fetch=fetch)
        )
    else:
        user_data = pulumi.Output.all(queues.request_subscription.id, queues.responses.id, handoff).apply(
            lambda ids: replica_user_data(
                serving, plan, project=project_id, request_subscription=ids[0], response_topic=ids[1], fetch=ids[2]
            )
        )
    fixed = serving.replicas.scaling == "fixed"
    template = gcp.compute.RegionInstanceTemplate(
        f"{name}-replica",
        region=region,
        machine_type=serving.replicas.instance_type,  # G2/A2/A3 machine types carry their GPUs
        tags=[REPLICA_TAG],
        disks=[
            gcp.compute.RegionInstanceTemplateDiskArgs(
                source_image=REPLICA_IMAGE,
                boot=True,
                auto_delete=True,
                disk_type="pd-balanced",
                disk_size_gb=plan.root_volume_gib,
            )
        ],
        # No access_configs: no external IP (egress through Cloud NAT).
        network_interfaces=[gcp.compute.RegionInstanceTemplateNetworkInterfaceArgs(subnetwork=subnet.id)],
        scheduling=gcp.compute.RegionInstanceTemplateSchedulingArgs(
            provisioning_model="STANDARD",  # on-demand only
            on_host_maintenance="TERMINATE",  # GPU VMs cannot live-migrate
            automatic_restart=True,
        ),
        shielded_instance_config=gcp.compute.RegionInstanceTemplateShieldedInstanceConfigArgs(
            enable_secure_boot=False,  # the NVIDIA kernel module of the image is unsigned for Secure Boot
            enable_vtpm=True,
            enable_integrity_monitoring=True,
        ),
        service_account=gcp.compute.RegionInstanceTemplateServiceAccountArgs(
            email=identity.account.email, scopes=["cloud-platform"]
        ),
        metadata={"user-data": user_data, "block-project-ssh-keys": "true"},
        opts=opts,
    )
    return gcp.compute.RegionInstanceGroupManager(
        f"{name}-replicas",
        region=region,
        base_instance_name=names.replica_base_instance_name(name),
        versions=[gcp.compute.RegionInstanceGroupManagerVersionArgs(instance_template=template.self_link)],
        named_ports=[
            gcp.compute.RegionInstanceGroupManagerNamedPortArgs(name=NAMED_PORT, port=serving.load_balancer.port)
        ],
        # No launch hook holds a new VM out of service while it loads the model: autohealing ignores its checks
        # for a cold start and the first verdict (plan.unhooked_grace_seconds), or it recreates every replica.
        auto_healing_policies=gcp.compute.RegionInstanceGroupManagerAutoHealingPoliciesArgs(
            health_check=health.id, initial_delay_sec=plan.unhooked_grace_seconds
        ),
        # Standby pool: stopped VMs that booted once (image and weights on disk); SCALE_OUT_POOL starts them when
        # the group scales out and refills the pool after (MANUAL would leave them stopped and boot new VMs cold).
        standby_policy=gcp.compute.RegionInstanceGroupManagerStandbyPolicyArgs(
            mode="SCALE_OUT_POOL",
            initial_delay_sec=min(plan.cold_start_seconds, STANDBY_MAX_INITIAL_DELAY_SECONDS),
        ),
        target_stopped_size=plan.warm_pool_size,
        # A model change is a new template: roll it out to the running replicas now (PROACTIVE) by creating each
        # new-model VM before deleting an old one (surge of one per zone, none unavailable), and REPLACE, never
        # refresh in place: the weights and the server image are pulled at first boot. The stopped standby VMs
        # are members of the group on the old template as well; the updater's targets are the group's VMs, but
        # whether (and when) it replaces stopped ones is not stated in the standby-pool pages read (unverified).
        update_policy=gcp.compute.RegionInstanceGroupManagerUpdatePolicyArgs(
            type="PROACTIVE",
            minimal_action="REPLACE",
            most_disruptive_allowed_action="REPLACE",
            replacement_method="SUBSTITUTE",
            max_surge_fixed=REGIONAL_GROUP_ZONES,
            max_unavailable_fixed=0,
            # BALANCED below needs proactive redistribution off (compute docs, "regional MIG distribution shape").
            instance_redistribution_type="NONE",
        ),
        # GPU machine types stock out one zone at a time: BALANCED places VMs where capacity is, EVEN would wait.
        distribution_policy_target_shape="BALANCED",
        # "Never set" with an autoscaler, which owns the size; a fixed fleet's is the spec's.
        target_size=serving.replicas.min if fixed else None,
        wait_for_instances=False,
        opts=pulumi.ResourceOptions.merge(
            opts,
            pulumi.ResourceOptions(
                depends_on=[*identity.grants, *(reader.grants if reader else []), *copies],
                ignore_changes=[] if fixed else ["targetSize"],
            ),
        ),
    )
