"""GCP (pulumi-gcp): the packs' vendor entry. The readers are in readers.py, the access graph's edges in
access.py; the adapters here give them the shapes the packs' concerns ask for."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..common import LABEL_TAGS, TAG_WORKLOAD, ProviderFacts, tag_values
from ..readers import is_public_range, name_of, node_data_secrets, spot_without_checkpoints
from ..vendor import GuardrailReaders, SeparationReaders, Vendor
from . import access, reachability, readers, retention, waf
from .concepts import GCP


def check_http_only_redirects(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """A GCP HTTP proxy's URL map only redirects to HTTPS (Checkov CKV_AWS_2's intent for GCP's split
    proxy/URL-map model; https://cloud.google.com/load-balancing/docs/https/setting-up-http-https-redirect)."""
    return readers.http_proxy_problems(resources)


def check_no_internet_ingress(resource: Any, workload: str | None) -> Iterable[str]:
    """GCP firewall rules admit no public source but Google's front ends / health checks and IAP's SSH
    range (Checkov CKV_GCP_2/3/106, Trivy AVD-GCP-0027): the external load balancer terminates at
    Google's edge."""
    for shown, source in readers.internet_rules(resource, is_public_range):
        yield (
            f"firewall {name_of(resource)} allows {shown} from {source}; only Google's front ends "
            "(35.191.0.0/16, 130.211.0.0/22) and IAP SSH may reach nodes"
        )


def check_node_data_secrets(resource: Any) -> Iterable[str]:
    """No secrets in GCP metadata startup scripts and user-data (readable from the metadata server and
    by anyone with compute.instances.get: https://cloud.google.com/compute/docs/metadata/overview)."""
    return node_data_secrets(resource, readers.user_data(resource))


def check_no_spot_serving(resource: Any) -> Iterable[str]:
    """Serving replicas never run on Spot, preemptible or flex-start VMs (flex-start ends on a timer). Ours."""
    if why := readers.spot_usage(resource) or readers.time_limited_usage(resource):
        yield f"{name_of(resource)} {why}; serving replica groups must be on-demand (or reserved)"


def check_spot_training_checkpoints(resources: Sequence[Any], pattern: str) -> Iterable[tuple[str, str]]:
    """As AWS's: Spot/preemptible training needs a checkpoint container or bucket. Ours."""
    return spot_without_checkpoints(resources, pattern, readers.spot_usage)


def resource_tags(resource: Any) -> Mapping[str, str]:
    """GCP spells the tags as labels (`accelstack-workload`)."""
    return {LABEL_TAGS.get(k, k): v for k, v in tag_values(resource.props.get("labels")).items()}


def provider_tags(facts: ProviderFacts) -> Iterable[str]:
    """The gcp provider stamps the workload through `defaultLabels`."""
    if not facts.default_tags.get(TAG_WORKLOAD):
        yield f"provider {facts.name} defaultLabels lack accelstack-workload"


VENDOR = Vendor(
    package="gcp",
    concepts=GCP,
    pin_inputs={"gcp": "project"},
    reachability=reachability.links,
    guardrails=GuardrailReaders(
        data_encryption=readers.check_customer_keys,
        public_storage=readers.check_no_public_buckets,
        min_tls=readers.check_min_tls,
        internet_ingress=check_no_internet_ingress,
        public_ip=readers.check_no_public_ip,
        os_login=readers.check_os_login,
        node_data_secrets=check_node_data_secrets,
        least_privilege=readers.check_least_privilege,
        versioning=readers.versioning_problems,
        scheduled_data_loss=readers.lifecycle_problems,
        queue_dlq=readers.queue_dlq_problems,
        http_redirects=check_http_only_redirects,
        spot_serving=check_no_spot_serving,
        spot_checkpoints=check_spot_training_checkpoints,
        queue_scaling=readers.scaling_problems,
        waf_front_doors=waf.front_doors,
        service_logs=retention.service_log_problems,
        retention=retention.retention_problems,
    ),
    separation=SeparationReaders(
        internet_facing=readers.internet_facing,
        not_training_fabric=readers.other_resource_policy,
        access=access.edges,
        access_types=access.ACCESS_TYPES,
        pinned_account=readers.project_problems,
        resource_tags=resource_tags,
        provider_tags=provider_tags,
    ),
)
