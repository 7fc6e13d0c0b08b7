"""pulumi-policy's `unknown_checking_proxy`, without its per-leaf path copies.

`unknown_checking_proxy` (pulumi-policy 1.21.0, pinned: proxy.py `_proxy_helper`) wraps every dict and list of a
resource's properties, each with the path that leads to it, copying the path once for every value, leaves included:
on a 20,000-resource export (40,000 property sets, inputs and outputs) about a second of CPU. `checking_proxy` builds
the same proxies (its classes, the same targets in the same order, the same paths) and makes a path only for what
gets a proxy; leaves are the values themselves, as there. tests/policies/test_struct_decode.py holds the two equal
on every shipped stack's export.
"""

from __future__ import annotations

from typing import Any

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
