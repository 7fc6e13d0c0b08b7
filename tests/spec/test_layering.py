"""Dependencies point one way: spec -> planner -> components -> program -> policies -> engine/CLI.

Every import in the spec, planner and simulator packages, including ones inside functions, is read
with `ast`, so a lazy upward import fails here as surely as a top-level one.

The planner and the simulator are pure: they are handed a cloud's `Catalog` and a price book and may
import only the neutral types those are written in (`accelstack.clouds.base`), never a cloud's own
description (`accelstack.clouds.aws`, ...) nor the registry that finds one (`accelstack.clouds.registry`,
re-exported by `accelstack.clouds`). Their callers look the stack's cloud up: the CLI commands
(`accelstack simulate` included), the components, and the planner's spec rules in
`accelstack/planner_rules.py`, which may ask the registry but name no cloud either.
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
# The registry and every cloud's description: `accelstack.clouds` and everything under it ...
CLOUDS = ("accelstack.clouds",)
# ... but the neutral types a cloud is described in (Catalog, InstanceType, ParallelFsTier, Prices).
NEUTRAL_CLOUD_TYPES = ("accelstack.clouds.base",)
REGISTRY = ("accelstack.clouds.registry",)
FORBIDDEN = {
    "accelstack/spec": ("accelstack.planner", *ABOVE_PLANNER),
    "accelstack/planner": (*ABOVE_PLANNER, *CLOUDS),
    "accelstack/simulate": (*ABOVE_PLANNER, *CLOUDS),
    "accelstack/planner_rules.py": (*ABOVE_PLANNER, *CLOUDS),
}
# Imports a layer may make although they fall under one of its forbidden prefixes.
ALLOWED = {
    "accelstack/planner": NEUTRAL_CLOUD_TYPES,
    "accelstack/simulate": NEUTRAL_CLOUD_TYPES,
    "accelstack/planner_rules.py": (*NEUTRAL_CLOUD_TYPES, *REGISTRY),
}


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, root: Path) -> list[tuple[int, list[str], list[str]]]:
    """(line, absolute names, what they import) for every import statement. `import a.b` names and imports
    `a.b`; `from a import b` names `a` and then `a.b`, and imports `a.b`, since `b` may be a submodule
    (`from accelstack import planner`) or an attribute (`from accelstack.clouds import get`)."""
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
            found.append((node.lineno, modules, modules))
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            imported = [f"{module}.{alias.name}" for alias in node.names]
            found.append((node.lineno, [module, *imported], imported))
    return found


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def violations(layer: str, root: Path = ROOT) -> list[str]:
    """One line per import statement that names a module above `layer` (or a cloud it must be handed)."""
    forbidden, allowed = FORBIDDEN[layer], ALLOWED.get(layer, ())
    bad = []
    target = root / layer
    paths = [target] if target.suffix == ".py" else sorted(target.rglob("*.py"))
    for path in paths:
        for line, names, imported in imported_modules(path, root):
            # Judged by what is imported (`from accelstack.clouds import base` is the neutral types, `from
            # accelstack.clouds import get` the registry), reported by the first refused name.
            if not any(_under(n, forbidden) and not _under(n, allowed) for n in imported):
                continue
            above = [n for n in names if _under(n, forbidden) and not _under(n, allowed)]
            if above:
                bad.append(f"{path.relative_to(root)}:{line} imports {above[0]}")
    return bad


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_nothing_above_it(layer):
    assert (ROOT / layer).exists()
    assert violations(layer) == []


def test_the_planner_and_simulator_name_no_cloud_and_no_registry(tmp_path):
    """Plant each way of reaching a cloud's tables in fake planner and simulate packages: all refused,
    the neutral types allowed. The planner's spec rules may use the registry, still no cloud."""
    for layer in ("planner", "simulate"):
        package = tmp_path / "accelstack" / layer
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "catalog.py").write_text("from accelstack.clouds.aws import CATALOG\n")
        (package / "prices.py").write_text("def f():\n    import accelstack.clouds.aws.prices\n")
        (package / "lookup.py").write_text("from accelstack.clouds.registry import get\n")
        (package / "package.py").write_text("from accelstack.clouds import get\n")
        (package / "fine.py").write_text(
            "from accelstack.clouds.base import Catalog, Prices\nfrom accelstack.clouds import base\n"
        )
    (tmp_path / "accelstack" / "planner_rules.py").write_text(
        "from accelstack.clouds import registry\n"
        "from accelstack.clouds.registry import get\n"
        "from accelstack.clouds.base import Cloud\n"
        "from accelstack.clouds.aws import catalog\n"
        "from accelstack.clouds import aws\n"
    )
    for layer in ("planner", "simulate"):
        assert violations(f"accelstack/{layer}", tmp_path) == [
            f"accelstack/{layer}/catalog.py:1 imports accelstack.clouds.aws",
            f"accelstack/{layer}/lookup.py:1 imports accelstack.clouds.registry",
            f"accelstack/{layer}/package.py:1 imports accelstack.clouds",
            f"accelstack/{layer}/prices.py:2 imports accelstack.clouds.aws.prices",
        ]
    assert violations("accelstack/planner_rules.py", tmp_path) == [
        "accelstack/planner_rules.py:4 imports accelstack.clouds.aws",
        "accelstack/planner_rules.py:5 imports accelstack.clouds",
    ]


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
