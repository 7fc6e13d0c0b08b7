"""Each request's service time in the simulator, from the planner's service-time model
(`accelstack.planner.service_time`) at the batch running on its replica when it starts.

A request j starting with b sequences in flight on its replica (itself included) holds its slot for

    service_j(b) = prefill_j + (b - 1) x mean prefill + output_j x (fixed(b) + per_context(b) x context_j)

= P_j + c0[b] + O_j x s0[b] + X_j x s1[b], with P, O, X per request (computed per chunk of arrivals, vectorised)
and c0, s0, s1 per batch size (one table, computed once): the event loop does four multiply-adds per start.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelstack.planner.service_time import ServiceTime
from accelstack.planner.serving import DEFAULT_TARGET_UTILIZATION

CHUNK = 1 << 20  # requests per vectorised pass over the stream


@dataclass
class BatchService:
    """`model` applied to one request stream (`input_tokens`: one per request, or one for all) on replicas of up
    to `max_batch` sequences."""

    model: ServiceTime
    input_tokens: np.ndarray | float
    output_tokens: np.ndarray
    max_batch: int

    def __post_init__(self) -> None:
        inputs = np.asarray(self.input_tokens, dtype=float)
        self.mean_prefill = float(self.model.prefill_seconds(inputs).mean()) if inputs.ndim == 0 or inputs.size else 0.0
        batches = np.arange(self.max_batch + 1, dtype=float)
        fixed, per_context = self.model.step_terms(np.maximum(batches, 1.0))
        self.c0: list[float] = (np.maximum(batches - 1, 0.0) * self.mean_prefill).tolist()
        self.s0: list[float] = fixed.tolist()
        self.s1: list[float] = per_context.tolist()

    def _inputs(self, lo: int, hi: int) -> np.ndarray:
        inputs = np.asarray(self.input_tokens, dtype=float)
        return inputs[lo:hi] if inputs.ndim else np.full(hi - lo, float(inputs))

    def terms(self, lo: int, hi: int) -> tuple[list[float], list[float], list[float]]:
        """P, O, X of requests lo..hi-1 (prefill seconds, output tokens, output x mean context)."""
        inputs = self._inputs(lo, hi)
        outputs = np.asarray(self.output_tokens[lo:hi], dtype=float)
        prefill = self.model.prefill_seconds(inputs)
        return prefill.tolist(), outputs.tolist(), (outputs * (inputs + outputs / 2)).tolist()

    def one(self, j: int) -> tuple[float, float, float]:
        p, o, x = self.terms(j, j + 1)
        return p[0], o[0], x[0]

    def at_batch(self, batch: float) -> np.ndarray:
        """Every request's service time at `batch` (the planner's running batch: the steady start's estimate),
        computed a chunk at a time into one array: the model's temporaries never span the whole stream (at 15
        million requests each would be 120 MB)."""
        n = len(self.output_tokens)
        service = np.empty(n)
        for lo in range(0, n, CHUNK):
            hi = min(n, lo + CHUNK)
            service[lo:hi] = self.model.service_seconds(
                self._inputs(lo, hi), self.output_tokens[lo:hi], batch, self.mean_prefill
            )
        return service

    def running_batch(self) -> float:
        """The batch a replica runs at the planner's target utilization."""
        return max(1.0, self.max_batch * DEFAULT_TARGET_UTILIZATION)
