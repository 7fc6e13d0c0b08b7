"""Every shipped serving example meets its own SLO in simulation: its default day (the diurnal pattern at the peak
`simulate serving` sizes it for, seed 0), its cloud's deployed autoscaler replaying the plan's scaling rule, judged at
the share the stack states (serving.load.latency's percentile; 0.99 without one). Before the simulator replayed the
deployed Azure and GCP rules, the Azure example met its 10 s for 40% of requests and the GCP one for 58.8%."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.commands.simulate import stated_slo_share
from accelstack.examples import example_files
from accelstack.spec.loader import load_stack

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = [p for p in example_files(REPO / "stacks") if p.name.endswith("-serving.yaml")]


def test_the_examples_are_found() -> None:
    assert {p.name for p in EXAMPLES} >= {f"Pulumi.{c}-serving.yaml" for c in ("aws", "azure", "gcp")}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_meets_its_slo_on_its_default_day(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(app, ["simulate", "serving", str(path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    [design] = data["designs"]
    required = stated_slo_share(load_stack(path).serving)
    assert data["workload"]["hours"] == 24
    assert design["slo"]["required"] == required
    assert design["slo"]["met"] and design["slo"]["attainment"] >= required, design["slo"]
