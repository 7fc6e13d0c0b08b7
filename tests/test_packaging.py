"""The installed distribution owns only `accelstack`: the repository's `components/` and `policies/` folders
install as `accelstack.components` and `accelstack.policies`, so a user's own packages of those names are safe."""

from __future__ import annotations

import fnmatch
import os
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The repository keeps its top-level folders; these links put them where the installed names say they are,
# so setuptools, mypy and a checkout all see one layout (no package-dir mapping that only setuptools knows).
LINKED = {"components": "accelstack/components", "policies": "accelstack/policies", "stacks": "accelstack/stacks"}


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _package_folders() -> dict[str, Path]:
    found = {}
    for folder, _dirs, files in os.walk(ROOT / "accelstack", followlinks=True):
        if "__init__.py" in files:
            path = Path(folder)
            found[".".join(path.relative_to(ROOT).parts)] = path
    return found


def test_the_top_level_folders_are_linked_under_accelstack():
    for folder, link in LINKED.items():
        assert (ROOT / link).is_symlink(), link
        assert (ROOT / link).resolve() == ROOT / folder


def test_every_package_folder_is_installed():
    assert set(_setuptools()["packages"]) == set(_package_folders())


def test_every_data_file_is_installed():
    """A template missing from the wheel would only show on a user's first `up` (the Slurm scripts are .j2)."""
    patterns = _setuptools()["package-data"]["*"]
    missing = []
    for path in _package_folders().values():
        for data in path.rglob("*"):
            if data.is_dir() or data.suffix in {".py", ".pyc"} or "__pycache__" in data.parts:
                continue
            if data.name.startswith(".") or ((data.parent / "__init__.py").exists() and data.parent != path):
                continue
            relative = data.relative_to(path).as_posix()
            if not any(fnmatch.fnmatch(relative, pattern) for pattern in patterns):
                missing.append(str(data.relative_to(ROOT)))
    assert missing == []


def test_no_generic_top_level_name_is_installed():
    setuptools = _setuptools()
    assert {name.split(".")[0] for name in setuptools["packages"]} == {"accelstack"}
    assert "package-dir" not in setuptools


def test_the_code_imports_the_installed_names():
    """`import components...` would work only from a checkout (and load a second copy of every module)."""
    offenders = []
    for path in sorted(ROOT.glob("**/*.py")):
        if ".venv" in path.parts or (path.relative_to(ROOT).parts[0] == "tests" and path.name == "test_packaging.py"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            stripped = line.strip()
            if stripped.startswith(("from components", "import components", "from policies", "import policies")):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {stripped}")
    assert offenders == []


def test_the_wheel_carries_exactly_the_shipped_examples():
    """`accelstack init` copies them; a stack file of a user's own in stacks/ must not ship in a wheel of their fork."""
    from accelstack.examples import SHIPPED_EXAMPLES, example_files

    listed = _setuptools()["package-data"]["accelstack"]
    assert sorted(listed) == sorted(f"stacks/Pulumi.{name}.yaml" for name in SHIPPED_EXAMPLES)
    assert all(path.is_file() for path in example_files())
