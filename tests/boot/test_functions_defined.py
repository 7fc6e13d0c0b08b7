"""Every function a generated boot script calls is defined in that script (issue 27: the GCP head called
`gce_metadata`, which only the compute script defined, and never started slurmctld). Read from what `accelstack
render` writes for every example stack on every cloud, each script on its own: a cloud-config's shell files and its
runcmd, and the plain scripts (the Slurm Prolog/Epilog and fabric setup a node carries among them). The machine
types and topologies the examples do not launch (A3 Ultra / A4 with gIB, Azure MI300X, replicas without a queue:
test_boots_run.VARIANTS) are rendered too. Nothing here defines a function on a script's behalf."""

from __future__ import annotations

import base64
import re
from functools import cache
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.examples import WORKLOAD_EXAMPLES
from tests.boot.test_boots_run import VARIANTS

REPO = Path(__file__).resolve().parents[2]
STACKS = sorted(WORKLOAD_EXAMPLES)
RENDERS = {
    stack + "".join(f"+{o}" for o in overrides): (stack, overrides)
    for stack in STACKS
    for overrides in [(), *VARIANTS.get(stack, [])]
}
DEFINITION = re.compile(r"^\s*(?:function\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*\(\)\s*\{", re.M)


@cache
def rendered(stack: str, out: Path, overrides: tuple[str, ...] = ()) -> dict[str, str]:
    sets = [arg for override in overrides for arg in ("--set", override)]
    result = CliRunner().invoke(app, ["render", stack, "--out", str(out), "--project-dir", str(REPO), *sets])
    if result.exit_code != 0:
        return {}
    return {p.name: p.read_text() for p in out.iterdir() if p.is_file()}


def scripts_of(name: str, text: str) -> dict[str, str]:
    """The shell programs one artifact carries, by where they come from."""
    if text.startswith("#!") and ("bash" in text.splitlines()[0] or "/sh" in text.splitlines()[0]):
        return {name: text}
    if not text.startswith("#cloud-config"):
        return {}
    document = yaml.safe_load(text) or {}
    found = {}
    for entry in document.get("write_files") or []:
        content = entry.get("content") or ""
        if entry.get("encoding") in ("b64", "base64"):
            try:
                content = base64.b64decode(content).decode()
            except (ValueError, UnicodeDecodeError):
                continue
        if content.startswith("#!") and "python" not in content.splitlines()[0]:
            found[f"{name}:{entry['path']}"] = content
    commands = [c if isinstance(c, str) else " ".join(map(str, c)) for c in document.get("runcmd") or []]
    if commands:
        found[f"{name}:runcmd"] = "\n".join(commands)
    return found


def without_quoted_data(line: str) -> str:
    """`line` with single-quoted text and double-quoted text that runs nothing ($(...) or backquotes) blanked."""
    out, i = [], 0
    while i < len(line):
        quote = line[i]
        if quote not in "'\"":
            out.append(quote)
            i += 1
            continue
        j = i + 1
        while j < len(line) and line[j] != quote:
            j += 2 if quote == '"' and line[j] == "\\" else 1
        body = line[i + 1 : j]
        runs = quote == '"' and ("$(" in body or "`" in body)
        out.append(line[i : j + 1] if runs else quote * 2)
        i = j + 1
    return "".join(out)


def code_of(script: str) -> str:
    """The script without comment lines, heredoc bodies and quoted text without expansions (data, not calls)."""
    lines, out, end = script.splitlines(), [], None
    for line in lines:
        if end is not None:
            if line.strip() == end:
                end = None
            continue
        heredoc = re.search(r"<<-?\s*'?\"?([A-Za-z_]+)'?\"?", line)
        if heredoc:
            end = heredoc.group(1)
        if not line.lstrip().startswith("#"):
            out.append(without_quoted_data(line))
    return "\n".join(out)


@pytest.fixture(scope="module")
def all_scripts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    return {
        case: {
            k: v
            for name, text in rendered(stack, tmp_path_factory.mktemp(stack), overrides).items()
            for k, v in scripts_of(name, text).items()
        }
        for case, (stack, overrides) in RENDERS.items()
    }


def test_the_boot_scripts_are_found(all_scripts: dict[str, dict[str, str]]) -> None:
    for stack in ("aws-training", "azure-training", "gcp-training"):
        assert any("head" in name for name in all_scripts[stack]), f"{stack}: no head script read"
    # The job Prolog and Epilog of each GCP fabric (TCPXO on the example's A3 Mega, gIB on A3 Ultra and A4).
    for case, scripts in all_scripts.items():
        if case.startswith("gcp-training"):
            assert any(n.endswith(":/usr/local/sbin/accelstack-slurm-prolog") for n in scripts), f"{case}: no prolog"
            assert any(n.endswith(":/usr/local/sbin/accelstack-slurm-epilog") for n in scripts), f"{case}: no epilog"


def test_every_function_a_script_calls_is_defined_in_it(all_scripts: dict[str, dict[str, str]]) -> None:
    known = {f for scripts in all_scripts.values() for s in scripts.values() for f in DEFINITION.findall(s)}
    assert {"log", "install_munge_key"} <= known, "the function table is read"
    missing = []
    for stack, scripts in all_scripts.items():
        for name, script in scripts.items():
            code = code_of(script)
            defined = set(DEFINITION.findall(script))
            for function in sorted(known - defined):
                if re.search(rf"(?<![\w.-]){function}(?![\w-])", code):
                    missing.append(f"{stack} {name}: calls {function}, defined elsewhere only")
    assert missing == []
