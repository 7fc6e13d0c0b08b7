"""`accelstack scaffold cloud NAME`: the skeleton it writes imports, registers and passes the registry's structural
checks; a name or target it cannot use is refused with exit 2 and nothing written.

The generated packages are read from the scaffold's own target (tmp_path): its folders are added to the search
path of `accelstack.clouds`, `accelstack.components` and `accelstack.policies` for the test, as an installed cloud's would be.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pulumi
import pytest
from typer.testing import CliRunner

import accelstack.clouds
import accelstack.components
import accelstack.policies
from accelstack.cli import app
from accelstack.clouds import registry
from accelstack.clouds.base import Cloud
from accelstack.components.base import CloudStack
from accelstack.policies.vendor import Vendor
from accelstack.spec import parse_spec, spec_warnings
from tests.clouds import test_descriptions as structural

REPO = Path(__file__).resolve().parents[2]
NAME = "zephyr"
# A training stack on the placeholder values the scaffold writes (its catalog's machine type, region and tier).
PLACEHOLDER_STACK = {
    "cloud": NAME,
    "workload": "training",
    "account": {"id": "placeholder-account", "region": "placeholder-region-1"},
    "separation": {"trainingAccounts": ["placeholder-account"], "servingAccounts": ["placeholder-serving"]},
    "training": {
        "nodes": {"instanceType": "placeholder-gpu-8x", "count": 1},
        "storage": {
            # An existing bucket: the placeholder tier imports only when asked (its scaffolded default), and a bucket
            # the stack created would be imported empty (validate warns).
            "datasets": {"uri": "placeholder://datasets", "create": False, "sizeGiB": 100},
            "lustre": {},
            "checkpoints": {"uri": "placeholder://checkpoints"},
        },
        "scheduler": {"kind": "slurm", "partitions": [{"name": "gpu", "default": True}]},
    },
}


def scaffold(runner: CliRunner, *args: str):
    return runner.invoke(app, ["scaffold", "cloud", *args])


def tree(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


@pytest.fixture
def generated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """`scaffold cloud zephyr --out tmp_path`, with its three packages importable under their real names."""
    result = scaffold(CliRunner(), NAME, "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    for package, folder in (
        (accelstack.clouds, "accelstack/clouds"),
        (accelstack.components, "components"),
        (accelstack.policies, "policies"),
    ):
        monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path / folder)])
    yield tmp_path
    for module in [m for m in sys.modules if NAME in m.split(".")]:
        del sys.modules[module]


def description(root: Path) -> ModuleType:
    """The generated description module (`root` is where the fixture put it on the search path)."""
    return importlib.import_module(f"accelstack.clouds.{NAME}")


def test_the_skeleton_is_every_file_of_the_checklist_and_the_next_steps_are_printed(tmp_path: Path) -> None:
    result = scaffold(CliRunner(), NAME, "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert tree(tmp_path / "accelstack" / "clouds" / NAME) == [
        "__init__.py", "accounts.py", "catalog.py", "prices.py", "replace_rows.py", "rules.py",
    ]  # fmt: skip
    assert tree(tmp_path / "components" / NAME) == [
        "__init__.py", "images.py", "mocks.py", "node_platform.py", "serving.py", "training.py",
    ]  # fmt: skip
    assert tree(tmp_path / "policies" / NAME) == ["__init__.py"]
    assert f'{NAME} = "accelstack.clouds.{NAME}:ZEPHYR"' in result.stdout
    assert f'{NAME} = "accelstack.policies.{NAME}:VENDOR"' in result.stdout
    # Where real values come from is said beside each placeholder.
    catalog = (tmp_path / "accelstack" / "clouds" / NAME / "catalog.py").read_text()
    assert 'PLACEHOLDER_MACHINE_TYPE = "placeholder-gpu-8x"' in catalog
    assert "TODO: the regions that offer the machine types above, from the cloud's region list" in catalog


def test_the_description_is_a_cloud_whose_placeholder_stack_validates_with_one_warning(generated: Path) -> None:
    """The placeholder stack parses (no error); its only warning is that the cloud is not deployable yet."""
    cloud = description(generated).ZEPHYR
    assert isinstance(cloud, Cloud) and cloud.name == NAME and not cloud.deployable
    with registry.registered(cloud):
        spec = parse_spec(PLACEHOLDER_STACK, f"{NAME}-training")
        warnings = spec_warnings(spec)
    assert spec.training is not None and spec.training.storage.lustre is not None
    assert spec.training.storage.lustre.tier == "placeholder-tier"
    assert [(w.path, w.message.split(":")[0]) for w in warnings] == [
        ("cloud", "'zephyr' is described (catalog, prices) but not deployable yet")
    ]


def test_the_description_passes_the_registrys_structural_checks(generated: Path) -> None:
    cloud = description(generated).ZEPHYR
    with registry.registered(cloud):
        structural.test_description_names_agree(NAME)
        structural.test_instance_rows_are_well_formed(NAME)
        structural.test_features_match_the_catalog(NAME)
        structural.test_regions_are_listed_once_and_hold_the_price_region(NAME)
        structural.test_every_priced_instance_is_in_the_catalog(NAME)
        structural.test_every_parallel_fs_tier_is_priced_or_said_not_priced(NAME)
        structural.test_parallel_fs_steps_accept_their_bounds_and_reject_between_steps(NAME)
        structural.test_prices_are_positive_and_share_aws_keys(NAME)
        structural.test_limits_are_positive_counts(NAME)


def test_the_components_mocks_and_vendor_are_the_real_types(generated: Path) -> None:
    from accelstack import testing

    cloud = description(generated).ZEPHYR
    components = importlib.import_module(cloud.components)
    assert issubclass(components.CLOUD_STACK, CloudStack)
    with pytest.raises(NotImplementedError, match=r"zephyr training: build TrainingCluster in components/zephyr/"):
        components.CLOUD_STACK.build_training(object.__new__(components.CLOUD_STACK), None)
    mocks = importlib.import_module(f"{cloud.components}.mocks").mocks({"id": "placeholder-account"})
    assert isinstance(mocks, pulumi.runtime.Mocks)
    with registry.registered(cloud):
        assert isinstance(testing.mocks(NAME, account={"id": "placeholder-account"}), pulumi.runtime.Mocks)
    platform = importlib.import_module(f"{cloud.components}.node_platform").node_platform(None)
    with pytest.raises(NotImplementedError, match=r"node_platform\.py"):
        _ = platform.metadata_functions
    assert isinstance(importlib.import_module(f"accelstack.policies.{NAME}").VENDOR, Vendor)


def test_the_training_cluster_is_the_recipe_over_parts_that_say_what_to_do(generated: Path) -> None:
    from accelstack.components.recipes.parts import TrainingParts
    from accelstack.components.recipes.training import TrainingRecipe

    cloud = description(generated).ZEPHYR
    training = importlib.import_module(f"{cloud.components}.training")
    assert issubclass(training.TrainingCluster, TrainingRecipe) and training.TrainingCluster.cloud == NAME
    parts_class = training.TrainingCluster.parts_class
    assert issubclass(parts_class, TrainingParts) and not parts_class.__abstractmethods__
    parts = parts_class(None)
    with pytest.raises(NotImplementedError, match=r"zephyr training part: network: .*components/zephyr/training\.py"):
        parts.network()


def test_the_serving_service_is_the_recipe_over_parts_that_say_what_to_do(generated: Path) -> None:
    from accelstack.components.recipes.serving import ServingParts, ServingRecipe

    cloud = description(generated).ZEPHYR
    serving = importlib.import_module(f"{cloud.components}.serving")
    assert issubclass(serving.ServingService, ServingRecipe) and serving.ServingService.cloud == NAME
    parts_class = serving.ServingService.parts_class
    assert issubclass(parts_class, ServingParts) and not parts_class.__abstractmethods__
    with pytest.raises(NotImplementedError, match=r"zephyr serving part: network: .*components/zephyr/serving\.py"):
        parts_class(None).network()


def test_the_generated_files_compile_and_pass_ruff(generated: Path) -> None:
    files = sorted(generated.rglob("*.py"))
    for path in files:
        compile(path.read_text(), str(path), "exec")
    config = str(REPO / "pyproject.toml")
    for command in (["check"], ["format", "--check"]):
        linted = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--config", config, *map(str, files)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert linted.returncode == 0, linted.stdout + linted.stderr


def test_the_default_target_is_the_project_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: accelstack\n")
    (tmp_path / "stacks").mkdir()
    monkeypatch.chdir(tmp_path / "stacks")
    assert scaffold(CliRunner(), NAME).exit_code == 0
    assert (tmp_path / "policies" / NAME / "__init__.py").is_file()


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("Zephyr", "NAME 'Zephyr' is not a lowercase Python identifier"),
        ("my-cloud", "NAME 'my-cloud' is not a lowercase Python identifier"),
        ("9cloud", "NAME '9cloud' is not a lowercase Python identifier"),
        ("class", "NAME 'class' is a Python keyword"),
        ("aws", f"NAME 'aws' is a registered cloud (registered: {', '.join(registry.names())})"),
    ],
)
def test_a_name_it_cannot_use_is_refused(tmp_path: Path, name: str, said: str) -> None:
    result = scaffold(CliRunner(), name, "--out", str(tmp_path))
    assert result.exit_code == 2 and said in result.stderr
    assert "Traceback" not in result.output
    assert tree(tmp_path) == []


@pytest.mark.parametrize(
    ("folder", "file", "said"),
    [
        ("components/zephyr", None, "components/zephyr already exists"),
        ("policies", "zephyr.py", "policies/zephyr.py already exists"),
        ("accelstack/clouds/zephyr", "catalog.py", "accelstack/clouds/zephyr already exists"),
    ],
)
def test_an_existing_target_is_refused_and_nothing_written(
    tmp_path: Path, folder: str, file: str | None, said: str
) -> None:
    (tmp_path / folder).mkdir(parents=True)
    if file is not None:
        (tmp_path / folder / file).write_text("mine\n")
    before = tree(tmp_path)
    result = scaffold(CliRunner(), NAME, "--out", str(tmp_path))
    assert result.exit_code == 2 and f"NAME 'zephyr': {said}; the scaffold overwrites nothing" in result.stderr
    assert tree(tmp_path) == before


def test_a_symlinked_target_is_refused_and_nothing_written(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    result = scaffold(CliRunner(), NAME, "--out", str(tmp_path / "link"))
    assert result.exit_code == 2 and "is a symlink" in result.stderr and "--out" in result.stderr
    # A folder on the way that points elsewhere is refused too: the files would land outside the target.
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "policies").symlink_to(elsewhere)
    result = scaffold(CliRunner(), NAME, "--out", str(project))
    assert result.exit_code == 2 and "policies is a symlink" in result.stderr
    assert tree(real) == [] and tree(elsewhere) == [] and tree(project) == ["policies"]


def test_a_missing_target_is_refused(tmp_path: Path) -> None:
    result = scaffold(CliRunner(), NAME, "--out", str(tmp_path / "absent"))
    assert result.exit_code == 2 and "no such directory" in result.stderr
    assert tree(tmp_path) == []
