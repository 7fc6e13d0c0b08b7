"""A fresh project works (issue 27, gcp review W1): a grant to a Google service agent that exists only once
something asks for it waits for the resource that creates it (projects.ServiceIdentity), so the grant never names
an agent that is not there ("Service account ... does not exist"). Every variant that names one, on both workloads."""

from __future__ import annotations

import re

import pytest
from stack_edits import deployed, updated

# Agents created on first use (cloud.google.com/iam/docs/service-agents); Compute Engine's exists with its API.
CREATED_ON_FIRST_USE = re.compile(r"@(gcp-sa-[a-z-]+|cloud-filer)\.iam\.gserviceaccount\.com$")
CASES = {
    "gcp-training": (),
    "gcp-serving": (),
    "gcp-training filestore": (
        "training.storage.lustre.tier=filestore-zonal",
        "training.storage.lustre.capacityGiB=4608",
        "training.storage.lustre.throughputPerTiB=null",
    ),
}


def resources(case: str):
    stack, *_ = case.split()
    overrides = CASES[case]
    return updated(stack, overrides).resources if overrides else deployed(stack)[0].resources


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_grant_to_an_agent_created_on_first_use_waits_for_its_creation(case: str) -> None:
    found = resources(case)
    identities = {r.urn: r for r in found if r.type == "gcp:projects/serviceIdentity:ServiceIdentity"}
    grants = [r for r in found if CREATED_ON_FIRST_USE.search(str(r.inputs.get("member", "")))]
    assert grants, f"{case}: no grant to a service agent (the check would be vacuous)"
    for grant in grants:
        creators = [identities[u] for u in grant.property_dependencies.get("member", []) if u in identities]
        assert creators, f"{grant.name} names {grant.inputs['member']} without creating it"
        assert creators[0].outputs["email"] == grant.inputs["member"].removeprefix("serviceAccount:")


def test_no_agent_is_created_for_a_service_the_stack_does_not_use() -> None:
    services = {r.inputs["service"] for r in resources("gcp-training filestore") if r.type.endswith("ServiceIdentity")}
    assert services == {"file.googleapis.com"}  # no Managed Lustre agent where Filestore serves
