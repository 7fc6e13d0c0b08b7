"""Streaming request statistics: what a run reports, in memory that does not grow with the number of requests.

A day at 50 requests/s is 4.3 million requests and a `--compare` runs several designs over several seeds, so no
per-request list of waits or latencies is kept. Instead:

- `LogHistogram`: counts in buckets of fixed *relative* width (the DDSketch construction: Masson, Rim and Lee,
  "DDSketch: a fast and fully-mergeable quantile sketch with relative-error guarantees", VLDB 2019). A value x
  falls in bucket k = ceil(log_gamma x), gamma = (1 + a) / (1 - a), and reads back as 2 gamma^k / (gamma + 1),
  within a relative error `a` of x. A quantile is therefore within `a` of the exact order statistic of the same
  rank; counts can be added and removed exactly (a request a failed replica gives back is un-counted), and
  histograms of several seeds merge by adding counts. Values below `lowest` (a request that did not wait) are
  counted apart and read back as 0.
- Exact running sums and counts for means, SLO attainment and Little's law.
- Per-interval aggregates (latency histogram at a coarser error, SLO hits, arrivals, drops) for the plot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# 0.5%: a p99 latency of 10 s reads within +-0.05 s; 2763 buckets (22 KB) from 0.1 ms to 1e8 s.
RELATIVE_ERROR = 0.005
PLOT_RELATIVE_ERROR = 0.02  # the per-interval percentiles only feed the plot
LOWEST_SECONDS = 1e-4
HIGHEST_SECONDS = 1e8
FINISH_CHUNK = 1 << 20  # requests per pass when a run's outcomes are counted per interval
MAX_PLOT_INTERVALS = 1440  # the per-interval arrays stay a few MB whatever the horizon


class LogHistogram:
    """A relative-error quantile sketch over [0, HIGHEST_SECONDS] with exact, signed counts."""

    def __init__(self, relative_error: float = RELATIVE_ERROR, lowest: float = LOWEST_SECONDS):
        if not 0 < relative_error < 1:
            raise ValueError("relative error must be in (0, 1)")
        self.relative_error = relative_error
        self.gamma = (1 + relative_error) / (1 - relative_error)
        self.log_gamma = math.log(self.gamma)
        self.lowest = lowest
        self.offset = math.floor(math.log(lowest) / self.log_gamma)
        self.size = math.ceil(math.log(HIGHEST_SECONDS) / self.log_gamma) - self.offset + 1
        self.counts = np.zeros(self.size, dtype=np.int64)
        self.zeros = 0  # values below `lowest`

    def index(self, values: np.ndarray) -> np.ndarray:
        """Bucket of each value >= lowest (clipped to the range)."""
        k = np.ceil(np.log(values) / self.log_gamma).astype(np.int64) - self.offset
        return np.clip(k, 0, self.size - 1)

    def add(self, values: np.ndarray, weight: int = 1) -> None:
        values = np.asarray(values, dtype=float)
        small = values < self.lowest
        self.zeros += weight * int(small.sum())
        if not small.all():
            self.counts += weight * np.bincount(self.index(values[~small]), minlength=self.size)

    def merge(self, other: LogHistogram) -> None:
        if other.gamma != self.gamma or other.lowest != self.lowest:
            raise ValueError("merge needs the same relative error and lowest value")
        self.counts += other.counts
        self.zeros += other.zeros

    @property
    def count(self) -> int:
        return self.zeros + int(self.counts.sum())

    def value(self, bucket: int) -> float:
        return 2 * self.gamma ** (bucket + self.offset) / (self.gamma + 1)

    def quantile(self, q: float) -> float | None:
        """The value of rank max(1, ceil(q n)) (numpy's 'inverted_cdf'), within the relative error."""
        n = self.count
        if n == 0:
            return None
        rank = max(1, math.ceil(q * n - 1e-9))
        if rank <= self.zeros:
            return 0.0
        bucket = int(np.searchsorted(np.cumsum(self.counts), rank - self.zeros))
        return self.value(bucket)


def quantiles_by_row(counts: np.ndarray, histogram: LogHistogram, qs: tuple[float, ...]) -> np.ndarray:
    """Quantiles of each row of per-interval bucket counts (column 0: values below `lowest`); NaN for an empty row."""
    totals = counts.sum(axis=1)
    cumulative = np.cumsum(counts, axis=1)
    values = np.concatenate([[0.0], 2 * histogram.gamma ** (np.arange(counts.shape[1] - 1) + histogram.offset) / (histogram.gamma + 1)])  # fmt: skip
    out = np.full((counts.shape[0], len(qs)), np.nan)
    for row in np.flatnonzero(totals):
        for col, q in enumerate(qs):
            rank = max(1, math.ceil(q * totals[row] - 1e-9))
            out[row, col] = values[int(np.searchsorted(cumulative[row], rank))]
    return out


def counts_between(sorted_times: np.ndarray, width: float, bins: int) -> np.ndarray:
    """How many of the sorted times fall in each of `bins` intervals of `width` (the last one open-ended), by
    binary search: no per-request temporary."""
    edges = np.searchsorted(sorted_times, np.arange(1, bins) * width, side="left")
    return np.diff(np.concatenate([[0], edges, [len(sorted_times)]]))


@dataclass
class Totals:
    served: int = 0
    met: int = 0  # served within the SLO target
    wait_sum: float = 0.0
    latency_sum: float = 0.0
    time_in_system: float = 0.0  # seconds accepted requests spent in the system before the horizon (Little's law)


class RequestStats:
    """What happened to every request, accumulated as the queue starts them (and un-counted if a failed or
    drained replica gives one back): wait and latency sketches, exact sums, per-interval aggregates."""

    def __init__(
        self,
        arrivals: np.ndarray,
        service: np.ndarray,
        *,
        slo_target: float,
        horizon: float,
        ttl: float,
        interval_seconds: float = 60.0,
    ):
        self.arrivals, self.service = arrivals, service
        self.slo_target, self.horizon, self.ttl = slo_target, horizon, ttl
        self.wait = LogHistogram()
        self.latency = LogHistogram()
        self.totals = Totals()
        # The plot's intervals: the sample period, widened so a long horizon stays at MAX_PLOT_INTERVALS.
        self.interval_seconds = max(interval_seconds, horizon / MAX_PLOT_INTERVALS) if horizon > 0 else interval_seconds
        self.intervals = max(1, math.ceil(horizon / self.interval_seconds - 1e-9))
        self.plot_histogram = LogHistogram(PLOT_RELATIVE_ERROR)
        # Column 0: latencies below `lowest`; column k + 1: plot bucket k.
        self.latency_by_interval = np.zeros((self.intervals, self.plot_histogram.size + 1), dtype=np.int32)
        self.met_by_interval = np.zeros(self.intervals, dtype=np.int64)
        self.arrivals_by_interval = np.zeros(self.intervals, dtype=np.int64)
        self.dropped_by_interval = np.zeros(self.intervals, dtype=np.int64)
        self.status_counts: dict[int, int] = {}
        self.finished = False

    def interval_of(self, times: np.ndarray) -> np.ndarray:
        return np.clip((times // self.interval_seconds).astype(np.int64), 0, self.intervals - 1)

    def record(self, requests: list[int] | np.ndarray, starts: list[float] | np.ndarray, weight: int = 1) -> None:
        """Requests that started on a slot at `starts` (weight -1: a start taken back)."""
        if len(requests) == 0:
            return
        ids = np.asarray(requests, dtype=np.int64)
        start = np.asarray(starts, dtype=float)
        arrival, service = self.arrivals[ids], self.service[ids]
        wait = start - arrival
        latency = wait + service
        self.wait.add(wait, weight)
        self.latency.add(latency, weight)
        met = latency <= self.slo_target
        t = self.totals
        t.served += weight * len(ids)
        t.met += weight * int(met.sum())
        t.wait_sum += weight * float(wait.sum())
        t.latency_sum += weight * float(latency.sum())
        t.time_in_system += weight * float(np.clip(np.minimum(start + service, self.horizon) - arrival, 0, None).sum())
        # Requests started together arrived close together: count over the intervals they span only.
        interval = self.interval_of(arrival)
        first, last = int(interval.min()), int(interval.max())
        span = last - first + 1
        local = interval - first
        self.met_by_interval[first : last + 1] += weight * np.bincount(local[met], minlength=span)
        small = latency < self.plot_histogram.lowest
        column = np.zeros(len(ids), dtype=np.int64)
        column[~small] = self.plot_histogram.index(latency[~small]) + 1
        width = self.latency_by_interval.shape[1]
        cells = np.bincount(local * width + column, minlength=span * width).reshape(span, width)
        self.latency_by_interval[first : last + 1] += (weight * cells).astype(np.int32)

    def finish(self, status: np.ndarray, pending: int, expired: int) -> None:
        """After the run: per-status counts, drops per interval and the time expired requests spent waiting."""
        # Counted code by code: np.bincount would first widen the one-byte statuses to 8 bytes each (120 MB for a
        # day of the Azure example's 15 million requests, the peak of a run).
        self.status_counts = {code: int(np.count_nonzero(status == code)) for code in range(4)}
        if len(self.arrivals):
            self.arrivals_by_interval = counts_between(self.arrivals, self.interval_seconds, self.intervals)
            # A chunk at a time: a design that refuses nearly every request (CPU scaling on a GPU fleet) would
            # otherwise copy every arrival time three times over (1 GB at 15 million requests).
            dropped_by_interval = np.zeros(self.intervals, dtype=np.int64)
            for lo in range(0, len(status), FINISH_CHUNK):
                times = self.arrivals[lo : lo + FINISH_CHUNK][status[lo : lo + FINISH_CHUNK] != pending]
                dropped_by_interval += np.bincount(self.interval_of(times), minlength=self.intervals)
            self.dropped_by_interval = dropped_by_interval
            gone = self.arrivals[status == expired]
            self.totals.time_in_system += float((np.minimum(gone + self.ttl, self.horizon) - gone).clip(0).sum())
        self.finished = True

    def series(self) -> dict[str, np.ndarray]:
        """Per-interval aggregates for the plot: interval mid-times, latency p50/p95/p99, arrivals, SLO misses
        (arrived in the interval and not served within the target: late, refused, expired, dead-lettered)."""
        p = quantiles_by_row(self.latency_by_interval, self.plot_histogram, (0.5, 0.95, 0.99))
        return {
            "time": (np.arange(self.intervals) + 0.5) * self.interval_seconds,
            "p50": p[:, 0],
            "p95": p[:, 1],
            "p99": p[:, 2],
            "arrivals": self.arrivals_by_interval,
            "misses": self.arrivals_by_interval - self.met_by_interval,
            "dropped": self.dropped_by_interval,
        }


def percentiles(histogram: LogHistogram, total: float) -> dict[str, float | None]:
    """p50/p95/p99 (within the histogram's relative error) and the exact mean, from the values' exact `total`."""
    read = {name: histogram.quantile(q) for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))}
    if histogram.count == 0:
        return {**read, "mean": None}
    return {
        **{k: None if v is None else round(v, 3) for k, v in read.items()},
        "mean": round(total / histogram.count, 3),
    }


# Student's t, two-sided 95% (0.975 quantile), by degrees of freedom 1..30; beyond, the normal's 1.96.
T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip


def confidence_interval(values: list[float]) -> dict[str, float] | None:
    """Mean and 95% interval of independent replications (t distribution); None for one value."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = (T_975[n - 2] if n - 1 <= len(T_975) else 1.96) * sd / math.sqrt(n)
    return {"mean": mean, "low": mean - half, "high": mean + half, "halfWidth": half}


def separate(a: dict[str, float] | None, b: dict[str, float] | None) -> int:
    """+1 when a's interval lies above b's, -1 below, 0 when they overlap (or either has none)."""
    if a is None or b is None:
        return 0
    if a["low"] > b["high"]:
        return 1
    if a["high"] < b["low"]:
        return -1
    return 0
