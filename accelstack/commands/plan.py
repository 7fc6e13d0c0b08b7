"""`accelstack plan quotas LANDING...`: what a landing stack requests per account, Region and quota, against what
the workload stacks of this project need (no Pulumi).

Requested: the landing stack's own plan, from the workload stacks it lists (`organization.<side>.stacks`).
Needed: the same, plus every workload stack here that names the landing stack (`landing: {stack: .../NAME}`)
without being listed: those deploy into its accounts but the requests leave them out. `validate` warns a
workload stack of the same shortfall (`landing_shortfalls`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from accelstack.clouds import registry
from accelstack.commands.common import (
    EXIT_CONFIG,
    EXIT_OK,
    STACKS_DIR,
    ProjectDirOpt,
    echo_lines,
    find_project_dir,
    guarded,
    out,
    print_problems,
    resolve_stack,
)
from accelstack.planner.landing_plan import QuotaNeed, landing_problems, plan_landing, side_of
from accelstack.spec.landing import (
    QUOTA_BY_HAND,
    QUOTA_CAPS_ONLY,
    QUOTA_ZONE_NAMES,
    LandingStack,
    is_landing,
    parse_landing,
    workload_specs,
)
from accelstack.spec.loader import (
    apply_overrides,
    blame_overrides,
    load_stack,
    read_stack_config,
    read_stack_file,
    stack_name_of,
)
from accelstack.spec.models import ServingStack, TrainingStack
from accelstack.spec.problems import Level, Problem, SpecError


@dataclass(frozen=True)
class QuotaRow:
    side: str
    region: str
    quota: str
    unit: str
    requested: int
    needed: int
    stacks: tuple[str, ...]  # the stacks that need it
    zone: str = ""  # the zone a per-zone quota is needed in ("": the region)

    @property
    def short(self) -> bool:
        return self.needed > self.requested

    def where(self, cloud: str) -> str:
        """The region, and the zone when the need is in one (OCI: `us-ashburn-1 AD-1`)."""
        return f"{self.region} {QUOTA_ZONE_NAMES.get(cloud, 'zone {}').format(self.zone)}" if self.zone else self.region


def load_landing(path: Path, overrides: list[str] | None = None) -> LandingStack:
    """The landing stack in `path`, with `--set` overrides (SpecError when it is not one, or has problems)."""
    raw, settings = read_stack_config(path)
    if not is_landing(raw):
        raise SpecError([Problem("workload", f"{raw.get('workload')!r}: not a landing stack (workload: landing)")])
    try:
        return parse_landing(apply_overrides(raw, overrides or []), stack_name_of(path), provider_settings=settings.get)
    except SpecError as error:
        raise SpecError(blame_overrides(error.problems, overrides or [])) from None


def landing_problems_of(landing: LandingStack, stacks_dir: Path) -> list[Problem]:
    """Every problem of a landing stack with the workload stacks it lists (read from `stacks_dir`)."""
    try:
        return landing_problems(landing, workload_specs(landing, stacks_dir))
    except SpecError as error:
        return list(error.problems)


def wired_to(landing: LandingStack, stacks_dir: Path) -> dict[str, TrainingStack | ServingStack]:
    """The workload stacks in `stacks_dir` (valid ones) that name `landing` as their landing stack."""
    wired: dict[str, TrainingStack | ServingStack] = {}
    for path in sorted(stacks_dir.glob("Pulumi.*.yaml")):
        try:
            if is_landing(read_stack_file(path)):
                continue
            spec = load_stack(path)
        except SpecError:
            continue  # `validate` reports it; here it needs nothing
        if spec.landing is not None and spec.landing.stack_name == landing.stack:
            wired[spec.stack] = spec
    return wired


def quota_rows(landing: LandingStack, stacks_dir: Path) -> list[QuotaRow]:
    """Requested vs needed per side, Region and quota (SpecError when a listed stack is missing or invalid)."""
    catalog = registry.get(landing.cloud).catalog
    listed = workload_specs(landing, stacks_dir)
    requested = plan_landing(landing, listed, catalog).needs
    # Stacks that name this landing stack without being listed land on their own workload's side.
    unlisted = {name: spec for name, spec in wired_to(landing, stacks_dir).items() if side_of(landing, name) is None}
    sides = {
        side: landing.side(side).model_copy(
            update={"stacks": [*landing.side(side).stacks, *(n for n, s in unlisted.items() if s.workload == side)]}
        )
        for side in ("training", "serving")
    }
    everyone = landing.model_copy(update={"organization": landing.organization.model_copy(update=sides)})
    needed = plan_landing(everyone, {**listed, **unlisted}, catalog).needs
    asked = {(n.side, n.region, n.quota, n.zone): n for n in requested}
    rows = []
    for need in needed:
        request: QuotaNeed | None = asked.pop((need.side, need.region, need.quota, need.zone), None)
        amount = request.amount if request else 0
        rows.append(
            QuotaRow(need.side, need.region, need.quota, need.unit, amount, need.amount, need.stacks, need.zone)
        )
    rows.extend(QuotaRow(r.side, r.region, r.quota, r.unit, r.amount, 0, (), r.zone) for r in asked.values())
    return rows


def landing_shortfalls(spec: TrainingStack | ServingStack, stacks_dir: Path) -> list[Problem]:
    """Warnings for a workload stack whose landing stack (a local, readable stack file) requests less quota than
    it needs; none when the landing stack is not here or cannot be read (its own validate says why)."""
    if spec.landing is None:
        return []
    path = stacks_dir / f"Pulumi.{spec.landing.stack_name}.yaml"
    if not path.is_file():
        return []
    try:
        landing = load_landing(path)
        rows = quota_rows(landing, stacks_dir)
    except SpecError:
        return []
    warnings = []
    listed = side_of(landing, spec.stack)
    if spec.account.region not in landing.organization.allowed_regions:
        warnings.append(
            Problem(
                "landing.stack",
                f"{landing.stack}'s region guardrail denies {spec.account.region} (allowed: "
                f"{', '.join(landing.organization.allowed_regions)}): every call of this stack would be refused",
                Level.WARNING,
            )
        )
    if listed is not None and listed != spec.workload:
        warnings.append(
            Problem(
                "landing.stack",
                f"{landing.stack} lists {spec.stack} under organization.{listed}.stacks, the {listed} account; "
                f"a {spec.workload} stack belongs under organization.{spec.workload}.stacks",
                Level.WARNING,
            )
        )
    elif listed is None:
        warnings.append(
            Problem(
                "landing.stack",
                f"{landing.stack} does not list {spec.stack} under organization.{spec.workload}.stacks: its quota "
                "requests leave this stack out",
                Level.WARNING,
            )
        )
    for row in rows:
        if row.short and spec.stack in row.stacks:
            warnings.append(
                Problem(
                    "landing.stack",
                    f"the {row.side} account needs {row.needed} {row.unit} of {row.quota!r} in "
                    f"{row.where(landing.cloud)}; "
                    f"{landing.stack} requests {row.requested}",
                    Level.WARNING,
                )
            )
    return warnings


def manual_quota_lines(landing: LandingStack, rows: list[QuotaRow]) -> list[str]:
    """Where the cloud's provider makes no quota request: the commands that make each one by hand, after `up`."""
    import importlib

    module, _, name = QUOTA_BY_HAND[landing.cloud].partition(":")
    quota_request_command = getattr(importlib.import_module(module), name)
    lines = [
        f"{landing.stack}: {landing.cloud} quota is a manual step (its Pulumi provider requests none per "
        "subscription); after `pulumi up`, with each side's subscription id from the landing outputs, run:"
    ]
    lines.extend(
        "  " + quota_request_command(f"<{row.side}AccountId>", row.region, row.quota, row.requested)
        for row in rows
        if row.requested
    )
    return lines


def quota_table(landing: LandingStack, rows: list[QuotaRow]) -> Table:
    table = Table(title=f"{landing.stack}: quota requested vs needed", title_justify="left")
    for column in ("account", "region", "quota", "requested", "needed", "stacks"):
        table.add_column(column, justify="right" if column in ("requested", "needed") else "left")
    by_hand = landing.cloud in QUOTA_BY_HAND
    for row in rows:
        account = landing.side(row.side).account.name
        style = "bold yellow" if row.short else ""
        table.add_row(
            f"{account} ({row.side})",
            row.where(landing.cloud),
            row.quota,
            f"manual: {row.requested} {row.unit}" if by_hand else f"{row.requested} {row.unit}",
            f"{row.needed} {row.unit}",
            ", ".join(row.stacks),
            style=style,
        )
    return table


plan_app = typer.Typer(help="What a landing stack plans for its accounts.", no_args_is_help=True)


@plan_app.command("quotas")
@guarded
def quotas_command(
    stacks: Annotated[list[str], typer.Argument(metavar="LANDING...", help="Landing stacks (name or file).")],
    project_dir: ProjectDirOpt = None,
) -> int:
    """Print each landing stack's quota requests against what the project's workload stacks need, per account,
    Region and quota. Exit 0; 2 on a config problem. A `needed` above `requested` (yellow) is a stack that
    names the landing stack without being listed in it."""
    root = find_project_dir(project_dir)
    failed = False
    for name in stacks:
        path = resolve_stack(name, root)
        stack = stack_name_of(path)
        try:
            landing = load_landing(path)
            problems = landing_problems_of(landing, root / STACKS_DIR)
            if problems:
                raise SpecError(problems)
            rows = quota_rows(landing, root / STACKS_DIR)
        except SpecError as error:
            print_problems(stack, error.problems)
            failed = True
            continue
        out().print(quota_table(landing, rows))
        if landing.cloud in QUOTA_BY_HAND:
            echo_lines(manual_quota_lines(landing, rows))
        if landing.cloud in QUOTA_CAPS_ONLY:
            echo_lines([f"{stack}: {QUOTA_CAPS_ONLY[landing.cloud]}"])
        short = [row for row in rows if row.short]
        echo_lines(
            [
                f"{stack}: {len(short)} of {len(rows)} quotas short"
                if short
                else f"{stack}: every quota need is requested"
            ],
            style="yellow" if short else "green",
        )
    return EXIT_CONFIG if failed else EXIT_OK


def register(app: typer.Typer) -> None:
    app.add_typer(plan_app, name="plan")
