"""A `pulumi stack export` (v3) document as an ARM deployment template, so the scanners that gate Azure's own
templates (Checkov's `arm` framework: `checkov -f template.json --framework arm`) read an accelstack stack of
azure-native resources as they would the template of the same resources (tests/scan checks Checkov reads it).

Shape (learn.microsoft.com/azure/azure-resource-manager/templates/syntax):
  {"$schema": ".../deploymentTemplate.json#", "contentVersion": "1.0.0.0",
   "resources": [{type, apiVersion, name, location, tags, sku, kind, identity, zones, properties, dependsOn}]}

How the Pulumi view maps to it:
- Type tokens map to ARM resource types through the tables the clouds declare for the packages generated from
  the Azure REST API specs (`Cloud.arm`); the apiVersion is the one the installed SDK calls (its docstring). A
  token without a row is left out and listed in `ArmTemplate.unmapped`, never guessed.
- azure-native flattens ARM's `properties` into the resource's inputs: the envelope keys (location, tags, sku,
  kind, identity, zones, ...) stay at the top, the URL's path parameters (resourceGroupName, the names) form
  `name` (`parent/child` for a child resource) or are dropped, everything else goes back under `properties`,
  with the inputs the SDK renamed given ARM's name back (`ArmType.renames`). Items of sub-resource lists
  (security rules, IP configurations, gateway listeners, ...) are nested the same way: {id, name, properties}.
- A resource without a location of its own gets the provider's (`azure-native:location`), as azure-native does.
- Secrets never appear: a secret input is dropped. A value unknown during preview becomes an ARM expression
  (`[reference(...)]`), as a template would. A machine's base64 boot script is written as templates write it,
  `[base64('#cloud-config ...')]`, so Checkov's custom-data check reads the script.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import inspect
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from accelstack.clouds import registry
from accelstack.clouds.base import ArmProvider, ArmType
from accelstack.engine.capture import SIG_KEY, UNKNOWN
from accelstack.engine.export import PROVIDER_PREFIX, STACK_TYPE, is_secret

SCHEMA = "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"
ENVELOPE = ("location", "tags", "sku", "kind", "identity", "zones", "extendedLocation", "plan")
PATH_PARAMETERS = frozenset({"resourceGroupName", "scope", "resourceUri"})
API_VERSION = re.compile(r"Uses Azure REST API version (\d{4}-\d{2}-\d{2}(?:-preview)?)")
SUB_RESOURCE_KEYS = ("id", "name")
BOOT_DATA = frozenset({"customData", "userData"})  # base64 inputs that carry a machine's boot script


@dataclass
class ArmTemplate:
    document: dict[str, Any]
    addresses: dict[str, str]  # Pulumi URN -> "ARM type.name" (the address Checkov reports)
    unmapped: list[str] = field(default_factory=list)  # URNs of custom resources with no ARM type


def arm_providers() -> tuple[ArmProvider, ...]:
    return tuple(provider for cloud in registry.clouds().values() for provider in cloud.arm)


@cache
def api_version(token: str) -> str | None:
    """The REST API version the installed SDK's class for `token` calls (`azure-native:compute:Disk`)."""
    package, module, name = token.split(":")
    try:
        sdk = importlib.import_module(f"pulumi_{package.replace('-', '_')}.{module}")
        found = API_VERSION.search(inspect.getsource(getattr(sdk, name)))
    except (ImportError, AttributeError, OSError, TypeError):
        return None
    return found.group(1) if found else None


def _boot_script(value: str) -> str:
    """A machine's base64 custom data as a template writes a script: `[base64('...')]` around the text, so a
    scanner reads the script itself (and scans kilobytes of text, not of base64). Binary data stays as it is."""
    try:
        text = base64.b64decode(value, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return value
    return "[base64('" + text.replace("'", "''") + "')]"


def _clean(value: Any, sub_resources: frozenset[str], key: str | None = None) -> Any:
    """Secrets dropped (None), unknowns as expressions, sub-resource list items nested as ARM nests them."""
    if is_secret(value) or (isinstance(value, dict) and SIG_KEY in value):
        return None
    if value == UNKNOWN:
        return "[reference('unknown at preview')]"
    if key in BOOT_DATA and isinstance(value, str):
        return _boot_script(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        items = [_clean(item, sub_resources) for item in value]
        items = [item for item in items if item is not None]
        if key in sub_resources:
            return [_sub_resource(item, sub_resources) if isinstance(item, dict) else item for item in items]
        return items
    if isinstance(value, dict):
        cleaned = {k: _clean(v, sub_resources, k) for k, v in value.items()}
        return {k: v for k, v in cleaned.items() if v is not None}
    return value


def _sub_resource(item: dict[str, Any], sub_resources: frozenset[str]) -> dict[str, Any]:
    if "properties" in item:
        return item
    nested = {k: v for k, v in item.items() if k not in SUB_RESOURCE_KEYS}
    return {**{k: item[k] for k in SUB_RESOURCE_KEYS if k in item}, **({"properties": nested} if nested else {})}


def _resource_id(arm_type: str, name: str) -> str:
    segments = ", ".join(f"'{segment}'" for segment in name.split("/"))
    return f"[resourceId('{arm_type}', {segments})]"


class _Converter:
    def __init__(self, resources: list[dict[str, Any]]):
        self.providers = arm_providers()
        self.types: dict[str, ArmType] = {t: row for p in self.providers for t, row in p.types.items()}
        self.sub_resources = frozenset().union(*(p.sub_resource_lists for p in self.providers))
        self.entries = {entry["urn"]: entry for entry in resources}
        self.names: dict[str, tuple[str, str]] = {}  # URN -> (ARM type, ARM name)
        for entry in resources:
            row = self.types.get(entry["type"])
            if entry.get("custom") and row is not None:
                self.names[entry["urn"]] = (row.type, self._name(entry, row))
        self.addresses = {urn: f"{arm_type}.{name}" for urn, (arm_type, name) in self.names.items()}

    def _name(self, entry: dict[str, Any], row: ArmType) -> str:
        inputs = entry.get("inputs") or {}
        outputs = entry.get("outputs") or {}
        own = entry["urn"].rpartition("::")[2]
        segments = []
        for index, key in enumerate(row.name):
            if key.startswith("="):
                segments.append(key[1:])
                continue
            value = inputs.get(key)
            if not isinstance(value, str) or value == UNKNOWN:
                # The resource's own name is auto-named (its logical name plus a suffix, as the mocks record it).
                last = index == len(row.name) - 1
                value = outputs.get("name") if last and isinstance(outputs.get("name"), str) else own
            segments.append(str(value).rsplit("/", 1)[-1] if index < len(row.name) - 1 else str(value))
        return "/".join(segments)

    def _location(self, entry: dict[str, Any]) -> str | None:
        provider = self.entries.get(str(entry.get("provider", "")).rpartition("::")[0]) or {}
        location = (provider.get("inputs") or {}).get("location")
        return location if isinstance(location, str) else None

    def resource(self, entry: dict[str, Any]) -> dict[str, Any]:
        row = self.types[entry["type"]]
        inputs = dict(entry.get("inputs") or {})
        dropped = PATH_PARAMETERS | {k for k in row.name if not k.startswith("=")}
        arm: dict[str, Any] = {
            "type": row.type,
            "apiVersion": api_version(entry["type"]) or "",
            "name": self.names[entry["urn"]][1],
        }
        for key in ENVELOPE:
            if key in inputs and key not in dropped:
                value = _clean(inputs[key], self.sub_resources, key)
                if value is not None:
                    arm[key] = value
        if "location" not in arm and (location := self._location(entry)):
            arm["location"] = location
        properties: dict[str, Any] = {}
        nested = inputs.pop("properties", None)
        if isinstance(nested, dict):
            properties.update(_clean(nested, self.sub_resources) or {})
        for key, value in inputs.items():
            if key in dropped or key in ENVELOPE:
                continue
            cleaned = _clean(value, self.sub_resources, key)
            if cleaned is not None:
                properties[row.renames.get(key, key)] = cleaned
        if properties:
            arm["properties"] = properties
        # ARM's own spelling of an explicit dependency, which Checkov follows to build its resource graph.
        depends = {_resource_id(*self.names[d]) for d in self._arm_dependencies(entry)}
        if depends:
            arm["dependsOn"] = sorted(depends)
        return arm

    def _arm_dependencies(self, entry: dict[str, Any]) -> set[str]:
        """The URNs of ARM resources `entry` depends on: a dependency with no ARM form (a grant's propagation
        wait, components/propagation.py) stands for what it depends on itself, as a template would say it."""
        found: set[str] = set()
        seen: set[str] = set()
        todo = list(entry.get("dependencies") or [])
        while todo:
            urn = todo.pop()
            if urn in seen:
                continue
            seen.add(urn)
            if urn in self.names:
                found.add(urn)
            elif (other := self.entries.get(urn)) is not None and other.get("custom"):
                todo += other.get("dependencies") or []
        return found


def arm_template(document: dict[str, Any]) -> ArmTemplate:
    """The ARM template of a v3 export's resources of the ARM-described packages (`deployment_v3`)."""
    resources = document.get("deployment", {}).get("resources", [])
    converter = _Converter(resources)
    packages = {p.package for p in converter.providers}
    template_resources, unmapped = [], []
    for entry in resources:
        if not entry.get("custom") or entry["type"].startswith(PROVIDER_PREFIX) or entry["type"] == STACK_TYPE:
            continue
        if entry["type"].split(":", 1)[0] not in packages:
            continue  # another package's resource (random bytes): no ARM resource at all
        if entry["urn"] not in converter.names:
            unmapped.append(entry["urn"])
            continue
        template_resources.append(converter.resource(entry))
    template = {"$schema": SCHEMA, "contentVersion": "1.0.0.0", "resources": template_resources}
    return ArmTemplate(document=template, addresses=converter.addresses, unmapped=unmapped)
