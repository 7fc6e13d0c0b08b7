"""The Slurm recipe: one head node and the compute nodes' boot, the same sequence on every cloud.

The munge key (random bytes in state), kept in the cloud's secret store and readable by the nodes and by the
head; the head's own identity, which also reads datasets and writes (never deletes) checkpoints exactly when
the neutral generator gives it import or export units (a file system that cannot link to the object store);
the head's fixed address and a protected state volume; Slurm's configuration files in a versioned object the
head alone reads (updated in place by a day-2 `up`: the head installs them at first boot and applies later
versions with `scontrol reconfigure`, so a node-count or partition change never rebuilds the controller); then
the head and the compute nodes' cloud-init from the neutral generator (`accelstack.components.slurm`) with the
cloud's node platform. A cloud supplies `SlurmParts`: where each of those lives, and how its VMs take their
boot data.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Literal, TypeVar

import pulumi
import pulumi_random as random

from accelstack.components import slurm
from accelstack.components.base import SchedulerResult
from accelstack.components.node_platform import NodePlatform
from accelstack.components.recipes.parts import NetworkStorage
from accelstack.components.slurm import accounting
from accelstack.components.slurm.config_delivery import config_bundle
from accelstack.components.slurm.munge import munge_key
from accelstack.spec.models import TrainingStack

NodeRole = Literal["head", "compute"]
Handles = TypeVar("Handles")


@dataclass(frozen=True)
class SlurmInputs:
    """What the training recipe hands its scheduler: the resolved spec, the planner's checkpoint interval, the
    file system the nodes mount, and the nodes' grants (the Slurm recipe appends reading the munge key)."""

    spec: TrainingStack
    interval_seconds: int
    file_system: NetworkStorage | None
    node_grants: list[pulumi.Resource]


@dataclass(frozen=True)
class SlurmContext(SlurmInputs):
    """One Slurm cluster being built: its inputs, the component it builds in, and the randomness provider of
    its munge key (explicit, as every provider of the project; its parts may draw other random values from it)."""

    parent: pulumi.Resource
    randomness: random.Provider

    @property
    def name(self) -> str:
        return self.spec.stack

    @property
    def child(self) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self.parent)


@dataclass(frozen=True)
class MungeSecret:
    """The munge key in the cloud's secret store: what a node's secret command reads (an ARN, a secret URI, a
    version name) and what the stack exports for it."""

    reference: pulumi.Output[str]
    exported: pulumi.Output[str]


@dataclass(frozen=True)
class SlurmConfig:
    """Slurm's configuration files out of the head's boot data: `reference` names the versioned object holding
    their bundle (what the head's platform reads with `config_object_command`). It never changes with the
    files, so neither does the head's boot data."""

    reference: pulumi.Input[str]


@dataclass(frozen=True)
class StateVolume:
    """slurmctld's state: a protected volume that outlives every head; `reference` is what the node platform
    turns into a device path."""

    reference: pulumi.Input[str]


@dataclass(frozen=True)
class AccountingDatabase:
    """slurmdbd's managed MySQL server (training.scheduler.accounting: database): its private address, the secret
    holding its password (what the head's secret command reads), how the head gets the CA that signs the server's
    certificate (slurmdbd connects with TLS and verifies it), and what the head waits for before booting (the
    server, its database, the head's read grant)."""

    host: pulumi.Input[str]
    password_secret: pulumi.Input[str]
    server_ca: accounting.ServerCa
    waits_for: list[pulumi.Resource] = field(default_factory=list)


@dataclass(frozen=True)
class HeadNode:
    """The head as built: its instance id and the private address the compute nodes reach slurmctld at."""

    instance_id: pulumi.Output[str]
    address: pulumi.Input[str]


class SlurmParts(ABC, Generic[Handles]):
    """A cloud's Slurm parts, made for one cluster; the recipe calls them in the order they are declared.
    `handles` is what the cloud's training parts give their scheduler (its network, storage, identities)."""

    def __init__(self, ctx: SlurmContext, handles: Handles):
        self.ctx = ctx
        self.handles = handles

    @abstractmethod
    def munge_secret(self, key: random.RandomBytes) -> MungeSecret:
        """Keep the raw key (`key.base64`) in the cloud's secret store, protected, encrypted with the stack key."""

    @abstractmethod
    def nodes_read_secret(self, secret: MungeSecret) -> pulumi.Resource:
        """Let the compute nodes' identity read that one secret (the nodes wait for it before booting)."""

    @abstractmethod
    def head_identity(self, secret: MungeSecret) -> list[pulumi.Resource]:
        """The head's own identity, reading the munge key (nothing of the data): the grants it waits for."""

    @abstractmethod
    def slurm_config(self, bundle: str) -> SlurmConfig:
        """Keep `bundle` (base64 text, config_delivery.py) in a versioned object a later `up` updates in place,
        never replacing the head nor anything stateful (after `head_identity`)."""

    @abstractmethod
    def head_reads_config(self, config: SlurmConfig) -> list[pulumi.Resource]:
        """Let the head's identity read that one object, nothing more: the grants it waits for ([] where only
        the head can read it anyway)."""

    @abstractmethod
    def head_reads_datasets(self) -> list[pulumi.Resource]:
        """The head may read the dataset store (it imports the dataset into a file system that cannot)."""

    @abstractmethod
    def head_writes_checkpoints(self) -> list[pulumi.Resource]:
        """The head may write, never delete, checkpoints (it exports them from a file system that cannot)."""

    @abstractmethod
    def head_network(self) -> None:
        """What the head's address and ports need before the head (a security group, a NIC, a reserved address)."""

    def accounting_database(self, password: random.RandomPassword) -> AccountingDatabase:
        """slurmdbd's MySQL server (after `head_network`): private to the cluster's network and reachable on
        `accounting.DATABASE_PORT` from the head alone, encrypted with the stack key, backed up, protected, its admin
        `accounting.DATABASE_USER` with `password` (kept in the cloud's secret store, which the head may read) and
        the database `accounting.DATABASE_NAME`. A cloud that builds it marks it `@implements(SLURM_ACCOUNTING)`."""
        raise NotImplementedError(f"{type(self).__name__} builds no Slurm accounting database")

    @abstractmethod
    def state_volume(self) -> StateVolume:
        """slurmctld's state volume, protected and retained, in the head's zone, encrypted with the stack key."""

    @abstractmethod
    def head_boot_address(self) -> pulumi.Input[str]:
        """The head's address as its own boot is told it ("" where the head reads it from its metadata)."""

    @abstractmethod
    def head_node(self, user_data: pulumi.Output[str], waits_for: list[pulumi.Resource]) -> HeadNode:
        """The head VM, booting `user_data` (rebuilt when it changes: nothing of the nodes or partitions is in
        it), attached to the state volume at its fixed address, after `waits_for` (its grants)."""

    @abstractmethod
    def platform(self, role: NodeRole) -> pulumi.Output[NodePlatform]:
        """The node platform the head's or the compute nodes' scripts are written for (it may depend on a
        value known at deploy time, such as the identity a node reads its secrets with)."""

    def finish_boot(self, cloud_init: str, role: NodeRole) -> str:
        """The generator's cloud-init as this cloud's VM takes it for `role` (encoded, amended)."""
        return cloud_init


class SlurmRecipe(pulumi.ComponentResource, Generic[Handles]):
    """Slurm on any cloud: `accelstack:<cloud>:SlurmCluster`, named `<stack>-slurm`. `result` is what the
    training recipe receives (the compute nodes' user data and the scheduler's outputs)."""

    cloud: ClassVar[str]
    parts_class: ClassVar[type[SlurmParts[Any]]]
    # The head and munge key as the component registers them (state only; kept as each cloud first wrote them).
    registered_secret_output: ClassVar[str] = "mungeKeySecret"

    def __init__(self, inputs: SlurmInputs, handles: Handles, opts: pulumi.ResourceOptions):
        spec = inputs.spec
        super().__init__(f"accelstack:{self.cloud}:SlurmCluster", f"{spec.stack}-slurm", None, opts)
        randomness, key = munge_key(spec.stack, self)
        ctx = SlurmContext(spec, inputs.interval_seconds, inputs.file_system, inputs.node_grants, self, randomness)
        parts: SlurmParts[Handles] = self.parts_class(ctx, handles)
        self.parts = parts
        secret = parts.munge_secret(key)
        ctx.node_grants.append(parts.nodes_read_secret(secret))
        head_grants = parts.head_identity(secret)
        # The generator says whether the head imports the dataset or exports checkpoints (where the file system
        # cannot); the head's grants follow from that, on every cloud.
        duties = slurm.nodes_for(spec)
        if slurm.dataset_import_units(spec, duties):
            head_grants += parts.head_reads_datasets()
        if slurm.checkpoint_export_units(spec, duties):
            head_grants += parts.head_writes_checkpoints()
        # slurm.conf and the files beside it follow from the spec alone (the platform's fabric hooks, never the
        # identity a node reads with), so the object's value is known at preview.
        config = parts.slurm_config(config_bundle(slurm.config_files(spec, duties)))
        head_grants += parts.head_reads_config(config)
        parts.head_network()
        database = None
        if accounting.keeps_accounting(spec):
            database = parts.accounting_database(accounting_password(spec.stack, self, randomness))
            head_grants += database.waits_for
        volume = parts.state_volume()

        def boot(
            role: NodeRole,
            head_address: pulumi.Input[str],
            state_volume: pulumi.Input[str],
            slurm_config: pulumi.Input[str],
            accounting_host: pulumi.Input[str],
            accounting_secret: pulumi.Input[str],
        ) -> pulumi.Output[str]:
            """The generator's cloud-init for `role`, on the platform that role's node reads with."""
            render = slurm.head_cloud_init if role == "head" else slurm.compute_cloud_init
            no_fs = pulumi.Output.from_input("")
            file_system = ctx.file_system
            return pulumi.Output.all(
                parts.platform(role),
                head_address,
                secret.reference,
                state_volume,
                file_system.address if file_system is not None else no_fs,
                file_system.remote_mount if file_system is not None else no_fs,
                slurm_config,
                accounting_host,
                accounting_secret,
            ).apply(
                lambda v: parts.finish_boot(
                    render(
                        spec,
                        slurm.Nodes(v[0], duties.instance),
                        slurm.DeployValues(
                            head_address=v[1],
                            munge_key_secret=v[2],
                            state_volume=v[3],
                            lustre_dns_name=v[4],
                            lustre_mount_name=v[5],
                            slurm_config=v[6],
                            accounting_storage=(
                                accounting.Storage(v[7], database.server_ca)
                                if database is not None
                                else placeholders.accounting_storage
                            ),
                            accounting_password_secret=v[8],
                            # The training recipe's planner interval: the number it exports as
                            # checkpointIntervalSeconds.
                            checkpoint_interval_seconds=ctx.interval_seconds,
                        ),
                    ),
                    role,
                )
            )

        placeholders = slurm.DeployValues()
        head_accounting = (
            (database.host, database.password_secret)
            if database is not None
            else (placeholders.accounting_storage.host, placeholders.accounting_password_secret)
        )
        self.head = parts.head_node(
            boot("head", parts.head_boot_address(), volume.reference, config.reference, *head_accounting), head_grants
        )
        # The compute nodes mount no state volume, read no configuration object (slurmctld serves them) and never
        # reach the accounting database: the generator's placeholders, which their boot never renders.
        compute_user_data = boot(
            "compute",
            self.head.address,
            placeholders.state_volume,
            placeholders.slurm_config,
            placeholders.accounting_storage.host,
            placeholders.accounting_password_secret,
        )
        outputs: dict[str, pulumi.Input[Any]] = {
            "scheduler": "slurm",
            "slurmHeadAddress": self.head.address,
            "slurmHeadInstance": self.head.instance_id,
            "mungeKeySecret": secret.exported,
        }
        if database is not None:
            outputs["slurmAccountingHost"] = database.host
        self.result = SchedulerResult(compute_user_data=compute_user_data, outputs=outputs, component=self)
        self.register_outputs({"headAddress": self.head.address, self.registered_secret_output: secret.exported})


def accounting_password(name: str, parent: pulumi.Resource, randomness: random.Provider) -> random.RandomPassword:
    """The accounting database's admin password: a secret in state, stable across `up`s, letters and digits only
    (accounting.PASSWORD_LENGTH: nothing to quote, and each class asked for meets every cloud's complexity rule)."""
    return random.RandomPassword(
        f"{name}-accounting-password",
        length=accounting.PASSWORD_LENGTH,
        special=False,
        min_upper=2,
        min_lower=2,
        min_numeric=2,
        opts=pulumi.ResourceOptions(parent=parent, provider=randomness),
    )
