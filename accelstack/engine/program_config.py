"""The config map a Pulumi program reads (`pulumi.Config`), from a stack file's accelstack keys.

Apart from `accelstack.engine.capture` (which imports pulumi): `accelstack preview` builds its worker's request
with this before it imports pulumi, so that the worker starts first and the CLI validates while it runs."""

from __future__ import annotations

import json
from typing import Any


def config_for_pulumi(raw: dict[str, Any], namespace: str = "accelstack") -> dict[str, str]:
    """Structured config values travel to programs as JSON strings, plain strings as they are; a key whose value
    is None (an optional top-level key a dumped spec carries unset, e.g. `landing`) is left out, as unset."""
    return {
        f"{namespace}:{key}": value if isinstance(value, str) else json.dumps(value)
        for key, value in raw.items()
        if value is not None
    }
