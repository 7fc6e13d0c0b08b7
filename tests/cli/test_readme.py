"""README.md is the front door: it renders as written (CommonMark) and its commands work as written."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
ACCELSTACK = Path(sys.executable).parent / "accelstack"  # the venv's console script, as `.venv/bin/accelstack`


def tokens():
    return MarkdownIt("commonmark").parse(README.read_text())


def test_every_code_fence_closes_where_it_should() -> None:
    """An unclosed fence swallows everything after it into one code block (headings included)."""
    lines = README.read_text().splitlines()
    for token in tokens():
        if token.type != "fence":
            continue
        start, end = token.map
        closing = lines[end - 1].strip() if end - 1 > start else ""
        assert closing and set(closing) == {token.markup[0]} and len(closing) >= len(token.markup), (
            f"README.md:{start + 1}: the {token.markup}{token.info} fence is not closed before line {end}"
        )
        # A fence opened in a block must not contain another opening fence line.
        inner = lines[start + 1 : end - 1]
        assert not [line for line in inner if re.match(r"^ {0,3}```\S", line)], f"README.md:{start + 1}: nested fence"


def test_every_heading_line_renders_as_a_heading() -> None:
    """Each `#` line outside code blocks is a heading once parsed (none hidden in a runaway code block)."""
    parsed = [t for t in tokens() if t.type == "heading_open"]
    expected, in_fence = 0, False
    for line in README.read_text().splitlines():
        if re.match(r"^ {0,3}(```|~~~)", line):
            in_fence = not in_fence
        elif not in_fence and re.match(r"^#{1,6} ", line):
            expected += 1
    assert len(parsed) == expected
    titles = [tokens()[i + 1].content for i, t in enumerate(tokens()) if t.type == "heading_open"]
    for title in ("Deploying with Pulumi", "How serving reads the training account's model artifacts", "The spec"):
        assert title in titles


def readme_commands() -> list[tuple[int, str]]:
    """(line, command) for every `accelstack` command in the README's sh blocks, continuations joined."""
    found = []
    for token in tokens():
        if token.type != "fence" or token.info.strip() != "sh":
            continue
        logical, first = "", None
        for offset, line in enumerate(token.content.splitlines()):
            first = first if logical else token.map[0] + 2 + offset
            logical += line.rstrip("\\").rstrip() + " " if line.endswith("\\") else line
            if line.endswith("\\"):
                continue
            command, logical = logical.strip(), ""
            if command.split(" ", 1)[0] in (".venv/bin/accelstack", "accelstack"):
                found.append((first, command))
    return found


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A copy of the project (program, stack files) so files the commands write land outside the repo.
    The commands run in order in it: later ones read what earlier ones wrote (export.json)."""
    root = tmp_path_factory.mktemp("readme")
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, root / name)
    shutil.copytree(REPO / "stacks", root / "stacks")
    return root


def test_the_readme_has_commands_to_run() -> None:
    commands = [command for _, command in readme_commands()]
    assert len(commands) >= 8
    assert any(" diff " in command for command in commands)
    assert all(command.startswith(".venv/bin/accelstack ") for command in commands), "one spelling throughout"


@pytest.mark.parametrize(("line", "command"), readme_commands(), ids=[f"README:{n}" for n, _ in readme_commands()])
def test_readme_command_works_as_written(workdir: Path, line: int, command: str) -> None:
    runnable = re.sub(r"^(\.venv/bin/)?accelstack\b", str(ACCELSTACK), command)
    result = subprocess.run(
        ["bash", "-c", runnable], cwd=workdir, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, f"README.md:{line}: {command}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    assert "Traceback" not in result.stderr
