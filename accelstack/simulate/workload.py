"""Request streams for the serving simulator: arrival times and output tokens per request.

Arrivals are drawn all at once with numpy (a day at 50 requests/s is 4.3 million of them): a
non-homogeneous Poisson process by time rescaling -- unit-rate Poisson points mapped through the
inverse of the cumulative rate, which is piecewise linear because the rate is piecewise constant.
A CSV trace gives `timestamp,tokens` rows instead.

Service time of a request = its output tokens / the decode rate of one sequence. A replica runs up to
the planner's KV-cache concurrency of sequences at once (continuous batching), each at that rate; the
rate defaults to mean tokens / `serving.slo.serviceSeconds`, so the spec's service time is the mean.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from accelstack.planner.cost import DEFAULT_DAILY_PROFILE
from accelstack.planner.token_lengths import LoadLengths
from accelstack.spec.input_files import read_text

PATTERNS = ("diurnal", "spike", "steady")
DEFAULT_MEAN_TOKENS = 256.0
DAY_SECONDS = 86_400.0
# The spike pattern: a quiet base with a burst at noon (a launch, a batch job pointed at the API): by default the peak
# is 5x the base for 15 minutes (`simulate --spike-factor`, `--spike-minutes`).
SPIKE_BASE_FRACTION = 0.2
SPIKE_START_SECONDS = 12 * 3600.0
SPIKE_SECONDS = 15 * 60.0
SPIKE_FACTORS = (1.0, 1000.0)  # peak over base: above 1 (else no spike), at most 1000x


@dataclass(frozen=True)
class SpikeShape:
    """The spike pattern's burst: the peak is `factor` times the base rate, for `seconds`, from noon (or mid-window
    on a shorter run)."""

    factor: float = 1 / SPIKE_BASE_FRACTION
    seconds: float = SPIKE_SECONDS

    def start(self, horizon: float) -> float:
        return min(SPIKE_START_SECONDS, horizon / 2)

    def problem(self, horizon: float) -> str | None:
        """Why the shape does not fit `horizon` seconds, or None."""
        least, most = SPIKE_FACTORS
        if not least < self.factor <= most:
            return f"--spike-factor {self.factor:g}: the peak over the base rate; allowed: above {least:g}, at most {most:g}"
        room = horizon - self.start(horizon)
        if not 0 < self.seconds <= room:
            return (
                f"--spike-minutes {self.seconds / 60:g}: the spike starts at hour {self.start(horizon) / 3600:g} of "
                f"{horizon / 3600:g}; allowed: above 0, at most {room / 60:g} minutes (or more --hours)"
            )
        return None


# A trace's limits: a day at 50 requests/s is ~100 MB of CSV; a run covers at most `simulate --hours`' 31 days.
MAX_TRACE_BYTES = 256 * 1024 * 1024
MAX_TRACE_REQUESTS = 50_000_000
MAX_TRACE_SECONDS = 31 * DAY_SECONDS
MAX_NUMBER_CHARS = 64
MAX_TOKENS = 1_000_000  # the longest outputs today are ~100K tokens
# Unix time in seconds reaches 1e11 in the year 5138; in milliseconds it passed 1e11 in 1973.
UNIX_MILLISECONDS_FROM = 1e11
MAP_CHUNK = 1 << 20  # arrivals mapped from cumulative rate to time per pass


@dataclass(frozen=True)
class Workload:
    arrivals: np.ndarray  # seconds from the start, sorted
    tokens: np.ndarray  # output tokens per request
    horizon: float  # seconds simulated (arrivals are all before it)
    source: str
    input_tokens: np.ndarray | None = None  # prompt tokens per request; None: the design's (serving.load's)

    def __post_init__(self) -> None:
        if len(self.arrivals) != len(self.tokens):
            raise ValueError("one token count per arrival")
        if self.input_tokens is not None and len(self.input_tokens) != len(self.tokens):
            raise ValueError("one prompt length per arrival")

    def service_seconds(self, tokens_per_second: float) -> np.ndarray:
        return self.tokens / tokens_per_second

    @property
    def mean_tokens(self) -> float:
        return float(self.tokens.mean()) if len(self.tokens) else DEFAULT_MEAN_TOKENS


def rate_profile(
    pattern: str, peak_rps: float, horizon: float, spike: SpikeShape | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(segment start times, requests/s in each segment) over [0, horizon) for a named pattern (`spike`: the spike
    pattern's shape, default 5x for 15 minutes)."""
    if pattern == "steady":
        return np.array([0.0]), np.array([peak_rps])
    if pattern == "diurnal":
        # The cost model's 24 hourly fractions of peak, repeated for horizons beyond a day.
        hours = max(1, math.ceil(horizon / 3600))
        profile = [DEFAULT_DAILY_PROFILE[h % 24] for h in range(hours)]
        return np.arange(hours) * 3600.0, np.array(profile) * peak_rps
    if pattern == "spike":
        shape = spike or SpikeShape()
        base = peak_rps / shape.factor
        start = shape.start(horizon)
        return np.array([0.0, start, start + shape.seconds]), np.array([base, peak_rps, base])
    raise ValueError(f"pattern {pattern!r}: allowed: {', '.join(PATTERNS)}")


def poisson_arrivals(
    starts: npt.ArrayLike, rates: npt.ArrayLike, horizon: float, rng: np.random.Generator
) -> npt.NDArray[np.float64]:
    """Arrival times of a Poisson process whose rate is `rates[k]` from `starts[k]` to the next start."""
    start_times = np.asarray(starts, dtype=float)
    rate_values = np.asarray(rates, dtype=float)
    if np.any(rate_values < 0):
        raise ValueError("rates must be >= 0")
    edges = np.append(start_times, horizon)
    cumulative = np.concatenate([[0.0], np.cumsum(rate_values * np.diff(edges))])  # expected arrivals by each edge
    total = cumulative[-1]
    count = rng.poisson(total)
    # Given the count, a Poisson process's points are uniform in cumulative-rate space. Sorted and mapped to times
    # in place, a chunk at a time: one array of the stream's length, not three.
    points = rng.uniform(0.0, total, count)
    points.sort()
    for lo in range(0, count, MAP_CHUNK):
        points[lo : lo + MAP_CHUNK] = np.interp(points[lo : lo + MAP_CHUNK], cumulative, edges)
    return points


def synthetic(
    pattern: str,
    peak_rps: float,
    *,
    horizon: float = DAY_SECONDS,
    mean_tokens: float = DEFAULT_MEAN_TOKENS,
    seed: int = 0,
    lengths: LoadLengths | None = None,
    spike: SpikeShape | None = None,
) -> Workload:
    """A named pattern at `peak_rps`; output tokens exponential with `mean_tokens`, or drawn from `lengths`
    (serving.load's distributions, `planner.token_lengths`: the ones the planner sized by), with prompt lengths
    per request unless every prompt is the same length."""
    if peak_rps <= 0 or horizon <= 0 or mean_tokens <= 0:
        raise ValueError("need a rate, a horizon and mean tokens > 0")
    rng = np.random.default_rng(seed)
    starts, rates = rate_profile(pattern, peak_rps, horizon, spike)
    arrivals = poisson_arrivals(starts, rates, horizon, rng)
    source = f"{pattern} pattern, peak {peak_rps:g} requests/s, seed {seed}"
    if lengths is None:
        return Workload(arrivals, rng.exponential(mean_tokens, len(arrivals)), horizon, source)
    # Outputs first: with the default exponential outputs the stream is the one `mean_tokens` alone draws.
    tokens = lengths.outputs.sample(rng, len(arrivals))
    prompts = None if lengths.inputs.kind == "fixed" else lengths.inputs.sample(rng, len(arrivals)).astype(np.float32)
    return Workload(arrivals, tokens, horizon, f"{source}; {lengths.describe()}", prompts)


def load_trace(path: Path, *, horizon: float | None = None) -> Workload:
    """A CSV of `timestamp,tokens[,input_tokens]` rows (a header row is allowed): seconds (any origin, e.g. Unix
    time), output tokens and, optionally, prompt tokens (in every row or none). Times are shifted to start at 0;
    ValueError names the line of bad input.

    Nothing about the file is trusted: its size is refused before reading (`MAX_TRACE_BYTES`), and times must be
    seconds -- a trace written in milliseconds is refused (Unix time in milliseconds, or a span 1,000 times longer
    than a simulation covers) instead of simulating years of near-empty load for hours."""
    source = f"--trace {path}"
    text = read_text(path, source, MAX_TRACE_BYTES)
    if text.lstrip()[:1] in ("{", "["):
        raise ValueError(f"{source}: looks like JSON; --trace takes CSV rows 'timestamp,tokens' (seconds, tokens)")
    times: list[float] = []
    tokens: list[float] = []
    prompts: list[float] = []
    rows = csv.reader(io.StringIO(text, newline=""))
    while True:
        try:
            row = next(rows)
        except StopIteration:
            break
        except csv.Error as error:  # a field past csv's limit (131,072 characters), a NUL byte
            raise ValueError(f"{source}: line {rows.line_num}: not a CSV row ({error})") from None
        number = rows.line_num
        if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
            continue
        if len(row) < 2:
            raise ValueError(f"{source}: line {number}: expected 'timestamp,tokens', got {_clip(','.join(row))!r}")
        try:
            if any(len(field) > MAX_NUMBER_CHARS for field in row[:2]):
                raise ValueError
            time, count = float(row[0]), float(row[1])
        except ValueError:
            if number == 1 and not times:  # a header
                continue
            raise ValueError(
                f"{source}: line {number}: timestamp and tokens must be numbers, got {_clip(','.join(row[:2]))!r}"
            ) from None
        if not (math.isfinite(time) and math.isfinite(count)) or count <= 0:
            raise ValueError(f"{source}: line {number}: need a finite timestamp and tokens > 0, got {row[0]},{row[1]}")
        if time < 0:
            raise ValueError(f"{source}: line {number}: timestamp {row[0]} is negative; write seconds from any origin")
        if time >= UNIX_MILLISECONDS_FROM:
            raise ValueError(
                f"{source}: line {number}: timestamp {row[0]} is Unix time in milliseconds (in seconds it would be "
                f"year {1970 + time / 31_557_600:,.0f}); write seconds (divide by 1000)"
            )
        if count > MAX_TOKENS:
            raise ValueError(
                f"{source}: line {number}: {row[1]} output tokens; no model generates more than {MAX_TOKENS:,} per request"
            )
        prompt = _prompt_tokens(row, source, number)
        if times and (prompt is None) != (not prompts):
            raise ValueError(f"{source}: line {number}: give prompt tokens (a third column) in every row or none")
        times.append(time)
        tokens.append(count)
        if prompt is not None:
            prompts.append(prompt)
        if len(times) > MAX_TRACE_REQUESTS:
            raise ValueError(f"{source}: more than {MAX_TRACE_REQUESTS:,} requests; one run simulates at most that")
    if not times:
        raise ValueError(f"{source}: no 'timestamp,tokens' rows")
    arrivals = np.asarray(times)
    order = np.argsort(arrivals, kind="stable")
    arrivals, counts = arrivals[order] - arrivals[order][0], np.asarray(tokens)[order]
    span = float(arrivals[-1])
    if span > MAX_TRACE_SECONDS:
        raise ValueError(
            f"{source}: spans {span:,.0f} s ({span / DAY_SECONDS:,.1f} days); one run simulates at most "
            f"{MAX_TRACE_SECONDS / DAY_SECONDS:g} days. If the timestamps are milliseconds, write seconds "
            "(divide by 1000); else cut the trace"
        )
    end = horizon if horizon is not None else max(span + 1.0, 60.0)
    keep = arrivals < end
    inputs = np.asarray(prompts, dtype=np.float32)[order][keep] if prompts else None
    return Workload(arrivals[keep], counts[keep], end, f"trace {Path(path).name}: {int(keep.sum())} requests", inputs)


def _prompt_tokens(row: list[str], source: str, number: int) -> float | None:
    """The optional third column: prompt tokens (> 0, at most MAX_TOKENS); None where the row has none."""
    if len(row) < 3 or not row[2].strip():
        return None
    try:
        if len(row[2]) > MAX_NUMBER_CHARS:
            raise ValueError
        prompt = float(row[2])
    except ValueError:
        raise ValueError(f"{source}: line {number}: prompt tokens must be a number, got {_clip(row[2])!r}") from None
    if not math.isfinite(prompt) or not 0 < prompt <= MAX_TOKENS:
        raise ValueError(f"{source}: line {number}: prompt tokens must be > 0 and at most {MAX_TOKENS:,}, got {row[2]}")
    return prompt


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else f"{text[: limit - 3]}..."
