"""KV cache and concurrency, accounted the way vLLM does it.

vLLM (Kwon et al., "Efficient Memory Management for Large Language Model Serving with PagedAttention",
SOSP 2023; `vllm/worker/worker.py` determine_num_available_blocks) gives each GPU a budget of
`gpu_memory_utilization x total memory`, subtracts the weights, the peak activation memory of a
profiling run and non-torch memory, and divides the rest into blocks of `block_size` tokens:

    bytes per token  = 2 (K and V) x layers x KV heads (on this GPU) x head dim x bytes per element
    block bytes      = block_size x bytes per token
    blocks           = floor(KV budget / block bytes)
    concurrency      = blocks x block_size / context length      (vLLM logs it as "Maximum concurrency")

Tensor parallelism splits weights and KV heads across GPUs (KV heads are replicated when tp exceeds
them); an FP8 KV cache halves the bytes per token and so doubles the blocks.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from accelstack.clouds.base import InstanceType
from accelstack.planner.architectures import Architecture
from accelstack.planner.hardware import GIB, device

BYTES_PER_ELEMENT: dict[str, float] = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}

# vLLM defaults (EngineArgs): block_size 16, gpu_memory_utilization 0.9, max_num_seqs 256.
DEFAULT_BLOCK_SIZE = 16
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9
DEFAULT_MAX_NUM_SEQS = 256
# CUDA context, NCCL and allocator slack that the profiling run sees as non-torch memory (assumption,
# calibrated against the logs cited in tests/planner/test_kv_cache.py).
DEFAULT_RUNTIME_OVERHEAD_GIB = 0.5
# `all-linear` LoRA targets, as PEFT and vLLM name them.
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def bytes_per_element(precision: str) -> float:
    try:
        return BYTES_PER_ELEMENT[precision]
    except KeyError:
        raise ValueError(f"unknown precision {precision!r}; allowed: {', '.join(BYTES_PER_ELEMENT)}") from None


def kv_heads_per_gpu(arch: Architecture, tp: int) -> float:
    """KV heads each GPU holds: split by tp, but never below one (vLLM replicates them)."""
    return max(1.0, arch.kv_heads / tp)


def kv_bytes_per_token(arch: Architecture, kv_precision: str = "bf16", tp: int = 1) -> float:
    """Bytes of K and V for one token on one GPU (tp=1: the whole model's figure)."""
    return 2 * arch.layers * kv_heads_per_gpu(arch, tp) * arch.head_dim * bytes_per_element(kv_precision)


def weights_bytes(arch: Architecture, precision: str = "bf16") -> float:
    return arch.params * bytes_per_element(precision)


def activation_bytes(
    arch: Architecture, max_batched_tokens: int, tp: int = 1, max_num_seqs: int = DEFAULT_MAX_NUM_SEQS
) -> float:
    """Peak activation of vLLM's profiling forward pass (estimate): MLP intermediates and residual
    stream for every batched token in 16-bit, split by tp, plus fp32 logits for each sequence."""
    mlp = max_batched_tokens * (2 * arch.intermediate + 4 * arch.hidden) * 2 / tp
    logits = max_num_seqs * arch.vocab * 4
    return mlp + logits


def lora_bytes(
    arch: Architecture,
    rank: int,
    adapters: int = 1,
    precision: str = "bf16",
    targets: tuple[str, ...] = LORA_TARGETS,
    tp: int = 1,
) -> float:
    """Resident adapter weights: rank x (in + out) per targeted module x layers x adapters x bytes."""
    if adapters <= 0 or rank <= 0:
        return 0.0
    q_out = arch.attention_heads * arch.head_dim
    kv_out = arch.kv_heads * arch.head_dim
    shapes = {
        "q_proj": (arch.hidden, q_out),
        "k_proj": (arch.hidden, kv_out),
        "v_proj": (arch.hidden, kv_out),
        "o_proj": (q_out, arch.hidden),
        "gate_proj": (arch.hidden, arch.intermediate),
        "up_proj": (arch.hidden, arch.intermediate),
        "down_proj": (arch.intermediate, arch.hidden),
    }
    unknown = [t for t in targets if t not in shapes]
    if unknown:
        raise ValueError(f"unknown LoRA target(s) {', '.join(unknown)}; allowed: {', '.join(shapes)}")
    per_layer = sum(rank * (shapes[t][0] + shapes[t][1]) for t in targets)
    return per_layer * arch.layers * adapters * bytes_per_element(precision) / tp


@dataclass(frozen=True)
class KvPlan:
    """Per-GPU memory accounting and the resulting blocks and concurrency (all sizes in bytes)."""

    model: str
    tp: int
    context_length: int
    visible_bytes: float
    budget_bytes: float  # gpu_memory_utilization x visible
    weights_bytes: float
    activation_bytes: float
    runtime_overhead_bytes: float
    lora_bytes: float
    kv_cache_bytes: float  # what is left for blocks (may be negative: does not fit)
    kv_bytes_per_token: float  # per GPU
    block_bytes: float
    blocks: int
    tokens: int  # blocks x block_size
    max_concurrency: float  # tokens / context length, as vLLM logs it
    max_concurrent_sequences: int  # whole sequences of the full context length

    @property
    def fits(self) -> bool:
        return self.blocks > 0 and self.tokens >= self.context_length

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["fits"] = self.fits
        for key in list(data):
            if key.endswith("_bytes"):
                data[key.replace("_bytes", "_gib")] = round(data.pop(key) / GIB, 3)
        return data


def plan(
    arch: Architecture,
    visible_gib_per_gpu: float,
    *,
    tp: int = 1,
    precision: str = "bf16",
    kv_precision: str | None = None,
    context_length: int = 8192,
    gpu_memory_utilization: float = DEFAULT_GPU_MEMORY_UTILIZATION,
    block_size: int = DEFAULT_BLOCK_SIZE,
    max_batched_tokens: int | None = None,
    max_num_seqs: int = DEFAULT_MAX_NUM_SEQS,
    runtime_overhead_gib: float = DEFAULT_RUNTIME_OVERHEAD_GIB,
    weights_gib_per_gpu: float | None = None,
    activation_gib: float | None = None,
    lora_rank: int = 0,
    lora_adapters: int = 0,
) -> KvPlan:
    """Blocks and concurrency for `arch` on GPUs with `visible_gib_per_gpu` each, tp-way sharded.

    `weights_gib_per_gpu` / `activation_gib` replace the estimates with measured figures (vLLM logs both).
    """
    if tp < 1:
        raise ValueError("tp must be >= 1")
    if not 0 < gpu_memory_utilization <= 1:
        raise ValueError("gpu_memory_utilization must be in (0, 1]")
    if context_length < 1 or block_size < 1:
        raise ValueError("context_length and block_size must be >= 1")
    kv_precision = kv_precision or precision
    visible = visible_gib_per_gpu * GIB
    budget = gpu_memory_utilization * visible
    weights = weights_gib_per_gpu * GIB if weights_gib_per_gpu is not None else weights_bytes(arch, precision) / tp
    # vLLM's default max_num_batched_tokens without chunked prefill: max(max_model_len, 2048).
    batched = max_batched_tokens or max(context_length, 2048)
    activation = (
        activation_gib * GIB if activation_gib is not None else activation_bytes(arch, batched, tp, max_num_seqs)
    )
    overhead = runtime_overhead_gib * GIB
    lora = lora_bytes(arch, lora_rank, lora_adapters, precision, tp=tp)
    kv_budget = budget - weights - activation - overhead - lora
    per_token = kv_bytes_per_token(arch, kv_precision, tp)
    block = block_size * per_token
    blocks = max(0, math.floor(kv_budget / block))
    tokens = blocks * block_size
    return KvPlan(
        model=arch.name,
        tp=tp,
        context_length=context_length,
        visible_bytes=visible,
        budget_bytes=budget,
        weights_bytes=weights,
        activation_bytes=activation,
        runtime_overhead_bytes=overhead,
        lora_bytes=lora,
        kv_cache_bytes=kv_budget,
        kv_bytes_per_token=per_token,
        block_bytes=block,
        blocks=blocks,
        tokens=tokens,
        max_concurrency=round(tokens / context_length, 2),
        max_concurrent_sequences=tokens // context_length,
    )


def plan_for_instance(arch: Architecture, itype: InstanceType, *, tp: int | None = None, **kwargs: object) -> KvPlan:
    """`plan` on an instance type's accelerators; tp defaults to every accelerator on the instance."""
    dev = device(itype)
    tp = tp or dev.count
    if tp > dev.count:
        raise ValueError(f"tensor parallel {tp} exceeds the {dev.count} accelerator(s) of {itype.name}")
    return plan(arch, dev.visible_gib, tp=tp, **kwargs)  # type: ignore[arg-type]
