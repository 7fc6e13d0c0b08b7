"""AWS (pulumi-aws; aws-native providers pin accounts the same way): the packs' vendor entry."""

from __future__ import annotations

from typing import Any

from ..common import truthy
from ..vendor import GuardrailReaders, SeparationReaders, Vendor
from . import access, compute, iam, network, reachability, retention, separation, storage, waf
from .concepts import AWS


def internet_facing(resource: Any) -> bool:
    """A load balancer not marked `internal`."""
    return not truthy(resource.props.get("internal"))


VENDOR = Vendor(
    package="aws",
    concepts=AWS,
    pin_inputs={"aws": "allowedAccountIds", "aws-native": "allowedAccountIds"},
    reachability=reachability.links,
    guardrails=GuardrailReaders(
        encryption_at_rest=storage.check_encryption_at_rest,
        data_encryption=storage.check_bucket_encryption,
        public_storage=storage.check_no_public_buckets,
        public_storage_final=storage.check_public_bucket_policies_final,
        public_access_block=storage.check_bucket_public_access_block,
        internet_ingress=network.check_no_internet_ingress,
        ingress_owner=network.check_ingress_only_to_load_balancer,
        public_ip=network.check_no_public_ip,
        private_subnets=network.check_nodes_in_private_subnets,
        instance_metadata=network.check_imdsv2,
        privileged_jobs=compute.check_batch_not_privileged,
        node_data_secrets=compute.check_no_secrets_in_user_data,
        least_privilege=iam.check_iam_least_privilege,
        least_privilege_final=iam.check_iam_least_privilege_final,
        versioning=storage.check_bucket_versioning,
        scheduled_data_loss=storage.check_no_scheduled_data_loss,
        queue_dlq=storage.check_queue_dlq,
        https_listeners=network.check_https_listeners,
        lb_deletion_protection=network.check_lb_deletion_protection,
        spot_serving=compute.check_no_spot_serving,
        spot_checkpoints=compute.check_spot_training_checkpoints,
        queue_scaling=compute.check_serving_scales_on_queue_depth,
        waf_front_doors=waf.front_doors,
        service_logs=retention.access_log_problems,
        retention=retention.retention_problems,
        stateful_names=storage.STATEFUL_NAMES,
    ),
    separation=SeparationReaders(
        internet_facing=internet_facing,
        access=access.read_edges,
        access_types=access.ACCESS_TYPES,
        trusted_accounts=separation.ELB_LOG_DELIVERY_ACCOUNTS,
    ),
)
