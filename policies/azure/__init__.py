"""Azure (pulumi-azure-native): the packs' vendor entry. The readers are in readers.py, storage.py,
separation.py (storage firewalls) and access.py (the access graph's edges); the adapters here give them the shapes the packs' concerns ask for."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..common import tag_values
from ..readers import is_public_range, name_of, node_data_secrets, spot_without_checkpoints
from ..vendor import GuardrailReaders, SeparationReaders, Vendor
from . import access, capacity, reachability, readers, retention, separation, storage, store_access, waf
from .concepts import AZURE


def check_managed_ml_private(resource: Any) -> Iterable[str]:
    """Managed training on Azure Machine Learning is private and identity-only: the workspace off the internet
    (Checkov CKV_AZURE_144), the compute without local auth (CKV_AZURE_142), datastores without stored
    credentials (policies/azure/readers.py)."""
    yield from readers.check_ml_workspace_private(resource)
    yield from readers.check_ml_compute_local_auth(resource)
    yield from readers.check_ml_datastore_identity(resource)


def check_no_internet_ingress(resource: Any, workload: str | None) -> Iterable[str]:
    """Azure NSG rules admit the internet (`*`, `Internet`, a public prefix or a public service tag)
    only on TCP 443/80 in serving (Checkov CKV_AZURE_9/10/160, Trivy AVD-AZU-0047/0048)."""
    for protocol, ports, source in readers.internet_rules(resource, is_public_range):
        if workload == "serving" and readers.web_only(protocol, ports):
            continue
        shown = f"{protocol} {', '.join(ports) or 'all ports'}"
        yield f"{name_of(resource)} allows inbound {shown} from {source}; only the serving gateway's 443/80 may be public"


def check_node_data_secrets(resource: Any) -> Iterable[str]:
    """No secrets in Azure custom data / user data (readable from the instance metadata service and by
    anyone who can read the VM model: Checkov CKV_AZURE_45)."""
    return node_data_secrets(resource, readers.user_data(resource))


def check_queue_dlq(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    for resource in resources:
        for message in readers.queue_dlq_problems(resource):
            yield resource.urn, message


check_queue_dlq.__doc__ = readers.queue_dlq_problems.__doc__


def check_no_spot_serving(resource: Any) -> Iterable[str]:
    """Serving replicas never run on Spot or low-priority VMs, nor are scheduled away. Ours."""
    if why := capacity.spot_usage(resource) or capacity.time_limited_usage(resource):
        yield f"{name_of(resource)} {why}; serving replica groups must be on-demand (or reserved)"


def check_spot_training_checkpoints(resources: Sequence[Any], pattern: str) -> Iterable[tuple[str, str]]:
    """As AWS's: Spot/low-priority training needs a checkpoint container or bucket. Ours."""
    return spot_without_checkpoints(resources, pattern, capacity.spot_usage)


def location(resource: Any) -> Any:
    """azure-native resources take their own `location` ("global" for global services: DNS zones)."""
    value = resource.props.get("location")
    return None if value == "global" else value


def resource_tags(resource: Any) -> Mapping[str, str]:
    return tag_values(resource.props.get("tags"))


VENDOR = Vendor(
    package="azure-native",
    concepts=AZURE,
    pin_inputs={"azure-native": "subscriptionId"},
    reachability=reachability.links,
    guardrails=GuardrailReaders(
        encryption_at_rest=readers.check_encryption_at_rest,
        data_encryption=readers.check_customer_keys,
        public_storage=readers.check_no_public_storage,
        min_tls=readers.check_min_tls,
        queue_identity_auth=readers.check_identity_auth,
        managed_ml_private=check_managed_ml_private,
        internet_ingress=check_no_internet_ingress,
        ingress_owner=readers.ingress_owner_problems,
        public_ip=readers.check_no_public_ip,
        node_data_secrets=check_node_data_secrets,
        least_privilege=readers.check_least_privilege,
        versioning=storage.versioning_problems,
        scheduled_data_loss=storage.lifecycle_problems,
        queue_dlq=check_queue_dlq,
        https_listeners=readers.check_https_listeners,
        spot_serving=check_no_spot_serving,
        spot_checkpoints=check_spot_training_checkpoints,
        queue_scaling=readers.scaling_problems,
        waf_front_doors=waf.front_doors,
        service_logs=retention.service_log_problems,
        retention=retention.retention_problems,
        # The VM declares `osProfile` (customData in it) an additional secret output.
        secret_output_kinds=(readers.VM,),
    ),
    separation=SeparationReaders(
        region=location,
        internet_facing=readers.internet_facing,
        access_types=access.ACCESS_TYPES,
        access=access.edges,
        admission_types=readers.STORAGE_ACCOUNT,
        network_admission=separation.network_admission_problems,
        key_access=store_access.key_access_problems,
        resource_tags=resource_tags,
    ),
)
