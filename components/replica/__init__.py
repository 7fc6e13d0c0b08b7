"""What runs on a serving replica, whatever the cloud: the admission-queue worker (shipped in user data)."""

from __future__ import annotations

import base64
from importlib import resources


def worker_files(client_package: str, client_module: str) -> dict[str, str]:
    """File name on the replica -> base64 of its source (cloud-init write_files, encoding b64): the neutral
    queue worker and the cloud's queue client (`<client_package>.<client_module>`)."""
    sources = {
        "queue_worker.py": resources.files("accelstack.components.replica").joinpath("queue_worker.py"),
        f"{client_module}.py": resources.files(client_package).joinpath(f"{client_module}.py"),
    }
    return {name: base64.b64encode(path.read_bytes()).decode() for name, path in sources.items()}
