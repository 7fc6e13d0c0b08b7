"""README.md is the front door and docs/*.md hold the details: every page renders as written (CommonMark) and
the commands in its `sh` blocks work as written."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
import typer.main
from markdown_it import MarkdownIt
from markdown_it.token import Token

from accelstack.cli import app

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
# spec-reference.md is generated from the models (tests/cli/test_cli_schema.py holds it to them).
PAGES = [README, *sorted(p for p in (REPO / "docs").glob("*.md") if p.name != "spec-reference.md")]
ACCELSTACK = Path(sys.executable).parent / "accelstack"  # the venv's console script, as `.venv/bin/accelstack`


def page_id(page: Path) -> str:
    return str(page.relative_to(REPO))


def tokens(page: Path) -> list[Token]:
    return MarkdownIt("commonmark").parse(page.read_text())


def headings(page: Path) -> list[str]:
    parsed = tokens(page)
    return [parsed[i + 1].content for i, t in enumerate(parsed) if t.type == "heading_open"]


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_code_fence_closes_where_it_should(page: Path) -> None:
    """An unclosed fence swallows everything after it into one code block (headings included)."""
    lines = page.read_text().splitlines()
    for token in tokens(page):
        if token.type != "fence":
            continue
        assert token.map is not None
        start, end = token.map
        closing = lines[end - 1].strip() if end - 1 > start else ""
        assert closing and set(closing) == {token.markup[0]} and len(closing) >= len(token.markup), (
            f"{page_id(page)}:{start + 1}: the {token.markup}{token.info} fence is not closed before line {end}"
        )
        # A fence opened in a block must not contain another opening fence line.
        inner = lines[start + 1 : end - 1]
        assert not [line for line in inner if re.match(r"^ {0,3}```\S", line)], (
            f"{page_id(page)}:{start + 1}: nested fence"
        )


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_heading_line_renders_as_a_heading(page: Path) -> None:
    """Each `#` line outside code blocks is a heading once parsed (none hidden in a runaway code block)."""
    parsed = [t for t in tokens(page) if t.type == "heading_open"]
    expected, in_fence = 0, False
    for line in page.read_text().splitlines():
        if re.match(r"^ {0,3}(```|~~~)", line):
            in_fence = not in_fence
        elif not in_fence and re.match(r"^#{1,6} ", line):
            expected += 1
    assert len(parsed) == expected


# Sections other branches and pages point at by name ("Landing", "Policy packs", "The offline CLI" in the README).
SECTIONS = {
    "README.md": (
        "First stack in 5 minutes",
        "Use it in your own project",
        "Deploying with Pulumi",
        "Landing first: the accounts, their guardrails and quotas",
        "Policy packs: separation and guardrails",
        "The offline CLI",
    ),
    "docs/deploying.md": ("Deploying with Pulumi", "A fresh account: what must exist before the first `up`"),
    "docs/cross-cloud.md": ("How serving reads the training account's model artifacts", "Train on OCI, serve on Vultr"),
    "docs/spec.md": ("The spec", "Serving in two topologies", "Data in and out"),
    "docs/policy-packs.md": ("Policy packs: separation and guardrails", "In pull requests"),
    "docs/testing-your-stacks.md": ("Test your own stack",),
}


@pytest.mark.parametrize("page", sorted(SECTIONS))
def test_the_sections_others_name_are_there(page: str) -> None:
    titles = headings(REPO / page)
    assert [title for title in SECTIONS[page] if title not in titles] == []


def test_every_page_starts_with_its_title_and_a_paragraph_saying_what_it_covers() -> None:
    for page in PAGES:
        parsed = tokens(page)
        assert parsed[0].type == "heading_open" and parsed[0].tag == "h1", page_id(page)
        assert parsed[3].type == "paragraph_open", f"{page_id(page)}: no paragraph under its title"


def test_the_readme_command_table_lists_each_command_once_in_help_order() -> None:
    """One row per command, one line each, in the order `accelstack --help` lists them (accelstack.cli)."""
    group = typer.main.get_command(app)
    in_help = group.list_commands(click.Context(group))
    text = README.read_text()
    table = text[text.index("| command | what it does |") :].split("\n\n", 1)[0].splitlines()[2:]
    rows = [re.match(r"^\| `accelstack (\w+)", row) for row in table]
    assert all(rows), table
    assert [row[1] for row in rows if row] == in_help


def page_commands(page: Path) -> list[tuple[int, str]]:
    """(line, command) for every `accelstack` command in the page's sh blocks, continuations joined."""
    found = []
    for token in tokens(page):
        if token.type != "fence" or token.info.strip() != "sh":
            continue
        assert token.map is not None
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


COMMANDS = [(page, line, command) for page in PAGES for line, command in page_commands(page)]


@pytest.fixture(scope="module")
def workdir_for(tmp_path_factory):
    """Per page, a copy of the project (program, stack files) so files the commands write land outside the repo.
    A page's commands run in order in its copy: later ones read what earlier ones wrote (export.json, my-ml/)."""
    made: dict[Path, Path] = {}

    def workdir(page: Path) -> Path:
        if page not in made:
            root = tmp_path_factory.mktemp(page.stem)
            for name in ("Pulumi.yaml", "__main__.py"):
                shutil.copy(REPO / name, root / name)
            shutil.copytree(REPO / "stacks", root / "stacks")
            made[page] = root
        return made[page]

    return workdir


def test_the_pages_have_commands_to_run() -> None:
    commands = [command for _, _, command in COMMANDS]
    assert len(commands) >= 25  # the 25 the README ran before its details moved to docs/
    assert any(" diff " in command for command in commands)
    assert all(command.startswith(".venv/bin/accelstack ") for command in commands), "one spelling throughout"


def test_the_readme_walks_a_first_stack_through_offline() -> None:
    """The walkthrough: a project of one's own, then validate, preview with packs, cost and simulate on it."""
    commands = [command.split("#")[0].split() for _, command in page_commands(README)]
    walkthrough = [words[1:3] for words in commands[:5]]
    assert walkthrough == [
        ["init", "my-ml"],
        ["validate", "aws-serving"],
        ["preview", "aws-serving"],
        ["cost", "aws-serving"],
        ["simulate", "serving"],
    ]
    assert all("--project-dir my-ml" in " ".join(words) for words in commands[1:5])


@pytest.mark.parametrize(
    ("page", "line", "command"), COMMANDS, ids=[f"{page_id(page)}:{line}" for page, line, _ in COMMANDS]
)
def test_page_command_works_as_written(workdir_for, page: Path, line: int, command: str) -> None:
    runnable = re.sub(r"^(\.venv/bin/)?accelstack\b", str(ACCELSTACK), command)
    result = subprocess.run(
        ["bash", "-c", runnable],
        cwd=workdir_for(page),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, (
        f"{page_id(page)}:{line}: {command}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    )
    assert "Traceback" not in result.stderr
