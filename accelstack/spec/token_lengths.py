"""`serving.load.inputLengths` / `outputLengths`: how a load's token counts spread around their stated means.

The planner (`accelstack.planner.token_lengths`) and the simulator (`accelstack.simulate.workload`) read the same
block: one story of request lengths.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from accelstack.spec.base import Model

# A lognormal's 99th percentile over its mean is exp(z s - s^2 / 2) (z = 2.3263, the normal's 99th percentile), which
# peaks at exp(z^2 / 2) = 14.9: a longer p99 has no lognormal with that mean.
LOGNORMAL_MAX_P99_OVER_MEAN = 14.9
HISTOGRAM_MAX_BINS = 1000
HISTOGRAM_MEAN_TOLERANCE = 0.05


class TokenBin(Model):
    tokens: int = Field(ge=1, le=2_000_000)
    """Tokens of the requests in this bin."""
    share: float = Field(gt=0, le=1)
    """Share of requests with that many tokens (the shares are normalised to sum to 1)."""


class TokenLengths(Model):
    """How a load's token counts spread around their mean (inputTokens or outputTokens): fixed (every request
    the mean), exponential, lognormal with the stated p99, or an empirical histogram (whose mean must be the
    stated mean within 5%). The simulator draws each request's tokens from it; the planner sizes replicas by its
    mean and second moment and checks latency targets at its tail."""

    kind: Literal["fixed", "exponential", "lognormal", "histogram"]
    """fixed, exponential (mean only), lognormal (needs p99), histogram (needs bins)."""
    p99: int | None = Field(default=None, ge=1, le=2_000_000)
    """lognormal: the 99th-percentile tokens, above the mean and at most 14.9 x it."""
    bins: list[TokenBin] | None = Field(default=None, min_length=1, max_length=HISTOGRAM_MAX_BINS)
    """histogram: tokens and share of requests, e.g. [{tokens: 100, share: 0.7}, {tokens: 2000, share: 0.3}]."""

    @model_validator(mode="after")
    def _fields_of_the_kind(self) -> TokenLengths:
        if (self.kind == "lognormal") != (self.p99 is not None):
            raise ValueError(f"p99 is for kind lognormal (and required there); kind is {self.kind}")
        if (self.kind == "histogram") != (self.bins is not None):
            raise ValueError(f"bins are for kind histogram (and required there); kind is {self.kind}")
        return self

    def mean_problem(self, mean: int) -> str | None:
        """Why these lengths cannot have `mean` (the load's stated inputTokens or outputTokens), else None."""
        if (
            self.kind == "lognormal"
            and self.p99 is not None
            and not mean < self.p99 <= LOGNORMAL_MAX_P99_OVER_MEAN * mean
        ):
            return (
                f"lognormal p99 {self.p99} must be above the mean {mean} and at most "
                f"{LOGNORMAL_MAX_P99_OVER_MEAN:g} x it (no lognormal has a longer tail for that mean)"
            )
        if self.kind == "histogram" and self.bins is not None:
            total = sum(b.share for b in self.bins)
            histogram_mean = sum(b.tokens * b.share for b in self.bins) / total
            if abs(histogram_mean - mean) > HISTOGRAM_MEAN_TOLERANCE * mean:
                return (
                    f"the histogram's mean is {histogram_mean:.0f} tokens but the stated mean is {mean}: set the "
                    f"mean to {round(histogram_mean)} (within {HISTOGRAM_MEAN_TOLERANCE:.0%})"
                )
        return None
