"""Which Compute Engine quota each accelerated machine type draws on (pure data).

GPUs are counted per GPU model, per project and region (`gcloud compute regions describe REGION` lists the
metrics, e.g. NVIDIA_H100_GPUS; the Cloud Quotas API groups them as GPUS-PER-GPU-FAMILY-per-project-region
with a gpu_family dimension). Spot VMs draw on the preemptible GPU quota of the same model
(PREEMPTIBLE_<model>_GPUS; cloud.google.com/compute/resource-usage, "Preemptible quotas"). A machine type
missing here is reported as not known.
"""

from __future__ import annotations

from accelstack.clouds.base import Quota

# Machine type -> the GPU model's quota metric.
GPU_METRICS: dict[str, str] = {
    "a4-highgpu-8g": "NVIDIA_B200_GPUS",
    "a3-ultragpu-8g": "NVIDIA_H200_GPUS",
    "a3-megagpu-8g": "NVIDIA_H100_MEGA_GPUS",
    "a3-highgpu-8g": "NVIDIA_H100_GPUS",
    **{f"a2-highgpu-{n}g": "NVIDIA_A100_GPUS" for n in (1, 2, 4, 8)},
    "a2-megagpu-16g": "NVIDIA_A100_GPUS",
    **{f"a2-ultragpu-{n}g": "NVIDIA_A100_80GB_GPUS" for n in (1, 2, 4, 8)},
    **{f"g2-standard-{n}": "NVIDIA_L4_GPUS" for n in (4, 8, 12, 16, 24, 32, 48, 96)},
}

QUOTAS: dict[str, dict[str, Quota]] = {
    "on-demand": {name: Quota(metric, "GPUs") for name, metric in GPU_METRICS.items()},
    "spot": {name: Quota(f"PREEMPTIBLE_{metric}", "GPUs") for name, metric in GPU_METRICS.items()},
}
