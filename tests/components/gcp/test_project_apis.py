"""A fresh project works (gcp review W1): the stack enables every API its resources call (`projects.Service`, left
enabled on destroy) and every resource waits for the APIs its type calls (accelstack.clouds.gcp.services), on every
variant the components build. A resource type with no row in the table fails here, so a new type cannot skip it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from stack_edits import deployed, updated

from accelstack.clouds.gcp import services
from accelstack.engine.capture import Registration

# The fresh-project section lives in the GCP deploy page (the README links it).
README = Path(__file__).resolve().parents[3] / "docs" / "deploy-gcp.md"
VARIANTS = {
    "gcp-training": (),
    "gcp-serving": (),
    "gcp-training filestore": (
        "training.storage.lustre.tier=filestore-zonal",
        "training.storage.lustre.capacityGiB=4608",
        "training.storage.lustre.throughputPerTiB=null",
    ),
    "gcp-training managed": (
        "training.scheduler.kind=managed",
        'training.scheduler.partitions=[{"name": "gpu", "default": true}]',
    ),
    "gcp-training flex-start": ("training.nodes.capacity=flex-start", "training.nodes.maxRunHours=48"),
    "gcp-serving direct": ("serving.admission.kind=replica",),
}


def resources(variant: str) -> list[Registration]:
    stack, *_ = variant.split()
    overrides = VARIANTS[variant]
    return updated(stack, overrides).resources if overrides else deployed(stack)[0].resources


def waits_for(resource: Registration, by_urn: dict[str, Registration]) -> set[str]:
    """Every resource `resource` waits for before its create call, transitively."""
    seen: set[str] = set()
    todo = [resource.urn]
    while todo:
        current = by_urn.get(todo.pop())
        if current is None:
            continue
        for urn in (*current.dependencies, *(u for us in current.property_dependencies.values() for u in us)):
            if urn not in seen:
                seen.add(urn)
                todo.append(urn)
    return seen


def enabled_apis(found: list[Registration]) -> dict[str, Registration]:
    return {r.inputs["service"]: r for r in found if r.type == services.SERVICE_TYPE}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_resource_type_is_tabled(variant: str) -> None:
    untabled = {
        r.type
        for r in resources(variant)
        if r.custom and r.type.startswith("gcp:") and services.ACCOUNT_SERVICES.services_of(r.type) is None
    }
    assert not untabled, f"add these types' APIs to accelstack.clouds.gcp.services: {sorted(untabled)}"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_resource_waits_for_the_apis_it_calls(variant: str) -> None:
    found = resources(variant)
    by_urn = {r.urn: r for r in found}
    apis = enabled_apis(found)
    checked = 0
    for resource in found:
        if not resource.custom or not resource.type.startswith("gcp:") or resource.type == services.SERVICE_TYPE:
            continue
        needed = set(services.ACCOUNT_SERVICES.services_of(resource.type) or ())
        if resource.type == services.SERVICE_IDENTITY_TYPE:
            needed.add(resource.inputs["service"])  # an agent exists only for an enabled API
        missing = {api for api in needed if api not in apis or apis[api].urn not in waits_for(resource, by_urn)}
        assert not missing, f"{variant}: {resource.type} {resource.name} does not wait for {sorted(missing)}"
        checked += bool(needed)
    assert checked >= 15, f"{variant}: only {checked} resources call an API (the check would be vacuous)"


def test_grants_to_service_agents_wait_for_the_agents_api() -> None:
    """The Compute Engine agent exists once its API is enabled; Cloud Storage's once read; the grant naming one
    waits for its API through the member's value (the project number, the agent look-up)."""
    found = resources("gcp-training")
    by_urn = {r.urn: r for r in found}
    apis = enabled_apis(found)
    agents = {"compute-system": services.COMPUTE, "gs-project-accounts": services.STORAGE}
    grants = [r for r in found if r.type == "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember"]
    for domain, api in agents.items():
        grant = next(g for g in grants if domain in str(g.inputs["member"]))
        member_waits = {
            u for urn in grant.property_dependencies.get("member", []) for u in (urn, *waits_for(by_urn[urn], by_urn))
        }
        assert apis[api].urn in member_waits, f"{grant.name}: its member {domain} does not wait for {api}"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_apis_are_enabled_once_left_on_at_destroy_and_only_when_used(variant: str) -> None:
    found = resources(variant)
    enablers = [r for r in found if r.type == services.SERVICE_TYPE]
    names = [r.inputs["service"] for r in enablers]
    assert len(names) == len(set(names)), f"{variant}: an API enabled twice: {sorted(names)}"
    for enabler in enablers:
        assert enabler.inputs["disableOnDestroy"] is False, enabler.name  # the project's other users keep it
        assert enabler.inputs["disableDependentServices"] is False, enabler.name
        assert not enabler.dependencies, f"{enabler.name} waits for {enabler.dependencies}"
    needed, _ = services.ACCOUNT_SERVICES.needed(r.type for r in found if r.custom)
    identities = {r.inputs["service"] for r in found if r.type == services.SERVICE_IDENTITY_TYPE}
    invoked = {services.RESOURCE_MANAGER, services.STORAGE}  # the project-number and storage-agent look-ups
    used = set(needed) | identities | (invoked & set(names))
    assert set(names) == used, f"{variant}: enabled {sorted(set(names) - used)} without a use"


def test_filestore_and_cluster_director_enable_their_apis() -> None:
    assert "file.googleapis.com" in enabled_apis(resources("gcp-training filestore"))
    assert "lustre.googleapis.com" not in enabled_apis(resources("gcp-training filestore"))
    assert "hypercomputecluster.googleapis.com" in enabled_apis(resources("gcp-training managed"))
    assert "pubsub.googleapis.com" not in enabled_apis(resources("gcp-serving direct"))


@pytest.mark.parametrize("stack", ["gcp-training", "gcp-serving"])
def test_readme_names_every_api_the_example_stack_enables(stack: str) -> None:
    """The GCP deploy page's fresh-project section names, per example stack, exactly the APIs the stack enables."""
    text = README.read_text()
    match = re.search(rf"^- `{stack}` enables: (.+?)\n(?:- |\n)", text, re.MULTILINE | re.DOTALL)
    assert match, f"docs/deploy-gcp.md has no '- `{stack}` enables: ...' line"
    listed = set(re.findall(r"`([a-z]+\.googleapis\.com)`", match[1]))
    assert listed == set(enabled_apis(resources(stack)))
