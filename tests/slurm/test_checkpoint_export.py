"""The checkpoint export script, run under bash with each cloud's CLI stubbed on PATH (the stubs record their
arguments and change nothing): only checkpoints the job marked complete are copied, each once, its files before its
marker, with the cloud CLI's no-overwrite copy, and a re-run copies nothing new. The script is the one
`accelstack render` writes for the example stacks, pointed at a scratch directory; no test defines a function
for it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from accelstack.components import slurm
from accelstack.components.node_environment import CHECKPOINT_MARKER, node_environment
from accelstack.spec.loader import load_stack
from accelstack.spec.models import TrainingStack

ROOT = Path(__file__).resolve().parents[2]
BASH = shutil.which("bash")
# One example stack per cloud whose nodes copy checkpoints themselves: the head from the shared file system (GCP
# Managed Lustre, Azure Managed Lustre), a node from its local disk (AWS without Lustre). The CLI each one calls,
# and the option that makes its copy refuse to overwrite (AWS's CLI has none: `aws s3 sync`).
COPIERS = {
    "gcp-training": ("gcloud", "--no-clobber"),
    "azure-training": ("azcopy", "--overwrite=false"),
    "aws-finetune": ("aws", "sync"),
}
STUB = """#!/bin/bash
printf '%s\\n' "$(basename "$0") $*" >> "$STUB_CALLS"
exit "${STUB_RC:-0}"
"""


def rendered_script(stack: str) -> tuple[str, str]:
    spec = load_stack(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    assert isinstance(spec, TrainingStack) and spec.training.storage.checkpoints is not None
    script = slurm.render_all(spec, slurm.nodes_for(spec))["checkpoint-export.sh"]
    return script, spec.training.storage.checkpoints.uri.rstrip("/") + "/"


class Copier:
    """The rendered script reading `source` instead of the stack's directory, with stub CLIs on PATH."""

    def __init__(self, stack: str, tmp: Path):
        script, self.uri = rendered_script(stack)
        self.source = tmp / "checkpoints"
        self.source.mkdir()
        lines = script.splitlines(keepends=True)
        [at] = [i for i, line in enumerate(lines) if line.startswith("source_dir=")]
        lines[at] = f"source_dir={self.source}\n"
        self.script = tmp / "accelstack-checkpoint-export"
        self.script.write_text("".join(lines))
        self.stubs = tmp / "bin"
        self.stubs.mkdir()
        for cli in ("gcloud", "azcopy", "aws"):
            (self.stubs / cli).write_text(STUB)
            (self.stubs / cli).chmod(0o755)
        self.calls_file = tmp / "calls"

    def run(self, rc: int = 0) -> tuple[int, list[str], str]:
        self.calls_file.write_text("")
        env = {
            **os.environ,
            "PATH": f"{self.stubs}:{os.environ['PATH']}",
            "STUB_CALLS": str(self.calls_file),
            "STUB_RC": str(rc),
        }
        done = subprocess.run([BASH, str(self.script)], env=env, capture_output=True, text=True, timeout=60)
        return done.returncode, self.calls_file.read_text().splitlines(), done.stdout + done.stderr

    def checkpoint(self, name: str, complete: bool) -> Path:
        directory = self.source / name
        (directory / "shards").mkdir(parents=True, exist_ok=True)
        (directory / "shards" / "rank0.pt").write_bytes(b"\0" * 64)
        (directory / "meta.json").write_text("{}")
        if complete:
            (directory / CHECKPOINT_MARKER).write_text("")
        return directory


pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")


@pytest.fixture(params=sorted(COPIERS))
def copier(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Copier]:
    return request.param, Copier(request.param, tmp_path)


def test_an_in_progress_checkpoint_is_not_exported_and_a_completed_one_is(copier: tuple[str, Copier]) -> None:
    stack, c = copier
    cli, no_overwrite = COPIERS[stack]
    c.checkpoint("step-000100", complete=True)
    c.checkpoint("step-000200", complete=False)
    rc, calls, output = c.run()
    assert rc == 0, output
    assert calls and all(call.startswith(f"{cli} ") for call in calls)
    assert not any("step-000200" in call for call in calls), calls
    assert "step-000200: no COMPLETE yet" in output
    files, marker = calls
    # The files first, the marker excluded from them, then the marker on its own: whoever sees it sees the rest.
    assert f"{c.source}/step-000100/" in files and f"{c.uri}step-000100/" in files and CHECKPOINT_MARKER in files
    assert no_overwrite in files
    assert f"{c.source}/step-000100/{CHECKPOINT_MARKER}" in marker
    assert f" {c.uri}step-000100/{CHECKPOINT_MARKER} " in f"{marker} "
    if cli != "aws":  # the AWS CLI cannot refuse an overwrite (the bucket's versioning keeps what is replaced)
        assert no_overwrite in marker


def test_a_rerun_exports_nothing_new_and_a_checkpoint_completed_since_is_exported(copier: tuple[str, Copier]) -> None:
    _, c = copier
    c.checkpoint("step-000100", complete=True)
    writing = c.checkpoint("step-000200", complete=False)
    assert c.run()[1]
    rc, calls, _ = c.run()
    assert (rc, calls) == (0, [])
    (writing / CHECKPOINT_MARKER).write_text("")
    rc, calls, _ = c.run()
    assert rc == 0 and len(calls) == 2 and all("step-000200" in call for call in calls)
    assert c.run()[1] == []


def test_a_failed_copy_is_not_recorded_and_the_next_run_tries_again(copier: tuple[str, Copier]) -> None:
    _, c = copier
    c.checkpoint("step-000100", complete=True)
    rc, calls, output = c.run(rc=1)
    assert rc != 0 and len(calls) == 1 and "copy failed" in output  # the marker is not sent after failed files
    rc, calls, _ = c.run()
    assert rc == 0 and len(calls) == 2


def test_a_reused_name_is_never_exported_again(copier: tuple[str, Copier]) -> None:
    _, c = copier
    first = c.checkpoint("latest", complete=True)
    assert c.run()[1]
    shutil.rmtree(first)
    c.checkpoint("latest", complete=True)
    assert c.run()[1] == []


def test_loose_files_and_the_record_are_not_checkpoints(copier: tuple[str, Copier]) -> None:
    _, c = copier
    (c.source / "model.pt").write_bytes(b"\0")
    rc, calls, _ = c.run()
    assert (rc, calls) == (0, [])
    c.checkpoint("step-1", complete=True)
    c.run()
    assert c.run()[1] == []  # the hidden record directory is never taken for a checkpoint


@pytest.mark.parametrize("stack", sorted(COPIERS))
def test_jobs_are_told_the_marker_the_export_waits_for(stack: str) -> None:
    spec = load_stack(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    assert isinstance(spec, TrainingStack)
    environment = node_environment(spec, 1800)
    assert environment["ACCELSTACK_CHECKPOINT_MARKER"] == CHECKPOINT_MARKER
    script, _ = rendered_script(stack)
    assert f"marker={CHECKPOINT_MARKER}\n" in script
    artifacts = slurm.render_all(spec, slurm.nodes_for(spec))
    units = {name: text for name, text in artifacts.items() if name.endswith(".service") and "checkpoint" in name}
    assert units and all(f"ExecStart=/usr/bin/env {slurm.CHECKPOINT_EXPORT_PATH}\n" in text for text in units.values())
