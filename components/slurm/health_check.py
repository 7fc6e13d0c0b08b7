"""The GPU node health check slurmd runs (HealthCheckProgram): the node's GPUs all visible and free of uncorrectable
memory errors, its fabric devices present, the shared file system mounted; a node that fails is drained with the
reason, and resumed once it passes only when the drain was the check's own (templates/health-check.sh.j2).

The same check on every cloud, from the plan: the GPU count and vendor are the catalog's, the fabric's device count
its `fabric_interfaces`, the mount the stack's. It reads device state only (no GPU load, seconds at most), the way
ParallelCluster's and slurm-gcp's periodic GPU checks do; a deep diagnostic (DCGM's `dcgmi diag`) is not run here.
Compute nodes without Slurm GPUs get none, and the head runs no slurmd, so it never runs it.
"""

from __future__ import annotations

from accelstack.components.slurm.layout import Nodes, _training, gpu_type, layout
from accelstack.components.templates import template_environment
from accelstack.spec.models import StackSpec

HEALTH_CHECK_PATH = "/usr/local/sbin/accelstack-health-check"
# slurm.conf(5) HealthCheckInterval: every 5 minutes, ParallelCluster's and slurm.conf's usual figure; the check
# takes a few seconds.
HEALTH_CHECK_INTERVAL_SECONDS = 300
# ANY: whatever the node's state (a busy node with a lost GPU must stop taking jobs too); CYCLE: spread over the
# interval instead of every node at once (slurm.conf(5) HealthCheckNodeState).
HEALTH_CHECK_NODE_STATE = "ANY,CYCLE"
# Every drain the check sets starts with this; it resumes no other.
DRAIN_REASON_PREFIX = "accelstack-health"

# How a fabric's NICs show on the node: RDMA fabrics as verbs devices (/sys/class/infiniband: EFA's rdmap*, the
# mlx5_* of InfiniBand and RoCE), GPUDirect-TCPX(O) as extra Ethernet interfaces (gVNICs) beside the primary one.
_RDMA_FABRICS = {"efa": "EFA", "infiniband": "InfiniBand", "rdma": "RDMA", "roce": "RoCE"}
_ETHERNET_FABRICS = {"gpudirect-tcpx": "GPUDirect-TCPX", "gpudirect-tcpxo": "GPUDirect-TCPXO"}

_env = template_environment("accelstack.components.slurm")


def _fabric(spec: StackSpec, nodes: Nodes) -> dict[str, object] | None:
    """What the check counts of the fabric; None without one, or on a one-node cluster (AWS attaches no EFA device
    there, components/aws/training.py network_interfaces; nothing talks to a lone node over its fabric)."""
    itype = nodes.instance
    if itype is None or not itype.has_fabric or _training(spec).nodes.count < 2 or itype.fabric is None:
        return None
    if itype.fabric in _RDMA_FABRICS:
        return {"name": _RDMA_FABRICS[itype.fabric], "sysfs": "infiniband", "count": itype.fabric_interfaces}
    if itype.fabric in _ETHERNET_FABRICS:
        return {"name": _ETHERNET_FABRICS[itype.fabric], "sysfs": "net", "count": itype.fabric_interfaces}
    raise ValueError(
        f"{itype.name}: fabric {itype.fabric!r} has no health check; known: {_RDMA_FABRICS | _ETHERNET_FABRICS}"
    )


def runs_health_check(spec: StackSpec, nodes: Nodes) -> bool:
    """Whether the compute nodes carry Slurm GPUs (NVIDIA or AMD), which the check is about."""
    return gpu_type(nodes.instance) is not None


def health_check_script(spec: StackSpec, nodes: Nodes) -> str:
    plan = layout(spec, nodes)
    itype = nodes.instance
    if itype is None or not runs_health_check(spec, nodes):
        raise ValueError(f"{plan.instance_type}: no Slurm GPUs on these nodes; there is no health check to render")
    return _env.get_template("health-check.sh.j2").render(
        interval=HEALTH_CHECK_INTERVAL_SECONDS,
        prefix=DRAIN_REASON_PREFIX,
        vendor=itype.vendor,
        gpus=itype.accelerators,
        fabric=_fabric(spec, nodes),
        mount_path=plan.lustre_mount_path,
    )


def health_check_conf(spec: StackSpec, nodes: Nodes) -> dict[str, object] | None:
    """slurm.conf's health check settings; None where the nodes have no GPUs to check."""
    if not runs_health_check(spec, nodes):
        return None
    return {"program": HEALTH_CHECK_PATH, "interval": HEALTH_CHECK_INTERVAL_SECONDS, "state": HEALTH_CHECK_NODE_STATE}


def health_check_files(spec: StackSpec, nodes: Nodes) -> list[dict[str, str]]:
    """The script as a compute node's cloud-init file; [] where the nodes have no GPUs."""
    if not runs_health_check(spec, nodes):
        return []
    content = health_check_script(spec, nodes)
    return [{"path": HEALTH_CHECK_PATH, "owner": "root:root", "permissions": "0755", "content": content}]
