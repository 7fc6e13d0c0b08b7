"""`accelstack calibrate`: measure a serving profile on the GPU machine it runs on, for `size`, `advise` and
`simulate --profile` (`accelstack.planner.profile` reads what it writes).

It measures, it does not model: run it on the machine (the instance type) you mean to serve on, against the
inference server already running there on loopback (vLLM's OpenAI-compatible server: `vllm serve MODEL`). Nothing
here needs a GPU or torch; the server does the work. Two measurements, over the OpenAI completions API with
prompts given as token ids (so their length is exact) and `ignore_eos` with `max_tokens` (so the output length is
exact, a vLLM sampling parameter):

- decode steps: `batch` concurrent streaming requests of a `context`-token prompt and `--output-tokens` outputs;
  a step is the time between a request's first and last token over its tokens after the first (vLLM's TPOT), at
  batch `batch` and a mean context of prompt + output / 2; the median over the batch's requests.
- prefill: one request of `tokens` prompt tokens and one output token, alone: the time to its first token (TTFT),
  the fastest of `--repeats` (loopback adds ~1 ms; a request alone never waits in the server's queue).

A `vllm bench serve --save-result` file measured on that machine is read by `--profile` as it is; calibrate
sweeps batches and lengths where one bench run measures one operating point.

`--synthetic MODEL_OR_SHAPE` needs no server: it builds a decoder of the model's shape with random weights on this
machine's accelerator and times the same grid itself (`accelstack.commands.synthetic_decoder`; the `calibrate`
extra).
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import statistics
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer

from accelstack.commands.common import CliError, guarded, out
from accelstack.commands.output_files import check_output_file, staged_file
from accelstack.commands.synthetic_decoder import measure, parse_shape, select_backend
from accelstack.planner.profile import from_profile, profile_document

DEFAULT_BATCHES = "1,4,16,64"
DEFAULT_CONTEXTS = "512,2048"
DEFAULT_PREFILL_LENGTHS = "128,512,2048"
DEFAULT_OUTPUT_TOKENS = 64
# Token id the prompts repeat: any id the tokenizer has; the attention cost does not depend on which.
PROMPT_TOKEN_ID = 100
REQUEST_TIMEOUT_SECONDS = 600.0
DTYPES = ("float32", "float16", "bfloat16")
MAX_POINTS = 64  # each is a request burst; a sweep beyond this is a benchmark, not a calibration
# The longest context a serving stack states (serving.model.contextLength, accelstack.spec.models), and more
# sequences than any server batches: the largest batch, context or prompt a calibration times.
MAX_SIZE = 2_000_000


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int
    model: str


def loopback_endpoint(url: str, model: str) -> Endpoint:
    """The server to measure: http on a loopback address only, so the profile is the machine calibrate runs on
    (and no request leaves it). Exit 2 otherwise."""
    parts = urlsplit(url)
    try:
        loopback = parts.hostname is not None and (
            parts.hostname == "localhost" or ipaddress.ip_address(parts.hostname).is_loopback
        )
        port = parts.port or 80
    except ValueError:
        loopback, port = False, 0
    if parts.scheme != "http" or not loopback or parts.path not in ("", "/"):
        raise CliError(
            f"--endpoint {url!r}: give the server on this machine, http://127.0.0.1:PORT (calibrate measures the "
            "machine it runs on)"
        )
    return Endpoint(parts.hostname or "127.0.0.1", port, model)


@dataclass(frozen=True)
class Stream:
    """One streamed completion: when it was sent, when each chunk with text arrived, tokens reported."""

    sent: float
    chunks: tuple[float, ...]
    completion_tokens: int


def complete(endpoint: Endpoint, prompt_tokens: int, output_tokens: int) -> Stream:
    """POST /v1/completions, streamed, and time its chunks. CliError naming the endpoint on any failure."""
    body = json.dumps({
        "model": endpoint.model, "prompt": [PROMPT_TOKEN_ID] * prompt_tokens, "max_tokens": output_tokens,
        "min_tokens": output_tokens, "ignore_eos": True, "temperature": 0.0, "stream": True,
        "stream_options": {"include_usage": True},
    })  # fmt: skip
    connection = http.client.HTTPConnection(endpoint.host, endpoint.port, timeout=REQUEST_TIMEOUT_SECONDS)
    try:
        sent = time.perf_counter()
        connection.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        if response.status != 200:
            raise CliError(f"{endpoint.host}:{endpoint.port}: /v1/completions answered {response.status}: "
                           f"{response.read(300).decode(errors='replace')}")  # fmt: skip
        chunks: list[float] = []
        usage = 0
        for raw in response:
            line = raw.strip()
            if not line.startswith(b"data:"):
                continue
            data = line[5:].strip()
            if data == b"[DONE]":
                break
            event = json.loads(data)
            if any(choice.get("text") for choice in event.get("choices") or []):
                chunks.append(time.perf_counter())
            if event.get("usage"):
                usage = int(event["usage"].get("completion_tokens") or 0)
        return Stream(sent, tuple(chunks), usage or len(chunks))
    except (OSError, ValueError, http.client.HTTPException) as error:
        raise CliError(f"{endpoint.host}:{endpoint.port}: {error}") from None
    finally:
        connection.close()


def decode_step(endpoint: Endpoint, batch: int, context: int, output_tokens: int) -> float:
    """Seconds per decode step with `batch` sequences of `context` prompt tokens in flight: the median over the
    batch of (last token - first token) / (tokens - 1)."""
    streams: list[Stream | CliError] = []
    lock = threading.Lock()

    def one() -> None:
        try:
            result: Stream | CliError = complete(endpoint, context, output_tokens)
        except CliError as error:  # reported below, in the caller's thread
            result = error
        with lock:
            streams.append(result)

    threads = [threading.Thread(target=one, daemon=True) for _ in range(batch)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    steps = []
    for stream in streams:
        if isinstance(stream, CliError):
            raise stream
        if len(stream.chunks) < 2:
            raise CliError(f"batch {batch}: a stream returned {len(stream.chunks)} tokens; need --output-tokens >= 2")
        steps.append((stream.chunks[-1] - stream.chunks[0]) / (max(stream.completion_tokens, len(stream.chunks)) - 1))
    return statistics.median(steps)


def prefill_time(endpoint: Endpoint, tokens: int, repeats: int) -> float:
    """Seconds to the first token of a `tokens`-token prompt, alone: the fastest of `repeats`."""
    times = []
    for _ in range(repeats):
        stream = complete(endpoint, tokens, 1)
        if not stream.chunks:
            raise CliError(f"prefill of {tokens} tokens: the server returned no token")
        times.append(stream.chunks[0] - stream.sent)
    return min(times)


def _sizes(flag: str, text: str) -> list[int]:
    """Comma-separated whole numbers in 1..MAX_SIZE, bounded in digits before conversion (CPython refuses
    int() past 4,300 digits, and a 400-digit batch overflows the memory estimate's float)."""
    words = [v.strip() for v in text.split(",") if v.strip()]
    if not all(word.isascii() and word.isdigit() and len(word) <= len(str(MAX_SIZE)) for word in words):
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise CliError(f"{flag} {shown!r}: comma-separated whole numbers 1..{MAX_SIZE:,}, e.g. {DEFAULT_BATCHES}")
    values = sorted({int(word) for word in words})
    if not values or values[0] < 1 or values[-1] > MAX_SIZE:
        raise CliError(f"{flag} {text!r}: give numbers from 1 to {MAX_SIZE:,}")
    return values


@guarded
def calibrate_command(
    instance_type: Annotated[
        str, typer.Option("--instance-type", help="This machine's instance type, written into the profile.")
    ],
    out_path: Annotated[Path, typer.Option("--out", dir_okay=False, help="Where to write the profile JSON.")],
    model: Annotated[
        str | None, typer.Option("--model", help="The model name the server serves (its `model` field).")
    ] = None,
    synthetic: Annotated[
        str | None,
        typer.Option(
            "--synthetic",
            help="No server: time a decoder of this shape with random weights here. A model name (llama-3.1-8b) or "
            "layers=N,hidden=N,heads=N,kv-heads=N,intermediate=N,vocab=N[,head-dim=N].",
        ),
    ] = None,
    endpoint: Annotated[
        str, typer.Option("--endpoint", help="The OpenAI-compatible server on this machine (vllm serve).")
    ] = "http://127.0.0.1:8000",
    batches: Annotated[str, typer.Option("--batches", help="Concurrent sequences to time decode steps at.")] = (
        DEFAULT_BATCHES
    ),
    contexts: Annotated[str, typer.Option("--contexts", help="Prompt tokens of the decode measurements.")] = (
        DEFAULT_CONTEXTS
    ),
    prefill_lengths: Annotated[str, typer.Option("--prefill-lengths", help="Prompt tokens to time prefill at.")] = (
        DEFAULT_PREFILL_LENGTHS
    ),
    output_tokens: Annotated[
        int, typer.Option("--output-tokens", min=2, max=4096, help="Tokens generated per decode request.")
    ] = DEFAULT_OUTPUT_TOKENS,
    repeats: Annotated[
        int, typer.Option("--repeats", min=1, max=20, help="Prefill timings per length (--synthetic: every point).")
    ] = 3,
    layers_measured: Annotated[
        int, typer.Option("--layers-measured", min=1, help="--synthetic: layers timed, scaled to the model's count.")
    ] = 4,
    warmup: Annotated[int, typer.Option("--warmup", min=0, max=20, help="--synthetic: untimed runs per point.")] = 2,
    device: Annotated[str, typer.Option("--device", help="--synthetic: auto, cpu (numpy), cuda or cuda:N.")] = "auto",
    dtype: Annotated[
        str | None,
        typer.Option(
            "--dtype", help="--synthetic: float32, float16 or bfloat16 (default: bfloat16 on a GPU, float32 on cpu)."
        ),
    ] = None,
) -> None:
    """Measure decode steps by batch and context, and prefill by prompt length, on the inference server running
    on THIS machine (run it on your GPU machine), or with --synthetic on a decoder of the model's shape, and write
    the profile `--profile` reads."""
    check_output_file(out_path, "--out")  # before the measurements (minutes on a GPU), and again on writing
    batch_sizes, context_sizes = _sizes("--batches", batches), _sizes("--contexts", contexts)
    lengths = _sizes("--prefill-lengths", prefill_lengths)
    if len(batch_sizes) * len(context_sizes) + len(lengths) > MAX_POINTS:
        raise CliError(f"--batches x --contexts + --prefill-lengths: at most {MAX_POINTS} measurements")
    if synthetic is not None:
        if dtype is not None and dtype not in DTYPES:
            raise CliError(f"--dtype {dtype!r}: allowed: {', '.join(DTYPES)}")
        shape = parse_shape(synthetic)
        backend = select_backend(device, dtype)
        measured = measure(
            shape, backend, batches=batch_sizes, contexts=context_sizes, lengths=lengths,
            layers_measured=layers_measured, warmup=warmup, repeats=repeats,
            report=lambda line: out().print(line, markup=False),
        )  # fmt: skip
        _write(
            profile_document(
                measured.decode, measured.prefill, model=model or shape.name, instanceType=instance_type,
                measuredWith=f"accelstack calibrate --synthetic {synthetic}", device=backend.label,
                dtype=backend.dtype_name, notes=measured.notes,
            ),
            out_path,
        )  # fmt: skip
        return
    if model is None:
        raise CliError("--model: the model name the server serves (or --synthetic MODEL_OR_SHAPE, no server)")
    server = loopback_endpoint(endpoint, model)
    decode: list[tuple[int, int, float]] = []
    for batch in batch_sizes:
        for context in context_sizes:
            step = decode_step(server, batch, context, output_tokens)
            decode.append((batch, context + output_tokens // 2, step))
            out().print(f"decode batch {batch}, context {context}: {step * 1000:.2f} ms per step", markup=False)
    prefill: list[tuple[int, float]] = []
    for tokens in lengths:
        seconds = prefill_time(server, tokens, repeats)
        prefill.append((tokens, seconds))
        out().print(f"prefill {tokens} tokens: {seconds * 1000:.1f} ms", markup=False)
    document: dict[str, Any] = profile_document(
        decode, prefill, model=model, instanceType=instance_type, measuredWith=f"accelstack calibrate {endpoint}",
        outputTokens=output_tokens,
    )  # fmt: skip
    _write(document, out_path)


def _write(document: dict[str, Any], out_path: Path) -> None:
    from_profile(document, str(out_path))  # what --profile will read: refuse to write one it cannot
    try:
        with staged_file(out_path, option="--out") as temporary:
            temporary.write_text(json.dumps(document, indent=2) + "\n")
    except OSError as error:
        raise CliError(f"--out {out_path}: cannot write ({error.strerror or error})") from None
    out().print(f"profile: {out_path} (use it with --profile)", markup=False)


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate_command)
