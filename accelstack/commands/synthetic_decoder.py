"""A decoder of a model's shape with random weights, timed on the machine it runs on: `accelstack calibrate
--synthetic`. It measures what a serving engine's step costs on this accelerator without the engine or the
weights: one decode step of `batch` sequences over a KV cache of `context` tokens (norms, Q/K/V projections, the
new token's K/V written to the cache, grouped-query attention over the cache, output projection, SwiGLU MLP, then
the final norm and the logits over the vocabulary) and the prefill of an `L`-token prompt (causal attention, the
cache filled, logits of the last token only, as vLLM computes them).

Written against the Python array API standard (https://data-apis.org/array-api/) through `array-api-compat`
(the `calibrate` extra), so the same code runs on numpy on a CPU (the tests, with a tiny shape) and on torch or
cupy on a GPU when one is installed; torch is never required. Timings end with one element read back to the host
(`float(...)`), which waits for the device's queue on every library, so asynchronous GPU launches are counted.

What it is not: the attention is the plain (unfused) computation, not FlashAttention or paged KV, and there is no
tensor parallelism or CUDA graph capture; a real engine is usually faster at long contexts and small batches. The
profile's `notes` say so, and say when layers were sampled (`--layers-measured`: those layers are timed and the
time scaled by the model's layer count).
"""

from __future__ import annotations

import importlib
import math
import os
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from accelstack.commands.common import CliError
from accelstack.planner.architectures import get_preset

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}
SHAPE_KEYS = ("layers", "hidden", "heads", "kv-heads", "intermediate", "vocab", "head-dim")
PREFILL_QUERY_CHUNK = 512  # causal attention scores are built this many query rows at a time (bounded memory)
HEADROOM = 1.15  # allocator fragmentation and temporaries the estimate does not name
RMS_EPSILON = 1e-5


@dataclass(frozen=True)
class DecoderShape:
    """The numbers a decoder's cost depends on (Hugging Face config.json names in `architectures`)."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int

    @property
    def layer_params(self) -> int:
        attention = self.hidden * self.head_dim * (2 * self.heads + 2 * self.kv_heads)  # Q, O, K, V
        return attention + 3 * self.hidden * self.intermediate + 2 * self.hidden  # gate, up, down; two norms

    def describe(self) -> str:
        return (
            f"layers={self.layers},hidden={self.hidden},heads={self.heads},kv-heads={self.kv_heads},"
            f"head-dim={self.head_dim},intermediate={self.intermediate},vocab={self.vocab}"
        )


# Beyond every published decoder's dimension (vocabularies reach ~256k, hidden sizes ~32k); past it the memory
# estimate overflows a float instead of refusing.
MAX_SHAPE_VALUE = 2**24


def parse_shape(text: str) -> DecoderShape:
    """A preset model name (`accelstack.planner.architectures`) or `layers=2,hidden=64,heads=4,kv-heads=2,
    intermediate=128,vocab=256[,head-dim=16]`. CliError naming `--synthetic` and what is allowed otherwise."""
    if "=" not in text:
        try:
            preset = get_preset(text)
        except ValueError as error:
            raise CliError(f"--synthetic: {error}; or a shape: {','.join(f'{k}=N' for k in SHAPE_KEYS)}") from None
        if preset.active_params_billion is not None:  # routed experts: which run depends on the batch's tokens
            raise CliError(
                f"--synthetic {text}: a mixture of experts; the synthetic decoder times dense layers only. Measure "
                "the served model instead (calibrate --model against vllm serve, or a vllm bench serve file)"
            )
        return DecoderShape(
            preset.name, preset.layers, preset.hidden, preset.attention_heads, preset.kv_heads, preset.head_dim,
            preset.intermediate, preset.vocab,
        )  # fmt: skip
    values: dict[str, int] = {}
    for part in text.split(","):
        key, _, raw = part.partition("=")
        key = key.strip()
        if key not in SHAPE_KEYS:
            raise CliError(f"--synthetic {text!r}: unknown key {key!r}; allowed: {', '.join(SHAPE_KEYS)}")
        try:
            values[key] = int(raw)
        except ValueError:
            raise CliError(f"--synthetic {text!r}: {key} must be a whole number, got {raw!r}") from None
        if not 1 <= values[key] <= MAX_SHAPE_VALUE:
            raise CliError(f"--synthetic {text!r}: {key} must be from 1 to {MAX_SHAPE_VALUE:,}")
    missing = [k for k in SHAPE_KEYS[:6] if k not in values]
    if missing:
        raise CliError(f"--synthetic {text!r}: missing {', '.join(missing)} (head-dim alone is optional)")
    heads, kv_heads = values["heads"], values["kv-heads"]
    if heads % kv_heads:
        raise CliError(f"--synthetic {text!r}: heads ({heads}) must be a multiple of kv-heads ({kv_heads})")
    head_dim = values.get("head-dim", values["hidden"] // heads)
    if head_dim < 1:
        raise CliError(f"--synthetic {text!r}: hidden / heads is 0; give head-dim")
    return DecoderShape(
        "custom shape", values["layers"], values["hidden"], heads, kv_heads, head_dim, values["intermediate"],
        values["vocab"],
    )  # fmt: skip


@dataclass(frozen=True)
class Backend:
    """The array namespace (array API), the device object it allocates on, and what to call it in the profile."""

    xp: Any
    device: Any
    dtype: Any
    dtype_name: str
    label: str
    free_bytes: Callable[[], int]


def _host_free_bytes() -> int:
    """Memory the host can still give (Linux MemAvailable, else free pages)."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _array_api_compat() -> Any:
    try:
        import array_api_compat
    except ImportError:
        raise CliError("calibrate --synthetic needs array-api-compat: pip install 'accelstack[calibrate]'") from None
    return array_api_compat


def select_backend(device: str, dtype: str | None) -> Backend:
    """numpy on `cpu`; torch (else cupy) on `cuda` / `cuda:N`. `auto`: a GPU when torch or cupy sees one."""
    compat = _array_api_compat()
    if device not in ("auto", "cpu") and not re.fullmatch(r"cuda(:\d+)?", device):
        raise CliError(f"--device {device!r}: allowed: auto, cpu, cuda, cuda:N")
    if device != "cpu":
        gpu = _gpu_backend(compat, "cuda" if device == "auto" else device, dtype, required=device != "auto")
        if gpu is not None:
            return gpu
    name = dtype or "float32"
    if name == "bfloat16":
        raise CliError("--dtype bfloat16: numpy (the cpu device) has no bfloat16; allowed there: float32, float16")
    xp = compat.array_namespace(np.zeros(1))
    return Backend(xp, "cpu", getattr(xp, name), name, f"cpu (numpy {np.__version__})", _host_free_bytes)


def _optional(module: str) -> Any:
    """torch or cupy where installed (the GPU machine); neither is a dependency."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _gpu_backend(compat: Any, device: str, dtype: str | None, *, required: bool) -> Backend | None:
    name = dtype or "bfloat16"
    index = int(device.partition(":")[2] or 0)
    torch = _optional("torch")
    if torch is not None and torch.cuda.is_available():
        if index >= torch.cuda.device_count():
            raise CliError(f"--device {device}: torch sees {torch.cuda.device_count()} GPU(s), cuda:0 and up")
        target = torch.device(device)
        xp = compat.array_namespace(torch.zeros(1))
        label = f"{torch.cuda.get_device_name(target)} (torch {torch.__version__})"
        return Backend(xp, target, getattr(torch, name), name, label, lambda: int(torch.cuda.mem_get_info(target)[0]))
    cupy = _optional("cupy")
    if cupy is not None and _cupy_devices(cupy) > 0:
        if name == "bfloat16":
            raise CliError("--dtype bfloat16: cupy has no bfloat16; allowed with cupy: float16, float32")
        if index >= _cupy_devices(cupy):
            raise CliError(f"--device {device}: cupy sees {_cupy_devices(cupy)} GPU(s), cuda:0 and up")
        cupy.cuda.Device(index).use()
        xp = compat.array_namespace(cupy.zeros(1))
        label = f"cuda:{index} (cupy {cupy.__version__})"
        return Backend(xp, cupy.cuda.Device(index), getattr(xp, name), name, label,
                       lambda: int(cupy.cuda.runtime.memGetInfo()[0]))  # fmt: skip
    if required:
        raise CliError(f"--device {device}: no GPU seen by torch or cupy here; use --device cpu")
    return None


def _cupy_devices(cupy: Any) -> int:
    try:
        return int(cupy.cuda.runtime.getDeviceCount())
    except cupy.cuda.runtime.CUDARuntimeError:  # raised where no driver is loaded: no GPU to use
        return 0


def memory_needed(
    shape: DecoderShape, layers: int, batch: int, context: int, prefill: int, dtype_bytes: int
) -> dict[str, int]:
    """Bytes the largest measurement holds at once: weights of the measured layers, the embedding/logits matrix,
    the KV cache of the largest decode point (or the longest prompt), and the largest activations."""
    kv_width = 2 * shape.kv_heads * shape.head_dim
    kv_tokens = max(batch * context, prefill)
    activations = max(
        batch * shape.heads * context * 4 * 3,  # decode scores, exp and probabilities (float32 softmax)
        min(prefill, PREFILL_QUERY_CHUNK) * shape.heads * prefill * 4 * 3,  # the same for one chunk of queries
        prefill * (3 * shape.intermediate + 4 * shape.hidden + shape.heads * shape.head_dim) * dtype_bytes,
        batch * shape.vocab * 4,  # logits
    )
    return {
        "weights": (layers * shape.layer_params + shape.vocab * shape.hidden) * dtype_bytes,
        "kv cache": layers * kv_tokens * kv_width * dtype_bytes,
        "activations": activations,
    }


def check_memory(needed: dict[str, int], backend: Backend) -> None:
    """Refuse before allocating a shape that would not fit, naming the figures."""
    total = sum(needed.values()) * HEADROOM
    free = backend.free_bytes()
    if total > free:
        parts = ", ".join(f"{k} {v / 2**30:.2f} GiB" for k, v in needed.items())
        raise CliError(
            f"--synthetic: the largest measurement needs {total / 2**30:.2f} GiB ({parts}, +{HEADROOM - 1:.0%}) on "
            f"{backend.label}, {free / 2**30:.2f} GiB free; lower --layers-measured, --batches, --contexts or "
            "--prefill-lengths"
        )


class SyntheticDecoder:
    """`layers` decoder layers of `shape` with random weights (normal, 1/sqrt(fan-in): activations stay finite in
    half precision), and the logits matrix. Runs one step; the caller times it."""

    def __init__(self, shape: DecoderShape, layers: int, backend: Backend, seed: int = 0) -> None:
        self.shape, self.backend, self.xp = shape, backend, backend.xp
        rng = np.random.default_rng(seed)
        s = shape
        q_width, kv_width = s.heads * s.head_dim, s.kv_heads * s.head_dim
        self.layers = [
            {
                "norm1": self._ones(s.hidden), "norm2": self._ones(s.hidden),
                "wq": self._random(rng, (s.hidden, q_width)), "wk": self._random(rng, (s.hidden, kv_width)),
                "wv": self._random(rng, (s.hidden, kv_width)), "wo": self._random(rng, (q_width, s.hidden)),
                "gate": self._random(rng, (s.hidden, s.intermediate)), "up": self._random(rng, (s.hidden, s.intermediate)),
                "down": self._random(rng, (s.intermediate, s.hidden)),
            }
            for _ in range(layers)
        ]  # fmt: skip
        self.final_norm = self._ones(s.hidden)
        self.logits_weight = self._random(rng, (s.hidden, s.vocab))
        self.rng = rng

    def _random(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Any:
        host = rng.standard_normal(shape, dtype=np.float32) / math.sqrt(shape[0])
        return self.xp.astype(self.xp.asarray(host, device=self.backend.device), self.backend.dtype)

    def _ones(self, size: int) -> Any:
        return self.xp.ones((size,), dtype=self.backend.dtype, device=self.backend.device)

    def activations(self, rows: int) -> Any:
        return self._random(self.rng, (rows, self.shape.hidden))

    def kv_cache(self, batch: int, tokens: int) -> list[tuple[Any, Any]]:
        """Per measured layer, K and V of (batch, kv heads, tokens, head dim), written through (no lazy pages)."""
        dims = (batch, self.shape.kv_heads, tokens, self.shape.head_dim)
        xp, device, dtype = self.xp, self.backend.device, self.backend.dtype
        return [(xp.full(dims, 0.01, dtype=dtype, device=device), xp.full(dims, 0.01, dtype=dtype, device=device))
                for _ in self.layers]  # fmt: skip

    def _norm(self, x: Any, weight: Any) -> Any:
        xp = self.xp
        wide = xp.astype(x, xp.float32)
        scale = 1.0 / xp.sqrt(xp.mean(wide * wide, axis=-1, keepdims=True) + RMS_EPSILON)
        return xp.astype(wide * scale, x.dtype) * weight

    def _softmax(self, scores: Any, visible: Any = None) -> Any:
        """Softmax over the last axis in float32; `visible` (causal mask) zeroes the future keys after the exp
        (a -inf score takes numpy's slow path; shifting by the maximum over all keys keeps exp <= 1)."""
        xp = self.xp
        scores = xp.astype(scores, xp.float32)
        exp = xp.exp(scores - xp.max(scores, axis=-1, keepdims=True))
        if visible is not None:
            exp = xp.where(visible, exp, xp.zeros((), dtype=exp.dtype, device=self.backend.device))
        return exp / xp.sum(exp, axis=-1, keepdims=True)

    def _mlp(self, x: Any, layer: dict[str, Any]) -> Any:
        xp = self.xp
        gate = xp.matmul(x, layer["gate"])
        return xp.matmul(gate / (1.0 + xp.exp(-gate)) * xp.matmul(x, layer["up"]), layer["down"])

    def decode_step(self, x: Any, cache: list[tuple[Any, Any]], position: int) -> Any:
        """One step for x (batch, hidden): each sequence's new token goes to `position` of its cache and attends
        over positions 0..position. Returns the logits (batch, vocab)."""
        xp, s = self.xp, self.shape
        batch, group = x.shape[0], s.heads // s.kv_heads
        for layer, (keys, values) in zip(self.layers, cache, strict=True):
            h = self._norm(x, layer["norm1"])
            q = xp.reshape(xp.matmul(h, layer["wq"]), (batch, s.kv_heads, group, s.head_dim))
            keys[:, :, position, :] = xp.reshape(xp.matmul(h, layer["wk"]), (batch, s.kv_heads, s.head_dim))
            values[:, :, position, :] = xp.reshape(xp.matmul(h, layer["wv"]), (batch, s.kv_heads, s.head_dim))
            seen_k, seen_v = keys[:, :, : position + 1, :], values[:, :, : position + 1, :]
            scores = xp.matmul(q, xp.matrix_transpose(seen_k)) / math.sqrt(s.head_dim)  # (b, kv, group, ctx)
            attended = xp.matmul(xp.astype(self._softmax(scores), x.dtype), seen_v)
            x = x + xp.matmul(xp.reshape(attended, (batch, s.heads * s.head_dim)), layer["wo"])
            x = x + self._mlp(self._norm(x, layer["norm2"]), layer)
        return self.logits(x)

    def logits(self, x: Any) -> Any:
        """The final norm and the logits over the vocabulary, for each row of x."""
        return self.xp.matmul(self._norm(x, self.final_norm), self.logits_weight)

    def prefill(self, x: Any, cache: list[tuple[Any, Any]]) -> Any:
        """A prompt x (tokens, hidden) of one sequence: fills its cache (batch 1), causal attention in chunks of
        query rows, logits of the last token."""
        xp, s = self.xp, self.shape
        tokens, group = x.shape[0], s.heads // s.kv_heads
        key_index = xp.arange(tokens, device=self.backend.device)
        for layer, (keys, values) in zip(self.layers, cache, strict=True):
            h = self._norm(x, layer["norm1"])
            q = xp.permute_dims(xp.reshape(xp.matmul(h, layer["wq"]), (tokens, s.kv_heads, group, s.head_dim)),
                                (1, 2, 0, 3))  # fmt: skip
            # Laid out per head, as an engine's attention kernel reads it (numpy's matmul is 15x slower on a view).
            q = xp.reshape(q, (s.kv_heads, group, tokens, s.head_dim), copy=True)
            for name, target in (("wk", keys), ("wv", values)):
                projected = xp.reshape(xp.matmul(h, layer[name]), (tokens, s.kv_heads, s.head_dim))
                target[0, :, :tokens, :] = xp.permute_dims(projected, (1, 0, 2))
            chunks = []
            for start in range(0, tokens, PREFILL_QUERY_CHUNK):
                stop = min(start + PREFILL_QUERY_CHUNK, tokens)
                seen_k, seen_v = keys[0, :, :stop, :], values[0, :, :stop, :]  # (kv, ctx, head dim)
                scores = xp.matmul(q[:, :, start:stop, :], xp.expand_dims(xp.matrix_transpose(seen_k), axis=1))
                visible = xp.expand_dims(key_index[start:stop], axis=1) >= xp.expand_dims(key_index[:stop], axis=0)
                probabilities = xp.astype(self._softmax(scores / math.sqrt(s.head_dim), visible), x.dtype)
                chunks.append(xp.matmul(probabilities, xp.expand_dims(seen_v, axis=1)))  # (kv, group, rows, hd)
            attended = xp.reshape(xp.permute_dims(xp.concat(chunks, axis=2), (2, 0, 1, 3)),
                                  (tokens, s.heads * s.head_dim))  # fmt: skip
            x = x + xp.matmul(attended, layer["wo"])
            x = x + self._mlp(self._norm(x, layer["norm2"]), layer)
        return self.logits(x[-1:, :])


def timed(run: Callable[[], Any], warmup: int, repeats: int) -> float:
    """Median seconds of `run` over `repeats` after `warmup` untimed calls; each ends by reading one element to
    the host, which waits for the device's queue."""
    for _ in range(warmup):
        float(run()[0, 0])
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        float(run()[0, 0])
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


@dataclass(frozen=True)
class Measurement:
    decode: list[tuple[int, int, float]]  # (batch, context, step seconds)
    prefill: list[tuple[int, float]]  # (prompt tokens, seconds)
    notes: str


def measure(
    shape: DecoderShape, backend: Backend, *, batches: list[int], contexts: list[int], lengths: list[int],
    layers_measured: int, warmup: int, repeats: int, report: Callable[[str], None],
) -> Measurement:  # fmt: skip
    """Decode steps over batches x contexts and prefill by prompt length, for the whole model: with fewer layers
    measured than the model has, the layers' share (the run less the logits alone) is scaled by the ratio."""
    layers = min(layers_measured, shape.layers)
    check_memory(
        memory_needed(shape, layers, max(batches), max(contexts), max(lengths), DTYPE_BYTES[backend.dtype_name]),
        backend,
    )
    decoder = SyntheticDecoder(shape, layers, backend)
    scale = shape.layers / layers

    def whole_model(run: Callable[[], Any], head: Callable[[], Any]) -> float:
        seconds = timed(run, warmup, repeats)
        if layers == shape.layers:
            return seconds
        logits = timed(head, warmup, repeats)
        return logits + max(seconds - logits, 0.0) * scale

    decode: list[tuple[int, int, float]] = []
    for batch in batches:
        x = decoder.activations(batch)
        for context in contexts:
            cache = decoder.kv_cache(batch, context)
            step = whole_model(partial(decoder.decode_step, x, cache, context - 1), partial(decoder.logits, x))
            del cache
            decode.append((batch, context, step))
            report(f"decode batch {batch}, context {context}: {step * 1000:.3f} ms per step")
    prefill: list[tuple[int, float]] = []
    for tokens in lengths:
        x, cache = decoder.activations(tokens), decoder.kv_cache(1, tokens)
        seconds = whole_model(partial(decoder.prefill, x, cache), partial(decoder.logits, x[-1:, :]))
        del cache
        prefill.append((tokens, seconds))
        report(f"prefill {tokens} tokens: {seconds * 1000:.3f} ms")
    sampled = (
        f"{layers} of {shape.layers} layers timed and scaled by {scale:g} (the logits timed alone, not scaled)"
        if layers < shape.layers
        else f"all {shape.layers} layers timed"
    )
    notes = (
        f"synthetic decoder of {shape.name} ({shape.describe()}), random weights, {backend.dtype_name} on "
        f"{backend.label}; {sampled}; median of {repeats} after {warmup} warm-up runs; plain (unfused) attention "
        "over a contiguous KV cache, one device, no CUDA graphs: a serving engine (FlashAttention, paged KV) is "
        "usually faster at long contexts"
    )
    return Measurement(decode, prefill, notes)
