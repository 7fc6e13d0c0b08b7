"""`accelstack <command>` imports only the command it runs; `--help` and mistakes still see every command."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import click
import pytest
import typer
import typer.main

import accelstack.commands
from accelstack.cli import HELP_ORDER, _command_names, _new_app, app_for


def command_modules() -> list[str]:
    names = []
    for info in pkgutil.iter_modules(accelstack.commands.__path__):
        module = __import__(f"accelstack.commands.{info.name}", fromlist=["register"])
        if callable(getattr(module, "register", None)):
            names.append(info.name)
    return sorted(names)


def test_every_command_module_is_named_as_a_command_it_registers():
    """Otherwise `accelstack NAME` would fall back to importing everything, or run another module's command."""
    everything = _command_names(app_for([]))
    assert set(command_modules()) <= everything
    for name in command_modules():
        assert _command_names(app_for([name, "--help"])) == {name}


@pytest.mark.parametrize("argv", [[], ["--help"], ["nosuch"], ["common"], ["../x"], ["output_files"]])
def test_anything_else_registers_every_command(argv):
    assert _command_names(app_for(argv)) == _command_names(app_for([]))
    assert len(_command_names(app_for(argv))) == len(command_modules())


def test_one_command_does_not_import_the_others():
    probe = (
        "import sys; from accelstack.cli import app_for; app_for(['validate', 'x']); "
        "print(sorted(m for m in sys.modules if m.startswith('accelstack.commands.') or m == 'accelstack.simulate'))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert "accelstack.commands.validate" in loaded
    for other in ("accelstack.commands.simulate", "accelstack.commands.advise", "accelstack.simulate"):
        assert other not in loaded


def help_listing() -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", "from accelstack.cli import main; main()", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    return [line.split()[0] for line in result.stdout.split("Commands:", 1)[1].splitlines() if line.startswith("  ")]


def test_help_lists_every_command_once_in_the_order_a_user_meets_them():
    listed = help_listing()
    assert sorted(listed) == sorted(set(listed)) == command_modules()
    # First a project of one's own, checked, then seen: the README's walkthrough order.
    assert listed[:4] == ["init", "validate", "preview", "cost"]
    assert listed.index("simulate") < listed.index("diff") < listed.index("calibrate")
    assert listed == [name for name in HELP_ORDER if name in listed] + sorted(set(listed) - set(HELP_ORDER))


def test_a_command_the_order_does_not_name_follows_by_name():
    """A new command shows in `--help` even before HELP_ORDER names it: after the named ones, by name."""
    extra = _new_app()
    for name in ("zeta", "alpha", "validate", "init"):
        extra.command(name=name)(lambda: None)
    group = typer.main.get_command(extra)
    assert group.list_commands(click.Context(group)) == ["init", "validate", "alpha", "zeta"]
