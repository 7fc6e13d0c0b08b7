"""Google Cloud list prices, Iowa (us-central1), USD. Data only; `accelstack cost --prices FILE` replaces any entry.

CHECKED is the date these were compared with the sources. Google's price pages render their tables in the
browser and could not be read directly from where this was checked; every number below is the official
figure as two or more independent public records copied it from the page named beside it (most to nine
decimals), and the a2 rows also match the GKE cluster autoscaler's own price table.

Sources:
- https://cloud.google.com/products/compute/pricing/accelerator-optimized (Iowa, whole VM including its
  GPUs): a3-highgpu-8g $88.490000119, a3-megagpu-8g $93.400712807, a3-ultragpu-8g $84.806908493,
  a2-highgpu-1g..8g $3.673385..$29.38708, a2-ultragpu-1g..8g $5.06879789..$40.550383123, g2-standard-4
  $0.706832276, g2-standard-8 $0.853624312. a4-highgpu-8g has no on-demand price ("N/A"): it is sold
  through DWS (flex-start $64.44/h, calendar mode $90.22/h) and Spot, so it is left out here.
- Spot: the same page's Spot column is 40 % below on-demand for every A2, A3 and G2 row read (e.g.
  a3-highgpu-8g $52.962296548, g2-standard-4 $0.424056); Spot prices move (up to daily), so override it.
- Slurm head (N2 standard, general purpose): cloud.google.com/compute/vm-instance-pricing, Iowa, $0.031611 per
  vCPU-hour + $0.004237 per GB-hour, so n2-standard-4/8/16/32 = 4/8/16/32 vCPUs and 16/32/64/128 GB.
- Cloud Storage Standard, regional: $0.020/GB-month (cloud.google.com/storage/pricing).
- Persistent Disk pd-balanced: $0.10/GB-month (cloud.google.com/products/compute/disks-image-pricing).
- Managed Lustre: not priced. Google's page (cloud.google.com/products/managed-lustre/pricing) renders in the
  browser; searched 2026-12-06 (docs, pages and code corpora) and one record was found: The New Stack's GA report
  (July 2025) reads $0.145/GiB-month for the 125 MB/s/TiB tier, no other tier and no second record, so it is not
  used (give it with --prices: lustreGbMonth: {managed-lustre-125: 0.145}).
- Regions: one table, Iowa's. A stack elsewhere is priced at Iowa's prices and `cost` says so on the line.
"""

from __future__ import annotations

from accelstack.clouds.gcp.catalog import FILESTORE_TIERS, LUSTRE_TIERS
from accelstack.clouds.not_priced import NotPriced, parallel_fs_price, serving_only, training_only

CHECKED = "2026-12-03"
REGION = "us-central1"

ON_DEMAND_HOURLY: dict[str, float] = {
    "a3-ultragpu-8g": 84.806908493,
    "a3-megagpu-8g": 93.400712807,
    "a3-highgpu-8g": 88.490000119,
    "a2-highgpu-1g": 3.673385,
    "a2-highgpu-2g": 7.34677,
    "a2-highgpu-4g": 14.69354,
    "a2-highgpu-8g": 29.38708,
    "a2-ultragpu-1g": 5.06879789,
    "a2-ultragpu-2g": 10.137595781,
    "a2-ultragpu-4g": 20.275191562,
    "a2-ultragpu-8g": 40.550383123,
    "g2-standard-4": 0.706832276,
    "g2-standard-8": 0.853624312,
    # The Slurm head: N2 standard, priced per vCPU and GB of memory (see the docstring).
    **{f"n2-standard-{vcpus}": round(vcpus * 0.031611 + 4 * vcpus * 0.004237, 6) for vcpus in (4, 8, 16, 32)},
}
DEFAULT_SPOT_DISCOUNT = 0.40

GCS_STANDARD_GB_MONTH = 0.020
PD_BALANCED_GB_MONTH = 0.10

# Managed Lustre is billed per GiB-month by tier; no price for it was confirmed (docstring), so the planner lists
# it as not priced rather than costing the file system at zero.
NOT_PRICED = (
    parallel_fs_price(
        f"Managed Lustre ({', '.join(LUSTRE_TIERS)}): list price not verified (give it with --prices FILE: "
        "lustreGbMonth: {TIER: USD per GB-month})"
    ),
    training_only(
        f"Filestore ({', '.join(FILESTORE_TIERS)}): list price not verified (the price page renders in the browser)"
    ),
    NotPriced(
        "a4-highgpu-8g (no on-demand price: DWS flex-start, calendar mode or Spot only)",
        instance_types=("a4-highgpu-8g",),
    ),
    serving_only("external Application Load Balancer (forwarding rules + data processed)"),
    serving_only("Cloud Armor (policy, rules, requests)"), serving_only("Pub/Sub (throughput)"), "Cloud NAT", "data transfer", "Cloud Logging and Monitoring", "Cloud Storage operations",
)  # fmt: skip

# The Slurm accounting database (Cloud SQL for MySQL, Enterprise edition, zonal, Iowa; https://cloud.google.com/sql/pricing,
# read 2026-12-06 as published copies of the page give it): dedicated-core $0.0413 per vCPU-hour and $0.007 per
# GB-hour of memory, SSD storage $0.17/GB-month, backups $0.08/GB-month (no free allowance).
CLOUD_SQL_VCPU_HOURLY = 0.0413
CLOUD_SQL_MEMORY_GB_HOURLY = 0.007
CLOUD_SQL_SSD_GB_MONTH = 0.17
CLOUD_SQL_BACKUP_GB_MONTH = 0.08
