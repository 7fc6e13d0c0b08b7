"""The separation pack's provider rule, called without the provider's facts (as a reader or another
pack calling the pure function might): it fails closed instead of raising."""

from __future__ import annotations

import json
from types import SimpleNamespace

from accelstack.policies.common import make_context, provider_facts
from accelstack.policies.separation.rules import check_provider_account

ACCOUNT = "111111111111"
CONFIG = {"trainingAccounts": [ACCOUNT], "servingAccounts": ["222222222222"], "workload": "training"}


def test_a_pinnable_provider_without_facts_fails_closed():
    resource = SimpleNamespace(resource_type="pulumi:providers:aws", props={}, name="aws-east", urn="urn::aws-east")
    messages = list(check_provider_account(resource, make_context(CONFIG, [])))
    assert messages == ["provider aws-east (aws): its account pinning cannot be read"]


def test_the_same_provider_with_its_facts_passes_when_pinned():
    props = {"allowedAccountIds": json.dumps([ACCOUNT])}
    resource = SimpleNamespace(resource_type="pulumi:providers:aws", props=props, name="aws-east", urn="urn::aws-east")
    facts = provider_facts(resource.resource_type, props, resource.urn, resource.name)
    assert list(check_provider_account(resource, make_context(CONFIG, [facts]))) == []
