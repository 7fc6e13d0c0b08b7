"""The training recipe: one sequence, every cloud. Network, storage (object store, key, parallel file system),
the nodes' identity, the scheduler, then the node group when the scheduler leaves the nodes to the cluster;
the plain nodes' boot and the stack's outputs are written here, once, from the parts' neutral values.

A cloud's `TrainingCluster` is this recipe with its parts (`parts_class`) and its type token; resource names
and parents are the parts', so a stack built before the recipe keeps its URNs. A managed service that is one
resource may still build its own way (`CloudStack.build_training`): the recipe is the default path.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pulumi

from accelstack.components.base import SchedulerResult, TrainingClusterArgs
from accelstack.components.node_environment import cloud_config, environment_files, node_environment
from accelstack.components.node_platform import node_platform_for
from accelstack.components.recipes.parts import (
    BuildContext,
    NetworkStorage,
    NodeGroup,
    NodeIdentity,
    NodeNetwork,
    Placement,
    TrainingData,
    TrainingParts,
    WithManagedScheduler,
)
from accelstack.components.recipes.slurm import SlurmInputs
from accelstack.components.slurm import LUSTRE_MOUNT_OPTIONS, lustre_source


def lustre_client_cloud_config(
    source: str,
    mount_path: str,
    client_install: str,
    environment: dict[str, str] | None = None,
    mount_options: str = LUSTRE_MOUNT_OPTIONS,
) -> str:
    """Cloud-init for nodes without a scheduler: install the Lustre client when the image lacks `mount.lustre`
    (`client_install`, the cloud's documented repository) and mount `source` at `mount_path`; with
    `environment`, also write the jobs' environment file."""
    config: dict[str, Any] = {
        # fstab (not cloud-init's `mounts` module, which runs before the client is installed) so systemd
        # remounts after a reboot; runcmd mounts it now.
        "write_files": [
            {
                "path": "/etc/fstab",
                "append": True,
                "content": f"{source} {mount_path} lustre {mount_options},_netdev 0 0\n",
            }
        ],
        "runcmd": [
            ["bash", "-c", f"command -v mount.lustre >/dev/null || {{\n{client_install.rstrip()}\n}}"],
            ["mkdir", "-p", mount_path],
            ["mount", mount_path],
        ],
    }
    if environment:
        config["write_files"] += environment_files(environment)
    return cloud_config(config)


class TrainingRecipe(pulumi.ComponentResource):
    """A training cluster on any cloud; `outputs` holds what the stack exports (accelstack.outputs' contract).

    What a test can assert on, on every cloud: `node_network` (the parts' `NodeNetwork`), `data` (`TrainingData`),
    `file_system` (the parallel file system's resource; None without one), `scheduler` (the scheduler's component;
    None without one), `launch_template`, `group` and `placement_group` (None where the scheduler runs the nodes
    itself, or the cloud keeps them in one resource), and `parts` (the cloud's own resources; each cloud's
    cluster also names its network and storage components `network` and `storage`)."""

    cloud: ClassVar[str]  # the registry name: the type token is accelstack:<cloud>:TrainingCluster
    parts_class: ClassVar[type[TrainingParts[Any]]]

    def __init__(self, name: str, args: TrainingClusterArgs, opts: pulumi.ResourceOptions | None = None):
        """`name` prefixes every resource of the cluster and is its stack tag; `opts.provider` is the (pinned)
        provider the cluster deploys with."""
        args = args.named(name)
        super().__init__(f"accelstack:{self.cloud}:TrainingCluster", name, None, opts)
        self.spec, self.digest, self.plan = args.spec, args.digest, args.plan
        self.checkpoint_interval_seconds = args.plan.interval_seconds
        ctx = BuildContext(name, args, self)
        parts = self.parts = self.parts_class(ctx)

        self.node_network: NodeNetwork = parts.network()
        self.data: TrainingData = parts.storage(self.node_network)
        self.file_system = self.data.file_system.resource if self.data.file_system is not None else None
        identity = parts.node_identity(self.node_network, self.data)
        result = self.build_scheduler(identity)
        self.scheduler = result.component
        self.nodes: NodeGroup | None = None
        if result.needs_compute_group:
            user_data = result.compute_user_data
            if user_data is None:
                user_data = self.plain_node_boot(self.data.file_system)
            self.nodes = parts.node_group(self.node_network, self.data, identity, result, user_data)
        self.group = self.nodes.group if self.nodes is not None else None
        self.launch_template = self.nodes.template if self.nodes is not None else None
        self.placement: Placement | None = parts.placement()
        self.placement_group = self.placement.resource if self.placement is not None else None

        self.outputs = self.training_outputs(result)
        self.register_outputs(self.outputs)

    def build_scheduler(self, identity: NodeIdentity) -> SchedulerResult:
        """The scheduler the spec names, from the parts that implement it: Slurm's recipe, the cloud's managed
        scheduler, or none (the nodes boot the recipe's plain boot)."""
        kind = self.spec.training.scheduler.kind
        if kind == "none":
            return SchedulerResult()
        parts = self.parts
        handles = parts.scheduler_handles(self.node_network, self.data, identity)
        if kind == "slurm" and parts.slurm_cluster is not None:
            inputs = SlurmInputs(self.spec, self.checkpoint_interval_seconds, self.data.file_system, identity.grants)
            return parts.slurm_cluster(inputs, handles, pulumi.ResourceOptions(parent=self)).result
        if kind == "managed" and isinstance(parts, WithManagedScheduler):
            return parts.managed_scheduler(handles)
        # The spec rules refuse a scheduler the cloud lacks (Feature.SLURM / MANAGED_SCHEDULER follow from parts).
        raise ValueError(f"training.scheduler.kind: {kind!r} is not built on {self.cloud}")

    def plain_node_boot(self, file_system: NetworkStorage | None) -> pulumi.Input[str]:
        """Nodes without a scheduler (or whose scheduler writes none): the jobs' environment, and the parallel
        file system mounted where the spec says, with the client the cloud documents. The same on every cloud."""
        environment = node_environment(self.spec, self.checkpoint_interval_seconds)
        parts = self.parts
        if file_system is None:
            return parts.plain_boot(cloud_config({"write_files": environment_files(environment)}))
        install = node_platform_for(self.spec).lustre_client_install
        return pulumi.Output.all(file_system.address, file_system.remote_mount).apply(
            lambda values: parts.plain_boot(
                lustre_client_cloud_config(
                    lustre_source(values[0], values[1]),
                    file_system.local_mount,
                    install,
                    environment,
                    file_system.mount_options,
                )
            )
        )

    def training_outputs(self, result: SchedulerResult) -> dict[str, pulumi.Input[Any]]:
        """The training output contract (accelstack.outputs), from the parts' neutral values only."""
        spec, network, data = self.spec, self.node_network, self.data
        exported: dict[str, pulumi.Input[Any]] = {
            "configDigest": self.digest,
            "account": spec.account.account_id,
            "region": spec.account.region,
            "networkId": network.network_id,
            "subnetId": network.subnet_id,
            "zone": network.zone,
            "datasetBucket": data.dataset_uri,
            "encryptionKey": data.encryption_key,
            "fabricInterfacesPerNode": self.parts.fabric_interfaces_per_node(),
            "checkpointIntervalSeconds": self.checkpoint_interval_seconds,
        }
        if data.checkpoint_uri is not None:
            exported["checkpointBucket"] = data.checkpoint_uri
        if data.file_system is not None:
            exported["lustreAddress"] = data.file_system.address
            exported["lustreMountName"] = data.file_system.remote_mount
        if self.nodes is not None:
            exported["nodeGroup"] = self.nodes.group_name
        if self.placement is not None and self.placement.name is not None:
            exported["placementGroup"] = self.placement.name
        exported.update(result.outputs)
        return exported
