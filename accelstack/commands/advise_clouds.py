"""`accelstack advise --cloud all`: the same decision on every registered cloud, side by side.

A team choosing where to train and where to serve otherwise runs `advise` once per cloud and adds the figures up by
hand (new-user trial: three runs, three totals). Each cloud's answer comes from its own catalog and price book; the
figures compared are the ones `advise` prints for that cloud, so the table never disagrees with a single-cloud run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from accelstack.clouds import registry
from accelstack.clouds.base import Cloud
from accelstack.planner.advisor import Advice
from accelstack.planner.cost import HOURS_PER_MONTH
from accelstack.planner.pricing import PriceBook

# `--cloud all`
ALL_CLOUDS = "all"
# What the table ranks by: training (or tuning) once, plus a year of serving at peak, 24x7.
MONTHS_COMPARED = 12


@dataclass(frozen=True)
class CloudAnswer:
    cloud: str
    advice: Advice | None
    training_usd: float | None  # one-off: tuning on spot, or distributed training on demand
    serving_usd_per_month: float | None  # replicas at peak x on-demand price x 730 h
    problem: str | None = None  # why this cloud has no answer (no type fits, no fabric, ...)

    @property
    def first_year_usd(self) -> float | None:
        if self.advice is None or (self.training_usd is None and self.serving_usd_per_month is None):
            return None
        return (self.training_usd or 0.0) + MONTHS_COMPARED * (self.serving_usd_per_month or 0.0)

    def as_dict(self) -> dict[str, object]:
        return {
            "cloud": self.cloud,
            "outcome": self.advice.outcome if self.advice else None,
            "summary": self.advice.summary if self.advice else None,
            "trainingUsd": self.training_usd,
            "servingUsdPerMonth": self.serving_usd_per_month,
            "firstYearUsd": self.first_year_usd,
            "problem": self.problem,
            "advice": self.advice.as_dict() if self.advice else None,
        }


def costs(advice: Advice, prices: PriceBook) -> tuple[float | None, float | None]:
    """(training once, serving per month) from the advice's own details, priced by the same book."""
    details = advice.details
    training = None
    if isinstance(finetune := details.get("finetune"), dict):
        training = float(finetune["spotUsd"])
    elif isinstance(distributed := details.get("training"), dict):
        hours = float(distributed["hours"]) * int(distributed["nodes"])
        training = round(hours * prices.hourly(str(distributed["instanceType"])), 2)
    serving = None
    if isinstance(plan := details.get("serving"), dict):
        monthly = plan.get("monthlyUsdAtPeak")
        serving = float(monthly) if monthly is not None else round(float(plan["hourlyUsd"]) * HOURS_PER_MONTH, 2)
    return training, serving


def every_cloud(answer: Callable[[Cloud], tuple[Advice, PriceBook]]) -> list[CloudAnswer]:
    """`answer` run on each registered cloud; a cloud the planner cannot answer for says why instead."""
    answers = []
    for name in registry.names():
        cloud = registry.get(name)
        try:
            advice, prices = answer(cloud)
        except ValueError as exc:
            answers.append(CloudAnswer(name, None, None, None, problem=str(exc)))
            continue
        training, serving = costs(advice, prices)
        answers.append(CloudAnswer(name, advice, training, serving))
    return answers


def workload_of(example: str) -> str:
    """The workload of an example stack advise names (`<cloud>-serving`, `<cloud>-training`, `<cloud>-finetune`)."""
    return "serving" if example.endswith("-serving") else "training"


def deploys_example(example: str) -> bool:
    """Whether accelstack builds that example's workload on its cloud (a cloud's features follow from its parts)."""
    return registry.get(example.split("-", 1)[0]).deploys(workload_of(example))


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:,.0f}"


def table_lines(answers: list[CloudAnswer]) -> list[str]:
    """One line per cloud, cheapest first year first; clouds without an answer last, with the reason."""
    ranked = sorted((a for a in answers if a.first_year_usd is not None), key=lambda a: a.first_year_usd or 0.0) + [
        a for a in answers if a.first_year_usd is None
    ]
    lines = [
        f"Every cloud (first year = training once + {MONTHS_COMPARED} months of serving at peak, 24x7; "
        "list prices of each cloud's price book):"
    ]
    for a in ranked:
        if a.advice is None:
            lines.append(f"  {a.cloud}: no answer: {a.problem}")
            continue
        missing = list(dict.fromkeys(workload_of(s) for s in a.advice.stacks if not deploys_example(s)))
        caveat = f" (accelstack does not deploy {' or '.join(missing)} on {a.cloud} yet)" if missing else ""
        lines.append(
            f"  {a.cloud}: training {_usd(a.training_usd)}, serving {_usd(a.serving_usd_per_month)}/month, "
            f"first year {_usd(a.first_year_usd)}: {a.advice.summary}{caveat}"
        )
    best = next((a for a in ranked if a.first_year_usd is not None), None)
    if best is not None:
        lines += ["", f"=> cheapest: {best.cloud} (run `accelstack advise --cloud {best.cloud}` for its steps)"]
    return lines
