"""The plot shows latency percentiles and SLO misses over time beside replicas and backlog, drawn from the run's own
per-interval statistics: read back from the figure (not only "a PNG was written")."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure

from accelstack.simulate.engine import Simulation
from accelstack.simulate.report import plot
from accelstack.simulate.workload import synthetic
from tests.simulate.test_stats import stack_design


def test_the_plot_draws_percentiles_misses_replicas_and_backlog(tmp_path: Path, monkeypatch) -> None:
    """A diurnal hour on the AWS example starting at the minimum fleet (so some requests miss): each panel's data
    is the run's -- per-interval p50/p95/p99 against the SLO target, the misses adding up to the run's, backlog and
    in flight per sample, replicas in service per sample."""
    matplotlib.use("Agg")
    drawn: list[Figure] = []
    saved = Figure.savefig

    def keep(figure: Figure, *args, **kwargs):
        drawn.append(figure)
        return saved(figure, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    design = stack_design()
    run = Simulation(design, synthetic("diurnal", 20, horizon=7200, seed=2), start="minimum").run()
    plot(run, tmp_path / "timeline.png", "test")
    [figure] = drawn
    axes = figure.axes
    assert [a.get_ylabel() for a in axes] == ["arrivals/s", "latency (s)", "SLO misses (%)", "requests", "replicas"]
    series = run.queue.stats.series()
    lines = {line.get_label(): line for line in axes[1].get_lines()}
    for key in ("p50", "p95", "p99"):
        np.testing.assert_allclose(lines[f"latency {key}"].get_ydata(), series[key], equal_nan=True)
    assert set(lines["SLO target"].get_ydata()) == {design.slo_target_seconds}
    # The misses panel: late and dropped shares per interval, stacked; back to counts they are the run's misses.
    late, dropped = (collection.get_paths()[0].vertices for collection in axes[2].collections[:2])
    assert axes[2].collections[0].get_label() == "late"
    arrived = np.maximum(series["arrivals"], 1)
    assert late[:, 1].max() == pytest.approx(((series["misses"] - series["dropped"]) / arrived * 100).max())
    assert dropped[:, 1].max() == pytest.approx((series["misses"] / arrived * 100).max())
    totals = run.queue.stats.totals
    assert series["misses"].sum() == len(run.queue.arrival) - totals.met > 0
    panel = {line.get_label(): line.get_ydata() for line in axes[3].get_lines()}
    assert list(panel["backlog (waiting)"]) == [s.backlog for s in run.samples]
    assert list(panel["requests in flight"]) == [s.in_flight for s in run.samples]
    # The dotted line is the queue's depth limit, labelled with its value and the key that sets it (friction 19).
    depth = f"max depth {design.max_depth:,} (admission.maxDepth)"
    assert set(panel[depth]) == {design.max_depth}
    replicas = {line.get_label(): line.get_ydata() for line in axes[4].get_lines()}
    assert list(replicas["in service"]) == [s.in_service for s in run.samples]
