"""`accelstack diff STACK --set PATH=VALUE | --file EDITED.yaml`: what `pulumi up` would do to the deployed
stack after a config edit: which resources it updates, replaces (create-first or delete-first) or
deletes, from the provider's replace-forcing properties (accelstack.engine.replacement)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer

from accelstack.commands.common import (
    EXIT_CONFIG,
    EXIT_FAILED,
    EXIT_OK,
    CliError,
    JsonOutOpt,
    ProjectDirOpt,
    SetOpt,
    echo_lines,
    guarded,
    is_stdout,
    load_specs,
    print_problems,
    quantity,
    resolve_stack,
    resolve_stacks,
    write_json,
)
from accelstack.engine.replacement import CREATE, DELETE, REPLACE, SAME, UPDATE, Change, change_text
from accelstack.engine.rollouts import Rollout
from accelstack.spec.problems import SpecError

EditedFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--file",
        metavar="EDITED.yaml",
        help="The edited stack file (e.g. your working copy), compared against STACK's file as deployed. "
        "--set applies on top of it.",
        dir_okay=False,
        show_default=False,
    ),
]
# Most consequential first; within an action by URN.
ACTION_ORDER = {REPLACE: 0, DELETE: 1, CREATE: 2, UPDATE: 3, SAME: 4}
STYLE = {REPLACE: "bold magenta", DELETE: "red", CREATE: "green", UPDATE: "yellow"}
MAX_VALUES_SHOWN = 4


def change_line(stack: str, change: Change) -> str:
    action = f"{change.action} ({change.order})" if change.action == REPLACE else change.action
    line = f"{stack}: {action:<24} {change.name}  {change.type}"
    if change.action == REPLACE:
        line += f"  because {', '.join(change.replacing)} changed"
    elif change.action == UPDATE:
        shown = [change_text(prop, change.before[prop], change.after[prop]) for prop in change.changed]
        more = len(shown) - MAX_VALUES_SHOWN
        line += "  " + "; ".join(shown[:MAX_VALUES_SHOWN]) + (f"; {more} more" if more > 0 else "")
    if change.protect:
        line += "  [protected]"
    if change.retain_on_delete and change.action in (REPLACE, DELETE):
        line += "  [retained on delete: the old one stays in the account]"
    return line


def blocked_line(stack: str, change: Change) -> str:
    what = "replaced" if change.action == REPLACE else "deleted"
    why = f" ({', '.join(change.replacing)} changed)" if change.action == REPLACE else ""
    return (
        f"{stack}: BLOCKED: {change.name} ({change.type}) is protected and would be {what}{why}; "
        '`pulumi up` stops with "resource is protected" before touching it. Revert the edit, or move '
        "the data first and unprotect it on purpose (`pulumi state unprotect`)."
    )


def summary(changes: list[Change]) -> dict[str, int]:
    counts = Counter(change.action for change in changes)
    return {action: counts.get(action, 0) for action in (REPLACE, DELETE, CREATE, UPDATE, SAME)}


def summary_line(stack: str, changes: list[Change]) -> str:
    counts = summary(changes)
    blocked = sum(1 for change in changes if change.blocked)
    tags_only = sum(1 for change in changes if change.tags_only)
    text = (
        f"{stack}: {counts[REPLACE]} to replace, {counts[DELETE]} to delete, {counts[CREATE]} to create, "
        f"{counts[UPDATE]} to update"
    )
    if tags_only:
        text += f" ({tags_only} only their tags)"
    text += f", {counts[SAME]} unchanged"
    if blocked:
        text += f"; {blocked} protected {'resource' if blocked == 1 else 'resources'} would be replaced or deleted: `pulumi up` would fail"
    return text


def rollout_line(stack: str, rollout: Rollout) -> str:
    return f"{stack}: {'rolls' if rollout.replaced else 'keeps':<24} {rollout.text()}"


def folded_line(stack: str, folded: list[Change]) -> str:
    """The updates that only carry the new config digest, as one line (the digest moves on every edit)."""
    names = ", ".join(f"{change.name} ({change.type.rpartition(':')[2]})" for change in folded)
    verb = "takes" if len(folded) == 1 else "take"
    return f"{stack}: {quantity(len(folded), 'resources')} only {verb} the new config digest (tags, labels, user data): {names}"


def diff_document(
    stack: str,
    edited_file: Path | None,
    overrides: list[str],
    changes: list[Change],
    rollouts: list[Rollout] | None = None,
    digest_only: set[str] | None = None,
) -> dict[str, Any]:
    digest_only = digest_only or set()
    return {
        "stack": stack,
        "edit": {"file": str(edited_file) if edited_file else None, "set": overrides},
        # The baseline is the stack file as committed (under mocks), not the deployed state: drift is not seen.
        "baseline": "stack file",
        "blocked": any(change.blocked for change in changes),
        "summary": summary(changes),
        "rollouts": [rollout.to_json() for rollout in rollouts or []],
        "changes": [
            {**change.to_json(), **({"digestOnly": True} if change.urn in digest_only else {})}
            for change in changes
            if change.action != SAME
        ],
    }


@guarded
def diff_command(
    stack: Annotated[
        str, typer.Argument(metavar="STACK", help="Stack name (`aws-training`) or path to its stack file, as deployed.")
    ],
    overrides: SetOpt = None,
    edited_file: EditedFileOpt = None,
    json_out: JsonOutOpt = None,
    project_dir: ProjectDirOpt = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback when the program fails.")] = False,
) -> int:
    """What `pulumi up` would do to the deployed STACK after an edit (offline, under mocks).

    The baseline is STACK's file, as deployed from it: the deployed state itself (drift, manual changes) is not
    read. The edit is `--set PATH=VALUE` (repeatable) and/or `--file EDITED.yaml`. Prints one line per
    resource to replace (create-first or delete-first, and which replace-forcing property changed),
    delete, create or update (updates that only take the new config digest folded into one line), one line per
    group whose running instances the edit reaches (`rolls`: replaced by an instance refresh, a MIG update or a
    scale set upgrade; `keeps`: they stay on the old template), then `STACK: N to replace, ...`. A protected resource (bucket, Lustre,
    KMS key, Slurm state volume) that would be replaced or deleted is flagged `BLOCKED`: `pulumi up`
    would stop on it.

    Exit 0 the edit can be applied, 1 it would replace or delete a protected resource (or the program
    failed), 2 bad input or config (in either version).
    """
    from accelstack.engine.preview import PreviewError, diff_stack

    if not overrides and edited_file is None:
        raise CliError("nothing to compare: give the edit as --set PATH=VALUE (repeatable) or --file EDITED.yaml")
    root, files = resolve_stacks([stack], False, project_dir)
    stack_file = files[0]
    if edited_file is not None:
        edited_file = resolve_stack(str(edited_file), root)
    # Both versions must validate; each problem names which one it is in.
    [(name, deployed_spec)] = list(load_specs([stack_file], []))
    label = f"{name} (edited)"
    edited_spec = load_spec_as(edited_file or stack_file, overrides or [], label)
    if deployed_spec is None or edited_spec is None:
        return EXIT_CONFIG
    try:
        result = diff_stack(stack_file, overrides or [], root, edited_file=edited_file, stack=name)
    except SpecError as error:
        print_problems(label, error.problems)
        return EXIT_CONFIG
    except PreviewError as error:
        from accelstack.commands.preview import print_program_failure

        print_program_failure(name, error, debug=debug, command="diff")
        return EXIT_CONFIG if error.kind == "config" else EXIT_FAILED

    changes = sorted(result.changes, key=lambda c: (ACTION_ORDER[c.action], c.urn))
    to_stdout = is_stdout(json_out)  # then the lines go to stderr
    print_problems(label, result.warnings, stderr=to_stdout)
    folded = [change for change in changes if change.urn in result.digest_only]
    for change in changes:
        if change.action != SAME and change.urn not in result.digest_only:
            echo_lines([change_line(name, change)], stderr=to_stdout, style=STYLE[change.action])
        if not change.known and change.action == UPDATE:
            echo_lines(
                [f"{name}: {change.type}: its replace-forcing properties are not tabled; shown as an update"],
                stderr=True,
                style="yellow",
            )
    if folded:
        echo_lines([folded_line(name, folded)], stderr=to_stdout, style="dim")
    for rollout in result.rollouts:
        echo_lines(
            [rollout_line(name, rollout)], stderr=to_stdout, style="bold magenta" if rollout.replaced else "yellow"
        )
    blocked = [change for change in changes if change.blocked]
    echo_lines([blocked_line(name, change) for change in blocked], stderr=True, style="bold red")
    echo_lines([summary_line(name, changes)], stderr=to_stdout, style="bold red" if blocked else "bold green")
    if json_out is not None:
        write_json(
            diff_document(name, edited_file, overrides or [], changes, result.rollouts, result.digest_only), json_out
        )
    return EXIT_FAILED if blocked else EXIT_OK


def load_spec_as(path: Path, overrides: list[str], label: str) -> Any:
    """The spec of `path` with `overrides`, or None with its problems printed under `label`."""
    from accelstack.spec.loader import load_stack

    try:
        return load_stack(path, overrides)
    except SpecError as error:
        print_problems(label, error.problems)
        return None


def register(app: typer.Typer) -> None:
    app.command("diff")(diff_command)
