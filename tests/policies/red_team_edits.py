"""Editing a shipped stack's export the way a pull request would (any cloud): shared by the red-team tests.

Each edit changes inputs and outputs alike (Analyze sees inputs, AnalyzeStack the final state) and registers
added resources as the program would (the stack's explicit provider of that cloud, parented to the stack).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

Doc = dict[str, Any]
Edit = Callable[[Doc], None]


def entry(doc: Doc, name: str, type_token: str) -> dict[str, Any]:
    found = [r for r in doc["deployment"]["resources"] if r["type"] == type_token and r["urn"].endswith(f"::{name}")]
    assert len(found) == 1, f"{type_token} {name}: {len(found)} in the export"
    return found[0]


def _sides(resource: dict[str, Any]) -> list[dict[str, Any]]:
    return [resource[side] for side in ("inputs", "outputs") if isinstance(resource.get(side), dict)]


def edit(name: str, type_token: str, change: Callable[[dict[str, Any]], None]) -> Edit:
    def apply(doc: Doc) -> None:
        for props in _sides(entry(doc, name, type_token)):
            change(props)

    return apply


def put(name: str, type_token: str, **values: Any) -> Edit:
    """Sets top-level properties to literals: what they were computed from no longer feeds them."""

    def apply(doc: Doc) -> None:
        resource = entry(doc, name, type_token)
        for props in _sides(resource):
            props.update(copy.deepcopy(values))
        for key in values:
            (resource.get("propertyDependencies") or {}).pop(key, None)

    return apply


def rename(name: str, type_token: str, old: str, new: str) -> Edit:
    """Moves a property's value, and what it was computed from, to another property."""

    def apply(doc: Doc) -> None:
        resource = entry(doc, name, type_token)
        for props in _sides(resource):
            props[new] = props.pop(old)
        deps = resource.get("propertyDependencies") or {}
        if old in deps:
            deps[new] = deps.pop(old)

    return apply


def at(name: str, type_token: str, path: str, value: Any) -> Edit:
    """Sets one nested property (`a.b.0.c`), creating maps on the way."""

    def change(props: dict[str, Any]) -> None:
        keys = path.split(".")
        node: Any = props
        for key in keys[:-1]:
            node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
        if isinstance(node, list):
            node[int(keys[-1])] = copy.deepcopy(value)
        else:
            node[keys[-1]] = copy.deepcopy(value)

    return edit(name, type_token, change)


def drop_key(name: str, type_token: str, key: str) -> Edit:
    def change(props: dict[str, Any]) -> None:
        assert key in props, f"{name}.{key} is not set"
        del props[key]

    return edit(name, type_token, change)


def remove(name: str, type_token: str) -> Edit:
    def apply(doc: Doc) -> None:
        doc["deployment"]["resources"].remove(entry(doc, name, type_token))

    return apply


def unprotect(name: str, type_token: str) -> Edit:
    def apply(doc: Doc) -> None:
        entry(doc, name, type_token)["protect"] = False

    return apply


def add(
    type_token: str, name: str, inputs: dict[str, Any], *, depends: dict[str, tuple[str, str]] | None = None
) -> Edit:
    def apply(doc: Doc) -> None:
        resources = doc["deployment"]["resources"]
        cloud = type_token.split(":")[0]
        provider = next(r["provider"] for r in resources if r["type"].startswith(f"{cloud}:") and r.get("provider"))
        stack = resources[0]["urn"].split(":")[2].split("::")[0]
        deps = {prop: [entry(doc, *target)["urn"]] for prop, target in (depends or {}).items()}
        resources.append(
            {
                "urn": f"urn:pulumi:{stack}::accelstack::{type_token}::{name}",
                "custom": True,
                "id": f"{name}-id",
                "type": type_token,
                "inputs": copy.deepcopy(inputs),
                "outputs": {**copy.deepcopy(inputs), "id": f"{name}-id"},
                "parent": resources[0]["urn"],
                "protect": False,
                "provider": provider,
                "dependencies": sorted({u for urns in deps.values() for u in urns}),
                "propertyDependencies": deps,
            }
        )

    return apply


def with_statement(name: str, type_token: str, key: str, statement: dict[str, Any], *, as_object: bool = False) -> Edit:
    """Appends a statement to a policy document held as a JSON string (or, `as_object`, rewrites it as an object,
    which the AWS SDK accepts as well)."""

    def change(props: dict[str, Any]) -> None:
        document = json.loads(props[key]) if isinstance(props[key], str) else copy.deepcopy(props[key])
        document["Statement"].append(copy.deepcopy(statement))
        props[key] = document if as_object else json.dumps(document)

    return edit(name, type_token, change)


def both(*edits: Edit) -> Edit:
    def apply(doc: Doc) -> None:
        for one in edits:
            one(doc)

    return apply


def document(*statements: dict[str, Any]) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def allow(
    actions: Any, resource: Any, principal: Any = None, condition: dict[str, Any] | None = None
) -> dict[str, Any]:
    found: dict[str, Any] = {"Effect": "Allow", "Action": actions, "Resource": resource}
    if principal is not None:
        found["Principal"] = principal
    if condition:
        found["Condition"] = condition
    return found


def add_dynamic(type_token: str, name: str, inputs: dict[str, Any]) -> Edit:
    """Adds a dynamic resource (`pulumi-python:dynamic/...`): the program's own provider, no cloud's."""

    def apply(doc: Doc) -> None:
        resources = doc["deployment"]["resources"]
        stack = resources[0]["urn"].split(":")[2].split("::")[0]
        resources.append(
            {
                "urn": f"urn:pulumi:{stack}::accelstack::{type_token}::{name}",
                "custom": True,
                "id": f"{name}-id",
                "type": type_token,
                "inputs": copy.deepcopy(inputs),
                "outputs": copy.deepcopy(inputs),
                "parent": resources[0]["urn"],
                "protect": False,
                "dependencies": [],
                "propertyDependencies": {},
            }
        )

    return apply
