"""Dependencies point one way: spec -> planner -> components -> program -> policies -> engine/CLI.

Every import in the spec and planner packages, including ones inside functions, is read with `ast`,
so a lazy upward import fails here as surely as a top-level one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PULUMI = ("pulumi", "pulumi_aws", "pulumi_policy", "pulumi_random")
ABOVE_PLANNER = (
    "accelstack.components",
    "accelstack.policies",
    "accelstack.engine",
    "accelstack.commands",
    "accelstack.cli",
    *PULUMI,
)
FORBIDDEN = {
    "accelstack/spec": ("accelstack.planner", *ABOVE_PLANNER),
    "accelstack/planner": ABOVE_PLANNER,
}


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, root: Path) -> list[tuple[int, list[str]]]:
    """(line, absolute names) for every import statement; `from a import b` names `a` and `a.b`, since
    `b` may be a submodule (`from accelstack import planner`)."""
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.append((node.lineno, [alias.name for alias in node.names]))
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.append((node.lineno, [module, *(f"{module}.{alias.name}" for alias in node.names)]))
    return found


def violations(layer: str, root: Path = ROOT) -> list[str]:
    """One line per import statement that names a module above `layer`."""
    forbidden = FORBIDDEN[layer]
    bad = []
    for path in sorted((root / layer).rglob("*.py")):
        for line, names in imported_modules(path, root):
            above = [n for n in names if any(n == f or n.startswith(f + ".") for f in forbidden)]
            if above:
                bad.append(f"{path.relative_to(root)}:{line} imports {above[0]}")
    return bad


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_nothing_above_it(layer):
    assert violations(layer) == []


def test_the_checker_sees_lazy_relative_and_from_imports(tmp_path):
    """The layering test must be able to fail: plant each kind of upward import in a fake spec package."""
    spec = tmp_path / "accelstack" / "spec"
    spec.mkdir(parents=True)
    (spec / "__init__.py").write_text("")
    (spec / "lazy.py").write_text("def f():\n    from accelstack.planner.serving import fits\n")
    (spec / "relative.py").write_text("from ..planner import rules\n")
    (spec / "parent.py").write_text("from accelstack import planner\n")
    (spec / "program.py").write_text("import pulumi_aws as aws\n")
    (spec / "fine.py").write_text("from accelstack.spec.models import StackSpec\nimport planner_notes\n")
    assert violations("accelstack/spec", tmp_path) == [
        "accelstack/spec/lazy.py:2 imports accelstack.planner.serving",
        "accelstack/spec/parent.py:1 imports accelstack.planner",
        "accelstack/spec/program.py:1 imports pulumi_aws",
        "accelstack/spec/relative.py:1 imports accelstack.planner",
    ]
