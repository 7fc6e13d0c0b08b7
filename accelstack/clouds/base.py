"""What a cloud is to accelstack: a pure description (no Pulumi) that the spec, planner, engine and CLI ask.

A cloud plugs in by shipping a `Cloud` value (its name, Pulumi packages, the features it supports, a
dated and sourced catalog, a price table and limits) and registering it under the `accelstack.clouds`
entry-point group (see `accelstack.clouds.registry`). Its Pulumi half lives in
`accelstack.components.<name>` with the same file names in every cloud; the description only names it.

Everything here is data: a new cloud adds rows, never a branch in a neutral module.
"""

from __future__ import annotations

import base64
import gzip
import ipaddress
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from accelstack.clouds.serving_terms import ServingTerms

if TYPE_CHECKING:
    from accelstack.planner.scaling_rules import ScalingRules


class Feature(StrEnum):
    """A capability a spec can ask for; a cloud without it fails validation at the config path that asks."""

    SLURM = "slurm"
    """Real Slurm on the cloud's VMs (training.scheduler.kind: slurm)."""
    SLURM_ACCOUNTING = "slurm-accounting"
    """slurmdbd with the cloud's managed MySQL for `sacct` and fair-share (training.scheduler.accounting: database)."""
    MANAGED_SCHEDULER = "managed-scheduler"
    """The cloud's managed batch scheduler (training.scheduler.kind: managed): AWS Batch, AzureML compute, ..."""
    RDMA_FABRIC = "rdma-fabric"
    """A low-latency fabric between training nodes: EFA, InfiniBand, GPUDirect TCPX/TCPXO/RDMA, RoCE."""
    SPOT = "spot"
    """Interruptible capacity (training.nodes.capacity / serving.replicas.capacity: spot)."""
    TIME_BOXED_RESERVATION = "time-boxed-reservation"
    """Accelerators reserved for a fixed window (capacity: capacity-block): EC2 Capacity Blocks, DWS calendar."""
    FLEX_START = "flex-start"
    """Capacity queued until the cloud can grant it, then lent for a fixed run time (capacity: flex-start): GCP DWS."""
    ON_DEMAND_RESERVATION = "on-demand-reservation"
    """An open-ended reservation the nodes launch into (capacity: on-demand with reservationId)."""
    MANAGED_LUSTRE = "managed-lustre"
    """A managed Lustre file system (training.storage.lustre): FSx for Lustre, Azure Managed Lustre, ..."""
    OBJECT_LINKED_FS = "object-linked-fs"
    """The parallel file system imports the dataset from object storage and exports checkpoints back."""
    ADMISSION_QUEUE = "admission-queue"
    """A managed queue in front of the replicas (serving.admission.kind queue): SQS, Service Bus, Pub/Sub, ..."""
    REPLICA_ADMISSION = "replica-admission"
    """The load balancer sends straight to the replicas, which admit requests themselves (serving.admission.kind replica)."""
    WAF_RATE_LIMIT = "waf-rate-limit"
    """A per-client rate limit at the load balancer (serving.admission.perClientRate)."""
    WARM_POOL = "warm-pool"
    """Stopped, pre-initialised replicas for the cold start (serving.replicas.warmPool)."""
    QUEUE_DEPTH_SCALING = "queue-depth-scaling"
    """Replicas scale on queue backlog per instance (serving), never on CPU."""
    LOAD_BALANCER_SCALING = "load-balancer-scaling"
    """Replicas without a queue scale on the load balancer's requests per replica (serving), never on CPU."""
    CROSS_ACCOUNT_ARTIFACTS = "cross-account-artifacts"
    """Serving reads model artifacts from the training account (training.artifactReaders, serving.artifactAccount)."""
    OBJECT_STORE_NETWORK_RULES = "object-store-network-rules"
    """The checkpoint store admits readers by network too (training.artifactReaderSubnets): Azure storage firewalls."""


@dataclass(frozen=True)
class InstanceType:
    """One accelerated machine type, in the terms every cloud shares."""

    name: str
    accelerator: str  # e.g. "H100"; the planner's per-accelerator tables are keyed by it
    accelerators: int  # GPUs (or Trainium / Inferentia / TPU chips) per instance
    accelerator_memory_gib: int  # per accelerator, as sold
    vcpus: int
    memory_gib: int
    fabric: str | None = None  # "efa", "infiniband", "gpudirect-tcpx", "gpudirect-tcpxo", "rdma", "roce"; None: none
    fabric_interfaces: int = 0  # fabric NICs (EFA devices, IB ports, GPUDirect NICs) one node configures
    fabric_gbps: int = 0  # the node's fabric bandwidth, Gb/s (0: unknown or no fabric)
    network_cards: int = 1
    time_boxed_reservation: bool = False  # offered as a time-boxed reservation (EC2 Capacity Blocks, ...)
    vendor: str = "nvidia"  # "nvidia", "amd", "aws-trainium", "aws-inferentia", "google-tpu" (driver stack)

    @property
    def family(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def has_fabric(self) -> bool:
        return self.fabric is not None and self.fabric_interfaces > 0

    @property
    def accelerator_memory_total_gib(self) -> int:
        return self.accelerators * self.accelerator_memory_gib


@dataclass(frozen=True)
class Quota:
    """A quota machines draw on: its name as the cloud's console and quota API spell it, and what it counts.

    Quotas are scoped to the account (subscription, project), which is why each workload lives in its own."""

    name: str
    unit: str  # "vCPUs" or "GPUs"
    code: str = ""  # its id in the cloud's quota API (AWS Service Quotas: L-417A185B), where one is tabled
    # Counted per zone (OCI's GPU limits: per availability domain): the zone a training cluster takes when its
    # stack pins none (`training.network.availabilityZone`); "": counted per region.
    first_zone: str = ""

    def amount(self, instance: InstanceType, count: int) -> int:
        """What `count` machines of `instance` take from this quota."""
        return count * (instance.accelerators if self.unit == "GPUs" else instance.vcpus)


class DatasetImport(StrEnum):
    """When a file system tier brings objects from the dataset store onto the file system (its `importPath`)."""

    AUTOMATIC = "automatic"
    """It follows the store by itself: objects added or changed later appear without an `up` (FSx for Lustre's
    automatic import)."""
    ON_REQUEST = "on-request"
    """Only when asked: the stack asks when the file system is created and again whenever
    `training.storage.lustre.importTrigger` changes (Managed Lustre's importData, Azure Managed Lustre's import
    at creation and its import jobs). Objects uploaded in between wait for the next request."""
    HEAD_COPIES = "head-copies"
    """No link to object storage: the scheduler's head node copies new and changed objects in at each of its
    boots (NFS tiers: GCP Filestore)."""


@dataclass(frozen=True)
class ParallelFsTier:
    """One tier of the cloud's managed parallel file system, as the neutral `training.storage.lustre` keys see it.

    `capacityGiB` is valid when it is one of `first_steps_gib` or a positive multiple of `increment_gib`
    at or above `min_gib` (and at or below `max_gib` when set). `throughput_per_tib` lists the MB/s per TiB
    settings this tier takes (empty: not settable, the tier fixes it).
    """

    name: str
    throughput_per_tib: tuple[int, ...]
    min_gib: int
    increment_gib: int
    first_steps_gib: tuple[int, ...] = ()
    max_gib: int | None = None
    imports_from_object_store: bool = True
    # When objects reach the file system: by themselves, when the stack asks, or by the head's copy.
    dataset_import: DatasetImport = DatasetImport.ON_REQUEST
    exports_to_object_store: bool = True
    # The file system exports only to the store it imports from (Azure Managed Lustre's Blob integration links
    # one container), never to a separate checkpoint store: the Slurm head node copies the checkpoint
    # directory there instead (accelstack.components.slurm.checkpoint_export_units).
    checkpoints_copied_by_head: bool = False
    persistent: bool = True
    # MB/s per TiB when `throughput_per_tib` is empty (the tier fixes it); None: not known, so not plannable.
    baseline_throughput_per_tib: int | None = None
    # How nodes mount it: the Lustre client, or NFS (a managed NFS service sold beside Lustre for small
    # clusters: GCP Filestore). `service` names it in node scripts' comments ("" : the platform's Lustre).
    protocol: str = "lustre"
    service: str = ""
    # Where the planner's capacity (GiB) and throughput (MB/s per TiB) land on the cloud's resource, for the
    # preview's derived-defaults table (None: not a number of its own there, e.g. a SKU that fixes it).
    capacity_property: PlannedProperty | None = None
    throughput_property: PlannedProperty | None = None

    def capacity_allowed(self, gib: int) -> bool:
        if gib in self.first_steps_gib:
            return True
        if gib < self.min_gib or (self.max_gib is not None and gib > self.max_gib):
            return False
        return gib % self.increment_gib == 0

    def capacity_rule(self) -> str:
        first = f"{', '.join(str(s) for s in self.first_steps_gib)} or " if self.first_steps_gib else ""
        top = f" up to {self.max_gib}" if self.max_gib else ""
        return f"{first}a multiple of {self.increment_gib} GiB from {self.min_gib}{top}"


@dataclass(frozen=True)
class ManagedScheduler:
    """The cloud's managed scheduler, as the spec rules and the cost see it."""

    name: str  # "AWS Batch", "Azure Machine Learning", "Cluster Director"
    # It mounts the checkpoint store on every node itself (Azure ML's rw_mount output, Cluster Director's bucket
    # storage config): checkpoints without a parallel file system are still shared.
    mounts_checkpoints: bool = False
    # It runs a login node the stack sizes (training.scheduler.headNode), billed while the cluster exists.
    login_node: bool = False


@dataclass(frozen=True)
class RuleTerms:
    """How the neutral spec rules (`accelstack.spec.catalog_rules`) word this cloud's machines, so a message
    names them as the cloud's documentation does and keeps the cloud's own hint."""

    machine_type: str = "accelerated machine type"  # a catalog row: "accelerated instance type", "GPU VM size"
    fabric: str = "low-latency fabric"  # what several training nodes need between them: "EFA", "InfiniBand"
    without_fabric: str = "the ordinary network"  # what nodes without it train over: "plain TCP", "Ethernet"
    fabric_machine_type: str = "a machine type with one"  # where to find one: "an EFA instance type", "an ND size"
    # What spot serving replicas would break besides the requests in flight ("" : nothing more to say).
    spot_serving_breaks: str = ""
    region: str = "a region of this cloud"  # with its article: "an AWS Region name", "a Compute Engine region"
    region_hint: str = "its regions are listed in the cloud's catalog"  # what they look like, how to list them


@dataclass(frozen=True)
class BootDataLimit:
    """The most boot data (cloud-init user data, custom data) one machine takes: the create call refuses more,
    after everything the machine needs already exists."""

    name: str  # the cloud's word for it: "user data", "custom data"
    max_bytes: int
    refused_by: str  # who refuses more, in messages: "EC2", "Azure"
    base64_encoded: bool = False  # the limit counts the base64 text (Azure), not the raw bytes (EC2)
    # The most all of one machine's values take together, where the cloud bounds that too (Compute Engine: 512 KB
    # of metadata per instance); None: one value is all a machine carries.
    total_max_bytes: int | None = None
    # The cloud's components send gzip-compressed boot data where the raw text would not fit (cloud-init
    # decompresses it: EC2 counts the bytes it receives); the limit then counts the compressed bytes.
    gzipped_when_over: bool = False

    def size(self, text: str) -> int:
        """`text` measured as the limit counts it, as the cloud's components will send it."""
        raw = text.encode()
        if self.gzipped_when_over and len(raw) > self.max_bytes:
            raw = gzipped(raw)
        return len(base64.b64encode(raw)) if self.base64_encoded else len(raw)


def gzipped(raw: bytes) -> bytes:
    """`raw` gzip-compressed the same way every time (mtime 0), so an unchanged boot script never reads as a
    change (a head whose user data changes is replaced)."""
    return gzip.compress(raw, compresslevel=9, mtime=0)


@dataclass(frozen=True)
class ReservedRange:
    """An address range a stack's network may not use on a cloud, and why (in messages)."""

    cidr: str
    why: str

    @property
    def network(self) -> ipaddress.IPv4Network:
        return ipaddress.IPv4Network(self.cidr)


@dataclass(frozen=True)
class PlannedProperty:
    """Where one number of the serving plan lands on this cloud's resources, for the preview's derived-defaults
    table: the resource's type token, its name after the stack's ("-replicas": `<stack>-replicas`), the
    property, and what the cloud adds to the planner's explanation (`note`)."""

    type_token: str
    name_suffix: str
    prop: str
    note: str = ""
    # The property's value per unit of the planner's number, and its unit ("" : the planner's own): Azure
    # Managed Lustre takes TiB where the planner counts GiB (scale 1/1024, unit "TiB").
    scale: float = 1.0
    unit: str = ""
    # Where the cloud sells steps in its own unit, the value the resource receives for the planner's number (OCI:
    # the Lustre step holding exactly that many GiB, `gb_for_gib`); None: the number times `scale`.
    convert: Callable[[float], float] | None = None


# The serving plan's numbers a cloud places (Catalog.serving_properties keys) and how the table names one a
# cloud does not place on a property (the number still shapes the stack: an estimate row). A key mapped to
# None is not used on that cloud and is left out of the table.
SERVING_PLAN_NUMBERS: Mapping[str, str] = {
    "healthCheckGrace": "replica health-check grace",
    "unhookedGrace": "replica health-check grace from launch (no launch hook)",
    "warmStart": "standby replica start",
    "launchBudget": "replica launch budget",
    "healthCheckInterval": "health check interval",
    "healthCheckTimeout": "health check timeout",
    "drain": "connection draining",
    "idleTimeout": "load balancer request timeout",
    "backlogTarget": "backlog per replica target",
    "loadTarget": "requests per replica per minute target",
    "replicaFullRate": "requests per second one replica clears",
    "lease": "request lease",
    "ageAlarm": "oldest-request alarm",
    "rootVolume": "replica root volume",
}


@dataclass(frozen=True)
class AdmissionLimits:
    """What the cloud's admission queue and per-client rate limit accept: its services' own bounds, checked at
    the serving.admission keys by one neutral rule (accelstack.spec.catalog_rules)."""

    queue_service: str  # "SQS", "Service Bus", "Pub/Sub": named in the error
    ttl_seconds: tuple[int, int]  # (least, most) a request may wait: the queue's retention / time-to-live
    max_receive_count: tuple[int, int]  # deliveries before the dead-letter queue
    rate_service: str  # "AWS WAF", "Application Gateway WAF", "Cloud Armor"
    per_client_rate: tuple[int, int]  # requests per client per window
    rate_windows: tuple[int, ...]  # the evaluation windows the rate limit takes, in seconds
    # `serving.admission.maxReceiveCount` when omitted (accelstack.spec.cloud_defaults): the service's own default.
    default_max_receive_count: int


@dataclass(frozen=True)
class AccountServices:
    """What a fresh account must have switched on before a stack's resources can be created there: Google Cloud
    APIs (a project enables them per service), Azure resource providers (a subscription registers them per
    namespace). Each Pulumi type token the components register maps, by its longest matching prefix, to the
    services its create call goes to; a type with no row is reported, never guessed."""

    kind: str  # how the cloud names one: "API", "resource provider"
    by_type_prefix: Mapping[str, tuple[str, ...]]  # type token prefix -> services its calls need
    # Whether the stack itself switches them on (GCP: projects.Service), else what the deployer must do first.
    enabled_by_stack: bool
    note: str  # one line for the preview: who switches them on, and what must exist before the first `up`
    # Services the stack's own switching-on may not wait long enough for, and what to do about them beforehand.
    slow: tuple[str, ...] = ()
    slow_note: str = ""

    def services_of(self, type_token: str) -> tuple[str, ...] | None:
        """The services `type_token`'s calls need (empty: none), or None when no prefix matches."""
        matches = [prefix for prefix in self.by_type_prefix if type_token.startswith(prefix)]
        return self.by_type_prefix[max(matches, key=len)] if matches else None

    def needed(self, type_tokens: Iterable[str]) -> tuple[list[str], list[str]]:
        """(the services a stack of these types needs, sorted; the cloud package's types no row covers, sorted)."""
        services: set[str] = set()
        unknown: set[str] = set()
        packages = {prefix.split(":", 1)[0] for prefix in self.by_type_prefix}
        for token in type_tokens:
            if token.split(":", 1)[0] not in packages:
                continue  # another package's (random, a dynamic resource): no cloud service behind it
            found = self.services_of(token)
            if found is None:
                unknown.add(token)
            else:
                services.update(found)
        return sorted(services), sorted(unknown)


@dataclass(frozen=True)
class MachineOffers:
    """Where a cloud offers each machine type, from a dated source: machine type -> region -> the zones that offer
    it (empty: the cloud's zones are not tracked, only the region). A machine type without a row is not checked."""

    checked: str  # ISO date the table was read
    source: str  # where it was read, in messages
    zones: Mapping[str, Mapping[str, tuple[str, ...]]]
    # The regions the source lists at all (empty: every region of the catalog). Outside them a missing row says
    # nothing about the cloud, only about the source, so those regions are not checked.
    regions_read: tuple[str, ...] = ()

    def covers(self, region: str) -> bool:
        """Whether the source lists `region`, so a machine type without a row there is known not to be offered."""
        return not self.regions_read or region in self.regions_read


@dataclass(frozen=True)
class Catalog:
    """A cloud's dated, sourced facts: accelerated machine types, regions and parallel-FS tiers."""

    cloud: str
    checked: str  # ISO date the tables were last checked against `sources`
    sources: tuple[str, ...]  # the documents (titles or URLs) the rows come from
    instances: Mapping[str, InstanceType]
    regions: tuple[str, ...]
    parallel_fs: Mapping[str, ParallelFsTier] = field(default_factory=dict)
    default_parallel_fs: str | None = None  # the tier a spec without `lustre.tier` gets; None: the first listed
    # Where nodes mount the file system when `lustre.mountPath` is omitted (checkpoints default under it).
    default_mount_path: str = "/lustre"
    # The Slurm head node's (or a managed scheduler's login node's) machine type when `headNode.instanceType` is
    # omitted: a CPU type of this cloud; None: the cloud runs no head node, so none is filled.
    default_head_node: str | None = None
    # The serving replicas' image when `serving.replicas.imageId` is omitted, in the form the replica group takes
    # (an AMI id or resolve:ssm: parameter on AWS); None: the components boot the cloud's own image (its
    # images module) and a stated imageId is refused.
    default_replica_image: str | None = None
    # What the replicas boot where the components pick the image (no default_replica_image), as messages name it.
    replica_image: str = "the cloud's own image"
    # What `training.nodes.imageId` names on this cloud, as messages name it (e.g. "an image OCID"); None: the
    # components always boot their own node image (`node_image`) and a stated imageId is refused.
    node_image_id_form: str | None = None
    node_image: str = "the cloud's own image"
    parallel_fs_service: str = "the parallel file system"  # its product name in messages ("FSx for Lustre")
    object_store_service: str = "object storage"  # its product name in messages ("S3")
    # The URI schemes the spec's object-store URIs (datasets, checkpoints, model weights, adapters) take on this
    # cloud ("s3", "gs"); empty: not decided yet, not checked.
    object_uri_schemes: tuple[str, ...] = ()
    # The shortlists `accelstack advise` compares, in order (empty: every instance type the price book prices).
    serving_candidates: tuple[str, ...] = ()
    single_node_training_candidates: tuple[str, ...] = ()
    distributed_training_instance: str | None = None  # None: the priced fabric instance with the most memory
    managed_model_api: str | None = None  # the cloud's hosted-model service, named by `advise` ("Amazon Bedrock")
    # The quota each machine type draws on, by capacity ("on-demand", "spot"); a type or capacity missing here
    # is reported as not known rather than guessed (capacity reservations and blocks draw on what was bought).
    quotas: Mapping[str, Mapping[str, Quota]] = field(default_factory=dict)
    # Where the serving plan's numbers land (keys of SERVING_PLAN_NUMBERS); and the backlog metric the replicas
    # scale on, as the derived-defaults table explains it ("" : the planner's own queue metrics).
    serving_properties: Mapping[str, PlannedProperty | None] = field(default_factory=dict)
    serving_backlog_metric: str = ""
    serving_terms: ServingTerms = field(default_factory=ServingTerms)  # its load balancer's, queue's and pool's names
    # The admission queue's and rate limit's bounds (None: the cloud has neither; the neutral spec bounds only).
    admission: AdmissionLimits | None = None
    # Which regions (and zones) offer each machine type (None: not tracked; every region is taken).
    offers: MachineOffers | None = None

    def quota(self, instance: str, capacity: str) -> Quota | None:
        """The quota `instance` machines bought as `capacity` draw on; None: not in this catalog."""
        return self.quotas.get(capacity, {}).get(instance)

    def instance(self, name: str) -> InstanceType:
        """The machine type, or ValueError naming the ones this catalog knows."""
        try:
            return self.instances[name]
        except KeyError:
            raise ValueError(
                f"unknown {self.cloud} instance type {name!r}; allowed: {', '.join(self.instances)}"
            ) from None


@dataclass(frozen=True)
class ManagedDatabasePrice:
    """The managed MySQL that holds slurmdbd's records (training.scheduler.accounting: database), priced at the size
    the cloud's component deploys (accelstack/clouds/<cloud>/accounting_database.py): its compute per hour, its
    provisioned storage, and its backups (the retained backups assumed to take the provisioned size, billed beyond
    what the service includes free)."""

    product: str  # what is deployed, as reports name it ("RDS for MySQL db.t4g.small, Single-AZ, gp3 20 GiB")
    hourly: float  # the instance (or its vCPUs and memory), USD per hour
    storage_gib: int  # provisioned at create time (it grows by itself past that; growth is not priced)
    storage_gb_month: float
    backup_gb_month: float
    backup_free_gib: float  # backup storage included free (AWS and Azure: up to the provisioned storage)

    def monthly(self, hours_per_month: float) -> float:
        backups = max(0.0, self.storage_gib - self.backup_free_gib) * self.backup_gb_month
        return self.hourly * hours_per_month + self.storage_gib * self.storage_gb_month + backups

    def basis(self, hours_per_month: float) -> str:
        backups = max(0.0, self.storage_gib - self.backup_free_gib)
        return (
            f"{self.product}: ${self.hourly:g}/h x {hours_per_month:g} h + {self.storage_gib} GiB x "
            f"${self.storage_gb_month:g}/GB-month + backups {backups:g} GiB billed x ${self.backup_gb_month:g}/GB-month "
            f"({self.backup_free_gib:g} GiB free; a week of backups assumed the provisioned size)"
        )


@dataclass(frozen=True)
class Prices:
    """A cloud's dated list prices (USD) in one region; `accelstack.planner.pricing.PriceBook` is built from it.

    `extra` keys the serving simulator reads (absent: that line is not priced): `load_balancer_hourly`,
    `load_balancer_capacity_unit_hourly`, `load_balancer_new_connections_per_capacity_unit` (connections/s one
    capacity unit carries) and `queue_per_million_requests`.
    """

    checked: str
    region: str
    source: str  # the price pages or API the numbers were read from
    on_demand_hourly: Mapping[str, float]  # instance type -> USD per hour
    spot_discount: float  # typical discount off on-demand (0.6: spot costs 40 %)
    parallel_fs_gb_month: Mapping[str, float]  # ParallelFsTier.name (or name/throughput) -> USD per GB-month
    object_gb_month: float  # standard object storage
    block_gb_month: float  # general-purpose block storage (boot and warm-pool disks)
    not_priced: tuple[str, ...] = ()  # cost lines the planner leaves out, said in the cost report
    extra: Mapping[str, float] = field(default_factory=dict)  # load balancer, queue, ... by documented key
    regional_hourly: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # other region -> type -> USD/h
    # Provisioned IOPS and throughput billed above a free baseline (gp3, Premium SSD v2, Hyperdisk) per month; 0: none.
    block_iops_month: float = 0.0
    block_free_iops: int = 0
    block_mibps_month: float = 0.0
    block_free_mibps: int = 0
    # The Slurm accounting database (training.scheduler.accounting: database); None: the cloud deploys none.
    accounting_database: ManagedDatabasePrice | None = None
    label: str = "list prices"  # how reports name the table ("accelstack.clouds.aws.prices")
    block_product: str = "block storage"  # what block_gb_month prices, as reports name it ("EBS gp3")


@dataclass(frozen=True)
class ReplaceRules:
    """When `pulumi up` replaces a resource instead of updating it, by Pulumi type token, as the cloud's providers
    decide it (each row names the provider source that says so). `accelstack.engine.replacement` reads the union
    over the registered clouds: a type token no cloud tables is reported as not known, never as an update."""

    # Inputs whose change replaces the resource (a dotted path names an input nested in an object whose other
    # members update in place). A type whose inputs never replace it is tabled with no input: ().
    forcing: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Inputs whose decrease replaces the resource (an increase updates it in place).
    shrink: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Inputs that replace only when another input is true: type token -> (that input, the inputs).
    forcing_when: Mapping[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    # The input the provider fills with an auto-name, where it is not `name`: set by the program, the replacement
    # needs the name the old resource still holds, so the old one is deleted first.
    auto_name: Mapping[str, str] = field(default_factory=dict)
    # Inputs that only label a resource: an edit touching nothing else is reported as "tags only".
    tag_properties: frozenset[str] = frozenset()


@dataclass(frozen=True)
class TerraformProvider:
    """A Terraform-bridged Pulumi package as a Terraform plan names it (`accelstack.engine.terraform_plan`, the
    view Terraform scanners read). A type token without a row is left out of the plan and listed, never guessed."""

    package: str  # the Pulumi package, the first part of its type tokens ("aws")
    address: str  # the Terraform provider's source address ("registry.terraform.io/hashicorp/aws")
    types: Mapping[str, str]  # Pulumi type token -> Terraform resource type
    # Per Terraform type: snake_case Pulumi input name -> Terraform block name (the bridge pluralises list blocks).
    block_renames: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # Per Terraform type: attributes of map type besides tags and tags_all (kept as objects, keys untouched).
    map_attributes: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # Per Terraform type: a block name -> the attribute the same input is when the program passes a map instead
    # of a list of blocks.
    map_forms: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class ArmType:
    """One resource kind as an ARM template names it (`accelstack.engine.arm_template`)."""

    type: str  # "Microsoft.Storage/storageAccounts"
    name: tuple[str, ...]  # the inputs whose values form the ARM name, parent first; "=x" is a literal segment
    renames: Mapping[str, str] = field(default_factory=dict)  # SDK input -> ARM property, where the SDK renamed


@dataclass(frozen=True)
class ArmProvider:
    """A package generated from the Azure REST API specs, as an ARM template names its resources (the view ARM
    scanners read). A type token without a row is left out of the template and listed, never guessed."""

    package: str  # "azure-native"
    types: Mapping[str, ArmType]
    sub_resource_lists: frozenset[str] = frozenset()  # lists whose items ARM nests as {id, name, properties}


@dataclass(frozen=True)
class Cloud:
    """One cloud's pure description. Registered by name in `accelstack.clouds.registry`."""

    name: str  # "aws"; the registry key and the spec's `cloud` value
    title: str  # "Amazon Web Services"
    account_kind: str  # "account", "subscription", "project", "compartment": what a quota is scoped to
    pulumi_packages: frozenset[str]  # Pulumi provider package names the stacks pin, e.g. {"aws"}
    features: frozenset[Feature]
    catalog: Catalog
    prices: Prices
    # Why the cloud lacks each feature it lacks, in the cloud's own terms (what to use instead, where there is
    # something): the spec's error says it at the key that asks. Every deployable cloud gives one per feature.
    unsupported: Mapping[Feature, str] = field(default_factory=dict)
    limits: Mapping[str, int] = field(default_factory=dict)  # documented hard limits by name
    # The boot data one machine takes, checked against its components' rendering (None: no limit checked).
    boot_data_limit: BootDataLimit | None = None
    # Ranges this cloud keeps for itself beyond those no network may use (accelstack.spec.address_rules).
    reserved_ranges: tuple[ReservedRange, ...] = ()
    terms: RuleTerms = field(default_factory=RuleTerms)  # how the neutral spec rules word its machines
    components: str | None = None  # module holding the Pulumi half; None: described, not deployable yet
    # The workloads its components build (a cloud's components can land one workload at a time).
    workloads: frozenset[str] = frozenset({"training", "serving"})
    # Modules of spec rules (`@accelstack.spec.validators.rule` functions) that run for this cloud's stacks
    # only, in this order, after the neutral rules: the spec imports no cloud module, a cloud names its own.
    rules: tuple[str, ...] = ()
    # The provider's own region setting in a stack file ("aws:region", "azure-native:location", "gcp:region"):
    # Pulumi users set it by habit; it must agree with account.region, which is what accelstack deploys to.
    provider_region_key: str | None = None
    # What the cloud's managed scheduler (training.scheduler.kind: managed) is, where the neutral layers ask.
    managed_scheduler: ManagedScheduler = field(default_factory=lambda: ManagedScheduler("the managed scheduler"))
    # "module:Class" of the pydantic model of the `account` block (an accelstack.spec.accounts.Account);
    # None: accelstack's own model for this cloud's name (aws, azure, gcp, oci, vultr).
    account_model: str | None = None
    # What makes `pulumi up` replace its resources rather than update them (`accelstack diff`, day-2 checks), for
    # every type token its components register, its Pulumi provider included.
    replace_rules: ReplaceRules = field(default_factory=ReplaceRules)
    # The Terraform-bridged packages it pins, as a Terraform plan names them (empty: no Terraform plan view).
    terraform: tuple[TerraformProvider, ...] = ()
    # The packages generated from the Azure REST API specs, as an ARM template names them (empty: no ARM view).
    arm: tuple[ArmProvider, ...] = ()
    # The `accelstack.simulate` autoscaler its serving components deploy with a queue (`simulate serving` without
    # --autoscaler; a fixed fleet simulates as "fixed" on every cloud); None: it has none to simulate, so the
    # command asks for --autoscaler.
    default_autoscaler: str | None = None
    # The one it deploys without a queue (serving.admission.kind replica): on the load balancer's requests per replica.
    load_balancer_autoscaler: str | None = None
    # The scaling rules its serving components deploy, by those autoscaler names (`plan_serving(..., scaling=)` makes
    # the stack's; the simulator replays it). None: the cloud describes none.
    serving_scaling: ScalingRules | None = None
    # What a fresh account must have switched on for the stack's resource types (None: not described).
    account_services: AccountServices | None = None

    @property
    def deployable(self) -> bool:
        return self.components is not None and bool(self.workloads)

    def deploys(self, workload: str) -> bool:
        """Whether this cloud's components build `workload` stacks."""
        return self.deployable and workload in self.workloads

    def parallel_fs_tier(self, name: str | None) -> ParallelFsTier | None:
        """The named tier of the parallel file system (None: the default one), or None if there is none."""
        tiers = self.catalog.parallel_fs
        if name is None:
            name = self.catalog.default_parallel_fs or next(iter(tiers), None)
        return tiers.get(name) if name is not None else None
