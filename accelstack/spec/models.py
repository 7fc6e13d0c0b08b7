"""Typed models of a stack's `accelstack:*` config (the spec layer: pure, no Pulumi).

YAML keys are camelCase (as in Pulumi stack files); Python attributes are snake_case.
Field-level checks live here; rules that need a cloud's constraint tables live in
`accelstack.spec.validators` so they can be listed, tested and reported one by one.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    Discriminator,
    Field,
    SerializeAsAny,
    Tag,
    TypeAdapter,
    ValidationInfo,
    field_validator,
    model_validator,
)

from accelstack.clouds import registry
from accelstack.spec.accounts import PAR_LIFETIME_MINUTES, account_model
from accelstack.spec.accounts import Account as Account
from accelstack.spec.base import MAX_STRING_CHARS as MAX_STRING_CHARS
from accelstack.spec.base import Grammars, account_keys, quoted_account_ids
from accelstack.spec.base import Model as Model
from accelstack.spec.cloud_defaults import filled_by_the_cloud, with_cloud_defaults
from accelstack.spec.landing_ref import LandingWired
from accelstack.spec.scheduler import PARTITION_NAME_PATTERN as PARTITION_NAME_PATTERN
from accelstack.spec.scheduler import HeadNode as HeadNode
from accelstack.spec.scheduler import Partition as Partition
from accelstack.spec.scheduler import SchedulerSpec
from accelstack.spec.text_grammar import (
    OBJECT_URI_PATTERN,
    container_image_problem,
    health_path_problem,
    image_id_problem,
    key_prefix_problem,
    model_id_problem,
    object_uri_problem,
    plain_absolute_path_problem,
    zone_problem,
)
from accelstack.spec.token_lengths import TokenLengths

Workload = Literal["training", "serving"]
Capacity = Literal["on-demand", "spot", "capacity-block", "flex-start"]
Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
# Patterns the loader explains in words (accelstack.spec.loader.PATTERN_HINTS).
URI_PATTERN = OBJECT_URI_PATTERN
ADAPTER_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"
STACK_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{0,39}$"


class Separation(Model):
    """Both sides' accounts. They must be disjoint so training can never consume serving's quota."""

    training_accounts: list[str] = Field(min_length=1)
    """Accounts that may hold training stacks (quoted ids)."""
    serving_accounts: list[str] = Field(min_length=1)
    """Accounts that may hold serving stacks (quoted ids); disjoint from trainingAccounts."""
    allowed_regions: list[str] | None = None
    """Regions stacks may deploy to; none: any region."""

    @field_validator("training_accounts", "serving_accounts", mode="before")
    @classmethod
    def _quoted(cls, value: object) -> object:
        return quoted_account_ids(value)

    @model_validator(mode="after")
    def _disjoint(self) -> Separation:
        shared = sorted(account_keys(self.training_accounts) & account_keys(self.serving_accounts))
        if shared:
            raise ValueError(f"trainingAccounts and servingAccounts must be disjoint; both list {', '.join(shared)}")
        return self


class NetworkSpec(Model):
    """Either a new VPC (vpcCidr) or an existing VPC and subnet(s)."""

    vpc_cidr: str | None = "10.20.0.0/16"
    """IPv4 CIDR (/16 to /28) of the VPC the stack creates; ignored when vpcId is given."""
    vpc_id: str | None = None
    """Bring your own VPC: its id (then subnetId for training, or subnetIds for serving, is required)."""
    subnet_id: str | None = None
    """Training in an existing VPC: the one subnet holding the cluster (and its placement group, Lustre)."""
    # Serving spreads replicas over subnets in several AZs; training lives in one.
    subnet_ids: list[str] | None = None
    """Serving in an existing VPC: the private subnets (several AZs) the replicas run in."""
    # Serving in an existing VPC: the public subnets (>= 2 AZs) that hold only the load balancer.
    public_subnet_ids: list[str] | None = None
    """Serving in an existing VPC: the public subnets (2 AZs or more) that hold only the load balancer."""
    availability_zone: str | None = None
    """Pin the cluster's AZ (needed with a capacity reservation or Capacity Block); none: the first AZ that offers the instance type."""

    TEXT_GRAMMARS: ClassVar[Grammars] = {"availability_zone": zone_problem}

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
    """Accelerated instance type of the training nodes, e.g. p5.48xlarge (must be in the constraint table; several nodes need EFA)."""
    count: int = Field(ge=1, le=10_000)
    """Number of training nodes (1 to 10000); all of them in one cluster placement group."""
    capacity: Capacity = "on-demand"
    """How the nodes are bought: on-demand, spot (needs checkpoints), capacity-block (needs reservationId and network.availabilityZone) or flex-start (queued until the capacity is free, then runs maxRunHours; gcp)."""
    reservation_id: str | None = None
    """cr-...: the Capacity Block (capacity: capacity-block) or On-Demand Capacity Reservation (capacity: on-demand) the nodes launch into."""
    # Flex-start capacity (Dynamic Workload Scheduler) is lent for a fixed time, then the VMs are deleted.
    max_run_hours: int | None = Field(default=None, ge=1, le=8_760)
    """flex-start only: how long the nodes run once the capacity is granted, hours; they are deleted after (gcp: 168 at most)."""
    # None: the stack's own node image (components/<cloud>/images.py); a cloud that takes no other refuses one.
    image_id: str | None = None
    """An image the nodes boot instead of the stack's (oci: the OCID of a custom image you imported or built from oracle-quickstart/oci-hpc-images, Ubuntu 24.04 with the GPU driver and OFED, listing the node shape as compatible); omitted: oci imports the OCI HPC team's pinned build for the shape's GPU vendor; the other clouds choose their own and refuse one."""

    TEXT_GRAMMARS: ClassVar[Grammars] = {"image_id": image_id_problem}


class DatasetStore(Model):
    uri: str = Field(pattern=URI_PATTERN)
    """Bucket (and optional prefix) of the training data, e.g. s3://acme-train-datasets; Lustre imports from it."""
    create: bool = True
    """Create the bucket (true) or use an existing one (false)."""
    # What Lustre must hold besides checkpoints; None: the planner assumes capacityGiB was sized for it.
    size_gib: float | None = Field(default=None, gt=0, le=100_000_000, alias="sizeGiB")
    """Size of the data Lustre must hold, GiB; none: capacityGiB is assumed to have been sized for it."""

    TEXT_GRAMMARS: ClassVar[Grammars] = {"uri": object_uri_problem}


class LustreSpec(Model):
    """The parallel file system, in the keys every cloud shares; each cloud checks its own tiers and steps."""

    tier: str | None = None
    """Tier of the cloud's managed parallel file system (aws: FSx for Lustre deployment type PERSISTENT_2, PERSISTENT_1, SCRATCH_2 or SCRATCH_1; azure: AMLFS-Durable-Premium-40/-125/-250/-500; gcp: managed-lustre-1000/-500/-250/-125, or filestore-zonal, NFS for small clusters; oci: MBPS_PER_TB_125/250/500/1000); omitted: the tier offering throughputPerTiB when it is stated, else the cloud's default (aws: PERSISTENT_2). Changing it replaces the file system."""
    # None: the planner derives them (accelstack.planner.training_plan.lustre_setting): the cheapest
    # valid size and tier holding the dataset + retained checkpoints + headroom and writing one
    # checkpoint within the target. Scratch types take no tier.
    capacity_gib: int | None = Field(default=None, ge=1, alias="capacityGiB")
    """Storage capacity, GiB, in the tier's steps (aws PERSISTENT_2: 1200 or a multiple of 2400); omitted: the planner's cheapest size that holds the data and checkpoints. On aws it grows in place and a shrink replaces; on azure any change replaces (`accelstack diff` says which)."""
    throughput_per_tib: int | None = Field(default=None, alias="throughputPerTiB")
    """Throughput, MB/s per TiB, one the tier offers (aws PERSISTENT_2: 125, 250, 500 or 1000); omitted: the planner's cheapest tier meeting the checkpoint write target; none for scratch."""
    import_path: str = "/datasets"
    """Directory of the file system the dataset bucket is linked to (absolute)."""
    import_trigger: str | None = Field(default=None, min_length=1, max_length=128, alias="importTrigger")
    """Any text (e.g. the dataset's version); changing it imports the dataset prefix into importPath again, so objects uploaded after creation reach the file system without replacing it (gcp: Managed Lustre importData; azure: an import job). aws: FSx imports new and changed objects by itself, so it changes nothing there; gcp filestore: the head node copies at each of its boots."""
    # Filled from the stack's cloud when omitted (accelstack.spec.cloud_defaults); None only outside a stack.
    mount_path: str = Field(default=None, validate_default=True)
    """Where nodes mount the file system (absolute); omitted: the cloud's default (aws /fsx, azure and gcp /lustre)."""

    FREE_TEXT_FIELDS: ClassVar[frozenset[str]] = frozenset(
        {"import_trigger"}
    )  # a note to the operator, never written to a node

    _filled = field_validator("mount_path", mode="before")(filled_by_the_cloud)
    TEXT_GRAMMARS: ClassVar[Grammars] = {"import_path": plain_absolute_path_problem}

    @field_validator("import_trigger", mode="before")
    @classmethod
    def _trigger_as_written(cls, value: object) -> object:
        # A version number or a date is a natural trigger; YAML reads `2` or `2025-06-01` as a number or a date.
        if value is None or isinstance(value, (str, bool, list, dict)):
            return value  # a list or mapping is refused as not text, not turned into "[1, 2]"
        return getattr(value, "written", str(value))

    @field_validator("import_path", "mount_path")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("must be an absolute path starting with /")
        return value


class CheckpointStore(Model):
    uri: str = Field(pattern=URI_PATTERN)
    """Versioned, encrypted bucket (and optional prefix) checkpoints are exported to, e.g. s3://acme-train-checkpoints."""
    # Filled when omitted: <the file system's mount path>/checkpoints (accelstack.spec.cloud_defaults).
    path: str = Field(default=None, validate_default=True)
    """Checkpoint directory on the nodes, under the Lustre mount path; exported to the bucket without propagating deletes; omitted: <mountPath>/checkpoints."""
    create: bool = True
    """Create the bucket (true) or use an existing one (false)."""
    # A synchronous save stalls every GPU until written; None: the planner's 300 s. Raise it for
    # asynchronous checkpointing, where the write overlaps training.
    write_target_seconds: float | None = Field(default=None, ge=1, le=86_400)
    """Longest acceptable synchronous checkpoint write, seconds (sizes the Lustre tier); none: the planner's 300 s. Raise it for asynchronous checkpointing."""
    # Days an overwritten or deleted checkpoint version is kept in the (versioned) bucket before it
    # expires; current versions never expire. S3 lifecycle takes 1 day at least.
    noncurrent_version_days: int = Field(default=30, ge=1, le=36_500)
    """Days an overwritten or deleted checkpoint version is kept before it expires (current versions never expire; 1 day at least)."""

    _filled = field_validator("path", mode="before")(filled_by_the_cloud)
    TEXT_GRAMMARS: ClassVar[Grammars] = {"uri": object_uri_problem}

    @field_validator("path")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("must be an absolute path starting with /")
        return value


class TrainingStorage(Model):
    datasets: DatasetStore
    """Where the training data lives: the cloud's object storage (S3, Blob Storage, Cloud Storage, Object Storage)."""
    # Absent: a file system of the cloud's default tier, mount path and planned size (a stack fills the defaults).
    lustre: LustreSpec | None = Field(default_factory=LustreSpec)
    """The shared file system (FSx for Lustre, Azure Managed Lustre, Google Cloud Managed Lustre or Filestore, OCI File Storage with Lustre); null: none (one-node fine-tuning reads from object storage)."""
    checkpoints: CheckpointStore | None = None
    """Checkpoint bucket and directory; required for spot capacity."""


class TrainingModel(Model):
    """What is trained, so the planner sizes checkpoints from it instead of guessing from GPU memory.

    Give a `preset` (a name from `accelstack.planner.architectures`, checked by a rule), or
    `parametersBillion`, or state `checkpointGiB` outright (it wins over the estimate).
    """

    preset: str | None = Field(default=None, min_length=1)
    """Architecture preset (e.g. llama-3.1-70b; `accelstack size checkpoint --help` lists them): sizes checkpoints exactly."""
    parameters_billion: float | None = Field(default=None, gt=0, le=100_000)
    """Parameters in billions, when there is no preset."""
    method: Literal["full", "lora"] = "full"
    """full (weights + Adam state, 14 B/param per checkpoint) or lora (adapter only; needs a preset or checkpointGiB)."""
    lora_rank: int = Field(default=16, ge=1, le=512)
    """LoRA rank (1 to 512), sizes the adapter checkpoint."""
    checkpoint_gib: float | None = Field(default=None, gt=0, le=1_000_000, alias="checkpointGiB")
    """Checkpoint size, GiB, stated outright (wins over the estimate)."""
    # Tokens the job trains on (dataset tokens x epochs): `accelstack cost` prices the job's hours from
    # it (6 or, for LoRA, 4 FLOPs per parameter per token at 40% MFU); None: a month at 24x7.
    training_tokens: float | None = Field(default=None, gt=0, le=1e15)
    """Tokens the job trains on (dataset tokens x epochs); `accelstack cost` prices the job's hours from it."""

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
    """The accelerated nodes."""
    storage: TrainingStorage
    """Datasets, Lustre and checkpoints."""
    model: TrainingModel | None = None
    """What is trained, for checkpoint sizing; none: estimated from GPU memory."""
    network: NetworkSpec = NetworkSpec()
    """New VPC (vpcCidr, default 10.20.0.0/16) or an existing VPC and subnet."""
    scheduler: SchedulerSpec = Field(default_factory=SchedulerSpec)
    """Slurm, AWS Batch or none."""
    # Serving accounts allowed to read model artifacts from the checkpoint bucket's artifact prefix.
    artifact_readers: list[str] = Field(default_factory=list)
    """Serving accounts allowed to read artifactPrefix of the checkpoint bucket (s3:GetObject, kms:Decrypt via S3)."""
    artifact_prefix: str = "models/"
    """Prefix of the checkpoint bucket that artifactReaders may read (published models)."""
    artifact_reader_subnets: list[str] = Field(default_factory=list)
    """Where the checkpoint store admits networks by rule (Azure: a storage account firewall), the subnets the
    artifactReaders' replicas read from: subnet resource ids, each serving stack's `replicaSubnets` output."""
    artifact_reader_addresses: list[str] = Field(default_factory=list)
    """Where the checkpoint store admits networks by rule, the public IPv4 addresses (or CIDR ranges, /30 to /16) the
    readers on other clouds fetch from: each serving stack's `egressAddresses` output (its NAT's addresses)."""

    TEXT_GRAMMARS: ClassVar[Grammars] = {"artifact_prefix": key_prefix_problem}


class LoraAdapter(Model):
    name: str = Field(pattern=ADAPTER_NAME_PATTERN)
    """Adapter name clients ask for (lowercase letters, digits, -; up to 63 characters)."""
    uri: str = Field(pattern=URI_PATTERN)
    """Where the adapter's weights are, e.g. s3://acme-train-checkpoints/models/adapters/acme/."""
    rank: int = Field(default=16, ge=1, le=512)
    """LoRA rank (1 to 512); sizes the adapter memory."""
    copy_from: str | None = Field(default=None, pattern=URI_PATTERN)
    """Copy the adapter at `pulumi up` from this prefix on the weights' copyFrom cloud into `uri` (this stack's own store), as serving.model.copyFrom; none: `uri` is read as it is."""

    TEXT_GRAMMARS: ClassVar[Grammars] = {"uri": object_uri_problem, "copy_from": object_uri_problem}


class ModelSpec(Model):
    name: str = Field(min_length=1)
    """Model name the server serves (clients pass it as `model`), e.g. meta-llama/Llama-3.1-8B-Instruct."""
    weights_uri: str = Field(pattern=URI_PATTERN)
    """Where the weights are, e.g. s3://acme-train-checkpoints/models/llama-3.1-8b/ (read-only from serving)."""
    # A preset name from the planner's architecture table, or explicit parameters.
    preset: str | None = Field(default=None, min_length=1)
    """Architecture preset (sizes KV cache and concurrency exactly); none: estimated."""
    parameters_billion: float | None = Field(default=None, gt=0, le=100_000)
    """Parameters in billions, when there is no preset."""
    precision: Precision = "bf16"
    """Weights precision: fp32, bf16, fp16, fp8, int8 or int4."""
    context_length: int = Field(default=8192, ge=128, le=2_000_000)
    """Longest sequence (prompt + output) a request may use, tokens."""
    adapters: list[LoraAdapter] = Field(default_factory=list)
    """LoRA adapters served beside the base model."""
    copy_from: str | None = Field(default=None, pattern=URI_PATTERN)
    """Training artifacts on another cloud (oci://<bucket>@<namespace>/<prefix> or https://<account>.blob.core.windows.net/<container>/<prefix>) copied at `pulumi up`, with the deployer's credentials, into weightsUri (then a prefix in this stack's own store), which the replicas read as their own; the source's training account is serving.artifactAccount. The deployer needs, at the source: OCI, the right to create a pre-authenticated request on the bucket in serving.artifactTenancy (PAR_MANAGE and OBJECT_READ), which the copy reads through; Azure, Storage Blob Data Reader on the container, and its address admitted by the training stack's training.artifactReaderAddresses (or a subnet in training.artifactReaderSubnets); at the destination, write on the prefix: AWS and Google Cloud its own credentials, Azure Storage Blob Data Contributor, Vultr the account.weightsKey signer key (which must then be able to write the weights prefix). Objects already there with the same size and MD5 are kept; a different one fails (copy into a new prefix); nothing is ever deleted; none: weightsUri is read where it is."""

    TEXT_GRAMMARS: ClassVar[Grammars] = {
        "name": model_id_problem,
        "weights_uri": object_uri_problem,
        "copy_from": object_uri_problem,
    }


class Replicas(Model):
    instance_type: str
    """Accelerated instance type of the replicas, e.g. g6e.xlarge."""
    min: int = Field(default=1, ge=0, le=1000)
    """Fewest replicas in service (0 to 1000)."""
    max: int = Field(default=4, ge=1, le=1000)
    """Most replicas in service (1 to 1000, at least min)."""
    capacity: Capacity = "on-demand"
    """on-demand (serving refuses spot: an interruption drops requests in flight)."""
    # Tensor-parallel degree; defaults to every GPU on the instance.
    tensor_parallel: int | None = Field(default=None, ge=1, le=64)
    """Tensor-parallel degree; none: every GPU of the instance."""
    # Stopped, pre-initialised instances kept beside the group; None: sized from cold start and max.
    warm_pool: int | None = Field(default=None, ge=0, le=1000)
    """Stopped, pre-initialised instances kept beside the group; none: sized from the cold start and max."""
    # None: the cloud's replica image (Catalog.default_replica_image, filled when the stack is parsed); a cloud
    # whose components pick their own image has none, and refuses one stated here.
    image_id: str | None = None
    """Replica image: on aws an AMI id, or resolve:ssm:<parameter> resolved by EC2 at launch; omitted: the cloud's (aws: the Deep Learning Base GPU AMI, Ubuntu 22.04; azure and gcp boot their own image and take none)."""
    # OpenAI-compatible inference server container.
    server_image: str = "vllm/vllm-openai:v0.6.6"
    """OpenAI-compatible inference server container image."""
    # Measured seconds from launch to ready; None: estimated from weights size.
    cold_start_seconds: int | None = Field(default=None, ge=30, le=7200)
    """Measured seconds from launch to ready (30 to 7200); none: estimated from the weights' size."""
    scaling: Literal["backlog", "fixed"] = "backlog"
    """backlog: the group scales between min and max on the requests each replica owns (the admission queue's backlog per replica, or with admission.kind replica the load balancer's requests per replica), never on CPU; fixed: min replicas always (min equal to max, at least 1), no scaling policy."""

    TEXT_GRAMMARS: ClassVar[Grammars] = {"server_image": container_image_problem, "image_id": image_id_problem}

    @model_validator(mode="after")
    def _bounds(self) -> Replicas:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) must not exceed max ({self.max})")
        if self.scaling == "fixed" and (self.min != self.max or self.min < 1):
            raise ValueError(
                f"scaling fixed keeps one fleet size: min ({self.min}) and max ({self.max}) must be equal and at least 1"
            )
        return self


class LoadBalancerSpec(Model):
    certificate: str
    """The HTTPS listener's certificate, in the cloud's form: an ACM certificate ARN (aws), a Key Vault secret id (azure), a Compute Engine SSL certificate projects/<p>/global/sslCertificates/<name> (gcp), a secret reference env:<VARIABLE> or config:<namespace>:<key> (vultr)."""
    health_path: str = Field(default="/health", max_length=1024)
    """HTTP path the load balancer's health check requests on each replica: / then letters, digits and . _ ~ / - (it lands in boot scripts and unit files)."""
    port: int = Field(default=8000, ge=1, le=65535)
    """Port the inference server listens on in each replica."""
    access_logs: bool = True
    """Write load balancer access logs to an encrypted bucket of the stack."""

    TEXT_GRAMMARS: ClassVar[Grammars] = {"health_path": health_path_problem}


class AdmissionPolicy(Model):
    kind: Literal["queue", "replica"] = "queue"
    """Where requests wait their turn. queue: a managed queue (SQS, Service Bus, Pub/Sub) the replicas drain, with dead letters; replica: the load balancer sends straight to the replicas and each admits requests itself (at most its concurrency in flight, a bounded wait with the TTL, the per-client limit), refusing overload with 503 or 429 and Retry-After."""
    max_depth: int = Field(default=10_000, ge=1, le=100_000_000)
    """Most requests waiting (in the queue; with kind replica, across the fleet at its maximum, shared evenly); beyond it new requests are refused."""
    ttl_seconds: int = Field(default=300, ge=1, le=31_536_000)
    """Seconds a request may wait before it expires (within the cloud's queue retention: SQS 60 s to 14 days, Pub/Sub to 7 days)."""
    per_client_rate: int = Field(default=2000, ge=1, le=2_000_000_000)
    """Per-client rate limit: requests per client IP per rateWindowSeconds (within the cloud's WAF bounds: 10 at least)."""
    rate_window_seconds: int = Field(default=300, ge=1, le=86_400)
    """Rate-limit evaluation window in seconds, one the cloud's WAF takes (AWS and GCP: 60, 120, 300, 600; Azure: 60, 300)."""
    # Filled from the stack's cloud when omitted (accelstack.spec.cloud_defaults); None only outside a stack.
    max_receive_count: int = Field(default=None, validate_default=True, ge=1, le=1000)
    """Deliveries of a request before it moves to the dead-letter queue, within the cloud's bounds (aws SQS 1..1000, azure Service Bus 1..1000, gcp Pub/Sub 5..100); omitted: the cloud's default (aws 3, azure 10 as Service Bus's maxDeliveryCount, gcp 5 as Pub/Sub's); kind queue only."""

    _filled = field_validator("max_receive_count", mode="before")(filled_by_the_cloud)


class LatencySlo(Model):
    target_seconds: float = Field(default=2.0, gt=0, le=1_209_600)
    """Latency a request should see, seconds: sizes the load balancer idle timeout and deregistration delay; the SLO `simulate` measures attainment against."""
    service_seconds: float = Field(default=0.5, gt=0, le=1_209_600)
    """Seconds one replica slot takes to serve a request."""


class LatencyTarget(Model):
    """A latency objective as it is usually stated: the `percentile`-th request latency within targetSeconds."""

    percentile: float = Field(default=95, ge=50, lt=100)
    """Which request latency the target bounds (95: the 95th percentile), 50 to under 100."""
    target_seconds: float = Field(gt=0, le=3600)
    """End-to-end latency, seconds, that the percentile must stay within."""


class ServingLoad(Model):
    """The peak load the service must carry; the planner sizes replicas for it and `validate` checks
    replicas.min/max against it (accelstack.planner_rules.serving_replicas_carry_load)."""

    requests_per_second: float = Field(gt=0, le=1_000_000)
    """Peak requests per second."""
    input_tokens: int = Field(ge=1, le=2_000_000)
    """Prompt tokens per request, on average."""
    output_tokens: int = Field(ge=1, le=2_000_000)
    """Generated tokens per request, on average."""
    latency: LatencyTarget | None = None
    """Latency objective as a percentile (e.g. p95 within 10 s); without `slo` it sets slo.targetSeconds."""
    input_lengths: TokenLengths | None = None
    """How prompt lengths spread around inputTokens (default: every prompt inputTokens long, kind fixed)."""
    output_lengths: TokenLengths | None = None
    """How output lengths spread around outputTokens (default: exponential, as `simulate` has always drawn them)."""

    @model_validator(mode="after")
    def _lengths_have_the_stated_means(self) -> ServingLoad:
        for name, lengths, mean in (
            ("inputLengths", self.input_lengths, self.input_tokens),
            ("outputLengths", self.output_lengths, self.output_tokens),
        ):
            problem = lengths.mean_problem(mean) if lengths is not None else None
            if problem is not None:
                raise ValueError(f"{name}: {problem}")
        return self


class ServingSpec(Model):
    model: ModelSpec
    """The model served."""
    replicas: Replicas
    """The replica group."""
    load_balancer: LoadBalancerSpec
    """The HTTPS load balancer."""
    admission: AdmissionPolicy = Field(default_factory=AdmissionPolicy)  # a stack fills the cloud's delivery count
    """The admission queue and the per-client rate limit."""
    # Without `slo`, a stated load.latency target is the latency the queue's backlog target keeps.
    slo: LatencySlo = LatencySlo()
    """Latency targets that size the scaling target."""
    load: ServingLoad | None = None
    """The peak load the service must carry (requests/s, tokens per request, latency percentile target)."""
    network: NetworkSpec = NetworkSpec(vpc_cidr="10.30.0.0/16")
    """New VPC (vpcCidr, default 10.30.0.0/16) or an existing VPC with private and public subnets."""
    # Training account's bucket holding the model artifacts (read-only from serving).
    artifact_account: str | None = None
    """Training account whose checkpoint bucket holds the model artifacts (its KMS key decrypts them); on another cloud, `<cloud>:<id>` as separation.trainingAccounts lists it (e.g. aws:111111111111), matching the weights URI's cloud."""
    artifact_prefix: str = "models/"
    """The key prefix the training stack publishes under (its training.artifactPrefix): what is read from the training account (the weights and adapters, or their copyFrom) lies under it, the only prefix the separation pack lets cross."""
    # The second provider (pinned to the training account) needs the store's region; GCP's reader is global.
    artifact_region: str | None = None
    """Weights on another cloud: the region of the training store (an AWS Region for s3://, an Azure location for Blob Storage, an OCI region for oci://), where the serving stack declares its federated reader; none for gs:// or weights in this cloud."""
    artifact_tenancy: str | None = None
    """Weights on OCI (oci://): the training tenancy's OCID (ocid1.tenancy.<realm>..<unique id>), which the reader's provider signs for; none otherwise."""
    artifact_url_lifetime_minutes: int | None = Field(
        default=None, ge=PAR_LIFETIME_MINUTES[0], le=PAR_LIFETIME_MINUTES[2]
    )
    """Weights on OCI, Google Cloud or AWS read from a stack without instance identity (Vultr): how long each replica's pre-authenticated request (OCI: 15..1440, default 120), OAuth access token (Google Cloud: 15..60, default 60) or STS session (AWS: 15..60, default 60) works after the replica's clock; none otherwise."""
    artifact_deployer: str | None = None
    """Weights on AWS read from Vultr: the IAM role (or user) ARN the deploy runs as, the only principal the reader role in the training account trusts, e.g. arn:aws:iam::111111111111:role/accelstack-deploy (an IAM Identity Center role with its path, arn:aws:iam::<account>:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_<set>_<id>); never an assumed-role session ARN (arn:aws:sts::...); none otherwise."""

    TEXT_GRAMMARS: ClassVar[Grammars] = {"artifact_prefix": key_prefix_problem}

    @model_validator(mode="before")
    @classmethod
    def _slo_from_load(cls, data: object) -> object:
        if not isinstance(data, dict) or "slo" in data:
            return data
        load = data.get("load")
        latency = load.get("latency") if isinstance(load, dict) else None
        target = latency.get("targetSeconds", latency.get("target_seconds")) if isinstance(latency, dict) else None
        if isinstance(target, (int, float)) and not isinstance(target, bool) and target > 0:
            return {**data, "slo": {"targetSeconds": target}}
        return data


class StackBase(LandingWired):
    """What every stack has: one cloud, one account of that cloud, the separation of the two sides."""

    stack: str = Field(default="dev", pattern=STACK_NAME_PATTERN)
    """Stack name, from the stack file's name (Pulumi.<stack>.yaml); not a config key."""
    cloud: str
    """Cloud of the stack: a registered cloud (an error lists them). A cloud described (catalog, prices) but without components yet validates, sizes and prices; preview and deploy refuse it."""
    account: SerializeAsAny[Account]
    """The account (subscription, project, compartment) and region this stack deploys to; its keys depend on `cloud`."""
    separation: Separation
    """Training and serving accounts (disjoint, in the cloud's id format) and the allowed regions."""

    @field_validator("cloud")
    @classmethod
    def _registered(cls, value: str) -> str:
        if value not in registry.names():
            raise ValueError(f"{value!r} is not a registered cloud; registered: {', '.join(registry.names())}")
        return value

    @field_validator("account", mode="before")
    @classmethod
    def _account_of_cloud(cls, value: object, info: ValidationInfo) -> object:
        """The block's model is the cloud's: an Azure stack gets subscriptionId and tenantId, not id."""
        cloud = info.data.get("cloud")
        if cloud is None:
            return Account.model_construct(
                region=""
            )  # `cloud` is reported; checking the block against a guess would mislead
        if isinstance(value, Account):
            value = value.model_dump(by_alias=True, exclude_unset=True)
        return account_model(cloud).model_validate(value)


class TrainingStack(StackBase):
    """A training stack: the cluster, its storage and scheduler."""

    workload: Literal["training"]
    """training or serving: one workload per stack."""
    training: TrainingSpec
    """The training cluster."""

    @model_validator(mode="before")
    @classmethod
    def _cloud_defaults(cls, data: Any) -> Any:
        """The cloud's tier, mount path, checkpoint path and head node where omitted (the models alone cannot:
        their names belong to the cloud)."""
        return with_cloud_defaults(data)


class ServingStack(StackBase):
    """A serving stack: the replicas, the load balancer, the admission queue."""

    workload: Literal["serving"]
    """training or serving: one workload per stack."""
    serving: ServingSpec
    """The serving service."""

    @model_validator(mode="before")
    @classmethod
    def _cloud_defaults(cls, data: Any) -> Any:
        """The cloud's replica image where omitted."""
        return with_cloud_defaults(data)


def _workload_of(data: Any) -> object:
    # A callable discriminator: Model's field validators run in "before" mode on every field, which
    # pydantic refuses on a field it reads the tag from itself.
    tag = data.get("workload") if isinstance(data, dict) else getattr(data, "workload", None)
    return tag if tag is None or isinstance(tag, str) else repr(tag)  # a list or mapping is no tag, and unhashable


StackSpec = Annotated[
    Annotated[TrainingStack, Tag("training")] | Annotated[ServingStack, Tag("serving")],
    Discriminator(_workload_of),
]
"""One stack: one cloud, one workload, one account. `workload` says which model it is."""

WORKLOAD_MODELS: dict[str, type[TrainingStack] | type[ServingStack]] = {
    "training": TrainingStack,
    "serving": ServingStack,
}
STACK_ADAPTER: TypeAdapter[TrainingStack | ServingStack] = TypeAdapter(StackSpec)


def validate_stack(data: object) -> TrainingStack | ServingStack:
    """Raw config (namespace stripped, camelCase keys) -> the stack's model; pydantic's ValidationError
    otherwise (`accelstack.spec.loader.parse_spec` turns it into config-path problems and runs the rules)."""
    return STACK_ADAPTER.validate_python(data)
