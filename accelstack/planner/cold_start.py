"""Cold start of a serving replica and the scaling defaults that follow from it.

cold start = instance boot + container image pull + weights size / storage throughput + server start.
A replica launched now serves only after that window, so the warm pool holds the replicas the service
is expected to add within one window, and the load balancer health check grace period covers it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

from accelstack.planner.architectures import Architecture
from accelstack.planner.kv_cache import weights_bytes

# Assumptions, each overridable: a GPU AMI to cloud-init done (~1.5 min); the vLLM OpenAI image
# (~10 GB compressed) from ECR at ~200 MB/s; weights from S3 at ~500 MB/s per instance (what a
# single-process multipart download reaches on 25-100 Gbps instances); engine start (profiling,
# CUDA graph capture) ~60 s, as the vLLM logs cited in tests show (init engine took 51.89 s).
DEFAULT_BOOT_SECONDS = 90.0
DEFAULT_IMAGE_GB = 10.0
DEFAULT_IMAGE_PULL_MBPS = 200.0
DEFAULT_WEIGHTS_MBPS = 500.0
DEFAULT_SERVER_START_SECONDS = 60.0
GRACE_MARGIN = 1.25  # health checks start after the slowest expected start, with a margin


@dataclass(frozen=True)
class ColdStart:
    boot_seconds: float
    image_seconds: float
    weights_seconds: float
    server_start_seconds: float
    total_seconds: float
    warm_pool_size: int
    health_check_grace_seconds: int
    warm_total_seconds: float  # a warm-pool instance skips boot and image pull
    source: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def cold_start(
    weights_gb: float,
    *,
    boot_seconds: float = DEFAULT_BOOT_SECONDS,
    image_gb: float = DEFAULT_IMAGE_GB,
    image_pull_mbps: float = DEFAULT_IMAGE_PULL_MBPS,
    weights_mbps: float = DEFAULT_WEIGHTS_MBPS,
    server_start_seconds: float = DEFAULT_SERVER_START_SECONDS,
    scale_out_replicas_per_hour: float = 0.0,
) -> ColdStart:
    """Cold-start window and the warm pool needed to absorb `scale_out_replicas_per_hour` of growth."""
    if min(weights_gb, image_gb) < 0 or min(image_pull_mbps, weights_mbps) <= 0:
        raise ValueError("sizes must be >= 0 and throughputs > 0")
    image = image_gb * 1000 / image_pull_mbps
    weights = weights_gb * 1000 / weights_mbps
    total = boot_seconds + image + weights + server_start_seconds
    # Replicas the service needs to add while one cold start is in flight.
    warm_pool = math.ceil(scale_out_replicas_per_hour * total / 3600 - 1e-9) if scale_out_replicas_per_hour > 0 else 0
    grace = int(math.ceil(total * GRACE_MARGIN / 10.0) * 10)
    return ColdStart(
        boot_seconds,
        round(image, 1),
        round(weights, 1),
        server_start_seconds,
        round(total, 1),
        warm_pool,
        grace,
        round(weights + server_start_seconds, 1),
        "accelstack.planner.cold_start: boot + image/pull rate + weights/storage rate + server start",
    )


def serving_defaults(
    model: Architecture | None,
    precision: str = "bf16",
    *,
    params_billion: float | None = None,
    weights_gb: float | None = None,
    replicas_min: int = 1,
    replicas_max: int = 4,
    ramp_hours: float = 1.0,
    **overrides: float,
) -> ColdStart:
    """The one call serving components make: warm pool size and health-check grace for a model.

    Expected scale-out: growing from min to max replicas over `ramp_hours` (the morning ramp).
    `weights_gb`, when the caller already knows the size, wins over the architecture or parameters.
    """
    if weights_gb is not None:
        size = weights_gb
    elif model is not None:
        size = weights_bytes(model, precision) / 1e9
    elif params_billion:
        from accelstack.planner.kv_cache import bytes_per_element

        size = params_billion * bytes_per_element(precision)
    else:
        size = 0.0
    rate = max(0, replicas_max - replicas_min) / ramp_hours if ramp_hours > 0 else 0.0
    result = cold_start(size, scale_out_replicas_per_hour=rate, **overrides)
    # Never pool more than the headroom the group can grow into.
    if result.warm_pool_size > max(0, replicas_max - replicas_min):
        result = replace(result, warm_pool_size=max(0, replicas_max - replicas_min))
    return result
