"""Per-accelerator numbers the planner needs beyond `accelstack.spec.tables.aws` (which lists counts and
nominal memory): memory the runtime can actually see, and peak dense BF16 throughput.

Visible memory: HBM parts are sold in GiB and the driver reserves ~1% (A100 80GB reports 79.15 GiB
to PyTorch, A100 40GB 39.39 GiB); GDDR parts are sold in decimal GB (A10G "24 GB" reports 22.30 GiB,
see the data-on-eks DeepSeek-on-g5 log cited in tests/planner). Peak TFLOPS: dense BF16 tensor-core
figures from the vendor data sheets (NVIDIA H100/H200 SXM 989, A100 312, L40S 362, L4 121, A10 125,
B200 2250; AWS Trainium 190, Inferentia2 190). Checked 2026-12-02.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelstack.spec.tables.aws import ACCELERATED_INSTANCES, InstanceType

CHECKED = "2026-12-02"
GIB = 2**30

_GDDR = {"A10G", "L4", "L40S"}
_HBM_VISIBLE = 0.989  # 79.15 / 80
_GDDR_VISIBLE = 0.929  # 22.30 / 24 (decimal GB to GiB, minus a driver reserve)

PEAK_BF16_TFLOPS: dict[str, float] = {
    "B200": 2250.0,
    "H200": 989.0,
    "H100": 989.0,
    "A100": 312.0,
    "L40S": 362.0,
    "L4": 121.0,
    "A10G": 125.0,
    "Trainium": 190.0,
    "Inferentia2": 190.0,
}


@dataclass(frozen=True)
class Device:
    instance_type: str
    accelerator: str
    count: int
    nominal_gib: float  # per accelerator, as sold
    visible_gib: float  # per accelerator, as the runtime sees it
    peak_tflops: float  # per accelerator, dense BF16


def instance(instance_type: str) -> InstanceType:
    try:
        return ACCELERATED_INSTANCES[instance_type]
    except KeyError:
        raise ValueError(
            f"unknown instance type {instance_type!r}; allowed: {', '.join(ACCELERATED_INSTANCES)}"
        ) from None


def device(instance_type: str) -> Device:
    itype = instance(instance_type)
    factor = _GDDR_VISIBLE if itype.accelerator in _GDDR else _HBM_VISIBLE
    return Device(
        itype.name,
        itype.accelerator,
        itype.accelerators,
        float(itype.accelerator_memory_gib),
        round(itype.accelerator_memory_gib * factor, 2),
        PEAK_BF16_TFLOPS.get(itype.accelerator, 0.0),
    )
