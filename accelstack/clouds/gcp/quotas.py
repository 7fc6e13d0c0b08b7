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

# The Cloud Quotas API's ids of those metrics (cloud.google.com/docs/quotas/reference/rest, QuotaPreference.quotaId;
# cloud.google.com/compute/resource-usage, "GPU quota"): one id per capacity, the GPU model a `gpu_family`
# dimension spelled as the metric without its _GPUS suffix.
QUOTA_IDS = {
    "on-demand": "GPUS-PER-GPU-FAMILY-per-project-region",
    "spot": "PREEMPTIBLE-GPUS-PER-GPU-FAMILY-per-project-region",
}
SERVICE = "compute.googleapis.com"
GPU_FAMILY_DIMENSION = "gpu_family"


def gpu_family(metric: str) -> str:
    """The `gpu_family` dimension of a GPU quota metric: NVIDIA_H100_GPUS -> NVIDIA_H100."""
    return metric.removeprefix("PREEMPTIBLE_").removesuffix("_GPUS")


QUOTAS: dict[str, dict[str, Quota]] = {
    "on-demand": {name: Quota(metric, "GPUs", QUOTA_IDS["on-demand"]) for name, metric in GPU_METRICS.items()},
    "spot": {name: Quota(f"PREEMPTIBLE_{metric}", "GPUs", QUOTA_IDS["spot"]) for name, metric in GPU_METRICS.items()},
}
