"""`render` and `schema` write only where they were told (issue 29): an empty --out is refused, a symlink (the
directory, or a file in it) is never written through, and nothing is created elsewhere. Exit 2 naming --out."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app

REPO = Path(__file__).resolve().parents[2]
COMMANDS = {
    "render": lambda out: ["render", "aws-training", "--out", out, "--project-dir", str(REPO)],
    "schema": lambda out: ["schema", "--out", out],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("out", ["", "   "])
def test_an_empty_out_is_refused(command: str, out: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, COMMANDS[command](out))
    assert result.exit_code == 2, result.output
    assert "--out: empty" in result.output and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_symlinked_directory_is_refused(command: str, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").symlink_to(elsewhere)
    result = CliRunner().invoke(app, COMMANDS[command](str(tmp_path / "out")))
    assert result.exit_code == 2 and "is a symlink" in result.output, result.output
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize(("command", "victim"), [("render", "slurm.conf"), ("schema", "spec-reference.md")])
def test_a_symlinked_file_is_never_written_through(command: str, victim: str, tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / victim).symlink_to(target)
    result = CliRunner().invoke(app, COMMANDS[command](str(out)))
    assert result.exit_code == 2 and f"{victim} is a symlink" in result.output, result.output
    assert target.read_text() == "keep me"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_plain_directory_is_written(command: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, COMMANDS[command](str(tmp_path / "a" / "b")))
    assert result.exit_code == 0, result.output
    assert any((tmp_path / "a" / "b").iterdir())
