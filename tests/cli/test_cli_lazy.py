"""`accelstack <command>` imports only the command it runs; `--help` and mistakes still see every command."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import accelstack.commands
from accelstack.cli import _command_names, app_for


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


def test_help_lists_commands_by_name():
    result = subprocess.run(
        [sys.executable, "-c", "from accelstack.cli import main; main()", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    listed = [line.split()[0] for line in result.stdout.split("Commands:", 1)[1].splitlines() if line.startswith("  ")]
    assert listed == sorted(listed) == sorted(command_modules())
