"""`accelstack validate STACK...`: config only (no Pulumi), one line per problem naming its config path."""

from __future__ import annotations

import typer

from accelstack.commands.common import (
    EXIT_CONFIG,
    EXIT_OK,
    AllOpt,
    ProjectDirOpt,
    SetOpt,
    StacksArg,
    echo_lines,
    print_problems,
    resolve_stacks,
    run_guarded,
)
from accelstack.spec.loader import load_stack, spec_warnings, stack_name_of
from accelstack.spec.problems import SpecError


def validate_command(
    stacks: StacksArg = None,
    all_stacks: AllOpt = False,
    overrides: SetOpt = None,
    project_dir: ProjectDirOpt = None,
) -> None:
    """Check stack config against the spec and the cloud's constraint tables (nothing runs).

    Prints `STACK: ok` (and `STACK: path: warning: ...` lines), or one line per problem
    `STACK: path.to.field: message` on stderr and exits 2.
    """

    def body() -> int:
        _, files = resolve_stacks(stacks, all_stacks, project_dir)
        failed = False
        for path in files:
            name = stack_name_of(path)
            try:
                spec = load_stack(path, overrides or [])
            except SpecError as error:
                print_problems(name, error.problems)
                failed = True
                continue
            echo_lines([f"{name}: ok"], style="green")
            print_problems(name, spec_warnings(spec), stderr=False)
        return EXIT_CONFIG if failed else EXIT_OK

    code = run_guarded(body)
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_command)
