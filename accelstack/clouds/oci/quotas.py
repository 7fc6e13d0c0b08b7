"""Which OCI service limit each GPU shape draws on (pure data): compute limits per availability domain, counted in
GPUs (`oci limits value list --service-name compute`: gpu-h100-count, gpu-b200-count). The H200 and MI300X limit
names were not confirmed by a source here, so those shapes are reported as not known rather than guessed.
Preemptible capacity is not offered for cluster networks, so no spot row exists."""

from __future__ import annotations

from accelstack.clouds.base import Quota

LIMIT_NAMES: dict[str, str] = {"BM.GPU.H100.8": "gpu-h100-count", "BM.GPU.B200.8": "gpu-b200-count"}

QUOTAS: dict[str, dict[str, Quota]] = {
    "on-demand": {shape: Quota(limit, "GPUs") for shape, limit in LIMIT_NAMES.items()}
}
