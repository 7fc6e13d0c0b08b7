"""`accelstack preview` starts its workers before it validates (the first as the CLI begins): what it prints is
what it printed when each worker started after validation, and a worker whose stack does not validate, or that
no preview takes, is stopped rather than left running."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.engine import preview, spare_worker

TIMING = re.compile(r" in \d+\.\d\ds$", re.MULTILINE)


def test_the_console_script_with_its_spare_worker_prints_what_the_app_prints(fixture_project):
    """main() (the console script) starts a spare worker for preview; CliRunner's app starts none."""
    args = ["preview", "alpha", "--project-dir", str(fixture_project), "--no-policy"]
    script = subprocess.run(
        [sys.executable, "-c", "from accelstack.cli import main; main()", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**{k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "TERM")}, "COLUMNS": "200"},
    )
    direct = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert script.returncode == direct.exit_code == 0, script.stderr
    assert "alpha: 8 resources" in script.stdout
    assert TIMING.sub("", script.stdout) == TIMING.sub("", direct.output)


def test_workers_of_stacks_that_do_not_validate_are_stopped(fixture_project, monkeypatch):
    started: list[preview.WorkerRun] = []

    class Recorded(preview.WorkerRun):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(preview, "WorkerRun", Recorded)
    result = CliRunner().invoke(
        app, ["preview", "alpha", "beta", "--project-dir", str(fixture_project), "--set", "training.nodes.count=0"]
    )
    assert result.exit_code == 2, result.output
    assert len(started) == 2  # both started before validation (--jobs 2)...
    assert all(worker._process.poll() is not None for worker in started)  # ...and stopped when it failed


def test_a_spare_worker_no_preview_takes_is_stopped():
    spare_worker.start_spare()
    spare = spare_worker._spare
    assert spare is not None and spare.poll() is None
    spare_worker.stop_spare()
    assert spare.poll() is not None and spare_worker.take_spare() is None


def test_the_first_worker_takes_the_spare(fixture_project):
    spare_worker.start_spare()
    spare = spare_worker._spare
    worker = preview.start_preview(fixture_project / "stacks" / "Pulumi.alpha.yaml")
    assert worker is not None and worker._process is spare and spare_worker.take_spare() is None
    assert worker.result()["ok"]
