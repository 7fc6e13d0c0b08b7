"""Vultr constraint tables: the Cloud GPU plans a serving replica runs on, and the regions. Data only.

Checked 2026-12-05 against the sources named in SOURCES. Vultr sells GPUs as plans (`vcg-*`: a virtual machine
with whole passthrough GPUs); the plan id fixes the vCPUs, memory and GPUs, so a replica's size is its plan.
Which region offers which plan changes with stock: `GET /v2/plans?type=vcg` lists each plan's `locations`
(the `vultr:index/getPlan:getPlan` invoke), which Vultr checks at create time; `offers.py` keeps the dated
table the spec rules read.

Left out on purpose:
- Fractional plans (A16/A40 slices, `vcg-a40-*` below 24 vCPUs): a slice of a GPU with a vGPU driver, not a whole
  card; the planner's per-GPU tables assume whole cards.
- The 8-GPU H100/H200/B200/MI3xx bare-metal plans (`vbm-*`): `BareMetalServer`, a different resource with its own
  image and network rules; not built by these components.
"""

from __future__ import annotations

from accelstack.clouds.base import InstanceType

CHECKED = "2026-12-05"

SOURCES = (
    "Vultr API v2, List Plans (https://api.vultr.com/v2/plans?type=vcg): plan id, vcpu_count, ram (MB), gpu_vram_gb, "
    "gpu_type, locations",
    "Vultr Docs, Cloud GPU (docs.vultr.com/products/compute/cloud-gpu): whole-GPU passthrough plans",
    "Vultr Terraform provider vultr/terraform-provider-vultr @f670e5b (2026-07-21): vultr_instance, "
    "vultr_load_balancer, vultr_firewall_rule, vultr_vpc schemas (ForceNew inputs)",
    "Vultr Docs, Load Balancer health checks and forwarding rules (docs.vultr.com/products/load-balancer)",
)


def _plan(name: str, accelerator: str, gpus: int, gpu_gib: int, vcpus: int, memory_gib: int) -> InstanceType:
    # No fabric between instances: Vultr Cloud GPU VMs reach each other over the VPC only.
    return InstanceType(name, accelerator, gpus, gpu_gib, vcpus, memory_gib)


# Plan id -> row. The id spells the plan: vcg-<gpu>-<vcpus>c-<ram>g-<total vram>vram.
ACCELERATED_PLANS: dict[str, InstanceType] = {
    plan.name: plan
    for plan in (
        _plan("vcg-l40s-16c-180g-48vram", "L40S", 1, 48, 16, 180),
        _plan("vcg-l40s-32c-375g-96vram", "L40S", 2, 48, 32, 375),
        _plan("vcg-l40s-64c-750g-192vram", "L40S", 4, 48, 64, 750),
        _plan("vcg-a100-12c-120g-80vram", "A100", 1, 80, 12, 120),
        _plan("vcg-a100-24c-240g-160vram", "A100", 2, 80, 24, 240),
        _plan("vcg-a100-48c-480g-320vram", "A100", 4, 80, 48, 480),
    )
}

# Vultr region ids (GET /v2/regions): three lowercase letters.
REGIONS = (
    "ewr",  # New Jersey
    "ord",  # Chicago
    "dfw",  # Dallas
    "sea",  # Seattle
    "lax",  # Los Angeles
    "atl",  # Atlanta
    "mia",  # Miami
    "sjc",  # Silicon Valley
    "ams",  # Amsterdam
    "fra",  # Frankfurt
    "lhr",  # London
    "cdg",  # Paris
    "sto",  # Stockholm
    "waw",  # Warsaw
    "nrt",  # Tokyo
    "icn",  # Seoul
    "sgp",  # Singapore
    "bom",  # Mumbai
    "syd",  # Sydney
)

# Where the GPU plans were listed (GET /v2/plans?type=vcg, `locations`). Stock moves: a plan missing from a region
# here is refused by the spec rule with this date, and Vultr refuses it at create time anyway.
PLAN_LOCATIONS: dict[str, tuple[str, ...]] = {
    **{
        name: ("ewr", "ord", "sjc", "lax", "ams", "fra", "nrt", "sgp", "bom")
        for name in ACCELERATED_PLANS
        if name.startswith("vcg-l40s-")
    },
    **{name: ("ewr", "ord", "sjc", "ams", "fra") for name in ACCELERATED_PLANS if name.startswith("vcg-a100-")},
}

# Vultr Object Storage is S3-compatible: each region's cluster answers at https://<cluster>.vultrobjects.com
# (GET /v2/object-storage/clusters: hostname). The replicas' S3 client reads the weights there.
OBJECT_STORAGE_HOSTS: dict[str, str] = {
    "ewr": "ewr1.vultrobjects.com",
    "sjc": "sjc1.vultrobjects.com",
    "ams": "ams1.vultrobjects.com",
    "fra": "fra1.vultrobjects.com",
    "sgp": "sgp1.vultrobjects.com",
    "blr": "blr1.vultrobjects.com",
    "del": "del1.vultrobjects.com",
}
DEFAULT_OBJECT_STORAGE_HOST = "ewr1.vultrobjects.com"

# Ubuntu 22.04 LTS x64 (GET /v2/os: id 1743). Vultr's GPU plans boot it with the NVIDIA driver the plan needs
# (passthrough GPUs); the replica's boot installs Docker and the NVIDIA container toolkit when absent.
UBUNTU_2204_OS_ID = 1743

# Vultr Load Balancer: health check interval 3..300 s, response timeout 1..300 s, thresholds 1..15
# (docs.vultr.com/products/load-balancer, "health checks"; the provider's defaults: 15 s, 5 s, 5, 5).
HEALTH_CHECK_INTERVAL_SECONDS = (3, 300)
HEALTH_CHECK_TIMEOUT_SECONDS = (1, 300)
# User data (cloud-init) is passed base64-encoded in the create call; Vultr takes up to 64 KiB of it
# (docs.vultr.com, "How to use Cloud-Init User Data"; the API's user_data field).
USER_DATA_MAX_BYTES = 65_536
# Firewall group: up to 50 rules per group by default (GET /v2/firewalls: max_rule_count).
FIREWALL_MAX_RULES = 50
# Instances one load balancer takes (the API's attached instances); Vultr support raises it.
LOAD_BALANCER_MAX_INSTANCES = 100
