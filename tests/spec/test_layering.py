"""Dependencies point one way: spec -> planner -> components -> program -> policies -> engine/CLI.

Every import in the spec, planner and simulator packages, including ones inside functions, is read
with `ast`, so a lazy upward import fails here as surely as a top-level one.

The planner and the simulator are pure: they are handed a cloud's `Catalog` and a price book and may
import only the neutral types those are written in (`accelstack.clouds.base`), never a cloud's own
description (`accelstack.clouds.aws`, ...) nor the registry that finds one (`accelstack.clouds.registry`,
re-exported by `accelstack.clouds`). Their callers look the stack's cloud up: the CLI commands
(`accelstack simulate` included), the components, and the planner's spec rules in
`accelstack/planner_rules.py`, which may ask the registry but name no cloud either.

A cloud is a folder that plugs in: only `accelstack/clouds/<cloud>/` and `components/<cloud>/` import
that cloud's SDKs, its description or its components (policy packs name type tokens as strings).
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PULUMI = ("pulumi", "pulumi_aws", "pulumi_policy", "pulumi_random", "pulumiverse_time")
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
NEUTRAL_CLOUD_TYPES = ("accelstack.clouds.base", "accelstack.clouds.serving_terms")  # neutral types, no cloud
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


# --- each cloud's SDK and description stay in the cloud's own folders ---------------------------------

# What only a cloud's own folders may import: its SDKs (Pulumi and client), its description
# (catalog, prices, rules) and its components. `google.protobuf` is Pulumi's wire format, not a GCP SDK.
CLOUD_MODULES: dict[str, tuple[str, ...]] = {
    "aws": ("pulumi_aws", "boto3", "botocore"),
    "azure": ("pulumi_azure_native", "azure"),
    "gcp": ("pulumi_gcp", "google"),
    "oci": ("pulumi_oci", "oci"),
    "vultr": ("ediri_vultr", "pulumi_vultr"),
}
NOT_A_CLOUD_SDK = ("google.protobuf",)
SCANNED = ("accelstack", "components", "policies", "__main__.py")
# components/ and policies/ install as accelstack.components / accelstack.policies (links under accelstack/).
INSTALLED_AS = {"components": "accelstack.components", "policies": "accelstack.policies"}

# Modules that import another cloud's SDK or description today, as "<file> imports <module>" (one entry
# per file and module). Being fixed in parallel (planner, spec validators, Slurm generator, simulator,
# commands: issue 10 item 3). The test fails on a new offender and on an entry that no longer offends,
# so this set only shrinks: delete the entry in the commit that fixes it.
# An entry names a file that still imports a cloud's modules from outside it. The cross-cloud handoff's readers and
# fetch script sit in components/handoff/ for now: each reader belongs in its training cloud's folder, and the fetch
# lines in the serving cloud's node platform (the next move).
KNOWN_OFFENDERS: set[str] = {
    "components/handoff/aws_reader.py imports pulumi_aws",
    "components/handoff/azure_reader.py imports accelstack.components.azure",
    "components/handoff/azure_reader.py imports pulumi_aws",
    "components/handoff/azure_reader.py imports pulumi_azure_native",
    "components/handoff/fetch.py imports accelstack.components.aws",
    "components/handoff/fetch.py imports accelstack.components.azure",
    "components/handoff/fetch.py imports accelstack.components.gcp",
    "components/handoff/gcp_reader.py imports accelstack.clouds.gcp",
    "components/handoff/gcp_reader.py imports pulumi_gcp",
}


def forbidden_for(cloud: str) -> tuple[str, ...]:
    return (*CLOUD_MODULES[cloud], f"accelstack.clouds.{cloud}", f"accelstack.components.{cloud}")


def owned_by(relative: Path, cloud: str) -> bool:
    """The cloud's own folders: accelstack/clouds/<cloud>/ and components/<cloud>/."""
    parts = relative.parts
    return parts[:3] == ("accelstack", "clouds", cloud) or parts[:2] == ("components", cloud)


def scanned_files(root: Path) -> list[Path]:
    """Every .py file under SCANNED, not following links (accelstack/components is components/)."""
    found = []
    for entry in SCANNED:
        path = root / entry
        if path.is_file():
            found.append(path)
            continue
        for directory, subdirectories, files in os.walk(path, followlinks=False):
            subdirectories[:] = sorted(d for d in subdirectories if not (Path(directory) / d).is_symlink())
            found += [Path(directory) / f for f in sorted(files) if f.endswith(".py")]
    return sorted(found)


def installed_imports(path: Path, root: Path) -> list[tuple[int, list[str]]]:
    """`imported_modules`, with a relative import in components/ or policies/ named as installed."""
    found = []
    for line, names, _imported in imported_modules(path, root):
        renamed = []
        for name in names:
            top, _, rest = name.partition(".")
            renamed.append(f"{INSTALLED_AS[top]}.{rest}".rstrip(".") if top in INSTALLED_AS else name)
        found.append((line, renamed))
    return found


def cloud_offenders(root: Path = ROOT) -> set[str]:
    """One "<file> imports <module>" per file and each cloud module it imports from outside that cloud."""
    offenders = set()
    for path in scanned_files(root):
        relative = path.relative_to(root)
        for cloud in CLOUD_MODULES:
            if owned_by(relative, cloud):
                continue
            for _, names in installed_imports(path, root):
                for name in names:
                    if any(name == n or name.startswith(n + ".") for n in NOT_A_CLOUD_SDK):
                        continue
                    hit = next((f for f in forbidden_for(cloud) if name == f or name.startswith(f + ".")), None)
                    if hit:
                        offenders.add(f"{relative} imports {hit}")
    return offenders


def test_no_module_outside_a_clouds_folders_imports_its_sdk_or_description() -> None:
    offenders = cloud_offenders()
    new = sorted(offenders - KNOWN_OFFENDERS)
    fixed = sorted(KNOWN_OFFENDERS - offenders)
    assert new == [], (
        "import the cloud's SDK or description only inside accelstack/clouds/<cloud>/ or components/<cloud>/"
    )
    assert fixed == [], "no longer offends: delete it from KNOWN_OFFENDERS"


def test_every_registered_cloud_has_a_layering_row() -> None:
    from accelstack.clouds import registry

    assert sorted(set(registry.names()) - set(CLOUD_MODULES)) == []


def test_the_cloud_checker_sees_sdk_and_description_imports_outside_the_cloud(tmp_path: Path) -> None:
    """The check must be able to fail: plant each kind of offender in a fake project."""
    files = {
        "accelstack/__init__.py": "",
        "accelstack/planner/__init__.py": "",
        "accelstack/planner/lazy.py": "def f():\n    import boto3\n",
        "accelstack/planner/catalog.py": "from accelstack.clouds.gcp import catalog\n",
        "accelstack/planner/parent.py": "from accelstack.clouds import oci\n",
        "accelstack/engine/wire.py": "from google.protobuf import struct_pb2\n",
        "accelstack/engine/sdk.py": "from google.cloud import storage\n",
        "accelstack/clouds/aws/__init__.py": "import boto3\nfrom accelstack.clouds.aws import catalog\n",
        "accelstack/clouds/aws/azure_too.py": "import pulumi_azure_native\n",
        "components/__init__.py": "from .aws import AwsStack\n",
        "components/aws/network.py": "import pulumi_aws as aws\nfrom ..base import CloudStack\n",
        "components/slurm/nodes.py": "from ..aws.handles import TrainingHandles\n",
        "policies/rules.py": "TOKENS = ('aws:s3/bucket:Bucket',)\nimport ediri_vultr\n",
        "__main__.py": "import pulumi_oci\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "accelstack" / "components").symlink_to(tmp_path / "components")
    assert cloud_offenders(tmp_path) == {
        "__main__.py imports pulumi_oci",
        "accelstack/clouds/aws/azure_too.py imports pulumi_azure_native",
        "accelstack/engine/sdk.py imports google",
        "accelstack/planner/catalog.py imports accelstack.clouds.gcp",
        "accelstack/planner/lazy.py imports boto3",
        "accelstack/planner/parent.py imports accelstack.clouds.oci",
        "components/__init__.py imports accelstack.components.aws",
        "components/slurm/nodes.py imports accelstack.components.aws",
        "policies/rules.py imports ediri_vultr",
    }
