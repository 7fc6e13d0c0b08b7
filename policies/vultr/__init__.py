"""Vultr (ediri-vultr): the packs' vendor entry. Vultr has no IAM and no sub-accounts: the API key is the account
(docs/deploy-vultr.md), so the provider's pin is its key (a secret: the packs see that it is set and secret, never
its value), every resource is the key's account's, and the separation config names each side by its key's reference
(`env:VULTR_SERVING_API_KEY`). What the packs judge: what the internet reaches (the load balancer's HTTPS frontends
only), firewall rules, user data, and the workload tags."""

from __future__ import annotations

from collections.abc import Iterable

from ..common import ProviderFacts
from ..vendor import GuardrailReaders, SeparationReaders, Vendor
from . import reachability, readers
from .concepts import VULTR


def provider_pin(facts: ProviderFacts) -> Iterable[str]:
    """The vultr provider carries an API key (`apiKey`): without one it takes VULTR_API_KEY from the deployer's
    environment, whichever account that is."""
    if not facts.api_key_set:
        yield f"provider {facts.name} sets no apiKey: pass the stack's key (account.apiKeySecret) as a secret"


VENDOR = Vendor(
    package="vultr",
    concepts=VULTR,
    pin_inputs={"vultr": "apiKey"},
    reachability=reachability.links,
    guardrails=GuardrailReaders(
        internet_ingress=readers.check_no_internet_ingress,
        https_listeners=readers.check_https_listeners,
        node_data_secrets=readers.check_node_data_secrets,
        node_data_references=readers.check_node_data_references,
    ),
    separation=SeparationReaders(
        region=readers.region_of,
        internet_facing=readers.internet_facing,
        resources_carry_region=True,
        provider_pin=provider_pin,
        resource_tags=readers.resource_tags,
    ),
)
