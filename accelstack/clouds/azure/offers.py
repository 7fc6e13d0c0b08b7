"""Which Azure regions offer each GPU VM size of the catalog, as data for the neutral rule that refuses a region
without it (`accelstack.spec.catalog_rules.region_offers_the_machine_type`).

Source: SkyPilot's public Azure catalog, catalogs/v8/azure/vms.csv as kept in the fork
github.com/coopslarhette/skypilot-catalog at commit 20291d7eda23e6f420cd9586558cf0bc4051851c (skypilot-org's own
v8 copy was not readable here; its older catalogs/v6/azure/vms.csv at 098741e has the same nine regions and the
same ND rows, and lacks centralus for the NC H100 v5 sizes), whose rows are the sizes `az vm list-skus
--resource-type virtualMachines` returns per region with a price; read 2026-12-05. Microsoft's page "Products available by region"
(azure.microsoft.com/explore/global-infrastructure/products-by-region) and `az vm list-skus --size <size>
--location <region>` are the authority a row is checked against when it changes.

Only the nine US regions in `REGIONS_READ` are in the source (SkyPilot fetches US regions by default), so a
region of the catalog outside them (swedencentral, westeurope, ...) is not checked: the table cannot say a size is
missing there. Region level only: the source has no zone column, so a pinned `training.network.availabilityZone`
("1", "2", "3") is not checked here.

Left out, so not checked (the rule skips a size without a row): Standard_ND96isr_H200_v5 and
Standard_ND96isr_MI300X_v5, which have no row in the source.

Searched again 2026-12-06 for a source outside the US and for those two sizes, and none was found that lists every
region offering a size: Microsoft Learn's size-series pages (ND-H100-v5, ND-H200-v5, ND-MI300X-v5, NCads-H100-v5,
ND-A100-v4) give no regions and point to "Products available by region", which was not readable here; SkyPilot's
catalogs (skypilot-org/skypilot-catalog v5/v6 azure/vms.csv, the fork's v7/v8) hold the nine US regions only, and the
v8 copy with the newest rows is too large to fetch here; Karpenter for Azure's generated SKU tables
(Azure/karpenter-provider-azure pkg/fake/zz_generated.sku.*.go) cover eastus, southcentralus and westcentralus. Public
records of single deployments and Retail Prices readings name a region where H200 or MI300X ran or was priced, but a
row built from them would refuse every region they do not mention, so the sizes stay out. Regions outside the US stay
unchecked for every size (REGIONS_READ), and `cost` has no price for either size (prices.py), so it refuses.
"""

from __future__ import annotations

CHECKED = "2026-12-05"
SOURCE = "SkyPilot catalogs/v8/azure/vms.csv (fork coopslarhette/skypilot-catalog @20291d7; US regions only)"

REGIONS_READ = (
    "centralus",
    "eastus",
    "eastus2",
    "northcentralus",
    "southcentralus",
    "westcentralus",
    "westus",
    "westus2",
    "westus3",
)
LEFT_OUT = ("Standard_ND96isr_H200_v5", "Standard_ND96isr_MI300X_v5")

_NC_A100_V4 = ("centralus", "eastus", "eastus2", "southcentralus", "westus", "westus2", "westus3")
_NC_H100_V5 = ("centralus", "eastus", "eastus2", "southcentralus", "westus3")

REGIONS_BY_SIZE: dict[str, tuple[str, ...]] = {
    **{f"Standard_NC{vcpus}ads_A100_v4": _NC_A100_V4 for vcpus in (24, 48, 96)},
    "Standard_NC40ads_H100_v5": _NC_H100_V5,
    "Standard_NC80adis_H100_v5": _NC_H100_V5,
    "Standard_ND96amsr_A100_v4": ("eastus", "eastus2", "southcentralus"),
    "Standard_ND96asr_v4": ("eastus", "southcentralus", "westus2"),
    "Standard_ND96isr_H100_v5": ("eastus", "eastus2", "westus"),
}

# The rule's shape: size -> region -> zones; empty zones: the region is checked, its zones are not.
ZONES_BY_SIZE: dict[str, dict[str, tuple[str, ...]]] = {
    name: {region: () for region in regions} for name, regions in REGIONS_BY_SIZE.items()
}
