"""`accelstack` command line: every module of `accelstack.commands` with a `register(app)` adds its commands."""

from __future__ import annotations

import importlib
import pkgutil

import typer

import accelstack.commands

app = typer.Typer(
    name="accelstack",
    help="GPU training clusters and serving services on Pulumi from one typed spec. Offline: no cloud "
    "credentials, no Pulumi CLI (previews run the real program under Pulumi mocks).",
    no_args_is_help=True,
    rich_markup_mode=None,  # click's plain help: wraps to the terminal, never cuts an option name
    add_completion=False,
    # A user's mistake is reported as lines naming the config path; an unexpected error should stay short too.
    pretty_exceptions_show_locals=False,
)


@app.callback()
def _root() -> None:
    """GPU training clusters and serving services on Pulumi from one typed spec (offline, under mocks)."""
    # A callback keeps `accelstack <command>` a group even while only one command is registered.


def _register_commands(target: typer.Typer) -> None:
    for module_info in sorted(pkgutil.iter_modules(accelstack.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{accelstack.commands.__name__}.{module_info.name}")
        register = getattr(module, "register", None)
        if callable(register):
            register(target)


_register_commands(app)


def main() -> None:  # pragma: no cover - console script shim
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
