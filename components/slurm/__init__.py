"""Cloud-neutral Slurm generation: slurm.conf, gres.conf, cgroup.conf, node cloud-init, spot watcher.

Pure functions: a validated `StackSpec`, the compute nodes (`Nodes`: the catalog's neutral
`InstanceType` and the cloud's `NodePlatform`, which renders every cloud-specific shell command) and
plain strings in, text out (Jinja2 templates in `templates/`). Values only known at deploy time (head
address, Lustre DNS, the secret holding the munge key, the state volume) come in a `DeployValues`;
`DeployValues.placeholders()` renders them as `${NAME}` for `accelstack render`, and the cloud
components fill them from Pulumi outputs. `nodes_for(spec)` finds the instance type and platform
through the cloud registry.

Design (valid for Slurm 23.11 to 25.11; the compute unit's `slurmd --systemd` needs 23.11):
- Compute nodes are dynamic (`slurmd -Z --conf "..."`) and configless (`--conf-server`): slurm.conf
  names no compute node, partitions take nodes through `NodeSet ... Feature=`; resizing the node
  group never regenerates anything.
- slurm.conf, gres.conf and cgroup.conf are not in the head's boot data (every cloud rebuilds the head
  when that changes): they travel in a versioned cloud object (`config_bundle`, see config_delivery.py)
  which the head installs at first boot and polls, applying a change with `scontrol reconfigure`.
- The munge key is never rendered: nodes fetch it at boot with the platform's secret command (AWS:
  Secrets Manager with the instance role) and write it 0400 owned by munge.
- Spot: `JobRequeue=1` requeues batch jobs of nodes that fail; the node-side watcher turns the
  platform's preemption notice (EC2: 2 minutes) into drain + checkpoint signal + requeue (see
  templates/spot-watcher.sh.j2).
- Jobs' environment: `/etc/accelstack/training.env` (the planner's checkpoint interval, checkpoint directory and
  bucket, stack name; the same file and names as nodes without a scheduler get from the cloud's training component,
  `accelstack.components.node_environment`) reaches every Slurm task through `TaskProlog`, login shells through
  profile.d, and containers (pyxis + enroot, containers.py) too, with the fabric bound in.
- Checkpoints on node-local disk (no Lustre to export them): restored from the bucket before slurmd
  starts, copied to it by a systemd timer, and once more by the spot watcher within the notice.
  Copies never delete in the bucket.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from accelstack.clouds import registry
from accelstack.components.node_environment import (  # the Slurm artifacts write the node environment too
    NODE_ENVIRONMENT_FILE,
    NODE_ENVIRONMENT_PROFILE,
    cloud_config,
    environment_file,
    environment_profile,
    node_environment,
)
from accelstack.components.node_platform import SLURM_UID, FabricHooks, NodeFact
from accelstack.components.slurm import accounting
from accelstack.components.slurm.checkpoint_export import (  # the copiers' script; re-exported for callers
    CHECKPOINT_EXPORT_PATH,
    checkpoint_copier,
)
from accelstack.components.slurm.checkpoint_export import checkpoint_export_script as checkpoint_export_script
from accelstack.components.slurm.config_delivery import (
    CONFIG_FILES,
    CONFIG_SYNC_PATH,
    CONFIG_SYNC_UNIT,
    config_bundle,
    config_sync_script,
    config_sync_units,
)
from accelstack.components.slurm.containers import node_container_files, node_containers, plugstack_conf
from accelstack.components.slurm.health_check import health_check_conf, health_check_files
from accelstack.components.slurm.layout import (  # the cluster's shape; nodes_for re-exported for callers
    ClusterLayout,
    Nodes,
    _training,
    _training_stack,
    gpu_device_files,
    gpu_type,
    layout,
)
from accelstack.components.slurm.layout import nodes_for as nodes_for
from accelstack.components.slurm.local_nvme import LOCAL_NVME_UNIT, local_nvme, local_nvme_files
from accelstack.components.templates import template_environment
from accelstack.planner.pricing import PriceBook
from accelstack.planner.training_plan import plan_training
from accelstack.spec.models import StackSpec

SLURMCTLD_PORT = 6817
SLURMD_PORT = 6818
SRUN_PORT_RANGE = (60001, 63000)
SLURM_USER = "slurm"
STATE_SAVE_LOCATION = "/var/spool/slurmctld"
SLURMD_SPOOL_DIR = "/var/spool/slurmd"
LOG_DIR = "/var/log/slurm"
RUN_DIR = "/run"
# ParallelCluster's default: schedulable memory is 95% of the catalog's figure, leaving the OS its share
# (a node that reports less than RealMemory is refused as "Low RealMemory").
SCHEDULABLE_MEMORY_FRACTION = 0.95
SLURMD_TIMEOUT_SECONDS = 180
KILL_WAIT_SECONDS = 30
CHECKPOINT_SIGNAL = "USR1"
WATCHER_POLL_SECONDS = 5
LUSTRE_MOUNT_OPTIONS = "noatime,flock"  # every Lustre client mount: Slurm, plain and Batch nodes


def lustre_source(address: str, remote_mount: str) -> str:
    """A Lustre client's mount source: the MGS's NID and the file system's name (every cloud's managed Lustre)."""
    return f"{address}@tcp:/{remote_mount}"


# NFS shares (Filestore): hard mounts (a job blocks rather than reads a short file), several TCP connections per
# client (Filestore's performance guide: one connection caps a client's throughput; nconnect needs Linux 5.3+).
NFS_MOUNT_OPTIONS = "hard,noatime,nconnect=7"
# Every cloud's node image is Ubuntu: the NFS client is one apt package.
NFS_CLIENT_INSTALL = "apt-get update && apt-get install -y nfs-common\n"
DATASET_IMPORT_UNIT = "accelstack-dataset-import"

# Checkpoints on node-local disk: the watcher's grace is shorter so the final sync fits the window:
# poll 5 s + grace + KillWait 30 s, leaving 20 s of the notice (less a 5 s margin) to upload what the
# periodic sync has not, usually only the checkpoint written on the signal (EC2's 120 s: grace 60 s).
FINAL_SYNC_BUDGET_SECONDS = 20
FINAL_SYNC_MARGIN_SECONDS = 5
# The watcher stops waiting for requeued jobs to exit this long before the deadline, to sync.
FINAL_SYNC_MIN_SECONDS = 15
# Periodic checkpoint sync: half the checkpoint interval, so each checkpoint is in the bucket well
# before the next one is written; at most 5 minutes, which bounds what a node lost without notice
# takes with it and keeps the final sync's backlog small; at least 1 minute, because every run lists
# the whole prefix and checkpoints are minutes apart anyway.
SYNC_PERIOD_CAP_SECONDS = 300
SYNC_PERIOD_FLOOR_SECONDS = 60
RESTORE_ATTEMPTS = 5

# The jobs' environment: the same files as the cloud's training component writes on nodes without a
# scheduler (`accelstack.components.node_environment`; tests keep the paths and variable names equal).
TASK_PROLOG_PATH = "/etc/accelstack/slurm-task-prolog.sh"
CHECKPOINT_SYNC_UNIT = "accelstack-checkpoint-sync"
# Checkpoints on a file system that cannot export them to their store: the head node copies the shared
# checkpoint directory (one copier for the whole cluster) every SYNC_PERIOD_CAP_SECONDS. A fixed period:
# the head's user data must not follow the planner's interval (node count, capacity), see HEAD_OMITS.
CHECKPOINT_EXPORT_UNIT = "accelstack-checkpoint-export"

WATCHER_PATH = "/usr/local/sbin/accelstack-spot-watcher"
HEAD_SETUP_PATH = "/usr/local/sbin/accelstack-head-setup"
# The setup scripts' outcome ("ok ..." or "failed ... last step: ..."), for the operator and boot checks.
SETUP_STATUS_FILE = "/var/lib/accelstack/first-boot.status"
COMPUTE_SETUP_PATH = "/usr/local/sbin/accelstack-compute-setup"
# A fabric's node-side software (NodePlatform.fabric_hooks): its per-boot setup and the job Prolog/Epilog.
FABRIC_SETUP_PATH = "/usr/local/sbin/accelstack-fabric-setup"
FABRIC_UNIT = "accelstack-fabric"
PROLOG_PATH = "/usr/local/sbin/accelstack-slurm-prolog"
EPILOG_PATH = "/usr/local/sbin/accelstack-slurm-epilog"

_env = template_environment("accelstack.components.slurm")


@dataclass(frozen=True)
class DeployValues:
    """What only exists once the cloud resources do. Defaults are the `${NAME}` placeholders."""

    head_address: str = "${HEAD_ADDRESS}"
    lustre_dns_name: str = "${LUSTRE_DNS}"
    lustre_mount_name: str = "${LUSTRE_MOUNT_NAME}"
    # The cloud's reference to the secret holding the raw munge key (AWS: the Secrets Manager ARN),
    # read by the platform's secret command as root on the node at boot.
    munge_key_secret: str = "${MUNGE_KEY_SECRET}"
    # The cloud's reference to the object holding the Slurm configuration files (`config_bundle`: AWS the SSM
    # parameter's name, Azure the Key Vault secret's URI, GCP the head's metadata key), read by the platform's
    # config command as root on the head.
    slurm_config: str = "${SLURM_CONFIG}"
    # The cloud's reference to the head node's slurmctld state volume (AWS: the EBS volume id); the
    # platform gives its device path.
    state_volume: str = "${STATE_VOLUME}"
    # Accounting (accounting.py): the managed MySQL server, and the secret holding its password (the head reads it).
    accounting_storage: accounting.Storage = accounting.PLACEHOLDER_STORAGE
    accounting_password_secret: str = "${ACCOUNTING_PASSWORD_SECRET}"
    # The component's checkpoint interval (`TrainingHandles.checkpoint_interval_seconds`); None: the
    # planner's, computed here with the same function (`plan_training`), so render and deploy agree.
    checkpoint_interval_seconds: int | None = None

    @classmethod
    def placeholders(cls) -> DeployValues:
        return cls()


def _render(template: str, **values: object) -> str:
    return _env.get_template(template).render(**values)


def slurm_conf(spec: StackSpec, nodes: Nodes) -> str:
    plan = layout(spec, nodes)
    return _render(
        "slurm.conf.j2",
        cluster_name=plan.cluster_name,
        head_hostname=plan.head_hostname,
        slurmctld_port=SLURMCTLD_PORT,
        slurmd_port=SLURMD_PORT,
        srun_port_range=f"{SRUN_PORT_RANGE[0]}-{SRUN_PORT_RANGE[1]}",
        slurm_user=SLURM_USER,
        state_save_location=STATE_SAVE_LOCATION,
        slurmd_spool_dir=SLURMD_SPOOL_DIR,
        run_dir=RUN_DIR,
        log_dir=LOG_DIR,
        max_node_count=plan.max_node_count,
        slurmd_timeout=SLURMD_TIMEOUT_SECONDS,
        kill_wait=KILL_WAIT_SECONDS,
        task_prolog=TASK_PROLOG_PATH,
        fabric=nodes.platform.fabric_hooks(nodes.instance),
        prolog=PROLOG_PATH,
        epilog=EPILOG_PATH,
        health_check=health_check_conf(spec, nodes),
        nodesets=plan.nodesets,
        partitions=plan.partitions,
        accounting=accounting.slurm_conf_values(spec, plan.head_hostname),
    )


def gres_conf(spec: StackSpec, nodes: Nodes) -> str:
    plan = layout(spec, nodes)
    itype = plan.accelerator
    return _render(
        "gres.conf.j2",
        cluster_name=plan.cluster_name,
        instance_type=plan.instance_type,
        accelerators=f"{itype.accelerators} x {itype.accelerator}" if itype else "unknown accelerators",
        gres={"type": gpu_type(itype), "files": gpu_device_files(itype)} if gpu_type(itype) else None,
    )


def cgroup_conf(spec: StackSpec) -> str:
    return _render("cgroup.conf.j2", cluster_name=spec.stack)


def config_files(spec: StackSpec, nodes: Nodes) -> dict[str, str]:
    """What the head installs from the configuration object (`config_bundle` of these), by file name."""
    texts = (slurm_conf(spec, nodes), gres_conf(spec, nodes), cgroup_conf(spec), plugstack_conf(spec))
    return dict(zip(CONFIG_FILES, texts, strict=True))


def dynamic_node_conf(spec: StackSpec, nodes: Nodes) -> str:
    """The `--conf` of `slurmd -Z`: features, GPUs and schedulable memory. CPUs and topology are left
    to slurmd's own detection (`slurmd -C`): overriding CPUs alone would flatten sockets and cores."""
    plan = layout(spec, nodes)
    parts = [f"Feature={','.join(plan.node_features)}"]
    itype = plan.accelerator
    kind = gpu_type(itype)
    if itype is not None and kind is not None:
        parts.append(f"Gres=gpu:{kind}:{itype.accelerators}")
    if itype is not None:
        parts.append(f"RealMemory={int(itype.memory_gib * 1024 * SCHEDULABLE_MEMORY_FRACTION)}")
    return " ".join(parts)


def slurmd_command(spec: StackSpec, nodes: Nodes, head_address: str, node_addr: str = "$NODE_ADDR") -> str:
    """The compute node's slurmd command line (systemd ExecStart syntax: double quotes group), for a Type=notify
    unit: `--systemd` makes slurmd send READY=1 (Slurm's own units since 23.11 run it so; it excludes -D)."""
    conf = f"NodeAddr={node_addr} {dynamic_node_conf(spec, nodes)}"
    slurmd = f"{nodes.platform.slurm_packages.daemon_directory}/slurmd"
    return f'{slurmd} --systemd -Z --conf-server {head_address}:{SLURMCTLD_PORT} --conf "{conf}"'


def checkpoint_interval_seconds(spec: StackSpec, values: DeployValues | None = None) -> int:
    """The component's interval when it handed one over, else the planner's (Daly, `plan_training`)."""
    if values is not None and values.checkpoint_interval_seconds is not None:
        return int(values.checkpoint_interval_seconds)
    cloud = registry.get(spec.cloud)
    return plan_training(
        _training(spec), catalog=cloud.catalog, prices=PriceBook.from_prices(cloud.prices)
    ).interval_seconds


def task_prolog_script(env_file: str = NODE_ENVIRONMENT_FILE, fabric: FabricHooks | None = None) -> str:
    """The TaskProlog: the jobs' environment file, and for multi-node jobs the fabric's (its NCCL settings and
    libraries) when the nodes have one."""
    return _render("task-prolog.sh.j2", env_file=env_file, fabric=fabric)


def sync_period_seconds(interval_seconds: int) -> int:
    """min(interval / 2, 5 min), at least 1 min: see SYNC_PERIOD_* for why."""
    return max(SYNC_PERIOD_FLOOR_SECONDS, min(int(interval_seconds) // 2, SYNC_PERIOD_CAP_SECONDS))


def _dir_uri(uri: str) -> str:
    return uri.rstrip("/") + "/"


def checkpoint_sync_commands(spec: StackSpec, nodes: Nodes) -> tuple[str, str] | None:
    """(upload, restore) commands for node-local checkpoints; None when Lustre exports them (or none). The upload
    is the export script (completed checkpoints only); the restore copies the store back, never deleting."""
    plan = layout(spec, nodes)
    if plan.local_checkpoints_path is None or plan.checkpoints_uri is None:
        return None
    local, remote = _dir_uri(plan.local_checkpoints_path), _dir_uri(plan.checkpoints_uri)
    return CHECKPOINT_EXPORT_PATH, plan.platform.object_sync_command(remote, local)


def _lustre_values(plan: ClusterLayout, values: DeployValues) -> dict[str, str] | None:
    """The shared file system's mount: Lustre (the platform's client) or NFS (`nfs-common`)."""
    if plan.lustre_mount_path is None:
        return None
    shared = {"mount_path": plan.lustre_mount_path, "checkpoints_path": plan.checkpoints_path or ""}
    if plan.shared_fs_protocol == "nfs":
        return {
            **shared,
            "fstype": "nfs",
            "client_probe": "mount.nfs",
            "source": f"{values.lustre_dns_name}:/{values.lustre_mount_name}",
            "options": NFS_MOUNT_OPTIONS,
            "client_install": NFS_CLIENT_INSTALL.rstrip("\n"),
            "product": plan.shared_fs_service or "NFS",
            "client_source": "the distribution (nfs-common)",
        }
    return {
        **shared,
        "fstype": "lustre",
        "client_probe": "mount.lustre",
        "source": lustre_source(values.lustre_dns_name, values.lustre_mount_name),
        "options": LUSTRE_MOUNT_OPTIONS,
        "client_install": plan.platform.lustre_client_install.rstrip("\n"),
        "product": plan.platform.lustre_product,
        "client_source": plan.platform.lustre_client_source,
    }


def _common_values(spec: StackSpec, nodes: Nodes, values: DeployValues, controller: bool) -> dict[str, object]:
    plan = layout(spec, nodes)
    platform = nodes.platform
    packages = platform.slurm_packages
    return {
        "slurm": {
            "source": packages.source,
            "repository_setup": packages.repository_setup,
            "packages": " ".join(
                shlex.quote(name)
                for name in packages.packages(controller, controller and accounting.keeps_accounting(spec))
            ),
        },
        "slurm_uid": SLURM_UID,
        "slurm_log_dir": LOG_DIR,
        "setup_status_file": SETUP_STATUS_FILE,
        "cluster_name": plan.cluster_name,
        "head_hostname": plan.head_hostname,
        "tool_functions": platform.tool_functions,
        "tool_setup": platform.tool_setup,
        "munge_key_command": platform.secret_command(values.munge_key_secret),
        "lustre": _lustre_values(plan, values),
        "slurm_user": SLURM_USER,
        **node_containers(spec, nodes, controller),
    }


def _cloud_config(doc: dict[str, object]) -> str:
    return cloud_config(doc, literal_blocks=True)


def _file(path: str, content: str, permissions: str = "0644") -> dict[str, str]:
    return {"path": path, "owner": "root:root", "permissions": permissions, "content": content}


def head_setup_script(spec: StackSpec, nodes: Nodes, values: DeployValues) -> str:
    return _render(
        "head-setup.sh.j2",
        **_common_values(spec, nodes, values, controller=True),
        config_sync=CONFIG_SYNC_PATH,
        config_unit=CONFIG_SYNC_UNIT,
        state_device=nodes.platform.block_device_path(values.state_volume),
        state_save_location=STATE_SAVE_LOCATION,
        export_unit=CHECKPOINT_EXPORT_UNIT if checkpoint_export_units(spec, nodes) else None,
        import_unit=DATASET_IMPORT_UNIT if dataset_import_units(spec, nodes) else None,
        accounting=accounting.head_setup_values(
            spec,
            layout(spec, nodes).head_hostname,
            values.accounting_storage,
            nodes.platform.secret_command(values.accounting_password_secret),
            LOG_DIR,
            SLURM_USER,
        ),
    )


def compute_setup_script(spec: StackSpec, nodes: Nodes, values: DeployValues) -> str:
    plan = layout(spec, nodes)
    sync = checkpoint_sync_commands(spec, nodes)
    return _render(
        "compute-setup.sh.j2",
        **_common_values(spec, nodes, values, controller=False),
        metadata_functions=nodes.platform.metadata_functions,
        address_command=nodes.platform.metadata_command(NodeFact.PRIVATE_ADDRESS),
        head_address=values.head_address,
        slurmd_command=slurmd_command(spec, nodes, plan.head_hostname),
        spot=watches_preemption(spec, nodes),
        restore=sync[1] if sync else None,
        local_checkpoints_path=plan.local_checkpoints_path,
        checkpoints_uri=plan.checkpoints_uri,
        restore_attempts=RESTORE_ATTEMPTS,
        sync_unit=CHECKPOINT_SYNC_UNIT,
        fabric=nodes.platform.fabric_hooks(nodes.instance),
        fabric_unit=FABRIC_UNIT,
        image_units=nodes.platform.units_before_slurmd(nodes.instance),
        local_nvme_unit=LOCAL_NVME_UNIT if local_nvme(nodes) else None,
    )


# Follows node count, capacity, checkpoint size and Lustre throughput (the planner's Daly interval):
# left out of the head's copy, which would otherwise rebuild slurmctld on edits Slurm never sees.
# Jobs still get it: the TaskProlog exports the compute node's file to every task, batch steps included.
HEAD_OMITS = ("ACCELSTACK_CHECKPOINT_INTERVAL_SECONDS",)


def fabric_files(nodes: Nodes) -> list[dict[str, str]]:
    """The fabric's boot script and its unit (slurmd requires it), the job Prolog and Epilog; [] without one."""
    fabric = nodes.platform.fabric_hooks(nodes.instance)
    if fabric is None:
        return []
    return [
        _file(FABRIC_SETUP_PATH, fabric.boot_script, "0755"),
        _file(
            f"/etc/systemd/system/{FABRIC_UNIT}.service",
            _render("fabric-setup.service.j2", name=fabric.name, script=FABRIC_SETUP_PATH),
        ),
        _file(PROLOG_PATH, fabric.prolog, "0755"),
        _file(EPILOG_PATH, fabric.epilog, "0755"),
    ]


def environment_files(spec: StackSpec, nodes: Nodes, values: DeployValues, task_prolog: bool) -> list[dict[str, str]]:
    environment = node_environment(_training_stack(spec), checkpoint_interval_seconds(spec, values))
    if not task_prolog:  # the head: what login shells there carry
        environment = {key: value for key, value in environment.items() if key not in HEAD_OMITS}
    files = [
        _file(NODE_ENVIRONMENT_FILE, environment_file(environment)),
        _file(NODE_ENVIRONMENT_PROFILE, environment_profile()),
    ]
    if task_prolog:
        fabric = nodes.platform.fabric_hooks(nodes.instance)
        files.append(_file(TASK_PROLOG_PATH, task_prolog_script(fabric=fabric), "0755"))
    return files


def checkpoint_sync_units(spec: StackSpec, nodes: Nodes, values: DeployValues) -> dict[str, str]:
    """systemd service + timer copying node-local checkpoints to the bucket; {} when Lustre exports them."""
    sync = checkpoint_sync_commands(spec, nodes)
    if sync is None:
        return {}
    plan = layout(spec, nodes)
    period = sync_period_seconds(checkpoint_interval_seconds(spec, values))
    common = {
        "path": plan.local_checkpoints_path,
        "uri": plan.checkpoints_uri,
        "unit": CHECKPOINT_SYNC_UNIT,
        "where": "node-local",
    }
    return {
        f"{CHECKPOINT_SYNC_UNIT}.service": _render(
            "checkpoint-sync.service.j2", **common, command=sync[0], after_mount=False
        ),
        f"{CHECKPOINT_SYNC_UNIT}.timer": _render(
            "checkpoint-sync.timer.j2",
            **common,
            period_seconds=period,
            period_reason="min(checkpoint interval / 2, 300 s), at least 60 s",
        ),
    }


def checkpoint_export_units(spec: StackSpec, nodes: Nodes) -> dict[str, str]:
    """systemd service + timer on the head node copying the Lustre checkpoint directory to the checkpoint
    store, where the file system cannot export there itself; {} otherwise. Copies only, never deletes."""
    plan = layout(spec, nodes)
    if not plan.head_exports_checkpoints or plan.checkpoints_path is None or plan.checkpoints_uri is None:
        return {}
    command = CHECKPOINT_EXPORT_PATH
    common = {
        "path": plan.checkpoints_path,
        "uri": plan.checkpoints_uri,
        "unit": CHECKPOINT_EXPORT_UNIT,
        "where": f"shared, on {plan.platform.lustre_product}",
    }
    return {
        f"{CHECKPOINT_EXPORT_UNIT}.service": _render(
            "checkpoint-sync.service.j2", **common, command=command, after_mount=True
        ),
        f"{CHECKPOINT_EXPORT_UNIT}.timer": _render(
            "checkpoint-sync.timer.j2",
            **common,
            period_seconds=SYNC_PERIOD_CAP_SECONDS,
            period_reason="fixed on the head node: its user data does not follow the checkpoint interval",
        ),
    }


def dataset_import_units(spec: StackSpec, nodes: Nodes) -> dict[str, str]:
    """A one-shot systemd service on the head node copying the dataset from object storage into the shared
    file system, where the file system cannot import it itself (NFS); {} otherwise. It runs at every boot of
    the head and copies only what is new or changed, never deleting on either side."""
    plan = layout(spec, nodes)
    if plan.dataset_import is None:
        return {}
    source, destination = plan.dataset_import
    return {
        f"{DATASET_IMPORT_UNIT}.service": _render(
            "dataset-import.service.j2",
            uri=source,
            path=destination,
            where=plan.shared_fs_service or plan.platform.lustre_product,
            command=plan.platform.object_sync_command(_dir_uri(source), _dir_uri(destination)),
        )
    }


def checkpoint_copier_files(spec: StackSpec, nodes: Nodes) -> list[dict[str, str]]:
    """The export script as a cloud-init file, for the node that copies checkpoints; [] where none does."""
    script = checkpoint_copier(spec, nodes)
    return [_file(CHECKPOINT_EXPORT_PATH, script, "0755")] if script is not None else []


def head_cloud_init(spec: StackSpec, nodes: Nodes, values: DeployValues) -> str:
    """The head node: hostname = SlurmctldHost, the installer of its Slurm configuration files, slurmctld.

    Its user data replaces the instance when it changes (AWS: user_data_replace_on_change; Azure's customData,
    GCP's user-data: read once at first boot), so it holds nothing that follows the node count, the node type or
    the partitions: slurm.conf, gres.conf and cgroup.conf come from the configuration object
    (`config_files`), no config digest of the whole spec, no checkpoint interval."""
    plan = layout(spec, nodes)
    doc = {
        "hostname": plan.head_hostname,
        "preserve_hostname": False,
        "manage_etc_hosts": True,
        "package_update": True,
        "packages": ["curl", "unzip"],  # Slurm and munge: the setup script, from the platform's source
        "write_files": [
            _file(CONFIG_SYNC_PATH, config_sync_script(spec.stack, nodes.platform, values.slurm_config), "0755"),
            *(
                _file(f"/etc/systemd/system/{unit}", text)
                for unit, text in config_sync_units(values.slurm_config).items()
            ),
            _file(
                "/etc/systemd/system/slurmctld.service.d/accelstack.conf",
                _render(
                    "slurmctld-override.conf.j2",
                    state_save_location=STATE_SAVE_LOCATION,
                    accounting=accounting.keeps_accounting(spec),
                ),
            ),
            _file(HEAD_SETUP_PATH, head_setup_script(spec, nodes, values), "0755"),
            # Users submit from here: their login shells carry the jobs' environment.
            *environment_files(spec, nodes, values, task_prolog=False),
            *(checkpoint_copier_files(spec, nodes) if checkpoint_export_units(spec, nodes) else []),
            *(
                _file(f"/etc/systemd/system/{unit}", text)
                for units in (checkpoint_export_units(spec, nodes), dataset_import_units(spec, nodes))
                for unit, text in units.items()
            ),
        ],
        "runcmd": [[HEAD_SETUP_PATH]],
    }
    return _cloud_config(doc)


def compute_cloud_init(spec: StackSpec, nodes: Nodes, values: DeployValues) -> str:
    """Compute nodes: munge, Lustre, the jobs' environment (TaskProlog), checkpoint restore and sync
    without Lustre, slurmd as a configless dynamic node, the spot watcher, the GPU health check."""
    files = [*environment_files(spec, nodes, values, task_prolog=True)]
    if watches_preemption(spec, nodes):
        files += [
            _file(WATCHER_PATH, spot_watcher_script(spec, nodes), "0755"),
            _file(
                "/etc/systemd/system/accelstack-spot-watcher.service",
                _render("spot-watcher.service.j2", watcher_path=WATCHER_PATH),
            ),
        ]
    sync_units = checkpoint_sync_units(spec, nodes, values)
    files += [_file(f"/etc/systemd/system/{unit}", text) for unit, text in sync_units.items()]
    if sync_units:
        files += checkpoint_copier_files(spec, nodes)
    files += fabric_files(nodes) + local_nvme_files(nodes) + node_container_files(spec, nodes)
    files += health_check_files(spec, nodes)
    files.append(_file(COMPUTE_SETUP_PATH, compute_setup_script(spec, nodes, values), "0755"))
    doc = {
        "package_update": True,
        "packages": ["curl", "unzip"],  # Slurm and munge: the setup script, from the platform's source
        "write_files": files,
        "runcmd": [[COMPUTE_SETUP_PATH]],
    }
    return _cloud_config(doc)


# The interruption watcher's script, in its own module (it renders with this package's templates and layout).
from accelstack.components.slurm.artifacts import render_all as render_all  # noqa: E402
from accelstack.components.slurm.spot_watcher import preemption_grace_seconds as preemption_grace_seconds  # noqa: E402
from accelstack.components.slurm.spot_watcher import spot_watcher_script as spot_watcher_script  # noqa: E402
from accelstack.components.slurm.spot_watcher import watches_preemption as watches_preemption  # noqa: E402


def boot_data_at_longest(spec: StackSpec, values: DeployValues) -> tuple[str, str, str] | None:
    """(head user data, compute user data, configuration bundle) with `values` at their longest, for a cloud's
    boot-data rule; None when an input another rule reports (unknown preset, a foreign URI) stops rendering."""
    try:
        nodes = nodes_for(spec)
        return (
            head_cloud_init(spec, nodes, values),
            compute_cloud_init(spec, nodes, values),
            config_bundle(config_files(spec, nodes)),
        )
    except ValueError:
        return None
