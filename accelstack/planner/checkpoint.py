"""How often to checkpoint, and what interruptions cost.

- Young (1974), "A first order approximation to the optimum checkpoint interval", CACM 17(9):
  tau = sqrt(2 delta M).
- Daly (2006), "A higher order estimate of the optimum checkpoint interval for restart dumps",
  FGCS 22(3): tau = sqrt(2 delta M) [1 + 1/3 sqrt(delta / 2M) + 1/9 (delta / 2M)] - delta for
  delta < 2M, else tau = M; expected wall time T_w = M e^(R/M) (e^((tau + delta)/M) - 1) T_s / tau.
  (delta: checkpoint write time, M: mean time between interrupts of the whole job, R: restart time,
  T_s: solve time without failures.)

Interrupt rates: on-demand hardware from Meta's Llama 3 report (Dubey et al. 2024, section 3.3.4):
419 unexpected interruptions in 54 days on 16,384 H100 GPUs (2,048 8-GPU hosts), i.e. one per
~6,335 host-hours. Spot: AWS Spot Instance Advisor buckets interruption frequency per month
(<5% ... >20%); GPU families usually sit in the top bucket, so 20%/month is the default.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from accelstack.planner.architectures import Architecture

HOURS_PER_MONTH = 730.0
LLAMA3_NODE_MTBF_HOURS = 54 * 24 * 2048 / 419  # ~6,335 h per 8-GPU host
DEFAULT_SPOT_INTERRUPTIONS_PER_MONTH = 0.20
# Mixed-precision Adam state that a full checkpoint saves per parameter: bf16 weights (2) + fp32
# master weights (4) + Adam first and second moments (4 + 4). Gradients are not saved.
FULL_STATE_BYTES_PER_PARAM = 14
DEFAULT_RESTART_SECONDS = 600.0  # reschedule, load the checkpoint, warm up (Daly's examples use 10 min)


def young_interval(delta_s: float, mtbf_s: float) -> float:
    _check(delta_s, mtbf_s)
    return math.sqrt(2 * delta_s * mtbf_s)


def daly_interval(delta_s: float, mtbf_s: float) -> float:
    _check(delta_s, mtbf_s)
    if delta_s >= 2 * mtbf_s:
        return mtbf_s
    x = delta_s / (2 * mtbf_s)
    return math.sqrt(2 * delta_s * mtbf_s) * (1 + math.sqrt(x) / 3 + x / 9) - delta_s


def expected_wall_time(tau_s: float, delta_s: float, mtbf_s: float, restart_s: float, solve_s: float) -> float:
    """Daly's complete model of expected wall-clock time with exponential interrupts."""
    _check(delta_s, mtbf_s)
    if tau_s <= 0:
        raise ValueError("interval must be > 0")
    return mtbf_s * math.exp(restart_s / mtbf_s) * math.expm1((tau_s + delta_s) / mtbf_s) * solve_s / tau_s


def overhead_fraction(tau_s: float, delta_s: float, mtbf_s: float, restart_s: float = DEFAULT_RESTART_SECONDS) -> float:
    """Extra wall time over failure-free compute: checkpoint writes + lost work + restarts."""
    return expected_wall_time(tau_s, delta_s, mtbf_s, restart_s, 1.0) - 1.0


def job_mtbf_hours(
    nodes: int,
    capacity: str = "on-demand",
    *,
    node_mtbf_hours: float = LLAMA3_NODE_MTBF_HOURS,
    spot_interruptions_per_month: float = DEFAULT_SPOT_INTERRUPTIONS_PER_MONTH,
) -> float:
    """Mean time between interrupts of a job spanning `nodes` (any node's loss stops a synchronous job)."""
    if nodes < 1:
        raise ValueError("nodes must be >= 1")
    rate = 1 / node_mtbf_hours
    if capacity == "spot":
        rate += spot_interruptions_per_month / HOURS_PER_MONTH
    return 1 / (rate * nodes)


def training_state_bytes(arch: Architecture, mode: str = "full", lora_rank: int = 16) -> float:
    """Checkpoint size: full Adam state, or (LoRA) the adapter and its optimizer state only."""
    if mode == "full":
        return arch.params * FULL_STATE_BYTES_PER_PARAM
    if mode == "lora":
        from accelstack.planner.kv_cache import lora_bytes

        adapter_params = lora_bytes(arch, lora_rank, precision="fp32") / 4
        return adapter_params * FULL_STATE_BYTES_PER_PARAM
    raise ValueError(f"unknown mode {mode!r}; allowed: full, lora")


@dataclass(frozen=True)
class CheckpointPlan:
    state_gb: float
    write_throughput_mbps: float
    write_seconds: float
    job_mtbf_hours: float
    young_interval_minutes: float
    daly_interval_minutes: float
    overhead_fraction: float  # at Daly's interval
    restart_seconds: float
    sources: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def plan(
    state_bytes: float,
    write_throughput_mbps: float,
    nodes: int,
    capacity: str = "on-demand",
    *,
    restart_seconds: float = DEFAULT_RESTART_SECONDS,
    node_mtbf_hours: float = LLAMA3_NODE_MTBF_HOURS,
    spot_interruptions_per_month: float = DEFAULT_SPOT_INTERRUPTIONS_PER_MONTH,
) -> CheckpointPlan:
    if state_bytes <= 0 or write_throughput_mbps <= 0:
        raise ValueError("state size and write throughput must be > 0")
    delta = state_bytes / (write_throughput_mbps * 1e6)
    mtbf_h = job_mtbf_hours(
        nodes, capacity, node_mtbf_hours=node_mtbf_hours, spot_interruptions_per_month=spot_interruptions_per_month
    )
    mtbf = mtbf_h * 3600
    daly = daly_interval(delta, mtbf)
    return CheckpointPlan(
        round(state_bytes / 1e9, 3),
        write_throughput_mbps,
        round(delta, 2),
        round(mtbf_h, 3),
        round(young_interval(delta, mtbf) / 60, 2),
        round(daly / 60, 2),
        round(overhead_fraction(daly, delta, mtbf, restart_seconds), 4),
        restart_seconds,
        ("Young 1974 CACM 17(9)", "Daly 2006 FGCS 22(3)", "Llama 3 report 2024 s3.3.4 (node MTBF)"),
    )


def _check(delta_s: float, mtbf_s: float) -> None:
    if delta_s <= 0 or mtbf_s <= 0:
        raise ValueError("checkpoint time and MTBF must be > 0")
