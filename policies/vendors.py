"""The vendors the packs know: one line per vendor, each a `Vendor` its own module defines.

Rules read `vendors.VENDORS` when they run (never a copy taken at import), so the list is the one
place a vendor is added.
"""

from __future__ import annotations

from . import aws, azure, gcp, oci, vultr
from .vendor import Vendor

VENDORS: tuple[Vendor, ...] = (aws.VENDOR, azure.VENDOR, gcp.VENDOR, oci.VENDOR, vultr.VENDOR)


def by_package(package: str) -> Vendor | None:
    """The vendor owning a Pulumi package (a concept table's or a provider's), or None."""
    return next((v for v in VENDORS if package in v.packages), None)


def packages() -> frozenset[str]:
    """Every listed vendor's Pulumi packages."""
    return frozenset(p for v in VENDORS for p in v.packages)


def pin_input(package: str) -> str | None:
    """The provider input that pins a package's account, or None when the packs cannot read its pinning."""
    vendor = by_package(package)
    return vendor.pin_inputs.get(package) if vendor is not None else None
