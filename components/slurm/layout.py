"""The cluster's shape as Slurm sees it, from a validated training stack: which compute nodes (their catalog row
and the cloud's node platform), their features and node sets, the partitions, and where the shared file system and
checkpoints live. Pure; `accelstack.components.slurm` renders it into slurm.conf, cloud-init and units."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from accelstack.clouds import registry
from accelstack.clouds.base import InstanceType
from accelstack.components.node_platform import NodePlatform, node_platform_for
from accelstack.spec.models import StackSpec, TrainingSpec, TrainingStack

# Every compute node carries this feature; partitions without features select nodes by it.
NODE_FEATURE = "compute"


@dataclass(frozen=True)
class Nodes:
    """The compute nodes as the generator needs them: their machine type, as the cloud's catalog
    describes it (None: a type the catalog does not list; no GPUs or memory figure are configured),
    and the platform they boot on (every cloud-specific shell command)."""

    platform: NodePlatform
    instance: InstanceType | None


def nodes_for(spec: StackSpec) -> Nodes:
    """The spec's compute nodes, from the registry: the cloud's catalog row and its node platform."""
    training = _training(spec)
    instance = registry.get(spec.cloud).catalog.instances.get(training.nodes.instance_type)
    return Nodes(platform=node_platform_for(spec), instance=instance)


@dataclass(frozen=True)
class NodeSet:
    name: str
    feature: str


@dataclass(frozen=True)
class PartitionLine:
    name: str
    nodes: str
    max_time: str
    default: bool


@dataclass(frozen=True)
class ClusterLayout:
    """Everything the templates need that follows from the spec alone."""

    cluster_name: str
    head_hostname: str
    instance_type: str
    accelerator: InstanceType | None
    node_features: tuple[str, ...]
    nodesets: tuple[NodeSet, ...]
    partitions: tuple[PartitionLine, ...]
    max_node_count: int
    spot: bool
    lustre_mount_path: str | None
    checkpoints_path: str | None  # checkpoints directory on Lustre (created 1777 at mount)
    checkpoints_uri: str | None
    # Checkpoints outside Lustre (node-local disk): synced to `checkpoints_uri` by the node itself.
    local_checkpoints_path: str | None
    platform: NodePlatform
    # Checkpoints on a Lustre that cannot export them (`ParallelFsTier.checkpoints_copied_by_head`): the head
    # node copies `checkpoints_path` to `checkpoints_uri`.
    head_exports_checkpoints: bool = False
    # How the shared file system is mounted ("lustre" or "nfs") and, for NFS, the service's name.
    shared_fs_protocol: str = "lustre"
    shared_fs_service: str = ""
    # (dataset URI, directory on the file system) when the file system cannot import from object storage
    # (`ParallelFsTier.imports_from_object_store` false): the head copies the dataset in.
    dataset_import: tuple[str, str] | None = None


def _training_stack(spec: StackSpec) -> TrainingStack:
    if not isinstance(spec, TrainingStack):
        raise ValueError(f"stack {spec.stack} is a {spec.workload} stack; Slurm needs accelstack:training")
    return spec


def _training(spec: StackSpec) -> TrainingSpec:
    return _training_stack(spec).training


def _feature_name(text: str) -> str:
    """Slurm feature names: letters, digits, `_` and `-` are safe everywhere (`.` and `,` are not)."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", text).lower()


def gpu_type(itype: InstanceType | None) -> str | None:
    """The `Type=` of the gpu generic resource (`h100`, `mi300x`), or None for accelerators Slurm does not
    schedule as GPUs (Trainium, Gaudi: whole-node)."""
    if itype is None or itype.vendor not in GPU_DEVICE_FILES or itype.accelerators < 1:
        return None
    return _feature_name(itype.accelerator)


# gres.conf's File= per GPU vendor, one device file per GPU: NVIDIA's /dev/nvidiaN; AMD's DRM render nodes, which
# the amdgpu driver numbers from renderD128 (Slurm's gres.conf(5) and its AMD notes: File=/dev/dri/renderD...;
# AutoDetect=rsmi needs a Slurm built against ROCm SMI, which no package here is). ROCm's shared /dev/kfd is no
# gres: cgroup's device constraint leaves devices gres.conf does not name open.
GPU_DEVICE_FILES = {"nvidia": ("/dev/nvidia", 0), "amd": ("/dev/dri/renderD", 128)}


def gpu_device_files(itype: InstanceType | None) -> str | None:
    """gres.conf's `File=` range of the node's GPUs (`/dev/nvidia[0-7]`); None without schedulable GPUs."""
    if gpu_type(itype) is None or itype is None:
        return None
    prefix, first = GPU_DEVICE_FILES[itype.vendor]
    return f"{prefix}[{first}-{first + itype.accelerators - 1}]"


def layout(spec: StackSpec, nodes: Nodes) -> ClusterLayout:
    training = _training(spec)
    itype = nodes.instance
    base = [NODE_FEATURE, _feature_name(training.nodes.instance_type.split(".", 1)[0])]
    if itype is not None:
        base.append(_feature_name(itype.accelerator))
    partition_features = [_feature_name(f) for p in training.scheduler.partitions for f in p.features]
    node_features = tuple(dict.fromkeys(base + partition_features))

    nodesets: dict[str, NodeSet] = {}
    partitions = []
    for partition in training.scheduler.partitions:
        features = [_feature_name(f) for f in partition.features] or [NODE_FEATURE]
        names = []
        for feature in features:
            nodeset = nodesets.setdefault(feature, NodeSet(f"ns_{feature.replace('-', '_')}", feature))
            names.append(nodeset.name)
        partitions.append(PartitionLine(partition.name, ",".join(names), partition.max_time, partition.default))
    if partitions and not any(p.default for p in partitions):
        first = partitions[0]
        partitions[0] = PartitionLine(first.name, first.nodes, first.max_time, True)

    lustre = training.storage.lustre
    checkpoints = training.storage.checkpoints
    checkpoints_path = local_path = None
    if (
        lustre is not None
        and checkpoints is not None
        and checkpoints.path.startswith(lustre.mount_path.rstrip("/") + "/")
    ):
        checkpoints_path = checkpoints.path
    elif checkpoints is not None:
        if not nodes.platform.is_object_uri(checkpoints.uri):
            raise ValueError(
                f"training.storage.checkpoints.uri: {checkpoints.uri!r}: node-local checkpoints (no Lustre) are "
                f"synced to the cloud's object storage; expected {nodes.platform.object_uri_form}"
            )
        local_path = checkpoints.path.rstrip("/") or "/"
    tier = registry.get(spec.cloud).parallel_fs_tier(lustre.tier) if lustre is not None else None
    head_exports = checkpoints_path is not None and tier is not None and tier.checkpoints_copied_by_head
    if head_exports and checkpoints is not None and not nodes.platform.is_object_uri(checkpoints.uri):
        raise ValueError(
            f"training.storage.checkpoints.uri: {checkpoints.uri!r}: the head node copies checkpoints from Lustre "
            f"to the cloud's object storage; expected {nodes.platform.object_uri_form}"
        )
    return ClusterLayout(
        cluster_name=spec.stack,
        head_hostname=f"{spec.stack}-head",
        instance_type=training.nodes.instance_type,
        accelerator=itype,
        node_features=node_features,
        nodesets=tuple(nodesets.values()),
        partitions=tuple(partitions),
        # One replacement generation: a lost node's record stays (DOWN) until deleted.
        max_node_count=2 * training.nodes.count,
        spot=training.nodes.capacity == "spot",
        lustre_mount_path=lustre.mount_path if lustre is not None else None,
        checkpoints_path=checkpoints_path,
        checkpoints_uri=checkpoints.uri if checkpoints is not None else None,
        local_checkpoints_path=local_path,
        platform=nodes.platform,
        head_exports_checkpoints=head_exports,
        shared_fs_protocol=tier.protocol if tier is not None else "lustre",
        shared_fs_service=tier.service if tier is not None else "",
        dataset_import=(
            (training.storage.datasets.uri, posixpath.join(lustre.mount_path, lustre.import_path.lstrip("/")))
            if lustre is not None and tier is not None and not tier.imports_from_object_store
            else None
        ),
    )
