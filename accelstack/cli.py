"""`accelstack` command line: every module of `accelstack.commands` with a `register(app)` adds its commands.

`accelstack <command>` imports only `accelstack.commands.<command>` (a module is named as its command): importing
every command's planner, simulator and engine first costs the shortest command most of a second. `--help`, a
mistyped command, or `from accelstack.cli import app` register every command.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import pkgutil
import sys
from typing import Any

import typer
import typer.core

import accelstack.commands

# `accelstack --help` lists commands in the order a new user meets them: start a project, check it, see it, price
# and size it, try its serving, then landing quotas, the packs, day-2 changes and other tools' views, and last the
# commands for contributors. The README's command table follows the same order (tests/cli/test_readme.py).
HELP_ORDER = (
    "init",
    "validate",
    "preview",
    "cost",
    "size",
    "advise",
    "simulate",
    "plan",
    "policy",
    "diff",
    "render",
    "export",
    "schema",
    "calibrate",
    "scaffold",
)


class _CommandsInJourneyOrder(typer.core.TyperGroup):
    """Commands in `HELP_ORDER` (typer alone lists single commands first, then groups); one it does not name yet
    follows, by name, so a new command is never left out."""

    def list_commands(self, ctx: Any) -> list[str]:
        rank = {name: index for index, name in enumerate(HELP_ORDER)}
        return sorted(super().list_commands(ctx), key=lambda name: (rank.get(name, len(rank)), name))


def _new_app() -> typer.Typer:
    typer_app = typer.Typer(
        name="accelstack",
        cls=_CommandsInJourneyOrder,
        help="GPU training clusters and serving services on Pulumi from one typed spec. Offline: no cloud "
        "credentials, no Pulumi CLI (previews run the real program under Pulumi mocks).",
        no_args_is_help=True,
        rich_markup_mode=None,  # click's plain help: wraps to the terminal, never cuts an option name
        add_completion=False,
        # A user's mistake is reported as lines naming the config path; an unexpected error should stay short too.
        pretty_exceptions_show_locals=False,
    )

    @typer_app.callback()
    def _root() -> None:
        """GPU training clusters and serving services on Pulumi from one typed spec (offline, under mocks)."""
        # A callback keeps `accelstack <command>` a group even while only one command is registered.

    return typer_app


def _register(target: typer.Typer, module_name: str) -> bool:
    """Register the commands of `accelstack.commands.<module_name>`; False for a module without `register`."""
    module = importlib.import_module(f"{accelstack.commands.__name__}.{module_name}")
    register = getattr(module, "register", None)
    if callable(register):
        register(target)
        return True
    return False


def _register_commands(target: typer.Typer) -> None:
    for module_info in sorted(pkgutil.iter_modules(accelstack.commands.__path__), key=lambda m: m.name):
        _register(target, module_info.name)


def _command_names(target: typer.Typer) -> set[str]:
    names = {info.name for info in target.registered_commands if info.name}
    groups = {
        info.name or (info.typer_instance.info.name if info.typer_instance else None)
        for info in target.registered_groups
    }
    return names | {name for name in groups if isinstance(name, str)}


def _named(argv: list[str]) -> str | None:
    return next((arg for arg in argv if not arg.startswith("-")), None)


def app_for(argv: list[str]) -> typer.Typer:
    """The app `accelstack ARGV` needs: only the named command's module when it registers that command."""
    named = _named(argv)
    if named and named.isidentifier() and importlib.util.find_spec(f"accelstack.commands.{named}") is not None:
        only = _new_app()
        if _register(only, named) and named in _command_names(only):
            return only
    every = _new_app()
    _register_commands(every)
    return every


def main() -> Any:
    """The console script: `accelstack ARGS`."""
    if _named(sys.argv[1:]) == "preview":
        # Its first worker starts now and imports pulumi and the program's modules while this process imports the
        # command and reads the stack file (accelstack.engine.spare_worker); unused, it is stopped at exit.
        from accelstack.engine.spare_worker import start_spare

        start_spare()
    try:
        return app_for(sys.argv[1:])()
    finally:
        # The process ends here (the app exits): what it made is left out of the collection the interpreter runs
        # as it ends, which walks every object a preview with its packs holds (~0.7 s of `accelstack preview` of a
        # training stack, measured; `make bench`). Memory is returned to the system at exit as before.
        gc.freeze()


def __getattr__(name: str) -> Any:
    # `from accelstack.cli import app` (tests, programs embedding the CLI): every command, built once.
    if name == "app":
        every = _new_app()
        _register_commands(every)
        globals()["app"] = every
        return every
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":  # pragma: no cover
    main()
