"""Transformer architecture presets: the numbers KV-cache and weight sizing need.

Values are the `config.json` fields of each model's Hugging Face repository (checked 2026-12-02):
`num_hidden_layers`, `hidden_size`, `num_attention_heads`, `num_key_value_heads` (absent = equal to
the attention heads: plain multi-head attention), `intermediate_size` (OPT: `ffn_dim`), `vocab_size`;
head dim = hidden_size / num_attention_heads. Parameter counts are the safetensors totals shown on
each model card (Mixtral: all experts, since all are resident in GPU memory).
"""

from __future__ import annotations

from dataclasses import dataclass, field

CHECKED = "2026-12-02"


@dataclass(frozen=True)
class Architecture:
    name: str
    layers: int
    hidden: int
    attention_heads: int
    kv_heads: int
    params_billion: float
    intermediate: int = 0  # MLP width; 0 = 4 x hidden (used for the activation estimate only)
    vocab: int = 32_000
    head_dim: int = 0  # 0 = hidden / attention_heads
    active_params_billion: float | None = None  # mixture of experts: parameters used per token
    source: str = ""
    aliases: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "attention_heads", "kv_heads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.params_billion <= 0:
            raise ValueError("params_billion must be > 0")
        if self.attention_heads % self.kv_heads:
            raise ValueError(
                f"attention heads ({self.attention_heads}) must be a multiple of KV heads ({self.kv_heads})"
            )
        if not self.head_dim:
            object.__setattr__(self, "head_dim", self.hidden // self.attention_heads)
        if not self.intermediate:
            object.__setattr__(self, "intermediate", 4 * self.hidden)

    @property
    def params(self) -> float:
        return self.params_billion * 1e9

    @property
    def compute_params(self) -> float:
        """Parameters touched per token (FLOPs ~ 6 x this x tokens for training)."""
        return (self.active_params_billion or self.params_billion) * 1e9


def _hf(repo: str) -> str:
    return f"https://huggingface.co/{repo}/blob/main/config.json"


PRESETS: dict[str, Architecture] = {
    a.name: a
    for a in (
        Architecture("llama-2-7b", 32, 4096, 32, 32, 6.738, 11008, 32000, source=_hf("meta-llama/Llama-2-7b-hf")),
        Architecture("llama-2-13b", 40, 5120, 40, 40, 13.016, 13824, 32000, source=_hf("meta-llama/Llama-2-13b-hf")),
        Architecture("llama-2-70b", 80, 8192, 64, 8, 68.977, 28672, 32000, source=_hf("meta-llama/Llama-2-70b-hf")),
        Architecture(
            "llama-3.1-8b", 32, 4096, 32, 8, 8.030, 14336, 128256,
            source=_hf("meta-llama/Llama-3.1-8B"), aliases=("llama-3-8b",),
        ),
        Architecture(
            "llama-3.1-70b", 80, 8192, 64, 8, 70.554, 28672, 128256,
            source=_hf("meta-llama/Llama-3.1-70B"), aliases=("llama-3-70b",),
        ),
        Architecture("llama-3.1-405b", 126, 16384, 128, 8, 405.853, 53248, 128256, source=_hf("meta-llama/Llama-3.1-405B")),
        Architecture("mistral-7b", 32, 4096, 32, 8, 7.242, 14336, 32000, source=_hf("mistralai/Mistral-7B-v0.1")),
        Architecture(
            "mixtral-8x7b", 32, 4096, 32, 8, 46.703, 14336, 32000, active_params_billion=12.879,
            source=_hf("mistralai/Mixtral-8x7B-v0.1"),
        ),
        Architecture("opt-13b", 40, 5120, 40, 40, 12.853, 20480, 50272, source=_hf("facebook/opt-13b")),
        Architecture("opt-30b", 48, 7168, 56, 56, 29.975, 28672, 50272, source=_hf("facebook/opt-30b")),
        Architecture("opt-66b", 64, 9216, 72, 72, 65.7, 36864, 50272, source=_hf("facebook/opt-66b")),
    )
}  # fmt: skip

_ALIASES = {alias: a.name for a in PRESETS.values() for alias in a.aliases}


def preset_names() -> list[str]:
    return sorted([*PRESETS, *_ALIASES])


def get_preset(name: str) -> Architecture:
    """A preset by name or alias (case-insensitive); ValueError listing the allowed names otherwise."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in PRESETS:
        raise ValueError(f"unknown model {name!r}; allowed: {', '.join(preset_names())}")
    return PRESETS[key]


def custom(
    layers: int,
    hidden: int,
    attention_heads: int,
    kv_heads: int | None,
    params_billion: float,
    head_dim: int | None = None,
    intermediate: int | None = None,
    vocab: int = 32_000,
) -> Architecture:
    """An architecture from flags (`--layers --hidden --heads --kv-heads --params-b`)."""
    return Architecture(
        "custom", layers, hidden, attention_heads, kv_heads or attention_heads, params_billion,
        intermediate or 0, vocab, head_dim or 0, source="user flags",
    )  # fmt: skip
