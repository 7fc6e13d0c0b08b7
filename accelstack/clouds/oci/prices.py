"""Oracle Cloud list prices (pay as you go), USD, the same in every commercial region. Data only; `accelstack cost
--prices FILE` replaces any entry.

Sources (read 2026-12-05):
- oracle.com/cloud/compute/gpu/pricing (GPU compute, per GPU per hour): BM.GPU.H100.8 $10.00 per GPU ($80.00 per
  node), BM.GPU.MI300X.8 $6.00 per GPU ($48.00). The H200 and B200 rows were read only from a third-party copy
  (oraclelicensingexperts.com, April 2026, "approximate"), so those shapes are left unpriced rather than guessed.
- oracle.com/cloud/compute/pricing: E5 Flex $0.03 per OCPU-hour and $0.002 per GB-hour (the Slurm head).
- oracle.com/cloud/storage/pricing: Object Storage Standard $0.0255 per GB-month; Block Volume (balanced)
  $0.0255 per GB-month storage + 10 VPUs x $0.0017 per GB-month.
- Preemptible instances cost 50 % of on-demand (Oracle's compute pricing notes); cluster networks take none, the
  discount only prices what a spot request would have cost elsewhere.
"""

from __future__ import annotations

from accelstack.clouds.not_priced import NotPriced, training_only
from accelstack.clouds.oci.catalog import HEAD_SHAPES, LUSTRE_TIER_MBPS_PER_TB, lustre_tier_name

CHECKED = "2026-12-05"
REGION = "us-ashburn-1"

ON_DEMAND_HOURLY: dict[str, float] = {
    "BM.GPU.H100.8": 80.0,
    "BM.GPU.MI300X.8": 48.0,
    **{shape: round(ocpus * 0.03 + memory_gb * 0.002, 6) for shape, (ocpus, memory_gb) in HEAD_SHAPES.items()},
}

OBJECT_STANDARD_GB_MONTH = 0.0255
BLOCK_BALANCED_GB_MONTH = round(0.0255 + 10 * 0.0017, 4)

NOT_PRICED = (
    NotPriced(
        "BM.GPU.H200.8, BM.GPU.B200.8: list price not read from Oracle's own page",
        instance_types=("BM.GPU.H200.8", "BM.GPU.B200.8"),
    ),
    training_only(
        "File Storage with Lustre "
        f"({', '.join(lustre_tier_name(tier) for tier in LUSTRE_TIER_MBPS_PER_TB)}): list price not verified"
    ),
    "Vault (secrets, keys)", "NAT gateway", "data transfer", "Object Storage requests",
)  # fmt: skip
