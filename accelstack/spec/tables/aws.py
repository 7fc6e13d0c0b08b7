"""AWS constraint tables. Checked 2026-12-02 against the AWS documentation named beside each table."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InstanceType:
    name: str
    accelerator: str  # e.g. "H100"
    accelerators: int  # GPUs (or Trainium chips) per instance
    accelerator_memory_gib: int  # per accelerator
    efa_interfaces: int  # maximum EFA interfaces = network cards that take one (0: no EFA)
    vcpus: int
    memory_gib: int


# Source: Amazon EC2 accelerated computing instance specifications and
# "Maximum network interfaces" / "Supported instance types" in the EFA user guide.
ACCELERATED_INSTANCES: dict[str, InstanceType] = {
    i.name: i
    for i in (
        InstanceType("p5.48xlarge", "H100", 8, 80, 32, 192, 2048),
        InstanceType("p4d.24xlarge", "A100", 8, 40, 4, 96, 1152),
        InstanceType("g5.xlarge", "A10G", 1, 24, 0, 4, 16),
    )
}
