"""Which OCI service limit each GPU shape draws on (pure data): compute limits per availability domain, counted in
GPUs (`oci limits value list --service-name compute`). H200, MI300X and B200 are named by Oracle's Compute Quotas page
(docs.oracle.com/en-us/iaas/Content/Quotas/Concepts/resourcequotas_topic-Compute_Quotas.htm, "Core- and GPU-Based
Quotas", page as of 2026-09-05: gpu-mi300x-count, gpu-h200-count, gpu-b200-count, each "Total number of GPUs for shapes in
the BM.GPU.<X> series", scope availability domain). That page lists no H100 row; `gpu-h100-count` is the name
`oci limits value list` reports for BM.GPU.H100.8 (as tools that read it show), not a documented quota name.
Preemptible capacity is not offered for cluster networks, so no spot row exists."""

from __future__ import annotations

from accelstack.clouds.base import Quota

LIMIT_NAMES: dict[str, str] = {
    "BM.GPU.H100.8": "gpu-h100-count",
    "BM.GPU.H200.8": "gpu-h200-count",
    "BM.GPU.B200.8": "gpu-b200-count",
    "BM.GPU.MI300X.8": "gpu-mi300x-count",
}

# A cluster network is placed in one availability domain: the one the stack names by number, else the first
# (components/oci/training.py), so its GPUs are drawn in that domain alone.
FIRST_DOMAIN = "1"

QUOTAS: dict[str, dict[str, Quota]] = {
    "on-demand": {shape: Quota(limit, "GPUs", first_zone=FIRST_DOMAIN) for shape, limit in LIMIT_NAMES.items()}
}


def domain_name(domains: list[str], number: str) -> str:
    """The tenancy's name of availability domain `number` (1-3, as a stack names it) among the region's domains as
    the Identity API lists them (ListAvailabilityDomains, in order: "Uocm:US-ASHBURN-AD-1", ...)."""
    index = int(number) - 1
    if not 0 <= index < len(domains):
        raise ValueError(
            f"availability domain {number}: the region has {len(domains)} ({', '.join(domains)}); "
            "set training.network.availabilityZone to one of its numbers"
        )
    return domains[index]
