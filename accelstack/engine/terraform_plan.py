"""A `pulumi stack export` (v3) document as a Terraform plan JSON (`terraform show -json PLAN`), so the
scanners security teams already gate Terraform with read an accelstack stack as they would a first
`terraform plan` of the same resources (Checkov's `terraform_plan` framework is tested: tests/scan).

Shape (Terraform docs, "JSON Output Format", plan representation):
  {"format_version": "1.2",
   "planned_values": {"root_module": {"resources": [{address, mode, type, name, provider_name,
                                                     schema_version, values, sensitive_values}]}},
   "resource_changes": [{address, mode, type, name, provider_name,
                         change: {actions: ["create"], before: null, after, after_unknown, ...}}],
   "configuration": {"provider_config": {...}, "root_module": {"resources": [{address, mode, type,
                                                      name, provider_config_key, expressions}]}}}

How the Pulumi view maps to it:
- Type tokens map to Terraform resource types through the tables each cloud declares for the
  Terraform-bridged packages it pins (`Cloud.terraform`: the bridge's own token -> resource renames,
  which the installed Python SDKs do not ship), merged over the registered clouds
  (`accelstack.engine.cloud_tables`). A token without a mapping is left out and listed in
  `TerraformPlan.unmapped`, never guessed.
- camelCase input keys become snake_case; the bridge's pluralised list-block names go back to
  Terraform's singular block names (`TerraformProvider.block_renames`, e.g. a lifecycle configuration's
  `rules` -> `rule`); Pulumi's flattened single blocks (`{...}`) become Terraform's one-element block
  lists; map attributes (`tags`, and those a type's provider declares) stay maps with their keys untouched.
- An input that names another resource (the program passed that resource's id/arn/name, which
  the capture records in `propertyDependencies`) is, as in a real first plan, unknown until apply:
  absent from `values`, `true` in `after_unknown`, and a `references` expression
  (`TYPE.NAME.id`, `TYPE.NAME`) in `configuration`. Checkov builds its
  cross-resource graph (bucket <-> public access block/versioning/logging, security group <->
  rules, VPC <-> flow log) from exactly these references.
- Secrets never appear: a secret input is dropped and marked in `after_sensitive`.
- Values computed from another resource's output (a bucket policy naming the bucket ARN) keep the
  mock value the preview computed, so scanners can still read the policy document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from accelstack.engine.capture import SIG_KEY, UNKNOWN
from accelstack.engine.cloud_tables import terraform_tables
from accelstack.engine.export import PROVIDER_PREFIX, STACK_TYPE, _package_version, is_secret

FORMAT_VERSION = "1.2"
DYNAMIC_PREFIX = "pulumi-python:dynamic"  # pulumi.dynamic resources (`pulumi-python:dynamic[/module]:Name`)


def snake_case(name: str) -> str:
    """`applyServerSideEncryptionByDefault` -> `apply_server_side_encryption_by_default`,
    `cidrIpv4` -> `cidr_ipv4`, `enableDnsHostnames` -> `enable_dns_hostnames`."""
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def terraform_name(logical_name: str) -> str:
    """A Terraform identifier (letters, digits, `_`, `-`; not starting with a digit or `-`)."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", logical_name)
    return cleaned if re.match(r"[A-Za-z_]", cleaned) else f"_{cleaned}"


@dataclass
class _Reference:
    address: str  # TYPE.NAME, the resource the reference names
    attribute: str  # id, arn, bucket, ...

    def expression(self) -> list[str]:
        return [f"{self.address}.{self.attribute}", self.address]


@dataclass
class _Converted:
    values: Any
    unknown: Any  # after_unknown shape
    sensitive: Any  # after_sensitive shape
    expression: Any  # configuration expression shape, None where a plain constant


@dataclass
class TerraformPlan:
    document: dict[str, Any]
    addresses: dict[str, str]  # Pulumi URN -> Terraform address
    unmapped: list[str] = field(default_factory=list)  # URNs of custom resources with no Terraform type


def _integral(value: Any) -> Any:
    # The wire format carries every number as a double: 443.0 is the port 443.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class _Converter:
    def __init__(self, resources: list[dict[str, Any]]):
        self.addresses: dict[str, str] = {}
        self.entries = {entry["urn"]: entry for entry in resources}
        self.tables = terraform_tables()
        taken: set[str] = set()
        for entry in resources:
            tf_type = self.tables.types.get(entry["type"])
            if not entry.get("custom") or tf_type is None:
                continue
            base = terraform_name(entry["urn"].rpartition("::")[2])
            name, suffix = base, 2
            while f"{tf_type}.{name}" in taken:  # same name under two parents: keep both, deterministically
                name, suffix = f"{base}_{suffix}", suffix + 1
            taken.add(f"{tf_type}.{name}")
            self.addresses[entry["urn"]] = f"{tf_type}.{name}"

    def _outputs_of(self, urn: str) -> dict[str, str]:
        """String value -> Terraform attribute name, for what another resource may have passed on."""
        entry = self.entries.get(urn, {})
        found: dict[str, str] = {}
        for key, value in (entry.get("outputs") or {}).items():
            if isinstance(value, str) and value and value != UNKNOWN:
                found.setdefault(value, snake_case(key))
        if entry.get("id"):
            found[entry["id"]] = "id"
        return found

    def _convert(self, tf_type: str, key: str | None, value: Any, referents: dict[str, _Reference]) -> _Converted:
        if is_secret(value) or (isinstance(value, dict) and SIG_KEY in value):
            return _Converted(None, False, True, None)
        if value is None:
            return _Converted(None, False, False, None)
        if value == UNKNOWN:
            # Unknown during preview (e.g. an instance profile's name): still a reference when the engine
            # recorded exactly one resource behind this input, as a real first plan shows it.
            known = referents.get(UNKNOWN)
            return _Converted(None, True, False, {"references": known.expression()} if known else None)
        if isinstance(value, str) and value in referents:
            return _Converted(None, True, False, {"references": referents[value].expression()})
        if isinstance(value, dict):
            if key in self.tables.maps_of(tf_type):
                return _Converted({k: _integral(v) for k, v in value.items()}, False, False, None)
            block = self._block(tf_type, value, referents)
            return _Converted([block.values], [block.unknown], [block.sensitive], [block.expression])
        if isinstance(value, list) and any(isinstance(item, dict) and not is_secret(item) for item in value):
            # A list of objects is already Terraform's block list: each object is one block.
            blocks = [self._block(tf_type, item, referents) for item in value if isinstance(item, dict)]
            return _Converted(
                [b.values for b in blocks],
                [b.unknown for b in blocks],
                [b.sensitive for b in blocks],
                [b.expression for b in blocks],
            )
        if isinstance(value, list):
            items = [self._convert(tf_type, None, item, referents) for item in value]
            references = [ref for item in items if item.expression for ref in item.expression["references"]]
            return _Converted(
                [item.values for item in items],
                [item.unknown for item in items],
                [item.sensitive for item in items],
                {"references": references} if references else None,
            )
        return _Converted(_integral(value), False, False, None)

    def _block(
        self,
        tf_type: str,
        inputs: dict[str, Any],
        referents: dict[str, _Reference],
        by_property: dict[str, dict[str, _Reference]] | None = None,
    ) -> _Converted:
        """`by_property` (top level only): each input may reference only what the engine recorded
        for that input (propertyDependencies), so a description that happens to equal another
        resource's description stays a description."""
        renames = self.tables.block_renames.get(tf_type, {})
        map_forms = self.tables.map_forms.get(tf_type, {})
        values: dict[str, Any] = {}
        unknown: dict[str, Any] = {}
        sensitive: dict[str, Any] = {}
        expressions: dict[str, Any] = {}
        for pulumi_key, value in inputs.items():
            key = snake_case(pulumi_key)
            key = renames.get(key, key)
            if key in map_forms and not isinstance(value, list):
                key = map_forms[key]  # a block list the program passed as a map
            scope = by_property.get(pulumi_key, {}) if by_property is not None else referents
            converted = self._convert(tf_type, key, value, scope)
            if converted.values is not None:
                values[key] = converted.values
            if _any_true(converted.unknown):
                unknown[key] = converted.unknown
            if _any_true(converted.sensitive):
                sensitive[key] = converted.sensitive
            if converted.expression is not None:
                expressions[key] = converted.expression
            elif converted.values is not None:
                expressions[key] = {"constant_value": converted.values}
        return _Converted(values, unknown, sensitive, expressions)

    def resource(self, entry: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        address = self.addresses[entry["urn"]]
        tf_type, _, name = address.partition(".")
        by_property: dict[str, dict[str, _Reference]] = {}
        for prop, urns in (entry.get("propertyDependencies") or {}).items():
            referents = by_property.setdefault(prop, {})
            mapped = [urn for urn in urns if urn in self.addresses]
            for urn in mapped:
                for value, attribute in self._outputs_of(urn).items():
                    referents.setdefault(value, _Reference(self.addresses[urn], attribute))
            if len(mapped) == 1:
                referents[UNKNOWN] = _Reference(self.addresses[mapped[0]], "id")
        block = self._block(tf_type, entry.get("inputs") or {}, {}, by_property)
        provider = entry["type"].split(":", 1)[0]
        common = {"address": address, "mode": "managed", "type": tf_type, "name": name}
        provider_name = self.tables.addresses.get(provider, provider)
        planned = {
            **common,
            "provider_name": provider_name,
            "schema_version": 0,
            "values": block.values,
            "sensitive_values": _only_true(block.sensitive),
        }
        change = {
            **common,
            "provider_name": provider_name,
            "change": {
                "actions": ["create"],
                "before": None,
                "after": block.values,
                "after_unknown": block.unknown,
                "before_sensitive": False,
                "after_sensitive": _only_true(block.sensitive),
            },
        }
        configuration = {
            **common,
            "provider_config_key": provider,
            "expressions": block.expression,
            "schema_version": 0,
        }
        return planned, change, configuration


def _only_true(shape: Any) -> Any:
    return shape if shape else {}


def _any_true(shape: Any) -> bool:
    if isinstance(shape, dict):
        return any(_any_true(item) for item in shape.values())
    if isinstance(shape, list):
        return any(_any_true(item) for item in shape)
    return shape is True


def _provider_config(resources: list[dict[str, Any]]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    addresses = terraform_tables().addresses
    for entry in resources:
        if not entry["type"].startswith(PROVIDER_PREFIX):
            continue
        provider = entry["type"][len(PROVIDER_PREFIX) :]
        if provider in config or provider not in addresses:
            continue
        region = (entry.get("inputs") or {}).get("region")
        expressions = {"region": {"constant_value": region}} if isinstance(region, str) else {}
        config[provider] = {"name": provider, "full_name": addresses[provider], "expressions": expressions}
    return config


def terraform_plan(document: dict[str, Any]) -> TerraformPlan:
    """The Terraform plan JSON of a v3 export (`deployment_v3`, `accelstack preview --json`)."""
    resources = document.get("deployment", {}).get("resources", [])
    converter = _Converter(resources)
    planned, changes, configured = [], [], []
    unmapped = []
    for entry in resources:
        if not entry.get("custom") or entry["type"].startswith(PROVIDER_PREFIX) or entry["type"] == STACK_TYPE:
            continue
        if entry["type"].startswith(DYNAMIC_PREFIX):
            continue  # the program's own code behind Pulumi's dynamic provider: nothing Terraform would plan
        if entry["urn"] not in converter.addresses:
            unmapped.append(entry["urn"])
            continue
        values, change, configuration = converter.resource(entry)
        planned.append(values)
        changes.append(change)
        configured.append(configuration)
    plan = {
        "format_version": FORMAT_VERSION,
        # Required by readers (Checkov recognises a plan by it). Semver-valid, and never mistaken for
        # a Terraform release: no Terraform produced this plan.
        "terraform_version": f"0.0.0-accelstack.{_package_version('accelstack') or 'dev'}",
        "planned_values": {"root_module": {"resources": planned}},
        "resource_changes": changes,
        "configuration": {"provider_config": _provider_config(resources), "root_module": {"resources": configured}},
    }
    return TerraformPlan(document=plan, addresses=converter.addresses, unmapped=unmapped)
