"""The serving stack's sizing from its spec: cold start, warm pool, health-check timing, replica
concurrency and the backlog target it implies, queue timeouts, volume size. Pure (no Pulumi): `accelstack.components.aws.serving` builds resources
from `plan_serving(...)`, and `accelstack.planner.defaults` reports the same numbers with their sources.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from accelstack.clouds.base import Catalog
from accelstack.planner.cold_start import ColdStart, serving_defaults
from accelstack.planner.hardware import instance
from accelstack.planner.kv_cache import DEFAULT_BLOCK_SIZE, DEFAULT_MAX_NUM_SEQS, plan_for_instance
from accelstack.planner.model_size import architecture_of
from accelstack.planner.model_size import weights_gb as model_weights_gb
from accelstack.planner.profile import service_time_from
from accelstack.planner.scaling_rules import ScalingRule, ScalingRules
from accelstack.planner.service_time import ServiceTime, roofline
from accelstack.planner.serving import (
    DEFAULT_TARGET_UTILIZATION,
    LoadPlan,
    owned_backlog_target,
    replica_capacity,
    replicas_for_load,
)
from accelstack.planner.token_lengths import of_load
from accelstack.planner.units import counted
from accelstack.spec.models import ServingSpec

# Cold start of a NEW instance comes from `accelstack.planner.cold_start`. A warm-pool instance
# keeps image and weights on its EBS volume, so it only boots, reads weights and starts the server.
EBS_READ_GBPS = 1.0  # gp3 at 1000 MiB/s (what the launch template provisions)
# The replica root volume (gp3) the launch template provisions; `accelstack cost` prices the same.
ROOT_VOLUME_THROUGHPUT_MIBPS = 1000
ROOT_VOLUME_IOPS = 4000
SERVER_WARMUP_SECONDS = 60  # vLLM memory profiling and CUDA graph capture
WARM_BOOT_SECONDS = 45  # start of a stopped warm-pool instance

# Health check: an instance is in service after HEALTHY_THRESHOLD good answers; a replica busy with a
# long batch must not be failed by one slow answer, hence a few consecutive misses.
HEALTHY_THRESHOLD = 2
UNHEALTHY_THRESHOLD = 3
# Check often enough that a ready replica gets traffic within this fraction of its cold start.
HEALTH_CHECK_FRACTION_OF_COLD_START = 0.05
HEALTH_CHECK_INTERVAL_BOUNDS = (5, 30)  # ALB target group limits are 5..300 s; 30 s keeps failover quick
# With a launch lifecycle hook the grace period starts only when the hook completes and the instance
# goes InService (AWS EC2 Auto Scaling guide, "Set the health check grace period"); our boot script
# completes it once the server answers. So the grace only covers the load balancer's first verdict:
# HEALTHY_THRESHOLD good checks plus one interval of registration lag, and a replica that breaks
# later is replaced after minutes, not after a whole cold start.
MIN_GRACE_SECONDS = 30
UNHOOKED_GRACE_MAX_SECONDS = 3600  # InstanceGroupManagerAutoHealingPolicy.initialDelaySec: 0..3600
LIFECYCLE_HEARTBEAT_MARGIN = 1.5  # the launch hook waits this much longer than a cold start, then abandons
VISIBILITY_TIMEOUT_SERVICE_MULTIPLE = 6  # a message stays hidden for several service times before retry
DEREGISTRATION_SLO_MULTIPLE = 3  # in-flight generations finish before a replica leaves the target group
IDLE_TIMEOUT_SLO_MULTIPLE = 4  # ALB keeps a slow streaming answer's connection open

# The scaling metric: SQS metrics summed, over GroupInServiceInstances -- the messages each replica
# owns, waiting (Visible) and being served (NotVisible, hidden while a worker holds them). Visible
# alone reads 0 whenever replicas keep up, so the group scaled in to min and back out all day.
BACKLOG_QUEUE_METRICS = ("ApproximateNumberOfMessagesVisible", "ApproximateNumberOfMessagesNotVisible")
# Target tracking's scale-out alarm needs 3 one-minute datapoints above the target (EC2 Auto Scaling
# User Guide, "Target tracking scaling policies"): capacity arrives this long plus a start later.
SCALE_OUT_ALARM_SECONDS = 3 * 60
# Alarm when the oldest request has used this fraction of its TTL: the queue is about to drop work.
AGE_ALARM_TTL_FRACTION = 0.8
LORA_ADAPTER_GB = 0.5  # LoRA adapters are tens to hundreds of MB

# Requests the replica's queue worker keeps in flight: the full-context sequences the KV cache holds
# (planner.kv_cache, as vLLM counts them), never more than vLLM's max_num_seqs, beyond which the
# server only queues them internally while their messages stay hidden from other replicas.
WORKER_CONCURRENCY_CAP = DEFAULT_MAX_NUM_SEQS
# Without an architecture the KV cache cannot be sized; a modest batch that any GPU holding the
# weights serves (a preset in serving.model.preset replaces it with the planner's figure).
UNKNOWN_ARCHITECTURE_CONCURRENCY = 8
# Prompt tokens of a request when neither serving.load nor the request stream states them (`size`'s default).
DEFAULT_INPUT_TOKENS = 1000


@dataclass(frozen=True)
class MeasuredProfile:
    """A measured profile document as read (an accelstack profile or a vllm bench serve result) and where from."""

    document: Any
    source: str


def service_time_model(
    serving: ServingSpec, tensor_parallel: int, catalog: Catalog, profile: MeasuredProfile | None = None
) -> ServiceTime | None:
    """The service-time model the plan sizes with and the simulator serves by: the measured `profile` (shaped by
    the roofline where one point cannot say how a step grows), else with serving.load's token lengths the roofline;
    None without either, or when the architecture or hardware is unknown (then slo.serviceSeconds is the service
    time). ProfileError (a ValueError) when the profile cannot be used."""
    model = serving.model
    arch = architecture_of(model.name, model.preset)
    base = None
    if arch is not None:
        try:
            base = roofline(
                arch, instance(catalog, serving.replicas.instance_type), precision=model.precision, tp=tensor_parallel
            )
        except ValueError:
            base = None  # unknown instance type or hardware: the spec validators report it
    if profile is not None:
        return service_time_from(profile.document, profile.source, base)
    return base if serving.load is not None else None


# On SIGTERM the worker stops receiving and lets in-flight generations finish this long at most
# (EC2 does not wait long on a terminating instance); the rest are released to other replicas.
WORKER_DRAIN_CAP_SECONDS = 120


@dataclass(frozen=True)
class ReplicaConcurrency:
    sequences: int  # what the queue worker keeps in flight (and the backlog target multiplies by)
    kv_sequences: int | None  # the planner's full-context sequences before the cap; None: unknown model
    basis: str  # where the number comes from, for `accelstack preview`


def replica_concurrency(serving: ServingSpec, tensor_parallel: int, catalog: Catalog) -> ReplicaConcurrency:
    """Concurrent full-context sequences one replica serves: the KV-cache blocks left after weights,
    activations and the resident LoRA adapters (vLLM's accounting), at the model's context length."""
    model, replicas = serving.model, serving.replicas
    arch = architecture_of(model.name, model.preset)
    if arch is None:
        return ReplicaConcurrency(
            UNKNOWN_ARCHITECTURE_CONCURRENCY,
            None,
            f"assumed {UNKNOWN_ARCHITECTURE_CONCURRENCY}: {model.name!r} has no known architecture, so its KV cache "
            "cannot be sized (set serving.model.preset)",
        )
    lora_rank = max((a.rank for a in model.adapters), default=0)
    try:
        kv = plan_for_instance(
            arch,
            instance(catalog, replicas.instance_type),
            tp=tensor_parallel,
            precision=model.precision,
            context_length=model.context_length,
            lora_rank=lora_rank,
            lora_adapters=len(model.adapters),
        )
    except ValueError as error:  # unknown instance type or tp: the spec validators report it
        return ReplicaConcurrency(1, None, f"1: {error}")
    sequences = min(WORKER_CONCURRENCY_CAP, max(1, kv.max_concurrent_sequences))
    lora = f" + {counted(len(model.adapters), 'LoRA adapters')} of rank <= {lora_rank}" if model.adapters else ""
    capped = (
        f", capped at vLLM max_num_seqs {WORKER_CONCURRENCY_CAP}" if sequences < kv.max_concurrent_sequences else ""
    )
    return ReplicaConcurrency(
        sequences,
        kv.max_concurrent_sequences,
        f"planner.kv_cache: {kv.blocks} blocks x {DEFAULT_BLOCK_SIZE} tokens / {model.context_length}-token "
        f"context = {kv.max_concurrent_sequences} full sequences on {replicas.instance_type} (tp={tensor_parallel}, "
        f"{arch.name} {model.precision}{lora}){capped}",
    )


def cut_to_latency(concurrency: ReplicaConcurrency, load: LoadPlan | None) -> ReplicaConcurrency:
    """The worker's concurrency cut to the batch the load plan runs: the largest whose service time meets
    serving.load.latency (`planner.serving.replica_capacity`). A replica given more in flight would run batches whose
    latency exceeds the target, and the scaling target (concurrency x utilization) would hold the fleet there,
    below the count the planner sized (AWS example, p95 8 s at 5 req/s: 24 replicas planned at batch 1, the
    simulator's fleet at 11 in flight reached p95 9.5 s)."""
    if load is None or load.capacity.batch >= concurrency.sequences:
        return concurrency
    capacity = load.capacity
    percentile = f"p{capacity.latency_percentile:g} " if capacity.latency_percentile is not None else ""
    meets = "the largest batch whose" if capacity.meets_latency else "no batch's (so 1); the"
    return dataclasses.replace(
        concurrency,
        sequences=capacity.batch,
        basis=f"{concurrency.basis}; cut to {capacity.batch}: {meets} {percentile}service time meets "
        f"serving.load.latency {capacity.latency_seconds:g} s (planner.serving.replica_capacity)",
    )


def load_plan(
    serving: ServingSpec, tensor_parallel: int, batch: int, catalog: Catalog, service_time: ServiceTime | None = None
) -> LoadPlan | None:
    """Replicas `serving.load` needs, each replica batching what its queue worker keeps in flight, by `model`
    (`service_time`, default the roofline); None without a load, or when the architecture or hardware is unknown (rules say which)."""
    load, model = serving.load, serving.model
    arch = architecture_of(model.name, model.preset)
    if load is None or arch is None:
        return None
    latency = load.latency
    try:
        capacity = replica_capacity(
            arch, instance(catalog, serving.replicas.instance_type), input_tokens=load.input_tokens, output_tokens=load.output_tokens,
            max_batch=batch, precision=model.precision, tp=tensor_parallel,
            latency_seconds=latency.target_seconds if latency else None,
            latency_percentile=latency.percentile if latency else None, model=service_time, lengths=of_load(load),
        )  # fmt: skip
    except ValueError:
        return None  # unknown instance type or tp: the spec validators report it
    return replicas_for_load(load.requests_per_second, capacity)


@dataclass(frozen=True)
class ServingPlan:
    weights_gb: float
    cold_start_seconds: int  # new instance -> ready (pulls image and weights)
    warm_start_seconds: int  # stopped warm-pool instance -> ready (image and weights on EBS)
    health_check_grace_seconds: int
    health_check_interval_seconds: int
    health_check_timeout_seconds: int
    warm_pool_size: int
    backlog_per_instance_target: float  # messages per replica, waiting + in flight (BACKLOG_QUEUE_METRICS)
    visibility_timeout_seconds: int
    age_alarm_seconds: int
    deregistration_delay_seconds: int
    idle_timeout_seconds: int
    root_volume_gib: int
    tensor_parallel: int
    lifecycle_heartbeat_seconds: int
    # The queue worker: requests in flight per replica, longest generation it waits for (visibility
    # is extended meanwhile), and how long in-flight requests may finish after SIGTERM.
    concurrency: int
    generation_timeout_seconds: int
    worker_drain_seconds: int
    # Why: the planner's cold-start breakdown, and the two warm-pool candidates (before the cap).
    estimate: ColdStart
    warm_pool_growth: int  # replicas added during one cold start on the min -> max ramp
    warm_pool_burst: int  # replicas beyond min needed to drain a full admission queue within its TTL
    concurrency_basis: str
    load: LoadPlan | None = None  # replicas serving.load needs; None without a load
    backlog_metrics: tuple[str, ...] = BACKLOG_QUEUE_METRICS
    # Where no launch hook holds a new replica out of service until it serves (GCP's autohealing): the checks are
    # ignored for a cold start and the first verdict, at most an hour (the API's bound).
    unhooked_grace_seconds: int = 0
    # Admission on the replicas (serving.admission.kind replica): the inference server listens on 127.0.0.1 at
    # `server_port` behind the admission proxy on the load balancer's port; each replica holds at most
    # `replica_waiting` requests waiting, each for at most `replica_wait_seconds`. With a queue the server
    # itself listens on the load balancer's port.
    server_port: int = 8000
    replica_waiting: int = 0
    replica_wait_seconds: int = 0
    # Scaling without a queue: the requests per replica per minute the load balancer counts at the owned
    # backlog target (Little's law: in flight = rate x service time).
    requests_per_replica_minute_target: float = 0.0
    # Requests per second one replica clears with every slot busy (concurrency / service time).
    replica_full_rate_per_second: float = 0.0
    # The scaling rule the stack deploys, in its cloud's terms (`scaling_rules`): what the components emit and the
    # simulator replays. None: the plan was made without the cloud's rules, or the cloud declares none.
    scaling: ScalingRule | None = None
    # How long a replica takes per request (`planner.service_time`), the model `load` sizes with and the simulator
    # serves each request by; None: slo.serviceSeconds is the service time (no load stated, no profile).
    service_time: ServiceTime | None = None


def plan_serving(
    serving: ServingSpec,
    catalog: Catalog,
    scaling: ScalingRules | None = None,
    profile: MeasuredProfile | None = None,
) -> ServingPlan:
    """Every number the serving stack derives from `serving`, on the machine types of `catalog`; with the cloud's
    `scaling` rules, the one its topology deploys too; with a measured `profile`, service times from it."""
    admission, slo, replicas, model = serving.admission, serving.slo, serving.replicas, serving.model
    weights_gb = model_weights_gb(serving) or 0.0
    adapters_gb = LORA_ADAPTER_GB * len(model.adapters)
    defaults = serving_defaults(
        architecture_of(model.name, model.preset),
        model.precision,
        params_billion=model.parameters_billion,
        # One size for the whole plan (it also knows sizes stated only in the model name).
        weights_gb=weights_gb,
        replicas_min=replicas.min,
        replicas_max=replicas.max,
    )
    cold = replicas.cold_start_seconds or math.ceil(defaults.total_seconds)
    warm = min(cold, math.ceil(WARM_BOOT_SECONDS + weights_gb / EBS_READ_GBPS + SERVER_WARMUP_SECONDS))
    low, high = HEALTH_CHECK_INTERVAL_BOUNDS
    interval = min(high, max(low, math.ceil(cold * HEALTH_CHECK_FRACTION_OF_COLD_START / HEALTHY_THRESHOLD)))
    itype = catalog.instances.get(replicas.instance_type)
    tensor_parallel = replicas.tensor_parallel or (itype.accelerators if itype else 1)
    concurrency = replica_concurrency(serving, tensor_parallel, catalog)
    service_time = service_time_model(serving, tensor_parallel, catalog, profile)
    load = load_plan(serving, tensor_parallel, concurrency.sequences, catalog, service_time)
    concurrency = cut_to_latency(concurrency, load)
    # The service time the request-rate targets rest on (Little's law): the model's at the batch a replica runs at
    # the target utilization, for the stated load; else the spec's stated slo.serviceSeconds.
    service = slo.service_seconds
    if load is not None and service_time is not None:
        running = max(1.0, concurrency.sequences * DEFAULT_TARGET_UTILIZATION)
        service = float(
            service_time.service_seconds(
                load.capacity.input_tokens, load.capacity.output_tokens, running, context=load.capacity.context_tokens
            )
        )
    # Messages a replica owns (waiting + in flight) at the target utilization: headroom, not a queue.
    backlog_target = owned_backlog_target(concurrency.sequences, DEFAULT_TARGET_UTILIZATION)
    idle_timeout = min(4000, max(60, math.ceil(slo.target_seconds * IDLE_TIMEOUT_SLO_MULTIPLE)))
    deregistration_delay = min(3600, max(30, math.ceil(slo.target_seconds * DEREGISTRATION_SLO_MULTIPLE)))
    headroom = replicas.max - replicas.min
    # The larger of: the planner's expected growth during one cold start (min -> max over the
    # morning ramp), and the replicas needed to clear a FULL admission queue before its TTL beyond
    # those running at min (a burst cannot wait a cold start). Never more than the headroom.
    burst = math.ceil(admission.max_depth * slo.service_seconds / admission.ttl_seconds) - replicas.min
    if replicas.warm_pool is not None:
        warm_pool = replicas.warm_pool
    elif headroom == 0:
        warm_pool = 0
    else:
        warm_pool = min(headroom, max(1, defaults.warm_pool_size, burst))
    grace = max(MIN_GRACE_SECONDS, (HEALTHY_THRESHOLD + 1) * interval)  # the load balancer's first verdict
    port = serving.load_balancer.port
    replica_admission = admission.kind == "replica"
    plan = ServingPlan(
        weights_gb=weights_gb,
        cold_start_seconds=cold,
        warm_start_seconds=warm,
        health_check_grace_seconds=grace,
        health_check_interval_seconds=interval,
        health_check_timeout_seconds=max(2, min(interval - 1, 10)),
        warm_pool_size=warm_pool,
        backlog_per_instance_target=backlog_target,
        # A message stays invisible while a replica serves it; a crashed replica's message returns
        # after this (and counts towards maxReceiveCount).
        visibility_timeout_seconds=min(
            43_200, max(30, math.ceil(slo.service_seconds * VISIBILITY_TIMEOUT_SERVICE_MULTIPLE))
        ),
        age_alarm_seconds=math.floor(admission.ttl_seconds * AGE_ALARM_TTL_FRACTION),
        deregistration_delay_seconds=deregistration_delay,
        idle_timeout_seconds=idle_timeout,
        root_volume_gib=max(200, math.ceil(100 + 1.5 * (weights_gb + adapters_gb) * 1e9 / 1024**3)),
        tensor_parallel=tensor_parallel,
        lifecycle_heartbeat_seconds=min(7200, math.ceil(cold * LIFECYCLE_HEARTBEAT_MARGIN)),
        concurrency=concurrency.sequences,
        # A queued generation may run as long as the load balancer keeps a synchronous one open.
        generation_timeout_seconds=idle_timeout,
        # In-flight generations get what the load balancer gives them on deregistration, within the cap.
        worker_drain_seconds=min(WORKER_DRAIN_CAP_SECONDS, deregistration_delay),
        estimate=defaults,
        warm_pool_growth=defaults.warm_pool_size,
        warm_pool_burst=burst,
        concurrency_basis=concurrency.basis,
        load=load,
        unhooked_grace_seconds=min(UNHOOKED_GRACE_MAX_SECONDS, cold + grace),
        server_port=local_server_port(port) if replica_admission else port,
        replica_waiting=math.ceil(admission.max_depth / replicas.max) if replica_admission else 0,
        # A request waiting on a replica holds the load balancer's connection: it may wait its TTL, never
        # past the idle timeout that would cut it.
        replica_wait_seconds=min(admission.ttl_seconds, idle_timeout) if replica_admission else 0,
        requests_per_replica_minute_target=round(backlog_target * 60 / service, 3),
        replica_full_rate_per_second=round(concurrency.sequences / service, 3),
        service_time=service_time,
    )
    return plan if scaling is None else dataclasses.replace(plan, scaling=scaling.for_stack(serving, plan))


LOCAL_SERVER_PORT = 18000


def local_server_port(load_balancer_port: int) -> int:
    """The inference server's port behind the admission proxy: loopback only, never the proxy's own."""
    return LOCAL_SERVER_PORT if load_balancer_port != LOCAL_SERVER_PORT else LOCAL_SERVER_PORT + 1
