"""Per-accelerator numbers the planner needs beyond a cloud's catalog (whose `InstanceType` rows list
counts and nominal memory): memory the runtime can actually see, and peak dense BF16 throughput. They
are facts about the accelerator, not the cloud, so they are keyed by `InstanceType.accelerator`.

Visible memory: HBM parts are sold in GiB and the driver reserves ~1% (A100 80GB reports 79.15 GiB
to PyTorch, A100 40GB 39.39 GiB); GDDR parts are sold in decimal GB (A10G "24 GB" reports 22.30 GiB,
see the data-on-eks DeepSeek-on-g5 log cited in tests/planner). Peak TFLOPS: dense BF16 tensor-core
figures from the vendor data sheets (NVIDIA H100/H200 SXM 989, H100 NVL 835 (1,671 with sparsity), A100 312,
L40S 362, L4 121, A10 125, B200 2250; AMD Instinct MI300X 1307.4 (2614.9 with sparsity); AWS Trainium 190,
Inferentia2 190). Checked 2026-12-06.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelstack.clouds.base import Catalog, InstanceType

CHECKED = "2026-12-06"
GIB = 2**30

_GDDR = {"A10G", "L4", "L40S"}
_HBM_VISIBLE = 0.989  # 79.15 / 80
_GDDR_VISIBLE = 0.929  # 22.30 / 24 (decimal GB to GiB, minus a driver reserve)
# Measured exceptions: one MI300X shows 191.98 GiB of its 192 to vLLM (AUGMXNT/MI300-testing's log, cited in
# tests/planner/test_kv_cache.py); ROCm reserves almost nothing.
_VISIBLE_MEASURED = {"MI300X": 191.98 / 192}

PEAK_BF16_TFLOPS: dict[str, float] = {
    "B200": 2250.0,
    "H200": 989.0,
    "H100": 989.0,
    "H100-NVL": 835.0,
    "MI300X": 1307.4,
    "A100": 312.0,
    "L40S": 362.0,
    "L4": 121.0,
    "A10G": 125.0,
    "Trainium": 190.0,
    "Inferentia2": 190.0,
}


# Memory bandwidth per accelerator, GB/s (vendor data sheets: H100 SXM 3.35 TB/s, H100 NVL 3.9 TB/s, H200 4.8 TB/s,
# MI300X 5.3 TB/s, A100 40GB SXM 1,555 GB/s and 80GB SXM 2,039 GB/s, L40S 864 GB/s, L4 300 GB/s, A10 600 GB/s, B200
# 8 TB/s; AWS Trainium and Inferentia2 820 GB/s per chip). Decoding reads every weight once per step,
# so this bounds a serving replica's tokens/s (`accelstack.planner.serving.replica_capacity`).
MEMORY_BANDWIDTH_GBPS: dict[str, float] = {
    "B200": 8000.0,
    "H200": 4800.0,
    "H100": 3350.0,
    "H100-NVL": 3900.0,
    "MI300X": 5300.0,
    "A100": 2039.0,  # 80 GB parts; 40 GB parts below
    "L40S": 864.0,
    "L4": 300.0,
    "A10G": 600.0,
    "Trainium": 820.0,
    "Inferentia2": 820.0,
}
A100_40GB_BANDWIDTH_GBPS = 1555.0


def memory_bandwidth_gbps(itype: InstanceType) -> float:
    """One accelerator's memory bandwidth, GB/s; ValueError for an accelerator with no known figure."""
    if itype.accelerator == "A100" and itype.accelerator_memory_gib <= 40:
        return A100_40GB_BANDWIDTH_GBPS
    try:
        return MEMORY_BANDWIDTH_GBPS[itype.accelerator]
    except KeyError:
        raise ValueError(f"no memory bandwidth known for {itype.accelerator}") from None


@dataclass(frozen=True)
class Device:
    instance_type: str
    accelerator: str
    count: int
    nominal_gib: float  # per accelerator, as sold
    visible_gib: float  # per accelerator, as the runtime sees it
    peak_tflops: float  # per accelerator, dense BF16


def instance(catalog: Catalog, instance_type: str) -> InstanceType:
    """The catalog's machine type, or ValueError naming the ones it has."""
    try:
        return catalog.instances[instance_type]
    except KeyError:
        raise ValueError(f"unknown instance type {instance_type!r}; allowed: {', '.join(catalog.instances)}") from None


def device(itype: InstanceType) -> Device:
    factor = _VISIBLE_MEASURED.get(itype.accelerator, _GDDR_VISIBLE if itype.accelerator in _GDDR else _HBM_VISIBLE)
    return Device(
        itype.name,
        itype.accelerator,
        itype.accelerators,
        float(itype.accelerator_memory_gib),
        round(itype.accelerator_memory_gib * factor, 2),
        PEAK_BF16_TFLOPS.get(itype.accelerator, 0.0),
    )
