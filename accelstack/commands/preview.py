"""`accelstack preview`: validate, then run the real program under Pulumi mocks, one subprocess per stack."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from accelstack.commands.common import (
    EXIT_CONFIG,
    EXIT_FAILED,
    EXIT_OK,
    AllOpt,
    CliError,
    ProjectDirOpt,
    SetOpt,
    StacksArg,
    echo_lines,
    out,
    print_problems,
    resolve_stacks,
    run_guarded,
)
from accelstack.engine.export import STACK_TYPE
from accelstack.engine.preview import PreviewError, PreviewResult, preview_stack
from accelstack.spec.loader import load_stack, stack_name_of
from accelstack.spec.problems import SpecError

JsonOpt = Annotated[
    Path | None,
    typer.Option(
        "--json",
        metavar="OUT",
        help="Write the result as a `pulumi stack export` (v3) document, secrets redacted. One stack: OUT is "
        "the file (or an existing directory, receiving STACK.json). Several stacks: OUT is a directory "
        "(created if needed) with one STACK.json each.",
        show_default=False,
    ),
]


def resource_tree(result: PreviewResult) -> Tree:
    """Stack -> components -> children, each `name  type` (custom resources plain, components bold)."""
    children: dict[str, list] = defaultdict(list)
    stack_resource = None
    for registration in result.resources:
        if registration.type == STACK_TYPE:
            stack_resource = registration
        else:
            children[registration.parent].append(registration)

    def label(registration) -> Text:
        text = Text(registration.name, style="bold" if not registration.custom else "")
        text.append(f"  {registration.type}", style="dim")
        if registration.protect:
            text.append("  [protected]", style="yellow")
        if registration.retain_on_delete:
            text.append("  [retain on delete]", style="yellow")
        if registration.custom and not registration.provider and not registration.is_provider:
            text.append("  [no explicit provider]", style="bold red")
        return text

    root_urn = stack_resource.urn if stack_resource else ""
    tree = Tree(Text(f"{result.stack}  {STACK_TYPE}", style="bold"))

    def add(node: Tree, parent_urn: str) -> None:
        for registration in children.get(parent_urn, []):
            add(node.add(label(registration)), registration.urn)

    add(tree, root_urn)
    known = {r.urn for r in result.resources}
    orphans = [r for urn, regs in children.items() if urn not in known and urn != root_urn for r in regs]
    for registration in orphans:  # parent never registered: show them rather than hide them
        tree.add(label(registration))
    return tree


def type_table(result: PreviewResult) -> Table:
    counts = Counter(r.type for r in result.resources)
    table = Table(title=f"{result.stack}: resources by type", title_justify="left")
    table.add_column("type")
    table.add_column("count", justify="right")
    for type_token, count in sorted(counts.items()):
        table.add_row(type_token, str(count))
    return table


def summary_line(result: PreviewResult) -> str:
    return f"{result.stack}: {len(result.resources)} resources ({result.custom_count} custom) in {result.seconds:.2f}s"


def write_exports(results: list[PreviewResult], destination: Path, several: bool) -> list[Path]:
    if several or destination.is_dir():
        destination.mkdir(parents=True, exist_ok=True)
        targets = [(destination / f"{result.stack}.json", result) for result in results]
    else:
        destination.parent.mkdir(parents=True, exist_ok=True)
        targets = [(destination, result) for result in results]
    for path, result in targets:
        path.write_text(json.dumps(result.export, indent=2) + "\n")
    return [path for path, _ in targets]


def preview_command(
    stacks: StacksArg = None,
    all_stacks: AllOpt = False,
    json_out: JsonOpt = None,
    overrides: SetOpt = None,
    project_dir: ProjectDirOpt = None,
    tree: Annotated[bool, typer.Option("--tree/--no-tree", help="Show the resource tree and type counts.")] = True,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Stacks previewed at once.")] = 2,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback when a program fails.")] = False,
) -> None:
    """Preview stacks offline: the real program under Pulumi mocks, no cloud credentials.

    STACK... defaults to every stack. Config is validated first: on any problem nothing runs (exit 2).
    Then each stack's program runs in its own process; prints its resource tree, a count per type and
    `STACK: N resources (M custom) in X.XXs`. Exit 0 ok, 2 config problems (also when the program
    refuses its config with pulumi.RunError), 1 the program failed.
    """

    def body() -> int:
        root, files = resolve_stacks(stacks, all_stacks or not stacks, project_dir)
        invalid = False
        for path in files:
            try:
                load_stack(path, overrides or [])
            except SpecError as error:
                print_problems(stack_name_of(path), error.problems)
                invalid = True
        if invalid:
            return EXIT_CONFIG

        def run(path: Path) -> PreviewResult | PreviewError | SpecError:
            try:
                return preview_stack(path, overrides or [], root)
            except (PreviewError, SpecError) as error:
                return error

        with ThreadPoolExecutor(max_workers=min(jobs, len(files))) as pool:
            outcomes = list(pool.map(run, files))

        code = EXIT_OK
        console = out()
        results: list[PreviewResult] = []
        for path, outcome in zip(files, outcomes, strict=True):
            name = stack_name_of(path)
            if isinstance(outcome, SpecError):
                print_problems(name, outcome.problems)
                code = max(code, EXIT_CONFIG)
                continue
            if isinstance(outcome, PreviewError):
                kind = "refused its config" if outcome.kind == "config" else "failed"
                echo_lines([f"{name}: program {kind}:", *outcome.message.splitlines()], stderr=True, style="red")
                if debug and outcome.log.strip():
                    echo_lines([f"{name}: program output:", *outcome.log.rstrip().splitlines()], stderr=True)
                if debug and outcome.traceback:
                    echo_lines(outcome.traceback.rstrip().splitlines(), stderr=True)
                code = max(code, EXIT_CONFIG if outcome.kind == "config" else EXIT_FAILED)
                continue
            results.append(outcome)
            if tree:
                console.print(resource_tree(outcome))
                console.print(type_table(outcome))
            print_problems(name, outcome.warnings, stderr=False)
            echo_lines([summary_line(outcome)], style="bold green")
        if json_out is not None and results:
            try:
                written = write_exports(results, json_out, several=len(files) > 1)
            except OSError as error:
                raise CliError(f"--json {json_out}: {error.strerror or error}", EXIT_FAILED) from None
            echo_lines([f"wrote {path}" for path in written], stderr=True)
        return code

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    app.command("preview")(preview_command)
