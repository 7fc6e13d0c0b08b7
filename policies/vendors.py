"""The vendors the packs know: the built-in ones, one line each, then every `Vendor` an installed package registers
under the `accelstack.policy_vendors` entry point group (docs/extending.md), so a new cloud's package brings its own
concept table and readers without editing this file.

Rules read `vendors.VENDORS` when they run (never a copy taken at import), so the list is the one
place a vendor is added. A plug-in that cannot be loaded, or that claims what another vendor owns, stops the packs
with an error naming it (`VendorPluginError`): a kind it meant to describe would otherwise fail `known-resource-kinds`
(or, worse, a missing reader pass unseen). Only the standard library reads the entry points: the packs still import
nothing of accelstack.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from typing import Any

from . import aws, azure, gcp, oci, vultr
from .concepts import DYNAMIC_PACKAGE, LOCAL_PACKAGES
from .vendor import GuardrailReaders, SeparationReaders, Vendor

ENTRY_POINT_GROUP = "accelstack.policy_vendors"
BUILT_IN: tuple[Vendor, ...] = (aws.VENDOR, azure.VENDOR, gcp.VENDOR, oci.VENDOR, vultr.VENDOR)


class VendorPluginError(ImportError):
    """A registered policy vendor that cannot be used; the message names the entry point and its distribution."""


def listed(entry_points: Callable[[], Iterable[metadata.EntryPoint]] | None = None) -> tuple[Vendor, ...]:
    """The built-in vendors, then each plug-in's, by entry point name (a stable order whatever the install order)."""
    found = entry_points() if entry_points is not None else metadata.entry_points(group=ENTRY_POINT_GROUP)
    owner = {package: vendor.package for vendor in BUILT_IN for package in vendor.packages}
    plugins = []
    for entry in sorted(found, key=lambda e: (e.name, e.value)):
        vendor = _loaded(entry)
        for package in sorted(vendor.packages):
            # The engine's own, dynamic and local packages make no cloud calls (concepts.LOCAL_PACKAGES): a vendor
            # claiming one would make its resources' kinds judged as that vendor's.
            if package in LOCAL_PACKAGES or package == DYNAMIC_PACKAGE:
                raise VendorPluginError(
                    f"{_named(entry)} claims the Pulumi package {package!r}, which is not a cloud's"
                )
            if package in owner:
                raise VendorPluginError(
                    f"{_named(entry)} claims the Pulumi package {package!r}, already the {owner[package]!r} vendor's"
                )
            owner[package] = vendor.package
        plugins.append(vendor)
    return BUILT_IN + tuple(plugins)


def _named(entry: metadata.EntryPoint) -> str:
    dist = getattr(entry, "dist", None)
    source = f", from {dist.name} {dist.version}" if dist is not None else ""
    return f"policy vendor plug-in {entry.name!r} ({ENTRY_POINT_GROUP}: {entry.value}{source})"


def _loaded(entry: metadata.EntryPoint) -> Vendor:
    try:
        value = entry.load()
    except Exception as error:  # whatever the plug-in's import raises, it is named, never skipped
        raise VendorPluginError(f"{_named(entry)} failed to load: {type(error).__name__}: {error}") from error
    vendor = _as_vendor(value, entry)
    for concept, tokens in vendor.concepts.items():
        for token in (tokens,) if isinstance(tokens, str) else tokens:
            # A row naming another package's token would re-map that vendor's kind (a bucket no longer stateful).
            if not isinstance(token, str) or token.split(":", 1)[0] not in vendor.packages or token.count(":") != 2:
                raise VendorPluginError(
                    f"{_named(entry)}: concept {concept!r} lists {token!r}; its tokens must be "
                    f"PACKAGE:MODULE:TYPE of its own packages ({', '.join(sorted(vendor.packages))})"
                )
    return vendor


def _as_vendor(value: Any, entry: metadata.EntryPoint) -> Vendor:
    """The plug-in's Vendor, as this module's class. The packs run from their folder as `policies.*`
    (policies/separation/__main__.py), while a plug-in imports `accelstack.policies`: the same classes, imported twice.
    A function is handed the packs' own package and builds the Vendor with its types (what a reader building access
    edges or links needs: the two imports' values compare unequal); a Vendor value's fields are copied by name, so a
    reader this accelstack does not know is an error, not ignored."""
    if callable(value) and not isinstance(value, type):
        try:
            value = value(importlib.import_module(__package__ or "policies"))
        except Exception as error:  # the plug-in's own code: named, never skipped
            raise VendorPluginError(f"{_named(entry)} failed: {type(error).__name__}: {error}") from error
    if isinstance(value, Vendor):
        return value
    if type(value).__name__ != "Vendor" or not dataclasses.is_dataclass(type(value)):
        raise VendorPluginError(f"{_named(entry)} is a {type(value).__name__}, not a Vendor (policies/vendor.py)")
    try:
        concepts = {str(c): (t,) if isinstance(t, str) else tuple(t) for c, t in value.concepts.items()}
        if not isinstance(value.pin_inputs, Mapping):
            raise TypeError("pin_inputs is not a mapping")
        return Vendor(
            package=value.package,
            concepts=concepts,
            pin_inputs=dict(value.pin_inputs),
            guardrails=_same_fields(GuardrailReaders, value.guardrails),
            separation=_same_fields(SeparationReaders, value.separation),
            reachability=value.reachability,
        )
    except (AttributeError, TypeError, ValueError) as error:
        raise VendorPluginError(f"{_named(entry)} is not a Vendor this accelstack reads: {error}") from error


def _same_fields(kind: Any, value: Any) -> Any:
    known = {f.name for f in dataclasses.fields(kind)}
    theirs = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    unknown = sorted(name for name, reader in theirs.items() if name not in known and reader)
    if unknown:
        raise ValueError(f"{kind.__name__} {', '.join(unknown)} unknown here (a newer accelstack's readers)")
    return kind(**{name: reader for name, reader in theirs.items() if name in known})


VENDORS: tuple[Vendor, ...] = listed()


def by_package(package: str) -> Vendor | None:
    """The vendor owning a Pulumi package (a concept table's or a provider's), or None."""
    current = VENDORS
    if _owners_of[0] is not current:  # asked per resource: the table is made again only when the list is replaced
        owners: dict[str, Vendor] = {}
        for vendor in current:
            for owned in vendor.packages:
                owners.setdefault(owned, vendor)  # the first listed owner, as a scan of the list finds
        _owners_of[:] = [current, owners]
    return _owners_of[1].get(package)  # type: ignore[no-any-return]


_owners_of: list[Any] = [None, {}]  # [the vendor list read, package -> its first listed vendor]


def packages() -> frozenset[str]:
    """Every listed vendor's Pulumi packages."""
    return frozenset(p for v in VENDORS for p in v.packages)


def pin_input(package: str) -> str | None:
    """The provider input that pins a package's account, or None when the packs cannot read its pinning."""
    vendor = by_package(package)
    return vendor.pin_inputs.get(package) if vendor is not None else None
