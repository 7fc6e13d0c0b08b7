"""Printed formulas hold no negative terms: a burst the minimum replicas already cover says so."""

from __future__ import annotations

import re
from pathlib import Path

from accelstack.planner.defaults import derived_defaults
from accelstack.spec.loader import load_stack
from tests.planner.aws_inputs import AWS_CATALOG, aws_book

REPO = Path(__file__).resolve().parents[2]


def warm_pool_source(*overrides: str) -> str:
    spec = load_stack(REPO / "stacks" / "Pulumi.aws-serving.yaml", list(overrides))
    [item] = [
        d
        for d in derived_defaults(spec, catalog=AWS_CATALOG, prices=aws_book())
        if d.target == "serving.replicas.warmPool"
    ]
    return item.source


def test_a_burst_within_min_is_not_a_negative_count() -> None:
    # ceil(2000 x 1 s / 300 s) = 7 requests' worth of replicas, and 20 already run.
    source = warm_pool_source("serving.replicas.min=20", "serving.replicas.max=32")
    assert "= 7 replicas, of which 20 already run: 0 more" in source
    assert not re.search(r"= -\d", source), source


def test_a_burst_beyond_min_says_how_many_more() -> None:
    assert "= 7 replicas, of which 1 already run: 6 more" in warm_pool_source()
