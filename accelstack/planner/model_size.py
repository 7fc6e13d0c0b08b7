"""A served model's size from its spec: the architecture preset it names (or its Hugging Face name
implies), its parameter count, and its weights at the serving precision.

Lives in the planner because it reads the planner's architecture table; the spec layer never calls
it (its GPU-fit rule is in `accelstack.planner_rules`).
"""

from __future__ import annotations

import re

from accelstack.planner.architectures import Architecture, get_preset, preset_names
from accelstack.planner.kv_cache import BYTES_PER_ELEMENT
from accelstack.spec.models import ServingSpec

# Bytes per parameter at each serving precision (the same table sizes KV-cache elements).
PRECISION_BYTES = BYTES_PER_ELEMENT

_SIZE_IN_NAME = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)b(?![a-z0-9])")


def architecture_of(model_name: str, preset: str | None) -> Architecture | None:
    """The preset named `preset`, else the one the model name implies
    (`meta-llama/Llama-3.1-8B-Instruct` -> llama-3.1-8b). None if unknown."""
    names = sorted(preset_names(), key=len, reverse=True)
    for candidate in (preset, model_name):
        if not candidate:
            continue
        key = candidate.lower().rsplit("/", 1)[-1].removeprefix("meta-")
        for name in names:
            if key == name or key.startswith(name + "-"):
                return get_preset(name)
    return None


def parameters_billion_of(spec: ServingSpec) -> float | None:
    model = spec.model
    if model.parameters_billion:
        return model.parameters_billion
    arch = architecture_of(model.name, model.preset)
    if arch:
        return arch.params_billion
    match = _SIZE_IN_NAME.search(model.name.lower())
    return float(match.group(1)) if match else None


def weights_gb(spec: ServingSpec) -> float | None:
    """Weights size in GB (1e9 bytes) at the serving precision."""
    params = parameters_billion_of(spec)
    return None if params is None else params * PRECISION_BYTES[spec.model.precision]
