"""CLI conventions every command keeps: `--json -` is stdout, identical runs print identical bytes,
no STACK means every stack, help at 80 columns keeps option names whole, counted units agree in number."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.commands.common import quantity
from accelstack.commands.policy import exports_in

REPO = Path(__file__).resolve().parents[2]
SECONDS = re.compile(r" in \d+\.\d\ds$", re.MULTILINE)
MANIFEST_TIME = re.compile(r'"time": "[^"]+"')


def run_cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """The installed console entry point in a real process (real stdout/stderr, no terminal)."""
    return subprocess.run(
        [sys.executable, "-m", "accelstack.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "COLUMNS": "160"},
    )


def test_preview_json_dash_writes_the_export_to_stdout_and_no_file(tmp_path: Path) -> None:
    result = run_cli("preview", "aws-finetune", "--no-policy", "--json", "-", cwd=REPO)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)  # stdout is the document and nothing else
    assert document["version"] == 3 and document["deployment"]["resources"]
    assert "aws-finetune: " in result.stderr and "resources" in result.stderr  # the report moved to stderr
    assert not (REPO / "-").exists()


def test_preview_json_dash_for_several_stacks_is_what_policy_file_reads(fixture_project) -> None:
    result = CliRunner().invoke(
        app, ["preview", "alpha", "beta", "--project-dir", str(fixture_project), "--no-policy", "--json", "-"]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [name for name, _ in exports_in(document)] == ["alpha", "beta"]


def test_two_identical_previews_print_identical_bytes(tmp_path: Path) -> None:
    """The program registers asynchronously: the tree, the export and its dependency lists must not
    follow that order. Only the timings and the manifest's time may differ."""
    runs = []
    for attempt in ("one", "two"):
        out = tmp_path / f"{attempt}.json"
        result = run_cli("preview", "aws-training", "--no-policy", "--json", str(out))
        assert result.returncode == 0, result.stderr
        runs.append((SECONDS.sub("", result.stdout), MANIFEST_TIME.sub('"time": ""', out.read_text())))
    assert runs[0][0] == runs[1][0]
    assert runs[0][1] == runs[1][1]
    export = json.loads(runs[0][1])
    for resource in export["deployment"]["resources"]:
        assert resource["dependencies"] == sorted(resource["dependencies"])
        assert list(resource["propertyDependencies"]) == sorted(resource["propertyDependencies"])
        for urns in resource["propertyDependencies"].values():
            assert urns == sorted(urns)


def test_preview_tree_children_are_sorted(fixture_project) -> None:
    result = CliRunner().invoke(app, ["preview", "alpha", "--project-dir", str(fixture_project), "--no-policy"])
    assert result.exit_code == 0, result.output
    names = [m.group(1) for m in re.finditer(r"^[│ ]*[├└]── (\S+)  ", result.stdout, re.MULTILINE)]
    assert names, result.stdout
    # Siblings appear in name order: check each run of leaves printed at one depth.
    depth_names: dict[int, list[str]] = {}
    for line in result.stdout.splitlines():
        match = re.match(r"^([│ ]*)[├└]── (\S+)  ", line)
        if match:
            depth = len(match.group(1))
            for deeper in [d for d in depth_names if d > depth]:
                del depth_names[deeper]
            depth_names.setdefault(depth, []).append(match.group(2))
            siblings = depth_names[depth]
            assert siblings == sorted(siblings), siblings


def test_validate_and_policy_without_stack_take_every_stack(project: Path, fixture_project: Path) -> None:
    (project / "stacks" / "Pulumi.beta.yaml").write_text((project / "stacks" / "Pulumi.alpha.yaml").read_text())
    (project / "__main__.py").write_text((fixture_project / "__main__.py").read_text())
    result = CliRunner().invoke(app, ["validate", "--project-dir", str(project)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[:2] == ["alpha: ok", "beta: ok"]
    policy = CliRunner().invoke(app, ["policy", "--project-dir", str(project), "--json"])
    assert policy.exit_code in (0, 1), policy.output  # the toy fixture breaks guardrails on purpose
    assert [entry["stack"] for entry in json.loads(policy.stdout)["stacks"]] == ["alpha", "beta"]


def _commands() -> list[tuple[str, click.Command]]:
    root = typer.main.get_command(app)
    found = []
    for name, command in sorted(root.commands.items()):
        if isinstance(command, click.Group):
            found += [(f"{name} {sub}", subcommand) for sub, subcommand in sorted(command.commands.items())]
        else:
            found.append((name, command))
    return found


@pytest.mark.parametrize(("name", "command"), _commands(), ids=[name for name, _ in _commands()])
def test_help_at_80_columns_keeps_every_option_name_whole(name: str, command: click.Command) -> None:
    result = CliRunner().invoke(app, [*name.split(), "--help"], env={"COLUMNS": "80"}, terminal_width=80)
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout
    for param in command.params:
        for option in [*param.opts, *param.secondary_opts]:
            if option.startswith("--"):
                assert option in result.stdout, f"{name}: {option} missing or cut in --help"
    assert max(len(line) for line in result.stdout.splitlines()) <= 80


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (1, "replicas", "1 replica"),
        (2, "replicas", "2 replicas"),
        (1, "GPUs", "1 GPU"),
        (8, "GPUs", "8 GPUs"),
        (1.0, "sequences", "1 sequence"),
        (1, "s", "1 s"),
        (2.5, "GiB", "2.5 GiB"),
        (1, "", "1"),
    ],
)
def test_counted_units_agree_in_number(value, unit, text) -> None:
    assert quantity(value, unit) == text


def test_preview_json_dash_pipes_into_policy_file_dash(fixture_project) -> None:
    """`preview ... --json - | policy --file -`: stdout carries one document the policy command reads."""
    preview = CliRunner().invoke(
        app, ["preview", "alpha", "beta", "--project-dir", str(fixture_project), "--no-policy", "--json", "-"]
    )
    assert preview.exit_code == 0, preview.output
    policy = CliRunner().invoke(app, ["policy", "--file", "-", "--json"], input=preview.stdout)
    assert policy.exit_code in (0, 1), policy.output  # the toy fixture breaks guardrails on purpose
    assert [entry["stack"] for entry in json.loads(policy.stdout)["stacks"]] == ["alpha", "beta"]
