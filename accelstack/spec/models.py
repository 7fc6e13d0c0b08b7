"""Typed models of a stack's `accelstack:*` config (the spec layer: pure, no Pulumi).

YAML keys are camelCase (as in Pulumi stack files); Python attributes are snake_case.
Field-level checks live here; rules that need a cloud's constraint tables live in
`accelstack.spec.validators` so they can be listed, tested and reported one by one.
"""

from __future__ import annotations

import ipaddress
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator
from pydantic.alias_generators import to_camel

Cloud = Literal["aws", "azure", "gcp", "oci", "vultr"]
Workload = Literal["training", "serving"]
Capacity = Literal["on-demand", "spot", "capacity-block"]
Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
MAX_STRING_CHARS = 2048
# Patterns the loader explains in words (accelstack.spec.loader.PATTERN_HINTS).
URI_PATTERN = r"^[a-z0-9]+://[^/\s]+(/\S*)?$"
PARTITION_NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,30}$"
ADAPTER_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"
STACK_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{0,39}$"


class Model(BaseModel):
    """Base for every spec model: camelCase keys, unknown keys rejected, values frozen."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        str_strip_whitespace=True,
        # NaN and infinity pass every `gt`/`le` bound check or crash the planner's arithmetic later.
        allow_inf_nan=False,
        # The longest legitimate value (an S3 URI: 63-character bucket + 1,024-byte key) is ~1.1 KB.
        str_max_length=MAX_STRING_CHARS,
    )

    @field_validator("*", mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, value: object, info: ValidationInfo) -> object:
        """YAML reads `yes`, `on` and `true` as booleans, which pydantic would take as the number 1."""
        if isinstance(value, bool) and info.field_name is not None:
            annotation = cls.model_fields[info.field_name].annotation
            if annotation in (int, float) or set(get_args(annotation)) & {int, float}:
                raise ValueError(f"{str(value).lower()} is true/false, not a number")
        return value


def _quoted_account_ids(value: object) -> object:
    """Unquoted YAML account ids become numbers and lose leading zeros (or turn octal): refuse them."""
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, int) and not isinstance(item, bool):
            written = getattr(item, "written", str(item))  # the text YAML read (accelstack.spec.yaml_input)
            if written != str(item):
                raise ValueError(
                    f'write {written} quoted ("{written}"): unquoted, YAML reads it as the number {int(item)}'
                )
            raise ValueError(f'write account ids quoted ("{written}"): unquoted, an id with leading zeros loses them')
    return value


class Account(Model):
    """Where this stack deploys: an AWS account id, Azure subscription, GCP project or OCI compartment."""

    id: str = Field(min_length=1)
    region: str = Field(min_length=1)
    deploy_role: str | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _quoted(cls, value: object) -> object:
        return _quoted_account_ids(value)


class Separation(Model):
    """Both sides' accounts. They must be disjoint so training can never consume serving's quota."""

    training_accounts: list[str] = Field(min_length=1)
    serving_accounts: list[str] = Field(min_length=1)
    allowed_regions: list[str] | None = None

    @field_validator("training_accounts", "serving_accounts", mode="before")
    @classmethod
    def _quoted(cls, value: object) -> object:
        return _quoted_account_ids(value)

    @model_validator(mode="after")
    def _disjoint(self) -> Separation:
        shared = sorted(set(self.training_accounts) & set(self.serving_accounts))
        if shared:
            raise ValueError(
                f"trainingAccounts and servingAccounts must be disjoint; both list {', '.join(shared)}"
            )
        return self


class NetworkSpec(Model):
    """Either a new VPC (vpcCidr) or an existing VPC and subnet(s)."""

    vpc_cidr: str | None = "10.20.0.0/16"
    vpc_id: str | None = None
    subnet_id: str | None = None
    # Serving spreads replicas over subnets in several AZs; training lives in one.
    subnet_ids: list[str] | None = None
    # Serving in an existing VPC: the public subnets (>= 2 AZs) that hold only the load balancer.
    public_subnet_ids: list[str] | None = None
    availability_zone: str | None = None

    @field_validator("vpc_cidr")
    @classmethod
    def _cidr(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            net = ipaddress.ip_network(value, strict=True)
        except ValueError as exc:
            raise ValueError(f"not a valid network CIDR ({exc})") from None
        if net.version != 4:
            raise ValueError("must be an IPv4 CIDR")
        # AWS: a VPC's primary CIDR block is between /16 and /28.
        if not 16 <= net.prefixlen <= 28:
            raise ValueError(f"prefix /{net.prefixlen} is outside the allowed /16 to /28")
        return value

    @model_validator(mode="after")
    def _existing_or_new(self) -> NetworkSpec:
        if self.vpc_id and not (self.subnet_id or self.subnet_ids):
            raise ValueError("vpcId needs subnetId (training) or subnetIds (serving)")
        if (self.subnet_id or self.subnet_ids) and not self.vpc_id:
            raise ValueError("subnetId/subnetIds need vpcId")
        return self

    @property
    def existing(self) -> bool:
        return self.vpc_id is not None


class Nodes(Model):
    instance_type: str
    count: int = Field(ge=1, le=10_000)
    capacity: Capacity = "on-demand"
    # cr-...: the Capacity Block (capacity-block) or On-Demand Capacity Reservation (on-demand) to launch into.
    reservation_id: str | None = None


class DatasetStore(Model):
    uri: str = Field(pattern=URI_PATTERN)
    create: bool = True
    # What Lustre must hold besides checkpoints; None: the planner assumes capacityGiB was sized for it.
    size_gib: float | None = Field(default=None, gt=0, le=100_000_000, alias="sizeGiB")


class LustreSpec(Model):
    deployment_type: str = "PERSISTENT_2"
    capacity_gib: int = Field(default=4800, ge=1, alias="capacityGiB")
    # Default depends on deploymentType (PERSISTENT_2: 250, PERSISTENT_1: 200, scratch: none).
    throughput_per_tib: int | None = Field(default=250, alias="throughputPerTiB")
    import_path: str = "/datasets"
    mount_path: str = "/fsx"

    @model_validator(mode="before")
    @classmethod
    def _default_throughput(cls, data: object) -> object:
        # Scratch file systems reject PerUnitStorageThroughput, so the default must follow the type.
        if isinstance(data, dict) and not {"throughputPerTiB", "throughput_per_tib"} & data.keys():
            from accelstack.spec.tables.aws import LUSTRE_DEPLOYMENT_TYPES

            kind = data.get("deploymentType", data.get("deployment_type", "PERSISTENT_2"))
            known = LUSTRE_DEPLOYMENT_TYPES.get(kind.strip()) if isinstance(kind, str) else None
            if known is not None:
                data = {**data, "throughputPerTiB": known.default_throughput}
        return data

    @field_validator("import_path", "mount_path")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("must be an absolute path starting with /")
        return value


class CheckpointStore(Model):
    uri: str = Field(pattern=URI_PATTERN)
    path: str = "/fsx/checkpoints"
    create: bool = True
    # A synchronous save stalls every GPU until written; None: the planner's 300 s. Raise it for
    # asynchronous checkpointing, where the write overlaps training.
    write_target_seconds: float | None = Field(default=None, ge=1, le=86_400)
    # Days an overwritten or deleted checkpoint version is kept in the (versioned) bucket before it
    # expires; current versions never expire. S3 lifecycle takes 1 day at least.
    noncurrent_version_days: int = Field(default=30, ge=1, le=36_500)

    @field_validator("path")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("must be an absolute path starting with /")
        return value


class TrainingStorage(Model):
    datasets: DatasetStore
    lustre: LustreSpec | None = LustreSpec()
    checkpoints: CheckpointStore | None = None


class Partition(Model):
    name: str = Field(pattern=PARTITION_NAME_PATTERN)
    max_time: str = "UNLIMITED"
    default: bool = False
    # Slurm node features this partition selects (Nodes=<feature>); none: every compute node.
    features: list[str] = Field(default_factory=list)

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
    instance_type: str = "m7i.2xlarge"


class SchedulerSpec(Model):
    kind: Literal["slurm", "managed", "none"] = "slurm"
    head_node: HeadNode = HeadNode()
    partitions: list[Partition] = Field(default_factory=lambda: [Partition(name="gpu", default=True)])


class TrainingModel(Model):
    """What is trained, so the planner sizes checkpoints from it instead of guessing from GPU memory.

    Give a `preset` (a name from `accelstack.planner.architectures`, checked by a rule), or
    `parametersBillion`, or state `checkpointGiB` outright (it wins over the estimate).
    """

    preset: str | None = Field(default=None, min_length=1)
    parameters_billion: float | None = Field(default=None, gt=0, le=100_000)
    method: Literal["full", "lora"] = "full"
    lora_rank: int = Field(default=16, ge=1, le=512)
    checkpoint_gib: float | None = Field(default=None, gt=0, le=1_000_000, alias="checkpointGiB")

    @model_validator(mode="after")
    def _sized(self) -> TrainingModel:
        if self.checkpoint_gib is not None:
            return self
        if self.preset is None and self.parameters_billion is None:
            raise ValueError("set preset, parametersBillion or checkpointGiB")
        if self.preset is not None and self.parameters_billion is not None:
            raise ValueError("set preset or parametersBillion, not both")
        if self.method == "lora" and self.preset is None:
            raise ValueError("method lora needs a preset (adapter shapes come from the architecture) or checkpointGiB")
        return self


class TrainingSpec(Model):
    nodes: Nodes
    storage: TrainingStorage
    model: TrainingModel | None = None
    network: NetworkSpec = NetworkSpec()
    scheduler: SchedulerSpec = SchedulerSpec()
    # Serving accounts allowed to read model artifacts from the checkpoint bucket's artifact prefix.
    artifact_readers: list[str] = Field(default_factory=list)
    artifact_prefix: str = "models/"


class LoraAdapter(Model):
    name: str = Field(pattern=ADAPTER_NAME_PATTERN)
    uri: str
    rank: int = Field(default=16, ge=1, le=512)


class ModelSpec(Model):
    name: str = Field(min_length=1)
    weights_uri: str = Field(pattern=URI_PATTERN)
    # A preset name from the planner's architecture table, or explicit parameters.
    preset: str | None = Field(default=None, min_length=1)
    parameters_billion: float | None = Field(default=None, gt=0, le=100_000)
    precision: Precision = "bf16"
    context_length: int = Field(default=8192, ge=128, le=2_000_000)
    adapters: list[LoraAdapter] = Field(default_factory=list)


class Replicas(Model):
    instance_type: str
    min: int = Field(default=1, ge=0, le=1000)
    max: int = Field(default=4, ge=1, le=1000)
    capacity: Capacity = "on-demand"
    # Tensor-parallel degree; defaults to every GPU on the instance.
    tensor_parallel: int | None = Field(default=None, ge=1, le=64)
    # Stopped, pre-initialised instances kept beside the group; None: sized from cold start and max.
    warm_pool: int | None = Field(default=None, ge=0, le=1000)
    # AMI id, or `resolve:ssm:<parameter>` (resolved by EC2 at launch): AWS Deep Learning Base GPU AMI.
    image_id: str = "resolve:ssm:/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"
    # OpenAI-compatible inference server container.
    server_image: str = "vllm/vllm-openai:v0.6.6"
    # Measured seconds from launch to ready; None: estimated from weights size.
    cold_start_seconds: int | None = Field(default=None, ge=30, le=7200)

    @model_validator(mode="after")
    def _bounds(self) -> Replicas:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) must not exceed max ({self.max})")
        return self


class LoadBalancerSpec(Model):
    certificate_arn: str
    health_path: str = "/health"
    port: int = Field(default=8000, ge=1, le=65535)
    access_logs: bool = True


class AdmissionPolicy(Model):
    max_depth: int = Field(default=10_000, ge=1, le=100_000_000)
    # SQS retention bounds: 60 s to 14 days.
    ttl_seconds: int = Field(default=300, ge=60, le=1_209_600)
    # WAF rate-based rule: requests per client IP per evaluation window (minimum 10).
    per_client_rate: int = Field(default=2000, ge=10, le=2_000_000_000)
    rate_window_seconds: Literal[60, 120, 300, 600] = 300
    max_receive_count: int = Field(default=3, ge=1, le=1000)


class LatencySlo(Model):
    target_seconds: float = Field(default=2.0, gt=0, le=1_209_600)
    service_seconds: float = Field(default=0.5, gt=0, le=1_209_600)


class ServingSpec(Model):
    model: ModelSpec
    replicas: Replicas
    load_balancer: LoadBalancerSpec
    admission: AdmissionPolicy = AdmissionPolicy()
    slo: LatencySlo = LatencySlo()
    network: NetworkSpec = NetworkSpec(vpc_cidr="10.30.0.0/16")
    # Training account's bucket holding the model artifacts (read-only from serving).
    artifact_account: str | None = None


class StackSpec(Model):
    """One stack: one cloud, one workload, one account."""

    stack: str = Field(default="dev", pattern=STACK_NAME_PATTERN)
    cloud: Cloud
    workload: Workload
    account: Account
    separation: Separation
    training: TrainingSpec | None = None
    serving: ServingSpec | None = None

    @model_validator(mode="after")
    def _workload_block(self) -> StackSpec:
        block = getattr(self, self.workload)
        other = "serving" if self.workload == "training" else "training"
        if block is None:
            raise ValueError(f"workload is {self.workload!r} but accelstack:{self.workload} is missing")
        if getattr(self, other) is not None:
            raise ValueError(f"workload is {self.workload!r}; remove accelstack:{other} (one workload per stack)")
        return self
