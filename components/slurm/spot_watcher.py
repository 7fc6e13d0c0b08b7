"""The spot interruption watcher: drains a node on the cloud's preemption notice, signals its jobs to checkpoint,
requeues them, and (with node-local checkpoints) runs a final sync within the notice."""

from __future__ import annotations

from accelstack.components.slurm import (
    CHECKPOINT_SIGNAL,
    FINAL_SYNC_BUDGET_SECONDS,
    FINAL_SYNC_MARGIN_SECONDS,
    FINAL_SYNC_MIN_SECONDS,
    KILL_WAIT_SECONDS,
    WATCHER_POLL_SECONDS,
    _render,
    checkpoint_sync_commands,
)
from accelstack.components.slurm.layout import Nodes, layout
from accelstack.spec.models import StackSpec


def preemption_grace_seconds(notice_seconds: int, local_checkpoints: bool) -> int:
    """How long the watcher lets jobs checkpoint before requeueing them: requeue sends SIGTERM and waits
    KillWait, so the job is gone before the node is (EC2's 120 s: 90 s; 60 s when a final sync must fit)."""
    left = notice_seconds - KILL_WAIT_SECONDS
    if local_checkpoints:
        left -= WATCHER_POLL_SECONDS + FINAL_SYNC_BUDGET_SECONDS + FINAL_SYNC_MARGIN_SECONDS
    return max(0, left)


def watches_preemption(spec: StackSpec, nodes: Nodes) -> bool:
    """Spot nodes run the watcher where the cloud posts a notice on the node; elsewhere a lost node's
    jobs are requeued by slurmctld once it stops answering (SlurmdTimeout, JobRequeue)."""
    return layout(spec, nodes).spot and nodes.platform.preemption_functions is not None


def spot_watcher_script(spec: StackSpec, nodes: Nodes) -> str:
    plan = layout(spec, nodes)
    platform = nodes.platform
    if platform.preemption_functions is None:
        raise ValueError(f"{platform.name} posts no preemption notice on the node; there is no watcher to render")
    sync = checkpoint_sync_commands(spec, nodes)
    return _render(
        "spot-watcher.sh.j2",
        cluster_name=plan.cluster_name,
        poll_seconds=WATCHER_POLL_SECONDS,
        grace_seconds=preemption_grace_seconds(platform.preemption_notice_seconds, sync is not None),
        checkpoint_signal=CHECKPOINT_SIGNAL,
        final_sync=sync[0] if sync else None,
        checkpoints_uri=plan.checkpoints_uri,
        notice_seconds=platform.preemption_notice_seconds,
        notice_source=platform.preemption_source,
        metadata_functions=platform.metadata_functions,
        preemption_functions=platform.preemption_functions,
        margin_seconds=FINAL_SYNC_MARGIN_SECONDS,
        final_sync_min_seconds=FINAL_SYNC_MIN_SECONDS,
    )
