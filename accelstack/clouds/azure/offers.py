"""Which Azure regions offer each GPU VM size of the catalog, as data for the neutral rule that refuses a region
without it (`accelstack.spec.catalog_rules.region_offers_the_machine_type`).

Source: the regional price table (`regional_prices.py`): Azure's Retail Prices API, Linux pay-as-you-go meters, in
every region of the catalog, as github.com/Azure/karpenter-provider-azure snapshots it (commit 2b431da, generated
2026-06-18; read 2026-12-06). A size is offered where Azure prices it: a region with no meter for a size has no
VMs of it to sell. Microsoft's page "Products available by region" and `az vm list-skus --size <size> --location
<region>` are the authority a row is checked against when it changes.

Every region of the catalog is in the source, so every region is checked (no `regions_read` limit). Region level
only: the source has no zone column, so a pinned `training.network.availabilityZone` ("1", "2", "3") is not checked.

Earlier reading (2026-12-05), kept as a cross-check: SkyPilot's Azure catalog (catalogs/v8/azure/vms.csv in the fork
coopslarhette/skypilot-catalog @20291d7, sizes `az vm list-skus` returns to SkyPilot's subscription, nine US regions
only, no ND H200 v5 or ND MI300X v5 rows) lists a subset of the regions below for every size it has (e.g. ND H100 v5:
eastus, eastus2, westus). A region a subscription is not offered a size in (capacity, restricted SKUs) is refused by
the create call, which a list-price table cannot foresee.
"""

from __future__ import annotations

from accelstack.clouds.azure import catalog
from accelstack.clouds.azure.regional_prices import CHECKED, HOURLY_BY_REGION
from accelstack.clouds.azure.regional_prices import SOURCE as PRICE_SOURCE

SOURCE = f"{PRICE_SOURCE}; a size is offered where it has a meter"
LEFT_OUT: tuple[str, ...] = ()  # every GPU size of the catalog has meters in the source
REGIONS_READ: tuple[str, ...] = ()  # the source covers every region of the catalog

REGIONS_BY_SIZE: dict[str, tuple[str, ...]] = {
    size: tuple(region for region, sizes in HOURLY_BY_REGION.items() if size in sizes)
    for size in catalog.ACCELERATED_INSTANCES
}

# The rule's shape: size -> region -> zones; empty zones: the region is checked, its zones are not.
ZONES_BY_SIZE: dict[str, dict[str, tuple[str, ...]]] = {
    name: {region: () for region in regions} for name, regions in REGIONS_BY_SIZE.items()
}

__all__ = ["CHECKED", "LEFT_OUT", "REGIONS_BY_SIZE", "REGIONS_READ", "SOURCE", "ZONES_BY_SIZE"]
