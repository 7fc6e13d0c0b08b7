"""The conformance checks, as pure functions over one previewed stack's registrations: each returns one
readable line per problem (empty: the stack conforms). test_conformance.py runs them on every cloud's
example stacks; test_checks_can_fail.py plants each kind of problem to show they can fail."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from accelstack import outputs
from accelstack.engine.capture import Registration
from accelstack.engine.export import PROVIDER_PREFIX, STACK_TYPE
from accelstack.policies import concepts
from accelstack.policies.common import TAG_STACK, TAG_WORKLOAD


def package_of(resource_type: str) -> str:
    if resource_type.startswith(PROVIDER_PREFIX):
        return resource_type[len(PROVIDER_PREFIX) :]
    return resource_type.split(":", 1)[0]


def custom_resources(resources: Iterable[Registration]) -> list[Registration]:
    """What a cloud provider creates: not the stack, not components, not the providers themselves, and not
    dynamic resources (the program's own code behind Pulumi's built-in dynamic provider: no cloud provider to
    pin, no labels to carry; the packs judge their inputs as `dynamic-operation`)."""
    return [
        r
        for r in resources
        if r.custom and r.type != STACK_TYPE and not r.is_provider and not concepts.is_a(r.type, "dynamic-operation")
    ]


# --- explicit providers ----------------------------------------------------------------------------


def default_provider(urn: str) -> bool:
    """Pulumi names the providers it makes on its own `default` or `default_<version>`."""
    name = urn.rsplit("::", 1)[-1]
    return name == "default" or name.startswith("default_")


def provider_problems(resources: list[Registration]) -> list[str]:
    """Every resource names one of the stack's own (explicit) providers."""
    explicit = {r.urn for r in resources if r.is_provider and not default_provider(r.urn)}
    problems = []
    for resource in custom_resources(resources):
        urn = resource.provider.rpartition("::")[0]
        if not resource.provider:
            problems.append(f"{resource.type} {resource.name}: no provider (Pulumi would use a default one)")
        elif urn not in explicit:
            problems.append(f"{resource.type} {resource.name}: provider {urn} is not one the stack registers")
        elif package_of(resource.type) != package_of(resource.provider.split("::")[2].rsplit("$", 1)[-1]):
            problems.append(f"{resource.type} {resource.name}: provider {urn} is another package's")
    return problems


# --- workload and stack tags -----------------------------------------------------------------------


@dataclass(frozen=True)
class TagCarrier:
    """How one provider package carries labels: the resource property (Pulumi name), the attribute a
    resource class of its SDK has when it takes that property, the provider's default-tags input and
    the path inside it, and the attribute of resources those defaults reach."""

    sdk: str  # the Python SDK module
    prop: str  # resource input carrying the tags
    attribute: str  # the SDK resource class's property for `prop`
    defaults: tuple[str, ...] = ()  # provider input holding default tags, then keys inside it
    defaults_reach: str = ""  # SDK attribute of the resources the defaults are merged into
    key_style: str = ":"  # how accelstack's keys are spelled: ":" accelstack:workload, "-" accelstack-workload
    list_of_strings: bool = False  # tags are a list of "key=value" strings, not a map


# One row per provider package accelstack deploys with. GCP label keys allow only [a-z0-9_-], hence
# `accelstack-workload`; Vultr tags are plain strings, hence `accelstack:workload=training`.
TAG_CARRIERS: Mapping[str, TagCarrier] = {
    "aws": TagCarrier("pulumi_aws", "tags", "tags", ("defaultTags", "tags"), "tags_all"),
    "azure-native": TagCarrier("pulumi_azure_native", "tags", "tags"),
    "gcp": TagCarrier("pulumi_gcp", "labels", "labels", ("defaultLabels",), "effective_labels", key_style="-"),
    "oci": TagCarrier("pulumi_oci", "freeformTags", "freeform_tags", key_style="-"),
    "vultr": TagCarrier("ediri_vultr", "tags", "tags", list_of_strings=True),
}


def sdk_class(carrier: TagCarrier, resource_type: str) -> type:
    """`aws:s3/bucket:Bucket` -> pulumi_aws.s3.Bucket (`index` is the package's top level)."""
    _, module, name = resource_type.split(":")
    module = module.split("/", 1)[0]
    if carrier.sdk == "pulumi_oci":  # `oci:Core/...`: pulumi-oci's Python modules are lowercase (pulumi_oci.core)
        module = module.lower()
    package = importlib.import_module(carrier.sdk if module == "index" else f"{carrier.sdk}.{module}")
    found = getattr(package, name, None)
    if not isinstance(found, type):
        raise LookupError(f"{resource_type}: no class {name} in {package.__name__}")
    return found


def tag_values(value: Any) -> dict[str, str]:
    """A map of tags, a list of {key, value} (autoscaling groups), or a JSON string of either."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {}
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    found = {}
    for tag in value if isinstance(value, list) else []:
        if isinstance(tag, Mapping) and "key" in tag:
            found[str(tag["key"])] = str(tag.get("value"))
        elif isinstance(tag, str) and "=" in tag:
            key, _, text = tag.partition("=")
            found[key] = text
    return found


def required_tags(carrier: TagCarrier, workload: str, stack: str) -> dict[str, str]:
    return {
        key.replace(":", carrier.key_style): value for key, value in {TAG_WORKLOAD: workload, TAG_STACK: stack}.items()
    }


def provider_defaults(carrier: TagCarrier, provider: Registration | None) -> dict[str, str]:
    if provider is None or not carrier.defaults:
        return {}
    value: Any = provider.inputs.get(carrier.defaults[0])
    for key in carrier.defaults[1:]:
        value = json.loads(value) if isinstance(value, str) else value
        value = value.get(key) if isinstance(value, Mapping) else None
    return tag_values(value)


def tag_problems(resources: list[Registration], workload: str, stack: str) -> tuple[list[str], int]:
    """(problems, how many taggable resources were checked): every resource whose type takes its
    package's tag property carries the workload and stack tags, its own or (where the provider's
    default tags reach it) the provider's."""
    providers = {r.urn: r for r in resources if r.is_provider}
    problems, checked = [], 0
    for resource in custom_resources(resources):
        package = package_of(resource.type)
        if package in concepts.LOCAL_PACKAGES:
            continue  # random bytes, TLS keys: nothing in a cloud to label
        carrier = TAG_CARRIERS.get(package)
        if carrier is None:
            problems.append(f"{resource.type} {resource.name}: package {package!r} has no row in TAG_CARRIERS")
            continue
        cls = sdk_class(carrier, resource.type)
        if not hasattr(cls, carrier.attribute):
            continue
        checked += 1
        effective = tag_values(resource.inputs.get(carrier.prop))
        if carrier.defaults_reach and hasattr(cls, carrier.defaults_reach):
            provider = providers.get(resource.provider.rpartition("::")[0])
            effective = {**provider_defaults(carrier, provider), **effective}
        for key, value in required_tags(carrier, workload, stack).items():
            if effective.get(key) != value:
                found = "missing" if key not in effective else f"{effective[key]!r}"
                problems.append(f"{resource.type} {resource.name}: tag {key} is {found}, wants {value!r}")
    return problems, checked


# --- stateful resources ----------------------------------------------------------------------------


def stateful_resources(resources: list[Registration]) -> list[Registration]:
    return [r for r in custom_resources(resources) if concepts.is_a(r.type, *concepts.STATEFUL)]


def protect_problems(resources: list[Registration]) -> list[str]:
    return [f"{r.type} {r.name}: not protected" for r in stateful_resources(resources) if not r.protect]


def retain_problems(resources: list[Registration]) -> list[str]:
    return [
        f"{r.type} {r.name}: not retained on delete" for r in stateful_resources(resources) if not r.retain_on_delete
    ]


# --- outputs ---------------------------------------------------------------------------------------


def output_problems(
    exported: Iterable[str], workload: str, holding: Iterable[str], legacy: Mapping[str, str] | None = None
) -> list[str]:
    """The stack's exports are exactly the contract's keys for the conditions that hold, plus the old name of
    each exported key the cloud still exports under its pre-contract name (`legacy`, old -> new)."""
    expected = outputs.expected_keys(workload, holding)
    legacy = legacy or {}
    expected |= {old for old, new in legacy.items() if new in expected}
    exported = set(exported)
    contract = outputs.CONTRACTS[workload]
    problems = [
        f"missing output {key}: {contract[key].meaning if key in contract else f'the old name of {legacy[key]}'}"
        for key in sorted(expected - exported)
    ]
    for key in sorted(exported - expected):
        known = outputs.CONTRACTS[workload].get(key)
        why = f"only when {known.when}" if known else f"not in the {workload} contract (accelstack/outputs.py)"
        problems.append(f"unexpected output {key}: {why}")
    return problems


def resource_counts(resources: Iterable[Registration]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for resource in resources:
        counts[resource.type] = counts.get(resource.type, 0) + 1
    return counts
