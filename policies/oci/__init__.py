"""OCI (pulumi-oci): the packs' vendor entry. The readers are in readers.py, the access graph's edges (IAM
policy statements parsed by statements.py, dynamic groups) in access.py, the network view in reachability.py.

Separation on OCI is by compartment: the provider signs for the tenancy (`tenancyOcid`), which holds both sides'
compartments, so the provider's pin is the tenancy and every resource's `compartmentId` must be the stack's own
compartment (the separation config's accounts are compartment OCIDs)."""

from __future__ import annotations

from collections.abc import Iterable

from ..common import ProviderFacts
from ..vendor import GuardrailReaders, SeparationReaders, Vendor
from . import access, reachability, readers, transfers
from .concepts import OCI


def provider_pin(facts: ProviderFacts) -> Iterable[str]:
    """The oci provider names its tenancy (`tenancyOcid`, an `ocid1.tenancy.` OCID): without it the provider takes
    the deployer's ~/.oci/config tenancy, whatever it is."""
    if not facts.tenancy:
        yield f"provider {facts.name} does not pin its tenancy: set tenancyOcid to the stack's tenancy"
    elif not facts.tenancy.startswith("ocid1.tenancy."):
        yield f"provider {facts.name} pins tenancyOcid {facts.tenancy!r}, which is not a tenancy OCID"


VENDOR = Vendor(
    package="oci",
    concepts=OCI,
    pin_inputs={"oci": "tenancyOcid"},
    reachability=reachability.links,
    guardrails=GuardrailReaders(
        data_encryption=readers.check_customer_keys,
        public_storage=readers.check_no_public_buckets,
        internet_ingress=readers.check_no_internet_ingress,
        public_ip=readers.check_no_public_ip,
        private_subnets=readers.private_subnet_problems,
        node_data_secrets=readers.check_node_data_secrets,
        least_privilege=readers.check_least_privilege,
        versioning=readers.versioning_problems,
        scheduled_data_loss=transfers.lifecycle_problems,
        spot_checkpoints=readers.check_spot_training_checkpoints,
        stateful_names={"parallel-file-system": "File Storage with Lustre file system"},
    ),
    separation=SeparationReaders(
        access=access.edges,
        access_types=access.ACCESS_TYPES,
        pinned_account=readers.compartment_problems,
        provider_pin=provider_pin,
        resource_tags=readers.resource_tags,
    ),
)
