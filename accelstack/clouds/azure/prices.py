"""Azure list prices, East US (eastus), USD. Data only; `accelstack cost --prices FILE` replaces any entry.
A stack in another region gets that region's VM prices from `regional_prices.py` (Microsoft's Karpenter
provider's snapshot of the Retail Prices API, every region; its eastus row agrees with every VM price below);
storage, gateway and database prices stay East US's, which `cost` says.

CHECKED is the date these were compared with the sources. Every number below is an Azure Retail Prices
API reading (https://prices.azure.com/api/retail/prices, Linux, Consumption meter) that two or more
independent public records agree on; the API itself was not reachable from where this was checked, so a
price seen in one record only is left out rather than guessed.

Sources:
- VMs: Azure Retail Prices API, eastus, Linux on-demand (ND96isr_H100_v5 $98.32 "verified live 2026-08-17",
  ND96asr_v4 $27.197, ND96amsr_A100_v4 $32.77, NC24ads_A100_v4 $3.673, NC48ads_A100_v4 $7.346).
  Left out here (one record only): ND96isr_H200_v5, ND96isr_MI300X_v5, NC96ads_A100_v4, NCads_H100_v5; a stack
  gets them from `regional_prices.py` where its region has a meter (eastus has none for H200 and MI300X).
- Azure Managed Lustre: not priced. Microsoft's price page (azure.microsoft.com/pricing/details/managed-lustre)
  renders in the browser; searched 2026-12-06 (docs, pages and code corpora: the price page, "AMLFS" Retail
  Prices meters, AMLFS-Durable-Premium-40/125/250/500 per TiB-hour) and no record of a per-SKU price was found.
- Head node (general purpose, Dsv5): Linux on-demand is linear in vCPUs at $0.048/vCPU-hour in East US
  (D4s_v5 $0.192; a public copy of the pricing page reads "~$0.19" for D4s_v5 Linux); D2s..D16s below.
- Blob Storage: Hot LRS block blob, first tier, $0.0184/GB-month (Retail Prices API readings for
  East US 2 and Sweden Central; the eastus meter was not read).
- Managed disks: Premium SSD is billed per size tier; P10 (128 GiB) is $19.71/month in East US, so the
  per-GiB figure below is P10's ($0.154/GiB-month), what a serving replica's 128 GiB OS disk costs.
- Application Gateway WAF_v2: fixed $0.443/gateway-hour (capacity units extra, not priced).
- Spot: Azure advertises "up to 90%" off and the one Spot meter read (NC24ads_A100_v4, $0.67877 against
  $3.673) is 81% off; GPU Spot prices move, so the default is AWS's 60% and an assumption: override it.
"""

from __future__ import annotations

from accelstack.clouds.azure.catalog import AMLFS_SKUS
from accelstack.clouds.not_priced import parallel_fs_price, serving_only

CHECKED = "2026-12-03"
REGION = "eastus"

ON_DEMAND_HOURLY: dict[str, float] = {
    "Standard_ND96isr_H100_v5": 98.32,
    "Standard_ND96amsr_A100_v4": 32.77,
    "Standard_ND96asr_v4": 27.197,
    "Standard_NC24ads_A100_v4": 3.673,
    "Standard_NC48ads_A100_v4": 7.346,
    # The Slurm head node (general purpose, no GPU): Dsv5 at $0.048 per vCPU-hour.
    "Standard_D2s_v5": 0.096,
    "Standard_D4s_v5": 0.192,
    "Standard_D8s_v5": 0.384,
    "Standard_D16s_v5": 0.768,
}

BLOB_HOT_LRS_GB_MONTH = 0.0184
PREMIUM_SSD_P10_MONTH = 19.71
PREMIUM_SSD_P10_GIB = 128
PREMIUM_SSD_GB_MONTH = round(PREMIUM_SSD_P10_MONTH / PREMIUM_SSD_P10_GIB, 5)
APP_GATEWAY_WAF_V2_HOURLY = 0.443
DEFAULT_SPOT_DISCOUNT = 0.60

# Azure Managed Lustre is billed per TiB-hour by SKU; no price for it was found (docstring), so the planner
# lists it as not priced rather than costing the file system at zero.
NOT_PRICED = (
    parallel_fs_price(
        f"Azure Managed Lustre ({', '.join(AMLFS_SKUS)}): list price not found (give it with --prices FILE: "
        "lustreGbMonth: {SKU: USD per GB-month})"
    ),
    serving_only("Application Gateway capacity units"), serving_only("Service Bus (base charge + operations)"),
    "NAT gateway",
    "data transfer", "Azure Monitor logs and metrics", "Key Vault operations", "Blob operations",
)  # fmt: skip

# The Slurm accounting database (Azure Database for MySQL flexible server, East US, pay as you go;
# https://azure.microsoft.com/pricing/details/mysql/flexible-server/, read 2026-12-06): Burstable B1ms $0.0207/h,
# storage $0.115/GB-month, backup storage $0.095/GB-month beyond the free allowance (backups up to 100% of the
# provisioned storage are free). The page renders in the browser and no second record of the B1ms figure was read:
# an estimate, as the VMs are not (override with --prices when the Retail Prices API gives another).
MYSQL_FLEXIBLE_HOURLY: dict[str, float] = {"Standard_B1ms": 0.0207}
MYSQL_FLEXIBLE_STORAGE_GB_MONTH = 0.115
MYSQL_FLEXIBLE_BACKUP_GB_MONTH = 0.095
