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
    guarded,
    load_specs,
    print_problems,
    resolve_stacks,
)
from accelstack.spec.loader import spec_warnings


@guarded
def validate_command(
    stacks: StacksArg = None,
    all_stacks: AllOpt = False,
    overrides: SetOpt = None,
    project_dir: ProjectDirOpt = None,
) -> int:
    """Check stack config against the spec and the cloud's constraint tables (nothing runs).

    STACK... defaults to every stack, as for `preview`. Prints `STACK: ok` (and `STACK: path: warning: ...` lines), or one line per problem
    `STACK: path.to.field: message` on stderr and exits 2.
    """
    _, files = resolve_stacks(stacks, all_stacks or not stacks, project_dir)
    failed = False
    for name, spec in load_specs(files, overrides or []):
        if spec is None:
            failed = True
            continue
        echo_lines([f"{name}: ok"], style="green")
        print_problems(name, spec_warnings(spec), stderr=False)
    return EXIT_CONFIG if failed else EXIT_OK


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_command)
