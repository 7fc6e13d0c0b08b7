"""The requests the Pulumi engine sends a policy analyzer, built from a `pulumi stack export` (v3) document.

`Analyze` gets one AnalyzeRequest per resource (its inputs, options and provider); `AnalyzeStack` one request with
every resource's final state, parent and dependencies. State-form secrets become wire-form secrets, and a secret that
cannot be read becomes an unknown, like a preview value. `decoded_properties` is what the servicer would decode from
the requests' property Structs, read from the export directly (accelstack.engine.struct_decode.struct_json).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf import struct_pb2
from pulumi.runtime import proto

from accelstack.engine import struct_decode
from accelstack.engine.capture import SECRET_SIG, SIG_KEY, UNKNOWN
from accelstack.engine.export import is_secret
from accelstack.engine.struct_decode import Decoded
from accelstack.spec.json_input import JsonInputError, load_json


def _wire(value: Any) -> Any:
    """State-form secrets ({sig, plaintext|ciphertext}) to wire form ({sig, value}); a secret we cannot
    read (ciphertext, or redacted by accelstack's export) becomes an unknown, like a preview value."""
    if isinstance(value, dict):
        if is_secret(value):
            if "value" in value:
                return {SIG_KEY: SECRET_SIG, "value": _wire(value["value"])}
            if isinstance(value.get("plaintext"), str):
                try:
                    return {SIG_KEY: SECRET_SIG, "value": _wire(load_json(value["plaintext"], "plaintext"))}
                except JsonInputError:
                    pass
            return {SIG_KEY: SECRET_SIG, "value": UNKNOWN}
        return {key: _wire(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_wire(item) for item in value]
    return value


def _struct(props: Mapping[str, Any] | None) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(_wire(dict(props or {})))
    return struct


def _name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def _type_of_urn(urn: str) -> str:
    """`urn:pulumi:stack::project::parent$pulumi:providers:aws::name` -> `pulumi:providers:aws`."""
    parts = urn.split("::")
    return parts[2].rsplit("$", 1)[-1] if len(parts) >= 4 else ""


def _options(entry: Mapping[str, Any]) -> Any:
    dbr = entry.get("deleteBeforeReplace")
    return proto.AnalyzerResourceOptions(
        protect=bool(entry.get("protect")),
        ignoreChanges=list(entry.get("ignoreChanges") or []),
        deleteBeforeReplace=bool(dbr),
        deleteBeforeReplaceDefined=dbr is not None,
        additionalSecretOutputs=list(entry.get("additionalSecretOutputs") or []),
        parent=entry.get("parent") or "",
    )


def _provider(entry: Mapping[str, Any], by_urn: Mapping[str, Mapping[str, Any]]) -> Any | None:
    reference = entry.get("provider")
    if not reference:
        return None
    urn = reference.rsplit("::", 1)[0]
    target = by_urn.get(urn, {})
    provider_type = target.get("type") or _type_of_urn(urn)
    return proto.AnalyzerProviderResource(
        type=provider_type, properties=_struct(target.get("inputs")), urn=urn, name=_name(urn)
    )


def _providers_of(resources: list[dict[str, Any]]) -> Any:
    """`_provider` for each resource, built once per provider reference however many resources name it."""
    by_urn = {r["urn"]: r for r in resources}
    built: dict[str, Any] = {}

    def provider(entry: Mapping[str, Any]) -> Any | None:
        reference = entry.get("provider")
        if not isinstance(reference, str) or not reference:
            return _provider(entry, by_urn)
        if reference not in built:
            built[reference] = _provider(entry, by_urn)
        return built[reference]

    return provider


def analyze_requests(resources: list[dict[str, Any]], *, properties: bool = True) -> list[Any]:
    """One AnalyzeRequest per resource: its inputs (unless not `properties`: `decoded_properties`), options and
    provider (what `Analyze` sees)."""
    provider_of = _providers_of(resources)
    requests = []
    for entry in resources:
        request = proto.AnalyzeRequest(
            type=entry["type"],
            properties=_struct(entry.get("inputs")) if properties else None,
            urn=entry["urn"],
            name=_name(entry["urn"]),
            options=_options(entry),
        )
        provider = provider_of(entry)
        if provider is not None:
            request.provider.CopyFrom(provider)
        requests.append(request)
    return requests


def analyze_stack_request(resources: list[dict[str, Any]], *, properties: bool = True) -> Any:
    """The AnalyzeStackRequest: every resource's outputs (the stack's final state; unless not `properties`:
    `decoded_properties`), parent and dependencies, as the engine sends it after the plan."""
    provider_of = _providers_of(resources)
    request = proto.AnalyzeStackRequest()
    for entry in resources:
        item = proto.AnalyzerResource(
            type=entry["type"],
            properties=_struct(_final(entry)) if properties else None,
            urn=entry["urn"],
            name=_name(entry["urn"]),
            options=_options(entry),
            parent=entry.get("parent") or "",
            dependencies=list(entry.get("dependencies") or []),
        )
        provider = provider_of(entry)
        if provider is not None:
            item.provider.CopyFrom(provider)
        for key, urns in (entry.get("propertyDependencies") or {}).items():
            item.propertyDependencies[key].CopyFrom(proto.AnalyzerPropertyDependencies(urns=list(urns)))
        request.resources.append(item)
    return request


def _final(entry: Mapping[str, Any]) -> Any:
    return entry.get("outputs") or entry.get("inputs")


def decoded_properties(resources: list[dict[str, Any]]) -> tuple[list[Decoded], list[Decoded]]:
    """What the servicer decodes from each request's properties (`deserialize_properties` of
    `json_format.MessageToDict` of `_struct`), read from the export without building the Structs
    (accelstack.engine.struct_decode.decoded): each resource's inputs (`analyze_requests`), then each one's final state
    (`analyze_stack_request`), in order, so that a value protobuf refuses fails as building the requests did."""
    inputs = [
        struct_decode.decoded(dict(entry.get("inputs") or {}), struct_decode.in_analyze_request, _wire)
        for entry in resources
    ]
    finals = [
        struct_decode.decoded(dict(_final(entry) or {}), struct_decode.in_stack_request, _wire) for entry in resources
    ]
    return inputs, finals
