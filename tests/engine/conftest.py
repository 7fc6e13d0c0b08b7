from pathlib import Path

import pytest

FIXTURE_PROJECT = Path(__file__).parent / "fixture_project"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def fixture_project() -> Path:
    return FIXTURE_PROJECT
