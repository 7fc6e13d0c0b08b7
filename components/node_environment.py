"""What training jobs on a node read, with or without a scheduler (cloud-neutral, pure).

One file, `/etc/accelstack/training.env` (KEY=value), exported to login shells by a profile.d
script and, under Slurm, to every task by the TaskProlog: the planner's checkpoint interval, where
checkpoints go, and the stack's name.
"""

from __future__ import annotations

import shlex
from typing import Any

import yaml

from accelstack.components.node_syntax import environment_line
from accelstack.spec.models import TrainingStack

NODE_ENVIRONMENT_FILE = "/etc/accelstack/training.env"
# A checkpoint is a directory under the checkpoint directory; the job writes this file in it last, when every
# other file is complete. Only marked directories are exported to the checkpoint store (the Slurm copiers'
# export script); jobs read the name from ACCELSTACK_CHECKPOINT_MARKER.
CHECKPOINT_MARKER = "COMPLETE"
# Where the export script records what it exported (a hidden directory beside the checkpoints, on the same file
# system, so a replaced head does not export a reused name again).
CHECKPOINT_EXPORTED_DIR = ".accelstack-exported"
NODE_ENVIRONMENT_PROFILE = "/etc/profile.d/accelstack-training.sh"

# libyaml's emitter where PyYAML was built with it (its wheels are): the pure-Python one took ~0.1 s of a
# training preview for the same bytes (the golden exports pin them).
_BaseDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _LiteralBlockDumper(_BaseDumper):  # type: ignore[valid-type,misc]
    """Multi-line strings (the files a node writes) as YAML literal blocks: readable in the rendered output."""


def _literal_block(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)


_LiteralBlockDumper.add_representer(str, _literal_block)


def cloud_config(doc: dict[str, Any], *, literal_blocks: bool = False, comment: str = "") -> str:
    """A `#cloud-config` document, keys in the order given; `comment` (the code's own text, never a value) as
    comment lines under the header, for whoever reads the rendered file."""
    dumper = _LiteralBlockDumper if literal_blocks else _BaseDumper
    notes = "".join(f"# {line}".rstrip() + "\n" for line in comment.splitlines())
    return "#cloud-config\n" + notes + yaml.dump(doc, Dumper=dumper, sort_keys=False, width=1000)


def node_environment(spec: TrainingStack, interval_seconds: int) -> dict[str, str]:
    environment = {"ACCELSTACK_CHECKPOINT_INTERVAL_SECONDS": str(int(interval_seconds))}
    checkpoints = spec.training.storage.checkpoints
    if checkpoints is not None:
        environment["ACCELSTACK_CHECKPOINT_DIR"] = checkpoints.path
        environment["ACCELSTACK_CHECKPOINT_URI"] = checkpoints.uri
        environment["ACCELSTACK_CHECKPOINT_MARKER"] = CHECKPOINT_MARKER
    environment["ACCELSTACK_STACK"] = spec.stack
    return environment


def environment_file(environment: dict[str, str]) -> str:
    """KEY=value lines: a systemd EnvironmentFile, `set -a; . FILE`, and the TaskProlog's input."""
    return "".join(environment_line(key, value) for key, value in environment.items())


def environment_profile(env_file: str = NODE_ENVIRONMENT_FILE) -> str:
    """profile.d: login shells (and so `sbatch`'s default `--export=ALL`) carry the environment."""
    return f"set -a\n. {env_file}\nset +a\n"


def environment_files(environment: dict[str, str]) -> list[dict[str, Any]]:
    """cloud-init write_files entries: the environment file and a profile.d script exporting it."""
    return [
        {"path": NODE_ENVIRONMENT_FILE, "permissions": "0644", "content": environment_file(environment)},
        {"path": NODE_ENVIRONMENT_PROFILE, "permissions": "0644", "content": environment_profile()},
    ]


def environment_cloud_config(environment: dict[str, str]) -> str:
    """Cloud-init for nodes without a scheduler (or whose scheduler writes none): only the jobs' environment."""
    return cloud_config({"write_files": environment_files(environment)})


def environment_script(
    environment: dict[str, str],
    env_file: str = NODE_ENVIRONMENT_FILE,
    profile: str = NODE_ENVIRONMENT_PROFILE,
) -> str:
    """A bash startup script writing the same two files, for nodes that run a startup script instead of
    cloud-init (Cluster Director's node sets). Idempotent: it runs at every boot."""
    lines = ["#!/bin/bash", "set -euo pipefail", "umask 022"]
    for path, content in ((env_file, environment_file(environment)), (profile, environment_profile(env_file))):
        lines += [
            f"mkdir -p {shlex.quote(path.rsplit('/', 1)[0])}",
            f"printf %s {shlex.quote(content)} > {shlex.quote(path)}",
        ]
    return "\n".join(lines) + "\n"
