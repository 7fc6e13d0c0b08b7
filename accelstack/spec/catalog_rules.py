"""Rules every cloud enforces alike, written once and read from the stack's cloud's description: its catalog
(`Catalog.instances`), the words its documentation uses (`Cloud.terms`) and its limits (`Cloud.boot_data_limit`).

A cloud gets them by registering, with no rule module of its own. What only one cloud's API would reject stays in
that cloud's rule modules (`Cloud.rules`).

Boot data. Whether a machine's boot data (cloud-init user data, custom data) fits the cloud's limit is known only
by rendering it, which the spec layer cannot do (the components sit above it). So a cloud's rule modules register
a renderer, `@boot_data(workload=...)`, that yields what its components will render at its longest, and the one
rule here measures it against the limit the cloud declares.

Names. What a stack's name becomes on its cloud (a vault, a bucket, a network, each with its service's naming
rule) is listed by the cloud's `names` module (`@stack_names(workload=...)`), and one rule here refuses a stack
name that would give a name its service refuses (`accelstack.clouds.naming`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, overload

from accelstack.clouds import registry
from accelstack.clouds.base import Cloud
from accelstack.clouds.naming import DerivedName
from accelstack.spec.models import ServingSpec, ServingStack, StackSpec, TrainingStack
from accelstack.spec.problems import Level, Problem, did_you_mean
from accelstack.spec.rule_registry import Registered, Workload, in_run_order, rule


def _unknown_machine_type(cloud: Cloud, name: str) -> str:
    instances = cloud.catalog.instances
    return (
        f"{name!r} is not a supported {cloud.terms.machine_type}{did_you_mean(name, instances)}; "
        f"allowed: {', '.join(instances)}"
    )


@rule(workload="training")
def training_machine_type_in_catalog(spec: TrainingStack) -> Iterator[Problem]:
    """Only machine types in the cloud's catalog are sized and wired (fabric NICs, drivers): a guess would leave
    the fabric dark."""
    cloud = registry.get(spec.cloud)
    name = spec.training.nodes.instance_type
    if name not in cloud.catalog.instances:
        yield Problem("training.nodes.instanceType", _unknown_machine_type(cloud, name))


@rule(workload="training")
def several_nodes_need_a_fabric(spec: TrainingStack) -> Iterator[Problem]:
    """Tightly coupled multi-node training needs the low-latency fabric between the nodes (EFA, InfiniBand,
    GPUDirect): NCCL over the ordinary network is an order of magnitude slower."""
    cloud = registry.get(spec.cloud)
    nodes = spec.training.nodes
    machine = cloud.catalog.instances.get(nodes.instance_type)
    if machine is None or nodes.count == 1 or machine.has_fabric:
        return
    terms = cloud.terms
    with_fabric = [name for name, known in cloud.catalog.instances.items() if known.has_fabric]
    advice = (
        f"use count: 1 or {terms.fabric_machine_type}: {', '.join(with_fabric)}"
        if with_fabric
        else f"use count: 1 (the {cloud.name} catalog has no machine type with one)"
    )
    yield Problem(
        "training.nodes.instanceType",
        f"{machine.name} has no {terms.fabric}, so {nodes.count} nodes would train over {terms.without_fabric}; "
        + advice,
    )


@rule
def region_is_one_the_cloud_has(spec: StackSpec) -> Iterator[Problem]:
    """account.region and every separation.allowedRegions entry name a region the cloud has (its catalog's dated
    table): every regional create call in an unknown one fails, after whatever came before it exists. The same
    refusal on every cloud; a region newer than the table is added to the table."""
    named = [(f"account.{type(spec.account).region_key()}", spec.account.region)]  # Azure calls it location
    named += [(f"separation.allowedRegions.{i}", r) for i, r in enumerate(spec.separation.allowed_regions or [])]
    for path, region in named:
        message = unknown_region(spec.cloud, region)
        if message is not None:
            yield Problem(path, message)


def unknown_region(cloud_name: str, region: str) -> str | None:
    """Why `region` is not one of the cloud's (its catalog's dated table), or None: workload and landing stacks."""
    cloud = registry.get(cloud_name)
    regions = cloud.catalog.regions
    if region in regions:
        return None
    return (
        f"{region!r} is not {cloud.terms.region} (accelstack's table, checked {cloud.catalog.checked})"
        f"{did_you_mean(region, regions) or ''}; {cloud.terms.region_hint}"
    )


def _machine_and_zone(spec: StackSpec) -> tuple[str, str, str | None]:
    """The config path of the stack's GPU machine type, the type, and the zone it pins (None: the cloud picks)."""
    if isinstance(spec, TrainingStack):
        nodes = spec.training
        return "training.nodes.instanceType", nodes.nodes.instance_type, nodes.network.availability_zone
    return "serving.replicas.instanceType", spec.serving.replicas.instance_type, None


@rule
def region_offers_the_machine_type(spec: StackSpec) -> Iterator[Problem]:
    """The stack's region offers its GPU machine type (the cloud's dated table, `Catalog.offers`): elsewhere every
    create call of the nodes or replicas fails, after the network and the storage exist. A pinned zone without it
    is warned (where the table tracks zones). A machine type without a row in the table, or a region the table's
    source does not list, is not checked."""
    cloud = registry.get(spec.cloud)
    offers = cloud.catalog.offers
    path, machine, zone = _machine_and_zone(spec)
    if offers is None or machine not in offers.zones:
        return
    where = offers.zones[machine]
    region_key = f"account.{type(spec.account).region_key()}"
    region = spec.account.region
    table = f"{cloud.title}'s offers as accelstack's table has them, checked {offers.checked}"
    if region not in where:
        if offers.covers(region):
            # A partial source (Azure's lists US regions only) can name only the regions it read.
            among = f" among the {len(offers.regions_read)} the table lists" if offers.regions_read else ""
            yield Problem(
                path,
                f"{machine} is not offered in {region} ({region_key}; {table}); regions that offer it{among}: "
                f"{', '.join(sorted(where))}",
            )
    elif zone is not None and where[region] and zone not in where[region]:
        # A warning while the shipped GCP stack pins us-central1-a, where A3 Ultra and A4 (which tests and day-2
        # rows switch to) are not offered: an error once it moves to a zone offering every type it switches to.
        yield Problem(
            f"{path.split('.')[0]}.network.availabilityZone",
            f"{machine} is not offered in zone {zone} ({table}), so the nodes would not be created; zones of "
            f"{region} that offer it: {', '.join(where[region])}",
            Level.WARNING,
        )


@rule(workload="serving")
def serving_machine_type_in_catalog(spec: ServingStack) -> Iterator[Problem]:
    """Replicas run on a machine type of the cloud's catalog and shard over at most its GPUs. Whether the model
    fits in their memory needs the planner's sizing: `accelstack.planner_rules`."""
    cloud = registry.get(spec.cloud)
    replicas = spec.serving.replicas
    machine = cloud.catalog.instances.get(replicas.instance_type)
    if machine is None:
        yield Problem("serving.replicas.instanceType", _unknown_machine_type(cloud, replicas.instance_type))
        return
    if machine.vendor != "nvidia":
        # Every cloud's replica boot hands the GPUs to the server container through NVIDIA's runtime
        # (`docker run --gpus all`) on the cloud's NVIDIA image, and the default server image is CUDA's build.
        yield Problem(
            "serving.replicas.instanceType",
            f"{machine.name} has {machine.vendor.upper()} GPUs ({machine.accelerator}); replicas run the server "
            "container with NVIDIA's container runtime on an NVIDIA image, so they would start without GPUs; "
            "allowed: a machine type with NVIDIA GPUs",
        )
        return
    shards = replicas.tensor_parallel or machine.accelerators
    if shards > machine.accelerators:
        yield Problem(
            "serving.replicas.tensorParallel",
            f"{shards} exceeds the {machine.accelerators} {machine.accelerator} GPU(s) of {machine.name}",
        )


@rule(workload="serving")
def serving_is_on_demand(spec: ServingStack) -> Iterator[Problem]:
    """A service answers while someone waits: a spot reclaim or the end of a time-boxed reservation drops the
    requests in flight, and what the cloud keeps warm for the cold start assumes machines that stay."""
    capacity = spec.serving.replicas.capacity
    if capacity == "on-demand":
        return
    also = registry.get(spec.cloud).terms.spot_serving_breaks
    yield Problem(
        "serving.replicas.capacity",
        f"{capacity!r} is not allowed for serving (interruptible or time-boxed capacity drops requests in flight"
        + (f", and {also}" if also else "")
        + "); allowed: on-demand",
    )


@rule(workload="serving")
def requests_are_served_within_their_ttl(spec: ServingStack) -> Iterator[Problem]:
    """The latency target fits in the request TTL (admission.ttlSeconds, which every cloud's queue enforces: SQS
    retention, Service Bus time-to-live, and on Pub/Sub, whose retention is 10 minutes at least, the worker
    dropping older requests; with admission.kind replica, the replicas' bounded wait), the target is not below
    one request's service time, and a full queue drains before its tail expires. The queue worker extends its
    lease while a request runs (SQS visibility, Service Bus lock, Pub/Sub ack deadline), so those bound nothing."""
    serving = spec.serving
    admission, slo, replicas = serving.admission, serving.slo, serving.replicas
    limits = registry.get(spec.cloud).catalog.admission
    where = f"the {limits.queue_service} queue drops it" if admission.kind == "queue" and limits else "it is refused"
    if slo.target_seconds > admission.ttl_seconds:
        yield Problem(
            "serving.slo.targetSeconds",
            f"{slo.target_seconds:g} s exceeds the request TTL admission.ttlSeconds={admission.ttl_seconds} (past it "
            f"{where}): requests expire before the latency target allows them to be served; allowed: at most "
            f"{admission.ttl_seconds} s, or raise admission.ttlSeconds",
        )
    if slo.target_seconds < slo.service_seconds:
        yield Problem(
            "serving.slo.targetSeconds",
            f"{slo.target_seconds:g} s is below the per-request service time {slo.service_seconds:g} s: "
            f"every request misses the target even with an empty queue; allowed: at least {slo.service_seconds:g} s",
        )
    drain_seconds = admission.max_depth * slo.service_seconds / replicas.max
    if drain_seconds > admission.ttl_seconds:
        yield Problem(
            "serving.admission.maxDepth",
            f"{admission.max_depth} queued requests take ~{drain_seconds:.0f} s to drain at "
            f"{replicas.max} replicas x {slo.service_seconds:g} s each, longer than the TTL of "
            f"{admission.ttl_seconds} s: the tail expires unserved; lower maxDepth to "
            f"<= {math.floor(admission.ttl_seconds * replicas.max / slo.service_seconds)} or raise replicas.max",
            Level.WARNING,
        )


# --- boot data ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BootData:
    """Boot data one kind of machine gets, as the cloud's components will render it at its longest."""

    path: str  # the config key that makes it grow
    machines: str  # who boots with it: "the head node", "the replicas"
    text: str
    cause: str = ""  # what made it this size, "150 partitions" ("" : nothing one key says)
    remedy: str = ""  # "use fewer partitions (or features)"
    # The machine's other values, measured as the limit counts them, for a cloud that bounds their total
    # (`BootDataLimit.total_max_bytes`); one value of them is yielded with beside=0 so the total is judged once.
    beside: int = 0

    @classmethod
    def of_replicas(cls, serving: ServingSpec, text: str) -> BootData:
        """The serving replicas' boot data: the adapters are what makes it grow."""
        adapters = f"{len(serving.model.adapters)} adapter(s)"
        return cls(
            "serving.model.adapters", "the replicas", text, cause=adapters, remedy="serve fewer adapters per stack"
        )


RENDERERS: list[Registered[BootData]] = []

TrainingRenderer = TypeVar("TrainingRenderer", bound=Callable[[TrainingStack], Iterator[BootData]])
ServingRenderer = TypeVar("ServingRenderer", bound=Callable[[ServingStack], Iterator[BootData]])


@overload
def boot_data(*, workload: Literal["training"]) -> Callable[[TrainingRenderer], TrainingRenderer]: ...
@overload
def boot_data(*, workload: Literal["serving"]) -> Callable[[ServingRenderer], ServingRenderer]: ...
def boot_data(*, workload: Workload) -> Any:
    """Register a renderer of `workload` stacks' boot data (in a module its cloud's `Cloud.rules` names)."""

    def register(render: Callable[..., Iterator[BootData]]) -> Callable[..., Iterator[BootData]]:
        RENDERERS.append(Registered(render, workload))
        return render

    return register


@rule
def boot_data_fits_the_clouds_limit(spec: StackSpec) -> Iterator[Problem]:
    """Each machine's boot data, rendered as the cloud's components will, fits the cloud's limit: over it, the
    machines could not launch, and `pulumi up` would fail after the network and the storage exist."""
    limit = registry.get(spec.cloud).boot_data_limit
    if limit is None:
        return
    for render in in_run_order(RENDERERS, spec.cloud):
        for data in render(spec):
            size = limit.size(data.text)
            whose = f"{data.machines}'" if data.machines.endswith("s") else f"{data.machines}'s"
            remedy = f"; {data.remedy}" if data.remedy else ""
            encoded = " base64-encoded" if limit.base64_encoded else ""
            if limit.gzipped_when_over and len(data.text.encode()) > limit.max_bytes:
                encoded += " gzip-compressed"
            if size > limit.max_bytes:
                what = f"{data.cause} make {whose} {limit.name}" if data.cause else f"{whose} {limit.name} is"
                yield Problem(
                    data.path,
                    f"{what} {size:,} bytes{encoded}; {limit.refused_by} accepts at most {limit.max_bytes:,}, so "
                    f"{data.machines} could not launch" + remedy,
                )
            elif data.beside and limit.total_max_bytes is not None and size + data.beside > limit.total_max_bytes:
                yield Problem(
                    data.path,
                    f"{whose} {limit.name}s take {size + data.beside:,} bytes together{encoded}; {limit.refused_by} "
                    f"accepts at most {limit.total_max_bytes:,} per machine, so {data.machines} could not launch"
                    + remedy,
                )


@rule(workload="serving")
def replica_image_is_the_clouds(spec: ServingStack) -> Iterator[Problem]:
    """`serving.replicas.imageId` is taken where the cloud's replica group boots a stated image (AWS: an AMI); a cloud
    whose components boot their own image (no `Catalog.default_replica_image`) would ignore it silently: refused."""
    catalog = registry.get(spec.cloud).catalog
    image = spec.serving.replicas.image_id
    if catalog.default_replica_image is None and image is not None:
        yield Problem(
            "serving.replicas.imageId",
            f"{image!r}: {spec.cloud} replicas boot {catalog.replica_image}, which the stack chooses; remove imageId",
        )


@rule(workload="training")
def node_image_is_the_clouds(spec: TrainingStack) -> Iterator[Problem]:
    """`training.nodes.imageId` is taken where the cloud's node group boots a stated image
    (`Catalog.node_image_id_form`); elsewhere the components choose the node image and would ignore it: refused."""
    catalog = registry.get(spec.cloud).catalog
    image = spec.training.nodes.image_id
    if catalog.node_image_id_form is None and image is not None:
        yield Problem(
            "training.nodes.imageId",
            f"{image!r}: {spec.cloud} training nodes boot {catalog.node_image}, which the stack chooses; remove imageId",
        )


@rule(workload="serving")
def admission_within_the_clouds_limits(spec: ServingStack) -> Iterator[Problem]:
    """The admission queue's TTL and delivery count (with admission.kind queue), and the per-client rate limit,
    within what the cloud's own queue and WAF accept (`Catalog.admission`): one rule, the bounds in each cloud's catalog."""
    limits = registry.get(spec.cloud).catalog.admission
    if limits is None:
        return
    admission = spec.serving.admission
    queued = (
        ("ttlSeconds", admission.ttl_seconds, limits.ttl_seconds, limits.queue_service, "s"),
        ("maxReceiveCount", admission.max_receive_count, limits.max_receive_count, limits.queue_service, "deliveries"),
    )
    ranged = (
        *(queued if admission.kind == "queue" else ()),  # replicas admit requests without the queue's bounds
        ("perClientRate", admission.per_client_rate, limits.per_client_rate, limits.rate_service, "requests"),
    )
    for key, value, (least, most), service, unit in ranged:
        if not least <= value <= most:
            yield Problem(
                f"serving.admission.{key}",
                f"{value} {unit}; {service} on {spec.cloud} takes {least}..{most} {unit}",
            )
    window = admission.rate_window_seconds
    if window not in limits.rate_windows:
        yield Problem(
            "serving.admission.rateWindowSeconds",
            f"{window} s: {limits.rate_service} evaluates rate limits per fixed windows; allowed on {spec.cloud}: "
            f"{', '.join(str(s) for s in limits.rate_windows)}",
        )


# --- names derived from the stack's name -----------------------------------------------------------


NAMERS: list[Registered[DerivedName]] = []

TrainingNamer = TypeVar("TrainingNamer", bound=Callable[[TrainingStack], Iterator[DerivedName]])
ServingNamer = TypeVar("ServingNamer", bound=Callable[[ServingStack], Iterator[DerivedName]])
AnyNamer = TypeVar("AnyNamer", bound=Callable[[StackSpec], Iterator[DerivedName]])


@overload
def stack_names(*, workload: Literal["training"]) -> Callable[[TrainingNamer], TrainingNamer]: ...
@overload
def stack_names(*, workload: Literal["serving"]) -> Callable[[ServingNamer], ServingNamer]: ...
@overload
def stack_names(*, workload: None = None) -> Callable[[AnyNamer], AnyNamer]: ...
def stack_names(*, workload: Workload | None = None) -> Any:
    """Register what `workload` stacks' names become on a cloud (in a module its `Cloud.rules` names)."""

    def register(names: Callable[..., Iterator[DerivedName]]) -> Callable[..., Iterator[DerivedName]]:
        NAMERS.append(Registered(names, workload))
        return names

    return register


def derived_names(spec: StackSpec) -> list[DerivedName]:
    """Every name `spec`'s cloud derives from its stack name, as its components will."""
    return [name for namer in in_run_order(NAMERS, spec.cloud) for name in namer(spec)]


@rule
def derived_names_fit_the_clouds_rules(spec: StackSpec) -> Iterator[Problem]:
    """Every name the stack's name becomes is one its service takes. Names accelstack derives itself are fitted
    to their rule (accelstack.clouds.naming.fitted); a Pulumi auto-name (the logical name and a random suffix)
    cannot be shortened without replacing the resource, so the stack name is refused, once per service, with
    the rule: otherwise `up` fails at that resource, after the ones before it exist."""
    refused: set[str] = set()
    for name in derived_names(spec):
        problem = name.problem()
        if problem is None or name.rule.service in refused:
            continue
        refused.add(name.rule.service)
        shape = f"{name.name}<random suffix>" if name.autonamed else name.name
        room = name.rule.max_length - (len(name.deployed) - len(spec.stack))
        shorter = (
            f"; a {spec.cloud} {spec.workload} stack's name may have at most {room} characters"
            if len(name.deployed) > name.rule.max_length and 0 < room < len(spec.stack)
            else ""
        )
        yield Problem(
            "stack",
            f"stack name {spec.stack!r} names {name.resource} {shape!r}: {problem}"
            + (f" ({name.rule.source})" if name.rule.source else "")
            + shorter
            + "; rename the stack (the stack file Pulumi.<stack>.yaml)",
        )
