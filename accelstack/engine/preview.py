"""Offline preview of one stack: validate its config, run the real program under mocks in a
subprocess, and return what it registered plus the `pulumi stack export` document.

Python API (used by the CLI and by the policy/report commands):
    result = preview_stack(Path("stacks/Pulumi.aws-training.yaml"), overrides=["training.nodes.count=8"])
    result.resources   # list[Registration], the export's order (Stack first, then dependencies first)
    result.export      # {"version": 3, "deployment": {...}}, secrets redacted
    result.seconds     # wall time of the preview (config + subprocess)
Raises `SpecError` when the config is invalid (nothing is run) and `PreviewError` when the program
fails (`.kind` "config" for pulumi.RunError, "program" otherwise).
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelstack.engine.program_config import config_for_pulumi
from accelstack.spec.landing import is_landing, parse_landing, workload_specs
from accelstack.spec.loader import (
    NAMESPACE,
    apply_overrides,
    parse_spec,
    read_stack_file,
    spec_warnings,
    stack_name_of,
)
from accelstack.spec.problems import Problem, SpecError

if TYPE_CHECKING:
    from accelstack.engine.capture import Capture, Registration
    from accelstack.engine.replacement import Change
    from accelstack.engine.rollouts import Rollout
    from accelstack.planner.landing_plan import LandingPlan
    from accelstack.spec.landing import LandingStack
    from accelstack.spec.models import StackSpec

# pulumi (through the capture and the export) and the planner are imported where they are used:
# `accelstack preview` starts its worker with this module alone imported (stack_config, worker_request, WorkerRun),
# and imports the rest while the worker runs.

PROJECT = "accelstack"  # this repository's project name; a user's project has its own (project_name)
PROGRAM = "__main__.py"
PROJECT_FILE = "Pulumi.yaml"
WORKER_TIMEOUT_SECONDS = 600


class PreviewError(Exception):
    """The program failed under mocks (after its config validated)."""

    def __init__(self, stack: str, kind: str, message: str, traceback: str = "", log: str = ""):
        self.stack = stack
        self.log = log  # what the program printed (stdout and stderr), for --debug
        self.kind = kind  # "config" (the program refused its input) or "program" (a bug or a crash)
        self.message = message
        self.traceback = traceback
        super().__init__(f"{stack}: {message}")


@dataclass
class PreviewResult:
    stack: str
    stack_file: Path
    spec: StackSpec | LandingStack
    resources: list[Registration]
    stack_outputs: dict[str, Any]
    export: dict[str, Any]
    seconds: float
    warnings: list[Problem] = field(default_factory=list)
    peak_rss_kib: int = 0
    project: str = PROJECT
    landing_plan: LandingPlan | None = None  # a landing stack's plan (its packs hold its quota requests to it)

    @property
    def capture(self) -> Capture:
        from accelstack.engine.capture import Capture

        return Capture(
            project=self.project,
            stack=self.stack,
            preview=True,
            resources=self.resources,
            stack_outputs=self.stack_outputs,
        )

    @property
    def custom_count(self) -> int:
        return sum(1 for r in self.resources if r.custom)


def find_project_dir(start: Path) -> Path:
    for candidate in (start, *start.parents):
        if (candidate / PROJECT_FILE).is_file():
            return candidate
    raise FileNotFoundError(f"no {PROJECT_FILE} in {start} or its parents")


# Pulumi's rule for a project name (workspace.ValidateProjectName): letters, digits, `-`, `_` and `.`, at most 100.
PROJECT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")


class ProjectFileError(ValueError):
    """The project's Pulumi.yaml has no usable `name:`."""


def project_name(root: Path) -> str:
    """The `name:` of `root`'s Pulumi.yaml: the project part of every URN, as `pulumi preview` writes it there
    (a user's own project is not called accelstack)."""
    import yaml

    path = root / PROJECT_FILE
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise ProjectFileError(f"{path}: cannot read the project name ({type(error).__name__})") from None
    name = document.get("name") if isinstance(document, dict) else None
    if not isinstance(name, str) or not PROJECT_NAME.fullmatch(name):
        raise ProjectFileError(
            f"{path}: name: {name!r} is not a Pulumi project name (letters, digits, '-', '_', '.'; 1 to 100)"
        )
    return name


def stack_config(stack_file: Path, overrides: list[str] | None) -> tuple[dict[str, Any], dict[str, str]]:
    """(raw accelstack config with overrides, the full Pulumi config map the program sees)."""
    import yaml

    raw = apply_overrides(read_stack_file(stack_file), overrides or [])
    config = config_for_pulumi(raw)
    # Other namespaces (aws:region, ...) reach the program too, as `pulumi preview` would pass them.
    document = yaml.safe_load(stack_file.read_text()) or {}
    for key, value in (document.get("config") or {}).items():
        key = str(key)
        if not key.startswith(f"{NAMESPACE}:") and ":" in key and not isinstance(value, dict | list):
            config.setdefault(
                key, "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
            )
    return raw, config


def worker_request(root: Path, config: dict[str, str], stack: str) -> dict[str, Any]:
    """What the worker needs to run the project's program for one stack (preview and diff add their mode)."""
    try:
        project = project_name(root)
    except ProjectFileError as error:
        raise PreviewError(stack, "config", str(error)) from None
    return {
        "main": str(root / PROGRAM),
        "project_dir": str(root),
        "config": config,
        "stack": stack,
        "project": project,
    }


class WorkerRun:
    """The worker for one request, started now and read later: `accelstack preview` starts it before it validates
    and loads the packs, which then run on another core while the program runs (`make bench`).

    What the worker printed is read by a thread as it comes (a full pipe would stall it); `result()` waits."""

    def __init__(self, request: dict[str, Any], *, python: str | None = None):
        from accelstack.engine.spare_worker import take_spare, worker_process

        self.request = request
        self.started = time.perf_counter()
        # The worker `accelstack preview` started as it began (the same interpreter), or a new one.
        self._process = (take_spare() if python is None else None) or worker_process(python)
        self._outcome: tuple[str, str, bool] = ("", "", False)  # stdout, stderr, timed out
        self._reader = threading.Thread(target=self._communicate, daemon=True)
        self._reader.start()

    def _communicate(self) -> None:
        try:
            stdout, stderr = self._process.communicate(json.dumps(self.request), timeout=WORKER_TIMEOUT_SECONDS)
            self._outcome = (stdout, stderr, False)
        except subprocess.TimeoutExpired:
            self._process.kill()
            stdout, stderr = self._process.communicate()
            self._outcome = (stdout or "", stderr or "", True)
        except OSError:  # cancel() killed it while the request was being written
            self._process.kill()
            self._process.wait()
            self._outcome = ("", "", False)

    def cancel(self) -> None:
        """Stop it (its stack's config did not validate, or the request changed): nothing of it is used."""
        self._process.kill()
        self._reader.join()

    def result(self) -> dict[str, Any]:
        """What run_worker returns for the request: the worker's result with its output as "log"."""
        self._reader.join()
        stdout, stderr, timed_out = self._outcome
        if timed_out:
            message = f"preview did not finish within {WORKER_TIMEOUT_SECONDS}s"
            return {"ok": False, "error": {"kind": "program", "message": message, "traceback": ""}, "log": stderr}
        try:
            result: dict[str, Any] = json.loads(stdout)
            result["log"] = stderr
            return result
        except json.JSONDecodeError:
            return {
                "ok": False,
                "error": {
                    "kind": "program",
                    "message": f"preview worker exited with code {self._process.returncode}",
                    "traceback": stderr[-8000:],
                },
                "log": stderr,
            }


def run_worker(request: dict[str, Any], *, python: str | None = None) -> dict[str, Any]:
    return WorkerRun(request, python=python).result()


def start_preview(
    stack_file: Path, overrides: list[str] | None = None, project_dir: Path | None = None
) -> WorkerRun | None:
    """The worker `preview_stack(stack_file, overrides, project_dir, worker=...)` will read, started before the
    config is validated; None where the stack file cannot make a request (preview_stack reports why)."""
    stack_file = Path(stack_file).resolve()
    stack = stack_name_of(stack_file)
    try:
        root = Path(project_dir).resolve() if project_dir else find_project_dir(stack_file.parent)
        _, config = stack_config(stack_file, overrides)
        request = {**worker_request(root, config, stack), "preview": True}
    except Exception:  # noqa: BLE001 - preview_stack reads the same file again and reports the problem
        return None
    return WorkerRun(request)


def _checked(result: dict[str, Any], stack: str) -> dict[str, Any]:
    """The worker's result, or PreviewError when the program failed."""
    if not result.get("ok"):
        error = result.get("error") or {}
        raise PreviewError(
            stack,
            error.get("kind", "program"),
            error.get("message", "failed"),
            error.get("traceback", ""),
            result.get("log", ""),
        )
    return result


# The project's stack files (Pulumi.yaml's stackConfigDir), where a landing stack finds the workload stacks it lists.
STACKS_DIR = "stacks"


def checked_landing(raw: dict[str, Any], stack: str, stacks_dir: Path) -> LandingStack:
    """A landing stack's spec, checked with the workload stacks it lists (read from `stacks_dir`); SpecError."""
    return planned_landing(raw, stack, stacks_dir)[0]


def planned_landing(raw: dict[str, Any], stack: str, stacks_dir: Path) -> tuple[LandingStack, LandingPlan]:
    """A landing stack's checked spec and its plan, as its program makes them (accelstack.program)."""
    from accelstack.clouds import registry
    from accelstack.planner.landing_plan import landing_problems, plan_landing

    landing = parse_landing(raw, stack)
    workloads = workload_specs(landing, stacks_dir)
    problems = landing_problems(landing, workloads)
    if problems:
        raise SpecError(problems)
    return landing, plan_landing(landing, workloads, registry.get(landing.cloud).catalog)


def preview_stack(
    stack_file: Path,
    overrides: list[str] | None = None,
    project_dir: Path | None = None,
    *,
    stack: str | None = None,
    worker: WorkerRun | None = None,
) -> PreviewResult:
    """Validate `stack_file` (+ `--set` overrides), then preview the project's program for it.

    `worker`: the one start_preview started for the same arguments (cancelled if the config does not validate)."""
    from accelstack.engine.capture import Capture, Registration
    from accelstack.engine.export import deployment_v3, deterministic_order

    try:
        started = worker.started if worker is not None else time.perf_counter()
        stack_file = Path(stack_file).resolve()
        stack = stack or stack_name_of(stack_file)
        root = Path(project_dir).resolve() if project_dir else find_project_dir(stack_file.parent)
        raw, config = stack_config(stack_file, overrides)
        spec: StackSpec | LandingStack
        plan = None
        if is_landing(raw):
            spec, plan = planned_landing(raw, stack, root / STACKS_DIR)  # SpecError: nothing is run
            warnings: list[Problem] = []
        else:
            spec = parse_spec(raw, stack, deploy=True)  # SpecError: nothing is run
            warnings = spec_warnings(spec)
        request = {**worker_request(root, config, stack), "preview": True}
    except BaseException:
        if worker is not None:
            worker.cancel()
        raise
    if worker is not None and worker.request != request:  # started for another request: not this preview's
        worker.cancel()
        worker = None
    result = _checked(worker.result() if worker is not None else run_worker(request), stack)
    resources = [Registration(**data) for data in result["resources"]]
    capture = Capture(request["project"], stack, True, resources, result.get("stack_outputs", {}))
    export = deployment_v3(capture)
    # Same order as the export (Stack first, then dependencies first, ties by URN): registration
    # order varies between runs of the same program.
    resources = deterministic_order(resources)
    return PreviewResult(
        stack=stack,
        stack_file=stack_file,
        spec=spec,
        resources=resources,
        stack_outputs=capture.stack_outputs,
        export=export,
        seconds=time.perf_counter() - started,
        warnings=warnings,
        landing_plan=plan,
        peak_rss_kib=int(result.get("peak_rss_kib", 0)),
        project=request["project"],
    )


@dataclass
class DiffResult:
    stack: str
    stack_file: Path
    edited_file: Path
    spec: StackSpec  # the edited spec
    changes: list[Change]
    seconds: float
    warnings: list[Problem] = field(default_factory=list)
    rollouts: list[Rollout] = field(default_factory=list)  # groups whose running instances the edit reaches
    digest_only: set[str] = field(default_factory=set)  # URNs of updates that only carry the new config digest


def diff_stack(
    stack_file: Path,
    overrides: list[str] | None = None,
    project_dir: Path | None = None,
    *,
    edited_file: Path | None = None,
    stack: str | None = None,
) -> DiffResult:
    """What `pulumi up` would do to the stack deployed from `stack_file` after the edit: `edited_file`
    (default: the same file) with the `--set` overrides. Both configs must validate (SpecError)."""
    from accelstack.components.base import config_digest  # the digest every stack tags its resources with
    from accelstack.engine.capture import Registration
    from accelstack.engine.replacement import plan_changes
    from accelstack.engine.rollouts import digest_only, plan_rollouts

    started = time.perf_counter()
    stack_file = Path(stack_file).resolve()
    edited_file = Path(edited_file).resolve() if edited_file else stack_file
    stack = stack or stack_name_of(stack_file)
    root = Path(project_dir).resolve() if project_dir else find_project_dir(stack_file.parent)
    raw, config = stack_config(stack_file, [])
    deployed_spec = parse_spec(raw, stack, deploy=True)
    edited_raw, edited_config = stack_config(edited_file, overrides)
    spec = parse_spec(edited_raw, stack, deploy=True)
    request = {**worker_request(root, config, stack), "edited_config": edited_config}
    result = _checked(run_worker(request), stack)
    deployed = [Registration(**data) for data in result["resources"]]
    edited = [Registration(**data) for data in result["edited_resources"]]
    changes = plan_changes(deployed, edited)
    old_digest, new_digest = config_digest(deployed_spec), config_digest(spec)
    return DiffResult(
        stack=stack,
        stack_file=stack_file,
        edited_file=edited_file,
        spec=spec,
        changes=changes,
        seconds=time.perf_counter() - started,
        warnings=spec_warnings(spec),
        rollouts=plan_rollouts(deployed, edited, changes),
        digest_only={c.urn for c in changes if digest_only(c, old_digest, new_digest)},
    )
