"""Every node artifact of a Slurm stack by file name, as `accelstack render` writes them (`render_all`, re-exported
by `accelstack.components.slurm`, whose generators it calls)."""

from __future__ import annotations

from accelstack.components import slurm
from accelstack.components.node_environment import environment_file, node_environment
from accelstack.components.slurm import accounting
from accelstack.components.slurm.layout import Nodes, _training_stack, layout
from accelstack.spec.models import StackSpec


def render_all(spec: StackSpec, nodes: Nodes, values: slurm.DeployValues | None = None) -> dict[str, str]:
    """Every node artifact by file name, as `accelstack render` writes them."""
    values = values or slurm.DeployValues.placeholders()
    fabric = nodes.platform.fabric_hooks(nodes.instance)
    artifacts = {
        **slurm.config_files(spec, nodes),  # slurm.conf, gres.conf, cgroup.conf, plugstack.conf
        "slurm-config.sh": slurm.config_sync_script(spec.stack, nodes.platform, values.slurm_config),
        **slurm.config_sync_units(values.slurm_config),
        "head.cloud-init.yaml": slurm.head_cloud_init(spec, nodes, values),
        "compute.cloud-init.yaml": slurm.compute_cloud_init(spec, nodes, values),
        "training.env": environment_file(
            node_environment(_training_stack(spec), slurm.checkpoint_interval_seconds(spec, values))
        ),
        "task-prolog.sh": slurm.task_prolog_script(fabric=fabric),
    }
    if fabric is not None:
        artifacts.update(
            {"fabric-setup.sh": fabric.boot_script, "slurm-prolog.sh": fabric.prolog, "slurm-epilog.sh": fabric.epilog}
        )
    if slurm.watches_preemption(spec, nodes):
        artifacts["spot-watcher.sh"] = slurm.spot_watcher_script(spec, nodes)
    artifacts.update(slurm.checkpoint_sync_units(spec, nodes, values))
    artifacts.update(slurm.checkpoint_export_units(spec, nodes))
    copier = slurm.checkpoint_copier(spec, nodes)
    if copier is not None:
        artifacts["checkpoint-export.sh"] = copier
    artifacts.update(slurm.dataset_import_units(spec, nodes))
    if accounting.keeps_accounting(spec):
        # Without StoragePass: the head appends it at boot from the secret store.
        artifacts["slurmdbd.conf"] = accounting.slurmdbd_conf(
            spec.stack, layout(spec, nodes).head_hostname, values.accounting_storage, slurm.LOG_DIR, slurm.SLURM_USER
        )
    return artifacts
