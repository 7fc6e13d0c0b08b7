"""The house rule that keeps modules readable: no production file over 600 lines (code, templates, scripts).
Merges of parallel work pushed files past it without anyone noticing; this fails instead."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PRODUCTION = ("accelstack", "components", "policies")
LIMIT = 600


def test_no_production_file_is_over_600_lines() -> None:
    too_long = {}
    for top in PRODUCTION:
        for path in (REPO / top).rglob("*"):
            if path.suffix not in {".py", ".j2", ".sh"} or "__pycache__" in path.parts or not path.is_file():
                continue
            lines = len(path.read_text().splitlines())
            if lines > LIMIT:
                too_long[str(path.relative_to(REPO))] = lines
    assert not too_long, f"over {LIMIT} lines: {too_long}"
