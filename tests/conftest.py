"""Shared test setup (keep small: several areas add fixtures here)."""

import os
import sys
from pathlib import Path

# The program's `__main__.py` does `from components import build_stack`; make the repo's own
# `components` package (not the editable install's namespace shim, nor tests/components) win.
REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# CI replays the same examples every run (a red build names a real regression, not a new draw);
# local runs keep drawing new ones, which is how the fuzzers find bugs.
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
