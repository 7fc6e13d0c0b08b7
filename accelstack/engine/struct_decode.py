"""pulumi-policy's decoding of a resource's properties, without the protobuf round trip or per-leaf path copies.

`unknown_checking_proxy` (pulumi-policy 1.21.0, pinned: proxy.py `_proxy_helper`) wraps every dict and list of a
resource's properties, each with the path that leads to it, copying the path once for every value, leaves included:
on a 20,000-resource export (40,000 property sets, inputs and outputs) about a second of CPU. `checking_proxy` builds
the same proxies (its classes, the same targets in the same order, the same paths) and makes a path only for what
gets a proxy; leaves are the values themselves, as there. tests/policies/test_struct_decode.py holds the two equal
on every shipped stack's export.

`struct_json` is what the policies' servicer decodes from a request's properties (`json_format.MessageToDict` of the
`struct_pb2.Struct` that `Struct.update(props)` builds and the request carries), read from `props` directly: some
40,000 Structs built, copied into requests and read back cost a 20,000-resource export several seconds. The Struct's
differences are kept: every number is a double (`google/protobuf/struct.proto`: `number_value`), and each object's
keys come back in the order protobuf's map iterates them once the request carries it (upb's order, not the insertion
order; learnt from protobuf itself once per key sequence and request kind). Any value the fast path does not take as
it is (a string UTF-8 cannot hold, an integer beyond a double, NaN, a type JSON does not make) goes through protobuf
itself, so it fails, or decodes, exactly as it did. `decoded` adds pulumi-policy's `deserialize_properties` in the
same walk. The walk's carrier and secret rewrite are set per call (module state: the runner decodes under its lock).
tests/policies/test_struct_decode.py holds both equal to the protobuf path on every shipped export and on planted
20,000-resource exports.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from google.protobuf import json_format, struct_pb2
from pulumi.runtime import proto
from pulumi_policy.deserialize import SPECIAL_SIG_KEY, _deserialize_property, deserialize_properties
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


# How a request carries a Struct: it is copied into the request (and, for AnalyzeStack, into the request's list), and
# each copy rebuilds every map of it, in an order of its own; the order the servicer reads is the copy's.
Carrier = Callable[[struct_pb2.Struct], Any]


def standalone(struct: struct_pb2.Struct) -> Any:
    return struct


def in_analyze_request(struct: struct_pb2.Struct) -> Any:
    """`analyzer_requests.analyze_requests`'s copy."""
    return proto.AnalyzeRequest(properties=struct).properties


def in_stack_request(struct: struct_pb2.Struct) -> Any:
    """`analyzer_requests.analyze_stack_request`'s copies."""
    request = proto.AnalyzeStackRequest()
    request.resources.append(proto.AnalyzerResource(properties=struct))
    return request.resources[0].properties


# (key sequence in insertion order, carrier) -> the order protobuf's map iterates those keys once carried. The
# copies rebuild nested maps as they rebuild the top one, so one table serves both.
_KEY_ORDERS: dict[tuple[tuple[str, ...], Carrier], tuple[str, ...]] = {}
_carrier: list[Carrier] = [standalone]


def _key_order(keys: tuple[str, ...]) -> tuple[str, ...]:
    carrier = _carrier[0]
    order = _KEY_ORDERS.get((keys, carrier))
    if order is None:
        struct = struct_pb2.Struct()
        struct.update(dict.fromkeys(keys))  # the same inserts, in the same order, as Struct.update(props)
        order = _KEY_ORDERS[keys, carrier] = tuple(carrier(struct).fields)
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


def struct_json(props: dict[str, Any], carrier: Carrier = standalone) -> dict[str, Any]:
    """`json_format.MessageToDict(carrier(s))` for `s = struct_pb2.Struct(); s.update(props)`."""
    _carrier[0] = carrier
    try:
        return _object(props)
    except (_UnlikeError, UnicodeError, OverflowError, TypeError, ValueError):
        struct = struct_pb2.Struct()
        struct.update(props)
        return json_format.MessageToDict(carrier(struct))


class Decoded:
    """What pulumi-policy's servicer makes of a request's properties before its policies run
    (`deserialize_properties(json_format.MessageToDict(struct))`), or the error it raises there, kept to be raised
    where the servicer would raise it (accelstack.engine.shared_servicer)."""

    __slots__ = ("_error", "_props")

    def __init__(self, props: dict[str, Any] | None, error: Exception | None = None) -> None:
        self._props, self._error = props, error

    def value(self) -> dict[str, Any]:
        if self._error is not None:
            raise self._error
        assert self._props is not None
        return self._props


def decoded(props: dict[str, Any], carrier: Carrier, wire: Callable[[Any], Any]) -> Decoded:
    """`deserialize_properties(struct_json(wire(props)))` in one walk (`wire`: the runner's state-form to wire-form
    secrets, applied to the objects that carry a signature, the only ones it changes; secrets unwrapped, assets and
    archives made by pulumi-policy's own `_deserialize_property`). An error of `struct_json` is raised now, as
    building the Struct raised it; one of `deserialize_properties` is kept in the result."""
    _carrier[0], _wire[0] = carrier, wire
    try:
        if SPECIAL_SIG_KEY in props:
            raise _UnlikeError("a signature at the top")  # wire may rewrite the whole object: the exact path
        return Decoded({key: _deserialized(props[key]) for key in _key_order(tuple(props))})
    except Exception:  # noqa: BLE001  # replayed on the exact path, so that the same error comes first
        plain = struct_json(wire(props), carrier)
        try:
            return Decoded(deserialize_properties(plain))
        except Exception as error:  # noqa: BLE001  # any decoding error: raised where the servicer raises it
            return Decoded(None, error)


_wire: list[Callable[[Any], Any]] = [lambda value: value]


def _deserialized(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        if SPECIAL_SIG_KEY in value:
            return _deserialize_property(_object(_wire[0](value)))
        return {key: _deserialized(value[key]) for key in _key_order(tuple(value))}
    if kind is list:
        return [_deserialized(item) for item in value]
    return _value(value)
