"""The replicas: a fixed fleet of Vultr Cloud GPU instances (Vultr has no instance group), the planner's size, each
in the VPC behind the firewall group, booting the admission proxy and the inference server."""

from __future__ import annotations

import ediri_vultr as vultr
import pulumi

from accelstack.clouds.vultr import catalog
from accelstack.components.handoff.per_replica import PerReplicaReader
from accelstack.components.recipes.serving import ReplicaAdmission
from accelstack.components.vultr.serving.user_data import replica_user_data
from accelstack.components.vultr.serving.weights_key import ReplicaClocks, ReplicaKeyUrls
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import ServingSpec


def replica_fleet(
    name: str,
    serving: ServingSpec,
    plan: ServingPlan,
    *,
    region: str,
    tags: list[str],
    network: vultr.Vpc,
    firewall_group: vultr.FirewallGroup,
    admission: ReplicaAdmission,
    key_urls: ReplicaKeyUrls | None,
    opts: pulumi.ResourceOptions,
    clocks: ReplicaClocks | None = None,
    reader: PerReplicaReader | None = None,
    parent: pulumi.Resource | None = None,
) -> list[vultr.Instance]:
    """`serving.replicas.max` instances (a fixed fleet: min equals max). User data is ForceNew on Vultr: a model or
    server change replaces each replica, one resource at a time in Pulumi's order, the others serving meanwhile.
    Each replica's user data carries its own presigned URL for the weights key, signed at its clock's instant
    (components/vultr/serving/weights_key.py): an `up` that changes nothing re-signs the same URL."""
    handoff = reader.handoff if reader is not None else None
    document = replica_user_data(serving, plan, region=region, admission=admission, handoff=handoff)

    def user_data(index: int) -> pulumi.Output[str]:
        if reader is not None and clocks is not None:
            # Weights on another cloud: the replica's own credential expires its lifetime after its clock
            # (components/handoff/per_replica.py).
            clock = clocks.clock(index, document, serving.model.weights_uri)
            credentials = reader.replica_credentials(name, index, clock.rfc3339, parent or clocks.parent)
            return credentials.apply(
                lambda lines: replica_user_data(
                    serving, plan, region=region, admission=admission, handoff=handoff, credentials=lines
                )
            )
        assert key_urls is not None, "a Vultr replica reads its weights with the key or a per-replica credential"
        _, url = key_urls.url(index, document)
        return url.apply(
            lambda signed: replica_user_data(serving, plan, region=region, admission=admission, key_url=signed)
        )

    return [
        vultr.Instance(
            f"{name}-replica-{index}",
            region=region,
            plan=serving.replicas.instance_type,
            os_id=catalog.UBUNTU_2204_OS_ID,
            label=f"{name}-replica-{index}",
            hostname=f"{name}-replica-{index}",
            vpc_ids=[network.id],
            firewall_group_id=firewall_group.id,
            user_data=user_data(index),
            # The replicas pull images and weights over the public interface (Vultr's VPC has no NAT); the firewall
            # group admits nothing inbound there but the serving port from the VPC.
            enable_ipv6=False,
            backups="disabled",
            activation_email=False,
            ddos_protection=False,
            tags=tags,
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(delete_before_replace=False)),
        )
        for index in range(serving.replicas.max)
    ]
