"""Which resource kinds the packs know, by concept: rules name a concept ("bucket", "load-balancer"),
never one type token, so an alias token of the same resource (`aws:alb/...` for `aws:lb/...`,
`aws:s3/bucketV2:BucketV2` for `aws:s3/bucket:Bucket`) cannot slip past a rule.

The packs fail closed: a cloud resource whose type token is in no row is a violation
(`known-resource-kinds`), not a pass. Each vendor's table lives in its own module (`Vendor.concepts`,
policies/<vendor>/concepts.py; the vendors are listed in policies/vendors.py): its rows hold the current
token and every alias the installed SDK declares for it (`pulumi.Alias(type_=...)` in the SDK's resource
classes; the test suite checks each token against the installed SDK). azure-native's API-version
modules (`azure-native:network/v20240501:Subnet`) are the same API object as the default module's
token and map to its concept (`canonical`). `concept_of`, `is_a` and `of` read every table;
`tokens(..., cloud=)` names one cloud's tokens, for rules that read that cloud's properties.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

# Dynamic providers (`pulumi.dynamic.ResourceProvider`) run the program's own Python in the deployer's
# process: a known kind (the project's code, reviewed with it), but one whose inputs land in the
# state in clear, so the packs judge its inputs like user data.
DYNAMIC: dict[str, tuple[str, ...]] = {"dynamic-operation": ("pulumi-python:dynamic:Resource",)}

DYNAMIC_PACKAGE = "pulumi-python"


@dataclass(frozen=True)
class _Index:
    """Every table, and each token's concept and package, for one vendor list."""

    listed: tuple[object, ...]
    tables: dict[str, Mapping[str, tuple[str, ...]]]
    concept: dict[str, str]
    package: dict[str, str]


_index: list[_Index] = []


_vendors: list[Any] = []  # the vendors module, imported when first asked (it imports this one)


def _current() -> _Index:
    # The vendor modules import this one, so the list is read when first asked, and again whenever it
    # changes (a test registering a vendor). Hot: every rule asks, so the module is looked up once.
    if not _vendors:
        from . import vendors

        _vendors.append(vendors)
    listed = _vendors[0].VENDORS
    if not _index or _index[0].listed is not listed:
        tables = {v.package: v.concepts for v in listed} | {DYNAMIC_PACKAGE: DYNAMIC}
        concept = {token: c for table in tables.values() for c, ts in table.items() for token in ts}
        package = {token: p for p, table in tables.items() for ts in table.values() for token in ts}
        _index[:] = [_Index(listed, tables, concept, package)]
    return _index[0]


class _Tables(Mapping[str, Mapping[str, tuple[str, ...]]]):
    """package -> concept table, of every listed vendor and the dynamic provider."""

    def __getitem__(self, package: str) -> Mapping[str, tuple[str, ...]]:
        return _current().tables[package]

    def __iter__(self) -> Iterator[str]:
        return iter(_current().tables)

    def __len__(self) -> int:
        return len(_current().tables)


class _Table(Mapping[str, tuple[str, ...]]):
    """One package's concept table, as listed when read."""

    def __init__(self, package: str) -> None:
        self.package = package

    def __getitem__(self, concept: str) -> tuple[str, ...]:
        return TABLES[self.package][concept]

    def __iter__(self) -> Iterator[str]:
        return iter(TABLES[self.package])

    def __len__(self) -> int:
        return len(TABLES[self.package])


TABLES: Mapping[str, Mapping[str, tuple[str, ...]]] = _Tables()
AWS: Mapping[str, tuple[str, ...]] = _Table("aws")  # `tokens()`'s default cloud

# Stateful concepts: `protect` is required, and nothing in the stack may schedule their deletion.
STATEFUL = (
    "bucket",
    "storage-account",
    "parallel-file-system",
    "file-system",
    "volume",
    "key",
    "key-vault",
    "database",
    "image-repository",
    "ml-workspace",  # job history, registered models and assets
    "member-account",  # a landing stack's account: everything a workload stack put in it
)

# Packages that make no cloud calls of their own (pulumi-random, pulumi-tls, pulumiverse-time: its Sleep only
# waits, components/propagation.py) and the engine's own types;
# accelstack's component resources (`accelstack:aws:...`) only group children. Any other package
# (e.g. pulumi-command, whose `command:local:Command` runs with the deployer's ambient credentials) is
# unknown and fails.
LOCAL_PACKAGES = frozenset({"pulumi", "random", "tls", "time", "accelstack"})

_API_VERSION = re.compile(r"^(azure-native:[A-Za-z]+)/v[0-9]{8}(?:preview|privatepreview)?(:.+)$")


_DYNAMIC = re.compile(r"^pulumi-python:dynamic(?:/[^:]+)?:[^:]+$")


@functools.lru_cache(maxsize=4096)  # a pure function of the token, asked for every resource by many readers
def canonical(type_token: str) -> str:
    """`azure-native:network/v20240501:Subnet` -> `azure-native:network:Subnet` (same API object);
    a named dynamic resource (`pulumi-python:dynamic/lustre:Import`, from `Resource` subclasses with
    `module=`/`name=`: pulumi/dynamic/dynamic.py) -> `pulumi-python:dynamic:Resource`."""
    if _DYNAMIC.match(type_token):
        return "pulumi-python:dynamic:Resource"
    match = _API_VERSION.match(type_token)
    return match.group(1) + match.group(2) if match else type_token


def concept_of(type_token: str) -> str | None:
    by_token = _current().concept
    return by_token.get(type_token) or by_token.get(canonical(type_token))


def cloud_of(type_token: str) -> str | None:
    """The table (cloud package) that knows a token, or None."""
    by_token = _current().package
    return by_token.get(type_token) or by_token.get(canonical(type_token))


def tokens(*concepts: str, cloud: str = "aws") -> tuple[str, ...]:
    """One cloud's tokens of these concepts (a rule reading that cloud's properties)."""
    table = TABLES[cloud]
    return tuple(token for concept in concepts for token in table.get(concept, ()))


def is_a(resource_type: str, *concepts: str) -> bool:
    return concept_of(resource_type) in concepts


def of(resources: Iterable[object], *concepts: str, cloud: str | None = None) -> list:
    """Resources of these concepts, of every cloud (or of `cloud` only)."""
    return [
        r
        for r in resources
        if concept_of(getattr(r, "resource_type", "")) in concepts
        and (cloud is None or cloud_of(getattr(r, "resource_type", "")) == cloud)
    ]
