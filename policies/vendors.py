"""The vendors the packs know: one line per vendor, each a `Vendor` its own module defines.

Rules read `vendors.VENDORS` when they run (never a copy taken at import), so the list is the one
place a vendor is added.
"""

from __future__ import annotations

from typing import Any

from . import aws, azure, gcp, oci, vultr
from .vendor import Vendor

VENDORS: tuple[Vendor, ...] = (aws.VENDOR, azure.VENDOR, gcp.VENDOR, oci.VENDOR, vultr.VENDOR)


def by_package(package: str) -> Vendor | None:
    """The vendor owning a Pulumi package (a concept table's or a provider's), or None."""
    listed = VENDORS
    if _owners_of[0] is not listed:  # asked per resource: the table is made again only when the list is replaced
        owners: dict[str, Vendor] = {}
        for vendor in listed:
            for owned in vendor.packages:
                owners.setdefault(owned, vendor)  # the first listed owner, as a scan of the list finds
        _owners_of[:] = [listed, owners]
    return _owners_of[1].get(package)  # type: ignore[no-any-return]


_owners_of: list[Any] = [None, {}]  # [the vendor list read, package -> its first listed vendor]


def packages() -> frozenset[str]:
    """Every listed vendor's Pulumi packages."""
    return frozenset(p for v in VENDORS for p in v.packages)


def pin_input(package: str) -> str | None:
    """The provider input that pins a package's account, or None when the packs cannot read its pinning."""
    vendor = by_package(package)
    return vendor.pin_inputs.get(package) if vendor is not None else None
