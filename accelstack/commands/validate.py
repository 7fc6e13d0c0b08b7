"""`accelstack validate STACK...`: config only (no Pulumi), one line per problem naming its config path."""

from __future__ import annotations

import typer

from accelstack.commands.common import (
    EXIT_CONFIG,
    EXIT_OK,
    STACKS_DIR,
    AllOpt,
    ProjectDirOpt,
    SetOpt,
    StacksArg,
    echo_lines,
    guarded,
    is_landing_file,
    load_specs,
    print_problems,
    resolve_stacks,
)
from accelstack.commands.plan import landing_problems_of, landing_shortfalls, load_landing
from accelstack.spec.loader import spec_warnings, stack_name_of
from accelstack.spec.problems import SpecError


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
    root, files = resolve_stacks(stacks, all_stacks or not stacks, project_dir, landing=True)
    landing_files = [path for path in files if is_landing_file(path)]
    failed = False
    for name, spec in load_specs([path for path in files if path not in landing_files], overrides or []):
        if spec is None:
            failed = True
            continue
        echo_lines([f"{name}: ok"], style="green")
        # A landing stack here that requests less than this stack needs (accelstack plan quotas).
        print_problems(name, [*spec_warnings(spec), *landing_shortfalls(spec, root / STACKS_DIR)], stderr=False)
    for path in landing_files:
        name = stack_name_of(path)
        try:
            problems = landing_problems_of(load_landing(path, overrides or []), root / STACKS_DIR)
        except SpecError as error:
            problems = list(error.problems)
        if problems:
            print_problems(name, problems)
            failed = True
        else:
            echo_lines([f"{name}: ok"], style="green")
    return EXIT_CONFIG if failed else EXIT_OK


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_command)
