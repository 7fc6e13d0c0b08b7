"""`accelstack policy [STACK... | --all | --file EXPORT.json] [--pack PATH...]`: run both policy packs offline, and
packs of one's own.

Same packs and semantics as `pulumi preview --policy-pack policies/separation --policy-pack
policies/guardrails [--policy-pack PATH...]` (enforcement levels, config, unknown values advisory during preview),
on a stack previewed under mocks or on a `pulumi stack export` / `accelstack preview --json` document.
Exit 0 when no mandatory policy is violated, 1 when one is, 2 on bad input (a --pack that does not load among it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

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
    find_project_dir,
    guarded,
    is_landing_file,
    print_problems,
    resolve_stack,
    resolve_stacks,
)
from accelstack.engine.pack_context import landing_context
from accelstack.spec.input_files import InputFileError
from accelstack.spec.json_input import MAX_CONFIG_BYTES, MAX_EXPORT_BYTES, read_json
from accelstack.spec.loader import apply_overrides, load_stack, read_stack_file, stack_name_of
from accelstack.spec.problems import SpecError

FileOpt = Annotated[
    Path | None,
    typer.Option(
        "--file",
        metavar="EXPORT.json",
        help="A `pulumi stack export` (v3) or `accelstack preview --json` document instead of STACK (`-`: stdin).",
        dir_okay=False,
        show_default=False,
    ),
]
StackFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--stack-file",
        metavar="Pulumi.<stack>.yaml",
        help="With --file: the stack file the export was previewed from, anywhere (not only stacks/); its accounts, "
        "regions and side configure the packs, as for a stack of the project (a landing stack: its plan, from the "
        "workload stack files beside it).",
        dir_okay=False,
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="One JSON document on stdout, for machines.")]
PolicyConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--policy-config",
        metavar="CONFIG.json",
        help='Policy config as for `pulumi --policy-pack-config`: {"all": "advisory", "<policy>": level | {...}}.',
        dir_okay=False,
        show_default=False,
    ),
]
PackOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--pack",
        metavar="PATH",
        help="Also run this pulumi-policy pack directory (PulumiPolicy.yaml and __main__.py, as `pulumi preview "
        "--policy-pack PATH` takes it), beside the two; repeatable. Its violations count like theirs.",
        file_okay=False,
        show_default=False,
    ),
]
PackConfigOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--pack-config",
        metavar="CONFIG.json",
        help="Config of the --pack in the same place (as `pulumi --policy-pack-config`); none, or one per --pack.",
        dir_okay=False,
        show_default=False,
    ),
]
EmitConfigOpt = Annotated[
    str | None,
    typer.Option(
        "--emit-config",
        metavar="PACK",
        help="Print the `--policy-pack-config` JSON carrying STACK's accounts/regions for PACK "
        "(separation or guardrails), for the Pulumi CLI; nothing is run.",
        show_default=False,
    ),
]


def _read_json(path: Path, what: str, max_bytes: int) -> Any:
    """A JSON document (`-`: stdin, so `accelstack preview --all --json - | accelstack policy --file -` works),
    through the shared hardened reader: size refused before reading, NaN/Infinity, duplicate keys, depth and
    integer digits refused with the line."""
    try:
        return read_json(path, f"{what} {path}", max_bytes)
    except InputFileError as error:
        raise CliError(str(error)) from None


def company_packs(paths: list[Path] | None, configs: list[Path] | None) -> list[tuple[Any, dict[str, Any] | None]]:
    """Each --pack loaded, with its --pack-config, paired by place as the Pulumi CLI pairs --policy-pack-config (its
    validatePolicyPackConfig: none, or as many as packs)."""
    paths, configs = paths or [], configs or []
    if configs and len(configs) != len(paths):
        raise CliError(f"{len(configs)} --pack-config for {len(paths)} --pack: give none, or one per --pack in order")
    if not paths:
        return []
    from accelstack.engine import policy_runner  # here: a preview without --pack imports it on another thread

    try:
        shipped = policy_runner.default_packs()
    except policy_runner.PolicyInputError as error:  # a policy vendor plug-in that does not load
        raise CliError(f"the policy packs do not load: {error}") from None
    taken = {pack.name: f"the shipped pack policies/{pack.directory.name}" for pack in shipped}
    loaded = []
    for index, path in enumerate(paths):
        try:
            pack = policy_runner.load_company_pack(path)
        except policy_runner.PolicyInputError as error:
            raise CliError(f"--pack {path}: {error}") from None
        if pack.name in taken:
            raise CliError(f"--pack {path}: its pack is named {pack.name!r}, as {taken[pack.name]} is")
        taken[pack.name] = f"--pack {path}"
        config = _read_json(configs[index], "--pack-config", MAX_CONFIG_BYTES) if configs else None
        if config is not None and not isinstance(config, dict):
            raise CliError(f"--pack-config {configs[index]}: expected a JSON object keyed by policy name")
        loaded.append((pack, config))
    return loaded


def exports_in(document: Any) -> list[tuple[str | None, dict[str, Any]]]:
    """(stack name if stated, export) pairs: a v3 export, {"export": ...}, or a list / {"stacks": [...]} of them."""
    if isinstance(document, list):
        return [pair for item in document for pair in exports_in(item)]
    if not isinstance(document, dict):
        return []
    if "deployment" in document or "resources" in document:
        return [(None, document)]
    if isinstance(document.get("export"), dict):
        return [(document.get("stack"), document["export"])]
    if isinstance(document.get("stacks"), list):
        return exports_in(document["stacks"])
    return []


def _context_spec(
    name: str | None, project_dir: Path | None, overrides: list[str]
) -> tuple[Any, dict[str, Any] | None]:
    """(spec, landing context) from the stack file of an export's stack, when the project has it (accounts,
    regions; a landing stack's plan)."""
    if not name:
        return None, None
    try:
        root = find_project_dir(project_dir)
        path = resolve_stack(name, root)
        if is_landing_file(path):
            return _planned_landing(path, overrides, path.parent)
        return load_stack(path, overrides), None
    except (CliError, SpecError):
        echo_lines(
            [
                f"{name}: no valid stacks/Pulumi.{name}.yaml here; account checks use --policy-config only "
                "(name the stack file with --stack-file PATH)"
            ],
            stderr=True,
        )
        return None, None


def _stack_file_spec(path: Path, overrides: list[str]) -> tuple[Any, dict[str, Any] | None]:
    """(spec, landing context) of the stack file named beside --file: its problems are the user's input (exit 2).
    A landing stack's context is its plan's, as `policy STACK` makes it: the workload stacks it lists are read
    beside it (where `stacks/` holds them in a project), so a CI job judges an export of the landing stack with its
    stack files checked out."""
    try:
        if is_landing_file(path):
            return _planned_landing(path, overrides, path.resolve().parent)
        return load_stack(path, overrides), None
    except SpecError as error:
        raise CliError("\n".join(f"--stack-file {path}: {problem}" for problem in error.problems)) from None


def _planned_landing(path: Path, overrides: list[str], stacks_dir: Path) -> tuple[Any, dict[str, Any]]:
    """A landing stack file's checked spec (with --set overrides) and the packs' context from its plan (the quota
    needs and guardrails they hold it to); SpecError as validate reports it."""
    from accelstack.engine.preview import planned_landing

    raw = apply_overrides(read_stack_file(path), overrides)
    landing, plan = planned_landing(raw, stack_name_of(path), stacks_dir)
    return landing, landing_context(landing, plan)


@guarded
def policy_command(
    stacks: StacksArg = None,
    all_stacks: AllOpt = False,
    file: FileOpt = None,
    stack_file: StackFileOpt = None,
    json_output: JsonOpt = False,
    overrides: SetOpt = None,
    policy_config: PolicyConfigOpt = None,
    packs: PackOpt = None,
    pack_configs: PackConfigOpt = None,
    emit_config: EmitConfigOpt = None,
    project_dir: ProjectDirOpt = None,
) -> int:
    """Run the separation and guardrails policy packs offline (pulumi-policy's own analyzer), and each --pack.

    STACK... defaults to every stack (unless --file is given). With --file, the packs' accounts and regions come
    from stacks/Pulumi.<stack>.yaml, or from the stack file --stack-file names (a stack outside stacks/).
    Each --pack PATH (a pulumi-policy pack directory, with its --pack-config) runs after the two.
    Prints one line per violation `STACK: PACK/POLICY [LEVEL] URN: message`, then a summary per
    stack. Exit 1 if any mandatory policy is violated, 2 on bad input, 0 otherwise.
    """
    from accelstack.engine import policy_runner

    config = _read_json(policy_config, "--policy-config", MAX_CONFIG_BYTES) if policy_config else None
    if config is not None and not isinstance(config, dict):
        raise CliError(f"--policy-config {policy_config}: expected a JSON object keyed by policy name")
    if emit_config is not None:
        return _emit_config(emit_config, stacks, all_stacks, overrides or [], project_dir)
    extra = company_packs(packs, pack_configs)
    if stack_file is not None and file is None:
        raise CliError("--stack-file names the stack of a --file export; without --file, give the stack file as STACK")
    runs: list[tuple[str, dict[str, Any], Any]] = []  # (stack, export, spec)
    contexts: dict[str, dict[str, Any]] = {}  # a landing stack's pack context, by stack (its plan's)
    failed_input = failed_run = False
    if file is not None:
        if stacks or all_stacks:
            raise CliError("give STACK names, --all or --file, not several")
        with policy_runner.collector_paused():  # millions of objects made at once: no collection needed meanwhile
            found = exports_in(_read_json(file, "--file", MAX_EXPORT_BYTES))
        if not found:
            raise CliError(f"--file {file}: not a stack export (no deployment.resources)")
        if stack_file is not None and len(found) != 1:
            raise CliError(f"--stack-file names one stack; --file {file} holds {len(found)} exports")
        named, named_context = _stack_file_spec(stack_file, overrides or []) if stack_file is not None else (None, None)
        for stated, export in found:
            try:
                resources = policy_runner.export_resources(export)
            except policy_runner.PolicyInputError as error:
                raise CliError(f"--file {file}: {error}") from None
            if named is not None and stack_file is not None:
                name = stated or stack_name_of(stack_file)
                runs.append((name, export, named))
                if named_context is not None:
                    contexts[name] = named_context
                continue
            name = stated or policy_runner.stack_name_of_resources(resources) or file.stem
            spec, context = _context_spec(name, project_dir, overrides or [])
            runs.append((name, export, spec))
            if context is not None:
                contexts[name] = context
    else:
        from accelstack.engine.preview import PreviewError, preview_stack

        root, files = resolve_stacks(
            stacks, all_stacks or not stacks, project_dir, landing=True
        )  # default: every stack
        for path in files:
            name = stack_name_of(path)
            try:
                result = preview_stack(path, overrides or [], root)
            except SpecError as error:
                print_problems(name, error.problems)
                failed_input = True
                continue
            except PreviewError as error:
                echo_lines([f"{name}: preview failed: {error.message}"], stderr=True, style="red")
                failed_input |= error.kind == "config"
                failed_run |= error.kind != "config"
                continue
            runs.append((name, result.export, result.spec))
            if result.landing_plan is not None:
                contexts[name] = landing_context(result.spec, result.landing_plan)
    report = []
    for name, export, spec in runs:
        try:
            verdicts = policy_runner.policy_verdicts(export, spec, config, context=contexts.get(name), extra=extra)
        except policy_runner.PolicyInputError as error:
            raise CliError(f"{name}: {error}") from None
        report.append((name, verdicts))
    mandatory = any(v.mandatory for _, verdicts in report for v in verdicts)
    if json_output:
        _print_json(report, ok=not (mandatory or failed_input or failed_run))
    else:
        _print_text(report)
    if failed_input:
        return EXIT_CONFIG
    return EXIT_FAILED if mandatory or failed_run else EXIT_OK


def _emit_config(
    pack: str, stacks: list[str] | None, all_stacks: bool, overrides: list[str], project_dir: Path | None
) -> int:
    from accelstack.engine import policy_runner

    if pack not in policy_runner.PACKS:
        raise CliError(f"--emit-config {pack}: no such pack; allowed: {', '.join(policy_runner.PACKS)}")
    root, files = resolve_stacks(stacks, all_stacks, project_dir, landing=True)
    if len(files) != 1:
        raise CliError("--emit-config takes exactly one STACK")
    context = None
    if is_landing_file(files[0]):  # its context is its plan's (the quota needs the packs hold it to)
        from accelstack.engine.preview import STACKS_DIR

        spec, context = None, _planned_landing(files[0], overrides, root / STACKS_DIR)[1]
    else:
        spec = load_stack(files[0], overrides)
    loaded = policy_runner.load_pack(policy_runner.PACKS_DIR / pack)
    sys.stdout.write(json.dumps(policy_runner.pack_config(loaded, spec, context=context), indent=2) + "\n")
    return EXIT_OK


def _print_text(report: list[tuple[str, list[Any]]]) -> None:
    for name, verdicts in report:
        mandatory = [v for v in verdicts if v.mandatory]
        advisory = [v for v in verdicts if not v.mandatory]
        echo_lines([f"{name}: {v.line()}" for v in mandatory], style="red")
        echo_lines([f"{name}: {v.line()}" for v in advisory], style="yellow")
        if mandatory:
            noun = "violation" if len(verdicts) == 1 else "violations"
            echo_lines([f"{name}: FAILED: {len(mandatory)} mandatory, {len(advisory)} advisory {noun}"], style="red")
        else:
            echo_lines([f"{name}: ok (no mandatory violations; {len(advisory)} advisory)"], style="green")


def _print_json(report: list[tuple[str, list[Any]]], *, ok: bool) -> None:
    document = {
        "ok": ok,
        "stacks": [
            {
                "stack": name,
                "mandatory": sum(1 for v in verdicts if v.mandatory),
                "advisory": sum(1 for v in verdicts if not v.mandatory),
                "verdicts": [v.to_json() for v in verdicts],
            }
            for name, verdicts in report
        ],
    }
    sys.stdout.write(json.dumps(document, indent=2) + "\n")


def register(app: typer.Typer) -> None:
    app.command("policy")(policy_command)
