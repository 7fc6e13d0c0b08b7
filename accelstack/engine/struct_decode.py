"""pulumi-policy's decoding of a resource's properties, without the protobuf round trip or per-leaf path copies.

`unknown_checking_proxy` (pulumi-policy 1.21.0, pinned: proxy.py `_proxy_helper`) wraps every dict and list of a
resource's properties, each with the path that leads to it, copying the path once for every value, leaves included:
on a 20,000-resource export (40,000 property sets, inputs and outputs) about a second of CPU. `checking_proxy` builds
the same proxies (its classes, the same targets in the same order, the same paths) and makes a path only for what
gets a proxy; leaves are the values themselves, as there. tests/policies/test_struct_decode.py holds the two equal
on every shipped stack's export.

`struct_json` is what the policies' servicer decodes from a request's properties (`json_format.MessageToDict` of the
`struct_pb2.Struct` that `Struct.update(props)` builds), read from `props` directly: some 40,000 Structs built and
read back cost a 20,000-resource export several seconds. The Struct's differences are kept: every number is a double
(`google/protobuf/struct.proto`: `number_value`), and each object's keys come back in the order protobuf's map
iterates them (upb's hash order, not the insertion order; learnt from protobuf itself once per key sequence). Any
value the fast path does not take as it is (a string UTF-8 cannot hold, an integer beyond a double, a type JSON does
not make) goes through protobuf itself, so it fails, or decodes, exactly as it did.
"""

from __future__ import annotations

import math
from typing import Any

from google.protobuf import json_format, struct_pb2
from pulumi_policy.proxy import _DictProxy, _ListProxy


def checking_proxy(props: Any) -> Any:
    """`pulumi_policy.proxy.unknown_checking_proxy(props)`."""
    return _proxy(props, [])


def _proxy(value: Any, path: list[str]) -> Any:
    if isinstance(value, list):
        items = [
            _proxy(item, [*path, str(i)]) if isinstance(item, (list, dict)) else item for i, item in enumerate(value)
        ]
        return _ListProxy(items, path)
    if isinstance(value, dict):
        return _DictProxy(
            {
                key: _proxy(item, [*path, str(key)]) if isinstance(item, (list, dict)) else item
                for key, item in value.items()
            },
            path,
        )
    return value


class _UnlikeError(Exception):
    """A value the fast path leaves to protobuf."""


# Key sequence (insertion order) -> the order protobuf's map iterates those keys.
_KEY_ORDERS: dict[tuple[str, ...], tuple[str, ...]] = {}


def _key_order(keys: tuple[str, ...]) -> tuple[str, ...]:
    order = _KEY_ORDERS.get(keys)
    if order is None:
        struct = struct_pb2.Struct()
        struct.update(dict.fromkeys(keys))  # the same inserts, in the same order, as Struct.update(props)
        order = _KEY_ORDERS[keys] = tuple(struct.fields)
    return order


def _object(value: dict[str, Any]) -> dict[str, Any]:
    return {key: _value(value[key]) for key in _key_order(tuple(value))}


def _value(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        if not value.isascii():
            value.encode("utf-8")  # a lone surrogate: protobuf refuses it (fallback below)
        return value
    if kind is dict:
        return _object(value)
    if kind is list:
        return [_value(item) for item in value]
    if kind is bool or value is None:
        return value
    if kind is int:
        return float(value)  # OverflowError beyond a double, as protobuf's
    if kind is float and math.isfinite(value):  # NaN and infinities: MessageToDict refuses them
        return value
    raise _UnlikeError(kind.__name__)


def struct_json(props: dict[str, Any]) -> dict[str, Any]:
    """`json_format.MessageToDict(s)` for `s = struct_pb2.Struct(); s.update(props)`."""
    try:
        return _object(props)
    except (_UnlikeError, UnicodeError, OverflowError, TypeError, ValueError):
        struct = struct_pb2.Struct()
        struct.update(props)
        return json_format.MessageToDict(struct)
