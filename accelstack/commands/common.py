"""Helpers every command shares: finding the project, resolving STACK arguments, printing problems.

Exit codes (all commands): 0 ok, 1 the run failed (e.g. the program raised for a non-config
reason, or a policy denied), 2 bad input or config (unknown stack, invalid YAML/values, bad --set).
A user's mistake is never shown as a traceback: raise `CliError` (or let `SpecError` reach
`run_guarded`, which a command gets by decorating its function with `@guarded`) and it becomes
lines on stderr plus an exit code.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeVar

import typer
from rich.console import Console

from accelstack.spec.problems import Problem, SpecError

if TYPE_CHECKING:
    from accelstack.spec.models import StackSpec

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2

PROJECT_FILE = "Pulumi.yaml"
STACKS_DIR = "stacks"

# Reusable typer parameter declarations, so every command spells STACK/--all/--set/--project-dir alike.
StacksArg = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="STACK...",
        help="Stack name (`aws-training` = stacks/Pulumi.aws-training.yaml) or path to a stack file.",
        show_default=False,
    ),
]
AllOpt = Annotated[bool, typer.Option("--all", help="Every stacks/Pulumi.*.yaml of the project.")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="PATH=VALUE",
        help="Override a config value, e.g. --set training.nodes.count=64 (value read as YAML). Repeatable.",
        show_default=False,
    ),
]
STDOUT = "-"
JsonOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--json",
        metavar="OUT",
        help="Also write the result as JSON to the file OUT (`-`: stdout, the lines then go to stderr).",
        show_default=False,
    ),
]
ProjectDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--project-dir",
        help="Directory holding Pulumi.yaml (default: found from the current directory upward).",
        file_okay=False,
        show_default=False,
    ),
]


class CliError(Exception):
    """A user-facing failure: printed as its lines on stderr, then exit with `code`."""

    def __init__(self, lines: str | Iterable[str], code: int = EXIT_CONFIG):
        self.lines = [lines] if isinstance(lines, str) else list(lines)
        self.code = code
        super().__init__("\n".join(self.lines))


PIPED_WIDTH = 160  # rich assumes 80 columns off a terminal; type tokens and resource names need more


def _console(stream) -> Console:
    """Created per call so it follows a swapped sys.stdout (tests, redirection). Rich drops colours
    and ANSI codes by itself when the stream is not a terminal. No markup and no emoji codes: what is printed
    carries users' values (a `[/x]` would raise in a table cell, `a:b:c` would print an emoji)."""
    console = Console(file=stream, markup=False, emoji=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(file=stream, width=PIPED_WIDTH, markup=False, emoji=False)
    return console


def out() -> Console:
    return _console(sys.stdout)


def err() -> Console:
    return _console(sys.stderr)


def echo_lines(lines: Iterable[str], *, stderr: bool = False, style: str | None = None) -> None:
    """One line each, never wrapped (scripts grep them), no markup interpretation of user text."""
    console = err() if stderr else out()
    for line in lines:
        console.print(printable(line), style=style, markup=False, highlight=False, soft_wrap=True)


def printable(text: str) -> str:
    """Escape control characters (newlines, NEL, ESC, ...) a user's value may carry into a message:
    each problem must stay on one line and must not drive the terminal."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


# Counted units and their singular: `1 replica`, `1 GPU`, but `1 s` stays `1 s`.
SINGULAR = {
    "replicas": "replica",
    "GPUs": "GPU",
    "nodes": "node",
    "instances": "instance",
    "sequences": "sequence",
    "checkpoints": "checkpoint",
    "adapters": "adapter",
    "resources": "resource",
    "violations": "violation",
}


def quantity(value: float | int, unit: str) -> str:
    """`value unit`, with a counted unit in the singular for exactly one."""
    number = f"{value:g}" if isinstance(value, float) else str(value)
    return f"{number} {SINGULAR.get(unit, unit) if value == 1 else unit}".rstrip()


def problem_lines(stack: str, problems: Iterable[Problem]) -> list[str]:
    """`STACK: path.to.field: message` (warnings carry `warning:` after the path)."""
    return [printable(f"{stack}: {problem}") for problem in problems]


def print_problems(stack: str, problems: Iterable[Problem], *, stderr: bool = True) -> None:
    problems = list(problems)
    errors = [p for p in problems if p.level.value == "error"]
    warnings = [p for p in problems if p.level.value != "error"]
    if errors:
        echo_lines(problem_lines(stack, errors), stderr=stderr, style="red")
    if warnings:
        echo_lines(problem_lines(stack, warnings), stderr=stderr, style="yellow")


def is_stdout(destination: Path | str | None) -> bool:
    return destination is not None and str(destination) == STDOUT


def write_json(document: Any, destination: Path | str) -> None:
    """`document` as indented JSON to the file `destination`, or to stdout for `-` (no `wrote` line:
    stdout carries only the document). Keys keep their order: callers build them deterministically."""
    text = json.dumps(document, indent=2) + "\n"
    if is_stdout(destination):
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from accelstack.commands.output_files import write_file  # it raises CliError from here

    path = write_file(Path(destination), text, option="--json")  # no link followed, its directory's parent must exist
    echo_lines([f"wrote {path}"], stderr=True)


def find_project_dir(project_dir: Path | None = None) -> Path:
    """The directory holding Pulumi.yaml: `project_dir` if given, else the cwd or its nearest parent."""
    if project_dir is not None:
        project_dir = project_dir.expanduser().resolve()
        if not (project_dir / PROJECT_FILE).is_file():
            raise CliError(f"--project-dir {project_dir}: no {PROJECT_FILE} there")
        return project_dir
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents):
        if (candidate / PROJECT_FILE).is_file():
            return candidate
    raise CliError(f"no {PROJECT_FILE} in {here} or its parents; run inside the project or pass --project-dir")


def stack_files(project_dir: Path) -> list[Path]:
    return sorted((project_dir / STACKS_DIR).glob("Pulumi.*.yaml"))


def available_stacks(project_dir: Path) -> list[str]:
    from accelstack.spec.loader import stack_name_of

    return [stack_name_of(path) for path in stack_files(project_dir)]


def resolve_stack(name_or_path: str, project_dir: Path) -> Path:
    """`aws-training` -> <project>/stacks/Pulumi.aws-training.yaml; a path to an existing file as is."""
    by_name = project_dir / STACKS_DIR / f"Pulumi.{name_or_path}.yaml"
    if by_name.is_file():
        return by_name
    as_path = Path(name_or_path).expanduser()
    if as_path.is_file():
        return as_path.resolve()
    available = ", ".join(available_stacks(project_dir)) or f"none (no {STACKS_DIR}/Pulumi.*.yaml)"
    raise CliError(f"{name_or_path}: no such stack; available: {available}")


def resolve_stacks(
    names: list[str] | None, all_stacks: bool, project_dir: Path | None, *, landing: bool = False
) -> tuple[Path, list[Path]]:
    """(project dir, stack files) for a command's STACK... / --all arguments; CliError (exit 2) otherwise.

    Unknown names are all reported at once, each with the list of available stacks. `--all` leaves out landing
    stacks (accelstack.spec.landing) unless the command reads them (`landing`): the others read workloads only.
    """
    root = find_project_dir(project_dir)
    names = list(names or [])
    if all_stacks and names:
        raise CliError("give STACK names or --all, not both")
    if all_stacks:
        files = [path for path in stack_files(root) if landing or not is_landing_file(path)]
        if not files:
            raise CliError(f"--all: no {STACKS_DIR}/Pulumi.*.yaml in {root}")
        return root, files
    if not names:
        available = ", ".join(available_stacks(root)) or "none"
        raise CliError(f"no STACK given (or --all); available: {available}")
    files, missing = [], []
    for name in names:
        try:
            path = resolve_stack(name, root)
        except CliError as error:
            missing.extend(error.lines)
            continue
        if path not in files:
            files.append(path)
    if missing:
        raise CliError(missing)
    return root, files


T = TypeVar("T")


def run_guarded(body: Callable[[], T]) -> T:
    """Run a command body; CliError/SpecError become stderr lines and an exit code, never a traceback."""
    try:
        return body()
    except CliError as error:
        echo_lines(error.lines, stderr=True, style="red")
        raise typer.Exit(error.code) from None
    except SpecError as error:
        print_problems("config", error.problems)
        raise typer.Exit(EXIT_CONFIG) from None


def is_landing_file(path: Path) -> bool:
    """Whether `path` is a landing stack's file (an unreadable one is left to the workload loader to report)."""
    from accelstack.spec.landing import is_landing
    from accelstack.spec.loader import read_stack_file

    try:
        return is_landing(read_stack_file(path))
    except SpecError:
        return False


def load_specs(files: Iterable[Path], overrides: list[str]) -> Iterator[tuple[str, StackSpec | None]]:
    """(stack name, spec) per stack file, in order, loaded as they are consumed; a stack whose
    config has problems has them printed (stderr, `STACK: path: message`) and comes with None."""
    from accelstack.spec.loader import load_stack, stack_name_of

    for path in files:
        name = stack_name_of(path)
        try:
            spec = load_stack(path, overrides)
        except SpecError as error:
            print_problems(name, error.problems)
            spec = None
        yield name, spec


P = ParamSpec("P")


def guarded(command: Callable[P, int | None]) -> Callable[P, None]:
    """Decorate a command function (below its `app.command` registration): run it under
    `run_guarded`, and an int it returns becomes the exit code. Typer reads the options from the
    wrapped signature."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
        code = run_guarded(lambda: command(*args, **kwargs))
        if code is not None:
            raise typer.Exit(code)

    return wrapper
