"""The repository's tests run on its shipped examples (accelstack/examples.py), never on whatever else is in stacks/:
a user's own `stacks/Pulumi.<env>.yaml` needs no golden export, day-2 table or config digest, while the commands
(`preview --all`, `validate --all`, the PR matrix) still cover every stack file."""

from __future__ import annotations

import re
from pathlib import Path

from accelstack.commands.common import stack_files
from accelstack.examples import SHIPPED_EXAMPLES, STARTER, example_files

REPO = Path(__file__).resolve().parents[1]
# Globbing stacks/ for stack files picks up a user's own environments; only the PR matrix test must (it checks
# that the gate previews every stack file).
STACK_GLOB = re.compile(r"""glob\(f?["']Pulumi\.""")
MAY_GLOB = {"tests/cli/test_preview_matrix.py"}


def test_every_shipped_example_is_in_stacks_and_listed_once() -> None:
    assert len(set(SHIPPED_EXAMPLES)) == len(SHIPPED_EXAMPLES) and list(SHIPPED_EXAMPLES) == sorted(SHIPPED_EXAMPLES)
    assert set(example_files(REPO / "stacks")) <= set(stack_files(REPO))
    assert set(STARTER.values()) <= set(SHIPPED_EXAMPLES)


def test_no_test_iterates_over_the_stack_files_it_finds() -> None:
    offenders = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if STACK_GLOB.search(line) and relative not in MAY_GLOB and "tmp_path" not in line:
                offenders.append(f"{relative}:{number}: {line.strip()} (iterate accelstack.examples.example_files)")
    assert offenders == []
