"""Finding resources in a landing stack's export, for the pack tests of every landing cloud."""

from __future__ import annotations

from typing import Any

Doc = dict[str, Any]


def resources(doc: Doc) -> list[dict[str, Any]]:
    return doc["deployment"]["resources"]


def entry(doc: Doc, name: str, type_token: str) -> dict[str, Any]:
    """The one resource of `type_token` named `name` (the test fails if there is not exactly one)."""
    matches = [r for r in resources(doc) if r["type"] == type_token and r["urn"].endswith(f"::{name}")]
    assert len(matches) == 1, f"{type_token} {name}: {len(matches)} in the export"
    return matches[0]


def sides(resource: dict[str, Any]) -> list[dict[str, Any]]:
    """A resource's inputs and outputs, where the export has them."""
    return [resource[side] for side in ("inputs", "outputs") if isinstance(resource.get(side), dict)]
