"""The checkpoint export script both Slurm copiers run: the head node's, from a shared file system that cannot
export to the checkpoint store itself, and each node's, from its local disk. Pure: a platform and strings in, text
out. The rules it keeps are in templates/checkpoint-export.sh.j2: only directories the job marked complete
(`CHECKPOINT_MARKER`, which jobs read as ACCELSTACK_CHECKPOINT_MARKER), each once, files before marker, with the
platform's copy that never overwrites (`NodePlatform.checkpoint_copy_functions`), never deleting."""

from __future__ import annotations

import shlex

from accelstack.components.node_environment import CHECKPOINT_EXPORTED_DIR, CHECKPOINT_MARKER
from accelstack.components.node_platform import NodePlatform
from accelstack.components.slurm.layout import Nodes, layout
from accelstack.components.templates import template_environment
from accelstack.spec.models import StackSpec

CHECKPOINT_EXPORT_PATH = "/usr/local/sbin/accelstack-checkpoint-export"

_env = template_environment("accelstack.components.slurm")


def _dir_uri(uri: str) -> str:
    return uri.rstrip("/") + "/"


def checkpoint_export_script(platform: NodePlatform, path: str, uri: str, where: str) -> str:
    """The export of completed checkpoints from the directory `path` to the object prefix `uri`, with the platform's
    copy that never overwrites: see templates/checkpoint-export.sh.j2 for the rules it keeps."""
    return _env.get_template("checkpoint-export.sh.j2").render(
        path=path,
        uri=_dir_uri(uri),
        where=where,
        path_word=shlex.quote(path.rstrip("/") or "/"),
        uri_word=shlex.quote(_dir_uri(uri)),
        marker=CHECKPOINT_MARKER,
        marker_word=shlex.quote(CHECKPOINT_MARKER),
        state_dir=CHECKPOINT_EXPORTED_DIR,
        copy_functions=platform.checkpoint_copy_functions,
    )


def checkpoint_copier(spec: StackSpec, nodes: Nodes) -> str | None:
    """The export script this stack's copier runs (the head's, from the shared file system, or each node's, from
    its local disk); None where the file system exports checkpoints itself, or there are none."""
    plan = layout(spec, nodes)
    if plan.checkpoints_uri is None:
        return None
    if plan.local_checkpoints_path is not None:
        return checkpoint_export_script(plan.platform, plan.local_checkpoints_path, plan.checkpoints_uri, "node-local")
    if plan.head_exports_checkpoints and plan.checkpoints_path is not None:
        where = f"shared, on {plan.shared_fs_service or plan.platform.lustre_product}"
        return checkpoint_export_script(plan.platform, plan.checkpoints_path, plan.checkpoints_uri, where)
    return None
