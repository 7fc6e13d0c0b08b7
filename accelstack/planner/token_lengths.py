"""Request token lengths as distributions (`serving.load.inputLengths` / `outputLengths`), the one description the
planner sizes by and the simulator draws from. Pure: numpy only.

The planner needs two things of them. The replica count rests on the mean service time, and a request's decode
steps read a context that grows with its own output: output x (fixed + per-context x (input + output / 2)). Its
mean over independent lengths is E[O] x (fixed + per-context x (E[I] + E[O^2] / (2 E[O]))), so the mean context a
replica serves at is E[I] + E[O^2] / (2 E[O]) -- input + output / 2 for fixed lengths, input + output for
exponential outputs (the simulator's default draw). The latency target is checked at the tail: the stated
percentile of the service time over the lengths (drawn once, with a fixed seed, so the answer is reproducible).

Lognormal from the mean m and the 99th percentile q: ln X ~ N(mu, s^2) with m = exp(mu + s^2 / 2) and
q = exp(mu + z s), z = 2.3263, so s^2 / 2 - z s + ln(q / m) = 0 and s = z - sqrt(z^2 - 2 ln(q / m)) (the smaller
root: the larger puts the mean above the p99's bulk).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelstack.spec.token_lengths import TokenLengths

if TYPE_CHECKING:  # numpy is imported where an array is made: a training stack's validation and program never do
    import numpy as np

    from accelstack.spec.models import ServingLoad

Z99 = 2.326347874  # the standard normal's 99th percentile
TAIL_SAMPLES = 20_000  # lengths drawn to find a percentile of the service time (p99: 200 beyond it)
TAIL_SEED = 0


@dataclass(frozen=True)
class LengthDistribution:
    """Token counts with `mean`: fixed, exponential, lognormal (sigma from the p99) or a histogram."""

    kind: str
    mean: float
    sigma: float = 0.0  # lognormal
    tokens: tuple[float, ...] = ()  # histogram bins
    shares: tuple[float, ...] = ()  # normalised

    @property
    def second_moment(self) -> float:
        """E[X^2]."""
        import numpy as np

        if self.kind == "fixed":
            return self.mean**2
        if self.kind == "exponential":
            return 2 * self.mean**2
        if self.kind == "lognormal":
            return self.mean**2 * math.exp(self.sigma**2)
        return float(np.dot(self.shares, np.square(self.tokens)))

    def sample(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """`count` draws (floats, at least 1 token)."""
        import numpy as np

        if self.kind == "fixed":
            drawn = np.full(count, self.mean)
        elif self.kind == "exponential":
            drawn = rng.exponential(self.mean, count)
        elif self.kind == "lognormal":
            drawn = rng.lognormal(math.log(self.mean) - self.sigma**2 / 2, self.sigma, count)
        else:
            drawn = rng.choice(np.asarray(self.tokens), size=count, p=np.asarray(self.shares))
        return np.maximum(drawn, 1.0) if self.kind != "exponential" else drawn

    def describe(self) -> str:
        if self.kind == "lognormal":
            p99 = math.exp(math.log(self.mean) - self.sigma**2 / 2 + Z99 * self.sigma)
            return f"lognormal, mean {self.mean:g}, p99 {p99:.0f}"
        if self.kind == "histogram":
            return f"histogram of {len(self.tokens)} bins, mean {self.mean:.0f}"
        return f"{self.kind}, mean {self.mean:g}"


def distribution(lengths: TokenLengths | None, mean: float, default: str) -> LengthDistribution:
    """The distribution `lengths` states around `mean` (the spec checked it can have that mean); `default`
    (fixed or exponential) when none is stated."""
    import numpy as np

    if lengths is None:
        return LengthDistribution(default, float(mean))
    if lengths.kind == "lognormal":
        assert lengths.p99 is not None
        ratio = math.log(lengths.p99 / mean)
        return LengthDistribution("lognormal", float(mean), Z99 - math.sqrt(max(Z99**2 - 2 * ratio, 0.0)))
    if lengths.kind == "histogram":
        assert lengths.bins is not None
        total = sum(b.share for b in lengths.bins)
        tokens = tuple(float(b.tokens) for b in lengths.bins)
        shares = tuple(b.share / total for b in lengths.bins)
        return LengthDistribution("histogram", float(np.dot(tokens, shares)), tokens=tokens, shares=shares)
    return LengthDistribution(lengths.kind, float(mean))


@dataclass(frozen=True)
class LoadLengths:
    """A load's prompt and output lengths."""

    inputs: LengthDistribution
    outputs: LengthDistribution

    @property
    def mean_context(self) -> float:
        """The context the decode steps read on average, weighted by output: E[I] + E[O^2] / (2 E[O])."""
        return self.inputs.mean + self.outputs.second_moment / (2 * self.outputs.mean)

    def tail_sample(self) -> tuple[np.ndarray, np.ndarray]:
        """(inputs, outputs) drawn once with a fixed seed, for percentiles of the service time."""
        import numpy as np

        rng = np.random.default_rng(TAIL_SEED)
        return self.inputs.sample(rng, TAIL_SAMPLES), self.outputs.sample(rng, TAIL_SAMPLES)

    def describe(self) -> str:
        return f"prompts {self.inputs.describe()}, outputs {self.outputs.describe()}"


# What `simulate` has always drawn, and so what a load without stated lengths means: every prompt the stated
# length, exponential outputs.
DEFAULT_INPUT_KIND = "fixed"
DEFAULT_OUTPUT_KIND = "exponential"


def load_lengths(
    input_tokens: float,
    output_tokens: float,
    input_lengths: TokenLengths | None = None,
    output_lengths: TokenLengths | None = None,
) -> LoadLengths:
    return LoadLengths(
        distribution(input_lengths, input_tokens, DEFAULT_INPUT_KIND),
        distribution(output_lengths, output_tokens, DEFAULT_OUTPUT_KIND),
    )


def of_load(load: ServingLoad) -> LoadLengths:
    """The lengths `serving.load` states (its means, and the distributions around them)."""
    return load_lengths(load.input_tokens, load.output_tokens, load.input_lengths, load.output_lengths)
