"""Commands write only where they were told (issue 29): an empty --out is refused, a symlink (the directory, a
component of its path, or a file in it) is never written through, only the last directory is created unless
--parents asks for more, and a command that fails partway leaves nothing behind. Exit 2 naming the option."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app

REPO = Path(__file__).resolve().parents[2]
COMMANDS = {
    "render": lambda out: ["render", "aws-training", "--out", out, "--project-dir", str(REPO)],
    "schema": lambda out: ["schema", "--out", out],
    "export": lambda out: ["export", "aws-serving", "aws-training", "--out", out, "--project-dir", str(REPO)],
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
def test_only_the_last_directory_is_created_unless_parents_is_asked(command: str, tmp_path: Path) -> None:
    refused = CliRunner().invoke(app, COMMANDS[command](str(tmp_path / "a" / "b")))
    assert refused.exit_code == 2 and "pass --parents" in refused.output, refused.output
    assert list(tmp_path.iterdir()) == []
    leaf = CliRunner().invoke(app, COMMANDS[command](str(tmp_path / "leaf")))
    assert leaf.exit_code == 0, leaf.output
    assert any((tmp_path / "leaf").iterdir())
    asked = CliRunner().invoke(app, [*COMMANDS[command](str(tmp_path / "a" / "b")), "--parents"])
    assert asked.exit_code == 0, asked.output
    assert any((tmp_path / "a" / "b").iterdir())


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("below", ["sub", "sub/deeper", "../x"])
def test_a_symlink_in_the_middle_of_the_path_is_refused(command: str, below: str, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "sub").mkdir(parents=True)
    project = tmp_path / "project"
    project.mkdir()
    (project / "link").symlink_to(elsewhere)
    result = CliRunner().invoke(app, [*COMMANDS[command](str(project / "link" / below)), "--parents"])
    assert result.exit_code == 2 and "link is a symlink" in result.output, result.output
    assert [p.name for p in elsewhere.rglob("*")] == ["sub"] and not (tmp_path / "x").exists()


def test_nothing_is_written_when_one_file_cannot_be(tmp_path: Path) -> None:
    """render writes ~10 files; one name taken by a directory refuses them all before the first is written."""
    out = tmp_path / "out"
    (out / "slurm.conf").mkdir(parents=True)
    result = CliRunner().invoke(app, COMMANDS["render"](str(out)))
    assert result.exit_code == 2 and "slurm.conf exists and is not a regular file" in result.output, result.output
    assert [p.name for p in out.iterdir()] == ["slurm.conf"]


def test_a_write_failing_partway_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure after the checks (disk full on the third file) removes the staged files and the new directory."""
    from accelstack.commands import output_files

    calls = {"n": 0}
    real = output_files.os.chmod

    def failing_chmod(path, mode):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        return real(path, mode)

    monkeypatch.setattr(output_files.os, "chmod", failing_chmod)
    result = CliRunner().invoke(app, COMMANDS["render"](str(tmp_path / "out")))
    assert result.exit_code == 1 and "No space left on device" in result.output, result.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["diff", "aws-training", "--set", "training.nodes.count=3", "--json"], "--json"),
        (["simulate", "serving", "aws-serving", "--hours", "0.1", "--rate", "1", "--plot"], "--plot"),
        (["export", "aws-serving", "--out"], "--out"),
    ],
)
def test_single_file_outputs_refuse_symlinks(args: list[str], option: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    precious = tmp_path / "precious"
    precious.write_text("keep me")
    link = tmp_path / "out.file"
    link.symlink_to(precious)
    result = CliRunner().invoke(app, [*args, str(link)])
    assert result.exit_code == 2 and "is a symlink" in result.output, result.output
    assert precious.read_text() == "keep me"
    (tmp_path / "dirlink").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "real").mkdir()
    through = CliRunner().invoke(app, [*args, str(tmp_path / "dirlink" / "x.out")])
    assert through.exit_code == 2 and "dirlink is a symlink" in through.output, through.output
    assert list((tmp_path / "real").iterdir()) == []


def test_export_refuses_an_empty_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(app, ["export", "aws-serving", "--out", " "])
    assert result.exit_code == 2 and "--out: empty" in result.output, result.output
