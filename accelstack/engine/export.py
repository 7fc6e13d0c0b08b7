"""A capture as a `pulumi stack export` document (apitype.DeploymentV3 with ResourceV3 entries).

Shape (sdk/go/common/apitype/core.go, deployments.json, resources.json):
  {"version": 3, "deployment": {"manifest": {time, magic, version, plugins}, "resources": [...]}}
Resources keep registration order, which is topological (a resource registers only after its
parent, provider and dependencies have URNs), with the Stack first, as `pulumi stack import`'s
integrity check requires. Secrets never appear in clear: each keeps Pulumi's secret signature
with a redacted ciphertext, including outputs the resource declared in additionalSecretOutputs.
"""

from __future__ import annotations

import hashlib
import heapq
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from accelstack.engine.capture import SECRET_SIG, SIG_KEY, Capture, Registration

STACK_TYPE = "pulumi:pulumi:Stack"
PROVIDER_PREFIX = "pulumi:providers:"
REDACTED = "[redacted by accelstack: secrets are never exported in clear]"


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return ""


def is_secret(value: Any) -> bool:
    return isinstance(value, dict) and value.get(SIG_KEY) == SECRET_SIG


def redact(value: Any) -> Any:
    """Replace every secret (wire form `{sig, value}` or state form `{sig, ciphertext|plaintext}`)."""
    if is_secret(value):
        return {SIG_KEY: SECRET_SIG, "ciphertext": REDACTED}
    if isinstance(value, dict):
        return {key: redact(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact(item) for item in value]
    return value


def _outputs(registration: Registration) -> dict[str, Any]:
    outputs = dict(registration.outputs)
    # The engine stores these outputs as secrets even when the provider returned them in clear.
    for key in registration.additional_secret_outputs:
        if key in outputs and not is_secret(outputs[key]):
            outputs[key] = {SIG_KEY: SECRET_SIG, "value": outputs[key]}
    redacted: dict[str, Any] = redact(outputs)
    return redacted


def sorted_keys(value: Any) -> Any:
    """Objects with their keys sorted, at every depth (as Go's encoding/json writes a map): the wire
    struct's field order depends on the registration, and two exports of one stack must diff cleanly."""
    if isinstance(value, dict):
        return {key: sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(item) for item in value]
    return value


def resource_v3(registration: Registration) -> dict[str, Any]:
    is_stack = registration.type == STACK_TYPE
    entry: dict[str, Any] = {"urn": registration.urn, "custom": registration.custom}
    if registration.custom:
        entry["id"] = registration.id
    entry["type"] = registration.type
    entry["inputs"] = {} if is_stack else sorted_keys(redact(registration.inputs))
    entry["outputs"] = sorted_keys(_outputs(registration))
    if registration.parent and not is_stack:
        entry["parent"] = registration.parent
    entry["protect"] = registration.protect
    if registration.external:
        entry["external"] = True
    if registration.custom and registration.provider:
        entry["provider"] = registration.provider
    # The engine sees these as sets; the program adds them in whatever order its outputs resolve.
    entry["dependencies"] = sorted(registration.dependencies)
    entry["propertyDependencies"] = {
        key: sorted(urns) for key, urns in sorted(registration.property_dependencies.items()) if urns
    }
    if registration.additional_secret_outputs:
        entry["additionalSecretOutputs"] = list(registration.additional_secret_outputs)
    if registration.retain_on_delete:
        entry["retainOnDelete"] = True
    if registration.ignore_changes:
        entry["ignoreChanges"] = list(registration.ignore_changes)
    return entry


def _plugins(resources: list[Registration]) -> list[dict[str, str]]:
    packages = sorted({r.type[len(PROVIDER_PREFIX) :] for r in resources if r.type.startswith(PROVIDER_PREFIX)})
    return [
        {"name": name, "path": "", "type": "resource", "version": _package_version(f"pulumi-{name}")}
        for name in packages
    ]


def deterministic_order(resources: list[Registration]) -> list[Registration]:
    """Every resource after its parent, provider and dependencies (what `pulumi stack import` checks),
    ties broken by URN: the program registers asynchronously, so registration order varies between
    runs, and two exports of the same stack should diff cleanly. The Stack comes first."""
    by_urn = {r.urn: r for r in resources}

    def needs(r: Registration) -> set[str]:
        wanted = {r.parent, r.provider.rpartition("::")[0], *r.dependencies}
        return {urn for urn in wanted if urn in by_urn and urn != r.urn}

    waiting = {r.urn: needs(r) for r in resources}
    dependents: dict[str, list[str]] = {}
    for urn, wanted in waiting.items():
        for needed in wanted:
            dependents.setdefault(needed, []).append(urn)
    ready = [(by_urn[u].type != STACK_TYPE, u) for u, wanted in waiting.items() if not wanted]
    heapq.heapify(ready)
    ordered: list[Registration] = []
    while ready:
        _, urn = heapq.heappop(ready)
        ordered.append(by_urn[urn])
        for dependent in dependents.get(urn, []):
            waiting[dependent].discard(urn)
            if not waiting[dependent]:
                heapq.heappush(ready, (by_urn[dependent].type != STACK_TYPE, dependent))
    # A cycle cannot come from a real program; keep anything left in registration order rather than drop it.
    placed = {r.urn for r in ordered}
    return ordered + [r for r in resources if r.urn not in placed]


def deployment_v3(capture: Capture, *, time: datetime | None = None) -> dict[str, Any]:
    """The `pulumi stack export` document for a capture (Stack resource first)."""
    engine_version = _package_version("pulumi")
    stack_first = deterministic_order(capture.resources)
    return {
        "version": 3,
        "deployment": {
            "manifest": {
                "time": (time or datetime.now(UTC)).isoformat(timespec="seconds").replace("+00:00", "Z"),
                # Same cookie the engine computes (Manifest.NewMagic): sha256 of the version string.
                "magic": hashlib.sha256(engine_version.encode()).hexdigest() if engine_version else "",
                "version": engine_version,
                "plugins": _plugins(capture.resources),
            },
            "resources": [resource_v3(r) for r in stack_first],
        },
    }


def integrity_problems(document: dict[str, Any]) -> list[str]:
    """What `pulumi stack import` would reject (snapshot VerifyIntegrity), one message each: duplicate
    URNs, and parents, providers or dependencies that do not appear earlier in the list."""
    problems: list[str] = []
    seen: dict[str, dict[str, Any]] = {}
    resources = document.get("deployment", {}).get("resources", [])
    if resources and resources[0].get("type") != STACK_TYPE:
        problems.append("the first resource is not the Stack")
    for entry in resources:
        urn = entry["urn"]
        if urn in seen:
            problems.append(f"{urn}: duplicate URN")
        parent = entry.get("parent")
        if parent and parent not in seen:
            problems.append(f"{urn}: parent {parent} is not an earlier resource")
        provider = entry.get("provider")
        if provider:
            provider_urn, _, provider_id = provider.rpartition("::")
            target = seen.get(provider_urn)
            if target is None or not target["type"].startswith(PROVIDER_PREFIX):
                problems.append(f"{urn}: provider {provider_urn} is not an earlier provider resource")
            elif target.get("id") != provider_id:
                problems.append(f"{urn}: provider reference id {provider_id!r} != provider's id {target.get('id')!r}")
        for dependency in entry.get("dependencies", []):
            if dependency not in seen:
                problems.append(f"{urn}: dependency {dependency} is not an earlier resource")
        seen[urn] = entry
    return problems
