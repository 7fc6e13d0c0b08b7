"""The shape of one resource of a `pulumi stack export` (v3) as the policy runner reads it.

`policy --file` takes an export from anywhere; each field the runner hands to protobuf or to the policies must be
in the shape `pulumi stack export` writes it (apitype.ResourceV3 in pulumi/sdk/go/common/apitype/core.go), or
protobuf and the policies crash with a traceback on, say, a string where an object goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The fields of an export's resource the runner reads, with the shape `pulumi stack export` writes them in; any other
# shape (a string where an object goes, numbers in a URN list) is refused here instead of crashing in protobuf.
_OBJECT_FIELDS = ("inputs", "outputs", "propertyDependencies")
_TEXT_FIELDS = ("provider", "parent")
_TEXT_LIST_FIELDS = ("dependencies", "ignoreChanges", "additionalSecretOutputs")
_FLAG_FIELDS = ("protect", "deleteBeforeReplace")


def misshapen_field(entry: Mapping[str, Any]) -> str | None:
    """Why one of `entry`'s fields is not in the shape Pulumi writes (None: every field is)."""

    def text_list(value: Any) -> bool:
        return isinstance(value, list) and all(isinstance(item, str) for item in value)

    for field in _OBJECT_FIELDS:
        if entry.get(field) is not None and not isinstance(entry[field], Mapping):
            return f"{field} must be an object, got {type(entry[field]).__name__}"
    for field in _TEXT_FIELDS:
        if entry.get(field) is not None and not isinstance(entry[field], str):
            return f"{field} must be a URN string, got {type(entry[field]).__name__}"
    for field in _TEXT_LIST_FIELDS:
        if entry.get(field) is not None and not text_list(entry[field]):
            return f"{field} must be a list of strings"
    for field in _FLAG_FIELDS:
        if entry.get(field) is not None and not isinstance(entry[field], bool):
            return f"{field} must be true or false, got {type(entry[field]).__name__}"
    for key, urns in (entry.get("propertyDependencies") or {}).items():
        if not text_list(urns):
            return f"propertyDependencies.{key} must be a list of URN strings"
    return None
