"""A built wheel is all a user's project needs: installed into a fresh virtualenv (with no access to this checkout),
`accelstack init` writes a project, and `validate` and `preview` run its stack there with the policy packs, under
the user's project name. The wheel is built with pip (its build backend from the package index, as any
`pip install` of an sdist fetches it); without an index the test is skipped, saying so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from accelstack.examples import SHIPPED_EXAMPLES

pytestmark = pytest.mark.integration  # pip builds and installs into a fresh virtualenv (~45 s)

REPO = Path(__file__).resolve().parents[1]
NO_INDEX = ("No matching distribution", "Could not find a version", "Failed to establish a new connection")


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    built = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)], out, env)
    if built.returncode != 0 and any(marker in built.stderr for marker in NO_INDEX):
        pytest.skip(f"pip cannot fetch the build backend (setuptools) here: {built.stderr.strip()[-300:]}")
    assert built.returncode == 0, built.stderr
    (path,) = out.glob("accelstack-*.whl")
    return path


def test_the_wheel_carries_the_program_the_packs_and_the_examples(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"accelstack/program.py", "accelstack/commands/init.py"} <= names
    for pack in ("separation", "guardrails"):
        assert {f"accelstack/policies/{pack}/{f}" for f in ("__main__.py", "PulumiPolicy.yaml")} <= names
    assert {n for n in names if n.startswith("accelstack/stacks/")} == {
        f"accelstack/stacks/Pulumi.{name}.yaml" for name in SHIPPED_EXAMPLES
    }
    assert not {n for n in names if n.split("/")[0] in ("components", "policies", "tests", "stacks")}


def test_a_project_of_the_users_own_previews_with_the_installed_wheel(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    assert run([sys.executable, "-m", "venv", str(venv)], tmp_path, env).returncode == 0
    python = venv / "bin" / "python"
    # The dependencies (pulumi, the provider SDKs ...) come from this environment's site-packages, after the new
    # venv's own: a path line in a .pth file adds the folder only, so this environment's editable accelstack (an
    # import hook in its own .pth file) stays out, and `import accelstack` can only find the wheel.
    site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path, env)
    (Path(site.stdout.strip()) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    installed = run([str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)], tmp_path, env)
    assert installed.returncode == 0, installed.stderr
    where = run([str(python), "-c", "import accelstack; print(accelstack.__file__)"], tmp_path, env)
    assert where.stdout.strip().startswith(str(venv)), where.stdout

    accelstack = str(venv / "bin" / "accelstack")
    created = run([accelstack, "init", "acme-ml", "--cloud", "aws", "--workload", "serving"], tmp_path, env)
    assert created.returncode == 0, created.stderr
    project = tmp_path / "acme-ml"
    validated = run([accelstack, "validate", "aws-serving"], project, env)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    previewed = run([accelstack, "preview", "aws-serving", "--no-tree", "--json", "export.json"], project, env)
    assert previewed.returncode == 0, previewed.stdout + previewed.stderr
    assert "policies: " in previewed.stdout and "0 violations" in previewed.stdout
    resources = json.loads((project / "export.json").read_text())["deployment"]["resources"]
    assert resources and all(r["urn"].startswith("urn:pulumi:aws-serving::acme-ml::") for r in resources)
