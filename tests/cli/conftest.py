from pathlib import Path

import pytest
from typer.testing import CliRunner

FIXTURE_PROJECT = Path(__file__).resolve().parents[1] / "engine" / "fixture_project"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def fixture_project() -> Path:
    return FIXTURE_PROJECT


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A throwaway project dir (Pulumi.yaml + stacks/) holding a copy of the fixture's alpha stack."""
    (tmp_path / "Pulumi.yaml").write_text((FIXTURE_PROJECT / "Pulumi.yaml").read_text())
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.alpha.yaml").write_text(
        (FIXTURE_PROJECT / "stacks" / "Pulumi.alpha.yaml").read_text()
    )
    return tmp_path
