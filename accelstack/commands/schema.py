"""`accelstack schema --out docs`: the spec reference (docs/spec-reference.md) and a JSON Schema of the stack
file (docs/accelstack.schema.json, for editors' YAML language server), both generated from the pydantic
models in accelstack/spec/models.py. `make docs` regenerates them; a test fails when they drift."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from accelstack.commands.common import EXIT_FAILED, EXIT_OK, echo_lines, guarded
from accelstack.commands.output_files import (
    ParentsOpt,
    check_output_directory,
    is_current,
    output_directory,
    write_into,
)

NAMESPACE = "accelstack"
SCHEMA_FILE = "accelstack.schema.json"
REFERENCE_FILE = "spec-reference.md"
GENERATED_NOTE = (
    "Generated from accelstack/spec/models.py by `make docs` (`accelstack schema --out docs`); do not edit."
)


def _without_titles(node: Any) -> Any:
    """pydantic titles every property after its name ("Instancetype"): noise in an editor's hover."""
    if isinstance(node, dict):
        return {
            key: _without_titles(value)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_without_titles(item) for item in node]
    return node


def stack_file_schema() -> dict[str, Any]:
    """JSON Schema (2020-12) of a stack file: `config` holds the `accelstack:*` keys (unknown ones are
    refused, as the loader does) beside other namespaces (`aws:region`, ...), which pass. The workload
    picks the block (training or serving), the cloud picks the account block's keys."""
    from pydantic.json_schema import models_json_schema

    from accelstack.spec.accounts import ACCOUNT_MODELS
    from accelstack.spec.landing import LandingStack
    from accelstack.spec.loader import TOP_KEYS
    from accelstack.spec.models import WORKLOAD_MODELS

    stack_models: dict[str, Any] = {**WORKLOAD_MODELS, "landing": LandingStack}
    models: list[Any] = [*stack_models.values(), *ACCOUNT_MODELS.values()]
    refs, generated = models_json_schema([(model, "validation") for model in models], by_alias=True)
    raw_definitions = generated["$defs"]
    variants = {workload: raw_definitions[model.__name__] for workload, model in stack_models.items()}
    top: dict[str, Any] = {}
    for workload in WORKLOAD_MODELS:
        top.update(_without_titles(variants[workload]["properties"]))
    for name, prop in _without_titles(variants["landing"]["properties"]).items():
        top.setdefault(name, prop)  # a key both kinds have keeps the workload stacks' description
    # Each variant has its own `workload` constant and the account base: say both as the file sees them.
    top["workload"] = {
        "enum": list(stack_models),
        "description": "training or serving: one workload per stack; landing: the accounts both land in.",
    }
    top["account"] = {
        "description": top["account"]["description"],
        # One option per cloud's account model; `x-cloud` names the cloud (the docs' section titles).
        "oneOf": [{**refs[(model, "validation")], "x-cloud": cloud} for cloud, model in ACCOUNT_MODELS.items()],
    }
    for name in (m.__name__ for m in stack_models.values()):
        raw_definitions.pop(name)
    raw_definitions.pop("Account", None)
    definitions = {name: _without_titles(d) | {"title": name} for name, d in sorted(raw_definitions.items())}
    common = [key for key in variants["training"]["required"] if all(key in v["required"] for v in variants.values())]
    keys = [f"{NAMESPACE}:{key}" for key in TOP_KEYS]

    def key(name: str) -> str:
        return f"{NAMESPACE}:{name}"

    def when(name: str, value: str) -> dict[str, Any]:
        return {"properties": {key(name): {"const": value}}, "required": [key(name)]}

    blocks = {"training": "training", "serving": "serving", "landing": "organization"}
    # Keys every kind but some requires (separation: training and serving) -> the kinds that require them.
    required_for = {
        name: [kind for kind, variant in variants.items() if name in variant["required"]]
        for name in TOP_KEYS
        if name not in common and name not in blocks.values() and any(name in v["required"] for v in variants.values())
    }
    one_block = [
        {
            "if": when("workload", workload),
            "then": {
                "required": [key(block), *(key(name) for name, kinds in required_for.items() if workload in kinds)],
                "not": {"anyOf": [{"required": [key(other)]} for other in blocks.values() if other != block]},
            },
        }
        for workload, block in blocks.items()
    ]
    account_of_cloud = [
        {"if": when("cloud", choice["x-cloud"]), "then": {"properties": {key("account"): {"$ref": choice["$ref"]}}}}
        for choice in top["account"]["oneOf"]
    ]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "accelstack stack file (stacks/Pulumi.<stack>.yaml)",
        "description": f"One stack: one cloud, one workload, one account. {GENERATED_NOTE}",
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "properties": {key(name): top[name] for name in TOP_KEYS},
                "required": [key(name) for name in TOP_KEYS if name in common],
                "x-required-for": {key(name): kinds for name, kinds in required_for.items()},
                # Other namespaces pass; in ours only the known keys.
                "propertyNames": {"anyOf": [{"enum": keys}, {"not": {"pattern": f"^{NAMESPACE}:"}}]},
                "allOf": one_block + account_of_cloud,
            }
        },
        "required": ["config"],
        "$defs": definitions,
    }


def _target(prop: dict[str, Any], definitions: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], bool, bool]:
    """(the property with `X | None` unwrapped, the object or item schema with $ref resolved, nullable,
    is a list). pydantic writes `X | None` as anyOf [X, null]."""
    nullable = False
    if "anyOf" in prop:
        options = [option for option in prop["anyOf"] if option.get("type") != "null"]
        nullable = len(options) < len(prop["anyOf"])
        if len(options) == 1:
            prop = {**{k: v for k, v in prop.items() if k != "anyOf"}, **options[0]}
    is_list = prop.get("type") == "array"
    node = prop.get("items", {}) if is_list else prop
    if "$ref" in node:
        node = definitions[node["$ref"].rsplit("/", 1)[-1]]
    return prop, node, nullable, is_list


def _type_text(prop: dict[str, Any], definitions: dict[str, Any]) -> str:
    prop, node, nullable, is_list = _target(prop, definitions)
    if is_list:
        text = f"list of {'objects' if 'properties' in node else _scalar(node)}"
        if "minItems" in prop:
            text += f" (at least {prop['minItems']})"
    else:
        text = "object" if "properties" in node else _scalar(prop)
    return text + (" or null" if nullable else "")


def _scalar(node: dict[str, Any]) -> str:
    if "enum" in node:
        return "one of " + ", ".join(f"`{value}`" for value in node["enum"])
    if "const" in node:
        return f"`{node['const']}`"
    text = node.get("type", "any")
    bounds = []
    for key, sign in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")):
        if key in node:
            bounds.append(f"{sign} {node[key]}")
    if "minLength" in node:
        bounds.append(f"length >= {node['minLength']}")
    if "pattern" in node:
        bounds.append(f"matching `{node['pattern']}`")
    return text + (f" ({', '.join(bounds)})" if bounds else "")


def _per_cloud(prop: dict[str, Any]) -> list[tuple[str, str]]:
    """(definition name, cloud) of each option of a block whose keys depend on the cloud (`account`)."""
    return [
        (option["$ref"].rsplit("/", 1)[-1], option["x-cloud"])
        for option in prop.get("oneOf", [])
        if "x-cloud" in option
    ]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def reference_rows(
    schema: dict[str, Any], node: dict[str, Any], prefix: str, defaults: dict[str, Any] | None = None
) -> list[tuple[str, str, str, str]]:
    """(key path, type, default or `required`, description) for every key under `node`, depth first; `defaults`: the
    enclosing key's own default object, whose values win over the block's (serving's network is not training's)."""
    definitions = schema["$defs"]
    rows = []
    required = set(node.get("required", []))
    for key, prop in node.get("properties", {}).items():
        path = f"{prefix}.{key}" if prefix else key
        _, target, _, is_list = _target(prop, definitions)
        if key in required:
            default = "required"
        elif defaults is not None and key in defaults:
            default = f"`{json.dumps(defaults[key])}`"
        elif "default" in prop:
            default = f"`{json.dumps(prop['default'])}`"
        else:  # built when omitted (a default factory): an object of its keys' defaults, or as described
            default = "its keys' defaults" if "properties" in target and not is_list else "see description"
        rows.append((path, _type_text(prop, definitions), default, prop.get("description", "")))
        for option, cloud in _per_cloud(prop):
            rows += reference_rows(schema, definitions[option], f"{path} ({cloud})")
        if "properties" in target:
            own = prop.get("default") if not is_list and isinstance(prop.get("default"), dict) else None
            rows += reference_rows(schema, target, f"{path}[]" if is_list else path, own)
    return rows


def spec_reference(schema: dict[str, Any]) -> str:
    config = schema["properties"]["config"]
    lines = [
        "# Stack file reference",
        "",
        f"<!-- {GENERATED_NOTE} -->",
        "",
        "Every key of a stack file's `config:` under the `accelstack:` namespace (YAML keys in camelCase), its",
        "type, default and meaning. `accelstack validate STACK` checks a file against these models plus one rule",
        "per cloud constraint (FSx steps, EFA support, ...), which this table does not repeat.",
        "",
        'Values are written as their type says, unquoted: an integer as digits (`count: 120`; not `"120"`, `120.0`',
        'or `1e2`), a number as digits with an optional fraction or exponent (`120`, `2.5`, `2e12`; not `"2.5"`),',
        'a boolean as `true` or `false` (not `yes`, `on`, `"true"` or `1`: Pulumi reads `yes` as text).',
        "",
        "Editors: `docs/accelstack.schema.json` is the same as a JSON Schema. With the YAML language server",
        "(VS Code's YAML extension, and others) add this first line to a stack file:",
        "",
        "```yaml",
        "# yaml-language-server: $schema=../docs/accelstack.schema.json",
        "```",
        "",
    ]
    for key, prop in config["properties"].items():
        _, target, _, _ = _target(prop, schema["$defs"])
        required = "required" if key in config["required"] else "optional"
        if key in config.get("x-required-for", {}):
            required = f"required in {' and '.join(config['x-required-for'][key])} stacks"
        lines += [f"## `{key}`", "", f"{_cell(prop.get('description', ''))} ({required})", ""]
        for option, cloud in _per_cloud(prop):
            lines += [f"### cloud: {cloud}", "", "| key | type | default | description |", "| --- | --- | --- | --- |"]
            for path, type_text, default, description in reference_rows(schema, schema["$defs"][option], ""):
                lines.append(f"| `{path}` | {_cell(type_text)} | {_cell(default)} | {_cell(description)} |")
            lines.append("")
        if _per_cloud(prop):
            continue
        if "properties" not in target:
            lines += [f"Type: {_type_text(prop, schema['$defs'])}.", ""]
            continue
        lines += ["| key | type | default | description |", "| --- | --- | --- | --- |"]
        for path, type_text, default, description in reference_rows(schema, target, ""):
            lines.append(f"| `{path}` | {_cell(type_text)} | {_cell(default)} | {_cell(description)} |")
        lines.append("")
    return "\n".join(lines)


def generated_files() -> dict[str, str]:
    """File name -> content, as committed under docs/."""
    schema = stack_file_schema()
    return {SCHEMA_FILE: json.dumps(schema, indent=2) + "\n", REFERENCE_FILE: spec_reference(schema)}


@guarded
def schema_command(
    out: Annotated[
        str, typer.Option("--out", metavar="DIR", help="Directory to write into (created; its parent must exist).")
    ] = "docs",
    check: Annotated[
        bool, typer.Option("--check", help="Write nothing; exit 1 if the files in DIR differ from the models.")
    ] = False,
    parents: ParentsOpt = False,
) -> int:
    """Write the stack file reference (spec-reference.md) and its JSON Schema (accelstack.schema.json),
    generated from the spec models. Exit 0, or 1 with --check when a file is out of date."""
    out_dir = output_directory(out)
    if not check:
        check_output_directory(out_dir, parents=parents)  # even when every file is current: nothing read through a link
    stale, changed = [], {}
    for name, content in generated_files().items():
        path = out_dir / name
        if not is_current(path, content):
            stale.append(path)
            changed[name] = content
    if not check and changed:
        echo_lines([f"wrote {path}" for path in write_into(out_dir, changed, parents=parents)], stderr=True)
    if check and stale:
        echo_lines([f"{path}: out of date; run `make docs`" for path in stale], stderr=True, style="red")
        return EXIT_FAILED
    return EXIT_OK


def register(app: typer.Typer) -> None:
    app.command("schema")(schema_command)
