"""Vultr list prices, USD per hour, New Jersey (ewr). Data only; `accelstack cost --prices FILE` replaces any entry.

Sources (CHECKED is the date these were written down; the pricing page renders in the browser and was not
re-read from where this was written, so re-check them before a purchase decision):
- https://www.vultr.com/pricing/#cloud-gpu: Cloud GPU, on demand, billed hourly; L40S $1.671 per GPU-hour,
  A100 80 GB $2.397 per GPU-hour (the plan's price is the GPUs' price: vCPUs, memory and NVMe come with them).
- https://www.vultr.com/pricing/#load-balancer: $10/month per load balancer node (hourly $0.015).
- https://www.vultr.com/pricing/#object-storage: Standard tier $0.006/GB-month beyond the subscription's
  included 1 TB ($6/month).
- https://www.vultr.com/pricing/#block-storage: HDD $0.025/GB-month; NVMe $0.10/GB-month.
Vultr has no spot market (no interruptible capacity), so the spot discount is 0.
"""

from __future__ import annotations

CHECKED = "2026-12-05"
REGION = "ewr"

L40S_GPU_HOURLY = 1.671
A100_GPU_HOURLY = 2.397

ON_DEMAND_HOURLY: dict[str, float] = {
    "vcg-l40s-16c-180g-48vram": round(1 * L40S_GPU_HOURLY, 3),
    "vcg-l40s-32c-375g-96vram": round(2 * L40S_GPU_HOURLY, 3),
    "vcg-l40s-64c-750g-192vram": round(4 * L40S_GPU_HOURLY, 3),
    "vcg-a100-12c-120g-80vram": round(1 * A100_GPU_HOURLY, 3),
    "vcg-a100-24c-240g-160vram": round(2 * A100_GPU_HOURLY, 3),
    "vcg-a100-48c-480g-320vram": round(4 * A100_GPU_HOURLY, 3),
}
SPOT_DISCOUNT = 0.0  # no spot market

OBJECT_GB_MONTH = 0.006
BLOCK_GB_MONTH = 0.10  # NVMe block storage (a replica's boot disk is the plan's local NVMe: not billed apart)
LOAD_BALANCER_HOURLY = 0.015

NOT_PRICED = (
    "bandwidth beyond the account's pooled allowance (per-GB overage)",
    "Object Storage requests (none billed) and the subscription's included 1 TB at $6/month",
)
