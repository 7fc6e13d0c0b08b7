"""What the red-team suites share (test_red_team_classes.py: aws/azure/gcp; test_red_team_five_clouds.py: every
cloud and landing stacks): the classes of issue 28, a change to a shipped stack's export, the packs' verdicts after
it, the strict xfail of an open survivor, and the kill-rate report."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from red_team_edits import Edit

from accelstack.engine.pack_context import landing_context
from accelstack.engine.policy_runner import Verdict, policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack

REPO = Path(__file__).resolve().parents[2]

# The classes (issue 28, "How the misses passed").
PRINCIPAL = "unplaceable principal"
BECOME = "target or worn identity on the other side"
CONDITION = "read path loses its condition"
FIELD = "same meaning, another property"
PLACEMENT = "data written, forwarded or encrypted elsewhere"
NETWORK = "network path to the other side or the internet"
ESCALATION = "escalation through non-basic roles"
LOGGING = "logging or encryption off"
DATA_LOSS = "data loss"
WAF = "WAF bypass"
CAPACITY = "serving capacity"
CLASSES = (PRINCIPAL, BECOME, CONDITION, FIELD, PLACEMENT, NETWORK, ESCALATION, LOGGING, DATA_LOSS, WAF, CAPACITY)


@dataclass(frozen=True)
class Change:
    id: str
    stack: str
    apply: Edit
    kind: str = ""  # the class (attacks only)


@cache
def previewed(stack: str) -> PreviewResult:
    return preview_stack(REPO / "stacks" / f"Pulumi.{stack}.yaml", [], REPO)


@cache  # the per-case tests and the kill rate share one run of the packs per change
def verdicts_after(change: Change) -> list[Verdict]:
    result = previewed(change.stack)
    doc = copy.deepcopy(result.export)
    change.apply(doc)
    assert doc != result.export, f"{change.id}: the edit changed nothing"
    context = landing_context(result.spec, result.landing_plan) if result.landing_plan is not None else None
    return policy_verdicts(doc, result.spec, context=context)


def stopped(verdicts: list[Verdict]) -> bool:
    return any(v.mandatory for v in verdicts)


def attack_cases(attacks: Sequence[Change], open_survivors: Mapping[str, str]) -> list[Any]:
    """Each attack a test case; a survivor not fixed yet is a strict xfail (the test fails once a fix stops it)."""
    return [
        pytest.param(
            a,
            id=a.id,
            marks=[pytest.mark.xfail(reason=open_survivors[a.id], strict=True)] if a.id in open_survivors else [],
        )
        for a in attacks
    ]


def report_kill_rate(
    title: str, attacks: Sequence[Change], legitimate: Sequence[Change], clouds: Sequence[str]
) -> tuple[int, list[str]]:
    """Prints the kill rate by class and cloud and the false-positive rate; returns (attacks tried, flagged
    legitimate ids). The per-case tests are what fail."""
    tried: Counter[tuple[str, str]] = Counter()
    killed: Counter[tuple[str, str]] = Counter()
    survivors = []
    for attack in attacks:
        cloud = attack.id.split("-")[0]
        tried[(attack.kind, cloud)] += 1
        if stopped(verdicts_after(attack)):
            killed[(attack.kind, cloud)] += 1
        else:
            survivors.append(attack.id)
    false_positives = [c.id for c in legitimate if verdicts_after(c)]
    print(f"\n{title}: {sum(killed.values())}/{len(attacks)} stopped")
    for kind in CLASSES:
        row = "  ".join(f"{cloud} {killed[(kind, cloud)]}/{tried[(kind, cloud)]}" for cloud in clouds)
        print(f"  {kind:<48} {row}")
    print(f"  survivors: {survivors}")
    print(f"legitimate: {len(false_positives)}/{len(legitimate)} flagged {false_positives}")
    return sum(tried.values()), false_positives
