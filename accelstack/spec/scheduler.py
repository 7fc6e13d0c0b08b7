"""The Slurm scheduler's part of a training stack's spec (`training.scheduler`): partitions, the head node, and the
Slurm features a stack turns on (containers, accounting)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from accelstack.spec.base import Grammars, Model
from accelstack.spec.cloud_defaults import filled_by_the_cloud
from accelstack.spec.slurm_syntax import slurm_time_problem

PARTITION_NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,30}$"


class Partition(Model):
    name: str = Field(pattern=PARTITION_NAME_PATTERN)
    """Slurm partition name (a letter, then up to 30 letters, digits, _ or -)."""
    max_time: str = "UNLIMITED"
    """Slurm MaxTime as a quoted string: \"UNLIMITED\", minutes, \"HH:MM:SS\" or \"D-HH:MM:SS\"."""
    default: bool = False
    """The partition jobs go to when they name none (exactly one should be default)."""
    # Slurm node features this partition selects (Nodes=<feature>); none: every compute node.
    features: list[str] = Field(default_factory=list)
    """Slurm node features this partition selects; empty: every compute node."""

    # slurm.conf takes a time limit in Slurm's own syntax (its rule also checks the bounds).
    TEXT_GRAMMARS: ClassVar[Grammars] = {"max_time": slurm_time_problem}

    @field_validator("max_time", mode="before")
    @classmethod
    def _quoted_time(cls, value: object) -> object:
        # YAML 1.1 reads an unquoted 01:00:00 as the base-60 integer 3600: refuse to guess.
        if isinstance(value, int) and not isinstance(value, bool):
            written = getattr(value, "written", str(value))  # the text YAML read (accelstack.spec.yaml_input)
            raise ValueError(
                f'write maxTime as a quoted string ("{written}"; e.g. "01:00:00", or "90" for 90 minutes); '
                f"YAML reads unquoted {written} as the number {int(value)}"
            )
        return value


class HeadNode(Model):
    # Filled from the stack's cloud when omitted (accelstack.spec.cloud_defaults); None only outside a stack.
    instance_type: str = Field(default=None, validate_default=True)
    """Instance type of the Slurm head node (slurmctld), CPU only; omitted: the cloud's default (aws m7i.2xlarge, azure Standard_D8s_v5, gcp n2-standard-8)."""

    _filled = field_validator("instance_type", mode="before")(filled_by_the_cloud)


class SchedulerSpec(Model):
    kind: Literal["slurm", "managed", "none"] = "slurm"
    """slurm (head node + dynamic nodes), managed (the cloud's batch service: AWS Batch multi-node jobs, on-demand only; Azure Machine Learning compute) or none."""
    head_node: HeadNode = Field(default_factory=HeadNode)  # a stack fills the cloud's default type
    """The Slurm head node."""
    partitions: list[Partition] = Field(default_factory=lambda: [Partition(name="gpu", default=True)])
    """Slurm partitions; default: one `gpu` partition."""
    containers: Literal["pyxis", "none"] = "pyxis"
    """Jobs in containers on Slurm: pyxis (NVIDIA's SPANK plugin with enroot: `srun --container-image=...`, the fabric's devices, plugin and settings bound into every container) or none; kind slurm only."""
    accounting: Literal["none", "database"] = "none"
    """Slurm accounting: none (no `sacct`, FIFO priority) or database (slurmdbd on the head node with the cloud's managed MySQL: RDS, Azure Database for MySQL, Cloud SQL; `sacct`, `sshare` and fair-share)."""

    @model_validator(mode="before")
    @classmethod
    def _no_containers_without_slurm(cls, data: Any) -> Any:
        # pyxis is a Slurm plugin: left unset with another scheduler, containers is none, so a dumped spec reads back
        # the same (a stated pyxis there is refused by accelstack.spec.validators.containers_need_slurm).
        if isinstance(data, dict) and data.get("kind", "slurm") != "slurm" and "containers" not in data:
            return {**data, "containers": "none"}
        return data
