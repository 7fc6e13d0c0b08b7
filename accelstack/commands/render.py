"""`accelstack render STACK --out DIR`: every generated node artifact, as it will boot.

Training (Slurm): slurm.conf, gres.conf, cgroup.conf, the head and compute cloud-init documents and
the spot watcher, the way ParallelCluster users read a dry run. Serving: the replica user data (boot
script, systemd units, the queue worker). Values that exist only once the cloud resources do (head
address, Lustre DNS name, the secret holding the munge key, the state volume, the queue URLs) appear
as `${NAME}` placeholders; the deployed documents get them from Pulumi outputs.
"""

from __future__ import annotations

from typing import Annotated

import typer

from accelstack.commands.common import (
    EXIT_CONFIG,
    EXIT_OK,
    CliError,
    ProjectDirOpt,
    SetOpt,
    echo_lines,
    guarded,
    load_specs,
    resolve_stacks,
)
from accelstack.commands.output_files import ParentsOpt, output_directory, write_into

PLACEHOLDER_NOTE = (
    "${HEAD_ADDRESS}, ${LUSTRE_DNS}, ${LUSTRE_MOUNT_NAME}, ${MUNGE_KEY_SECRET}, ${SLURM_CONFIG} and "
    "${STATE_VOLUME} are filled at deploy time from the stack's outputs; the head installs slurm.conf, gres.conf "
    "and cgroup.conf from ${SLURM_CONFIG} (slurm-config.sh), not from its cloud-init"
)
ACCOUNTING_PLACEHOLDER_NOTE = (
    "; ${ACCOUNTING_HOST} (the database's private address) and ${ACCOUNTING_PASSWORD_SECRET} (the secret the head "
    "reads slurmdbd's StoragePass from at boot) too"
)
SERVING_PLACEHOLDER_NOTE = "${REQUEST_QUEUE_URL} and ${RESPONSE_QUEUE_URL} are filled at deploy time from the queues"
SERVING_DEPLOY_TIME_NOTE = "the URL in <angle brackets> is signed at deploy time, when each replica is created"


@guarded
def render_command(
    stack: Annotated[str, typer.Argument(metavar="STACK", help="Stack name or path to a stack file.")],
    out_dir: Annotated[
        str, typer.Option("--out", help="Directory to write the artifacts to (created; its parent must exist).")
    ],
    overrides: SetOpt = None,
    parents: ParentsOpt = False,
    project_dir: ProjectDirOpt = None,
) -> int:
    """Write the Slurm configuration and node cloud-init a training stack boots with, or a serving
    stack's replica user data."""

    from accelstack.components import cloud_stack
    from accelstack.components.base import ServingServiceArgs, TrainingClusterArgs
    from accelstack.components.slurm import DeployValues, nodes_for, render_all
    from accelstack.spec.models import ServingStack

    out = output_directory(out_dir)
    _, files = resolve_stacks([stack], False, project_dir)
    [(name, spec)] = load_specs(files, overrides or [])
    if spec is None:
        return EXIT_CONFIG
    if isinstance(spec, ServingStack):
        artifacts = cloud_stack(spec).replica_artifacts(ServingServiceArgs.of(spec))
        # Only where the replicas read the queues: a fleet admitting on its replicas (Vultr's) has none to fill.
        queued = any("${REQUEST_QUEUE_URL}" in text for text in artifacts.values())
        presigned = any("://<" in text for text in artifacts.values())  # Vultr's weights key URL
        note = SERVING_PLACEHOLDER_NOTE if queued else SERVING_DEPLOY_TIME_NOTE if presigned else ""
    elif spec.training.scheduler.kind != "slurm":
        raise CliError(
            f"{name}: training.scheduler.kind is {spec.training.scheduler.kind!r}; "
            "render writes Slurm artifacts (kind: slurm)"
        )
    else:
        # The resolved spec and the plan's interval, as the training recipe hands them to the Slurm recipe.
        args = TrainingClusterArgs.of(spec)
        values = DeployValues(checkpoint_interval_seconds=args.plan.interval_seconds)
        artifacts, note = render_all(args.spec, nodes_for(args.spec), values), PLACEHOLDER_NOTE
        if "slurmdbd.conf" in artifacts:
            note += ACCOUNTING_PLACEHOLDER_NOTE
    written = write_into(out, artifacts, executable=lambda filename: filename.endswith(".sh"), parents=parents)
    echo_lines([f"{name}: wrote {path}" for path in written])
    echo_lines([f"{name}: {note}"] if note else [])
    return EXIT_OK


def register(app: typer.Typer) -> None:
    app.command("render")(render_command)
