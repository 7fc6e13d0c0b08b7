"""The first preview worker, started as `accelstack preview` begins, before its request is known.

The worker reads its request after importing what every preview imports (pulumi, the capture, the program's
modules: accelstack.engine.worker.main), so a worker started this early does that while the CLI imports its
commands and reads the stack file; the first WorkerRun takes it and sends the request (`make bench`: about a
sixth of the floor of a training stack, the CLI's start before it could build the request). This module imports
nothing heavy: accelstack.cli starts the spare before it imports the command.
"""

from __future__ import annotations

import atexit
import subprocess
import sys

_spare: subprocess.Popen[str] | None = None


def worker_process(python: str | None = None) -> subprocess.Popen[str]:
    """A worker waiting for its request on stdin; its result comes on stdout, what the program printed on stderr."""
    return subprocess.Popen(
        [python or sys.executable, "-m", "accelstack.engine.worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def start_spare() -> None:
    """Start the spare worker (once); stopped when this process exits if no preview took it."""
    global _spare
    if _spare is None:
        _spare = worker_process()
        atexit.register(stop_spare)


def take_spare() -> subprocess.Popen[str] | None:
    """The spare worker, for the first preview that asks (then None until another is started)."""
    global _spare
    spare, _spare = _spare, None
    return spare


def stop_spare() -> None:
    """A spare no preview took (`preview --help`, a config that did not validate): stopped, not left waiting."""
    spare = take_spare()
    if spare is not None:
        spare.kill()
        spare.communicate()
