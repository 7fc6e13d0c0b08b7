"""A serving design to simulate: exactly the numbers the stack deploys (`plan_serving`), its price,
and the autoscaler, which is the one design choice the spec does not state: the caller names it (the
stack's cloud declares the one its components deploy, `Cloud.default_autoscaler`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from accelstack.clouds.base import Catalog
from accelstack.planner.pricing import PriceBook
from accelstack.planner.serving import DEFAULT_TARGET_UTILIZATION, backlog_target_from_slo
from accelstack.planner.serving_plan import UNHEALTHY_THRESHOLD, ServingPlan, plan_serving
from accelstack.simulate import autoscalers as scalers
from accelstack.spec.models import ServingSpec

AZURE_SCALE_IN_FRACTION = 0.5  # scale-in threshold = this x scale-out threshold (no flapping)


@dataclass(frozen=True)
class Design:
    name: str
    instance_type: str
    hourly_usd: float
    replicas_min: int
    replicas_max: int
    initial_replicas: int
    warm_pool: int
    concurrency: int  # requests in flight per replica
    cold_start_seconds: float
    warm_start_seconds: float
    ttl_seconds: float
    max_depth: int
    visibility_timeout_seconds: float
    max_receive_count: int
    unhealthy_seconds: float  # a broken replica is replaced after this many seconds of failed checks
    drain_seconds: float
    slo_target_seconds: float
    service_seconds: float  # mean service time of one request
    backlog_target: float
    root_volume_gib: int
    vcpus: int
    gpus: int
    autoscaler: str
    policy: Callable[[], scalers.Policy]  # a fresh autoscaler (it keeps state) per run
    prices: PriceBook  # the stack's cloud's prices: volumes, load balancer and queue in the cost report
    # Admission on the replicas (the direct topology): waiting requests each live replica holds; 0: the queue's
    # max_depth bounds the waiting requests whatever the fleet.
    waiting_per_replica: int = 0

    def with_changes(self, **changes) -> Design:
        return dataclasses.replace(self, **changes)


def make_policy(
    kind: str, *, plan: ServingPlan, serving: ServingSpec, vcpus: int, gpus: int, fixed_replicas: int | None = None
):
    """A factory for the autoscaler `kind`, tuned from the plan as the stack would configure it."""
    lo, hi, target = serving.replicas.min, serving.replicas.max, plan.backlog_per_instance_target
    if kind == "aws-target-tracking":
        # The deployed policy: the plan's target on the plan's metric (accelstack.components.aws.serving.scaling).
        return lambda: scalers.AwsTargetTracking(
            target, lo, hi, plan.warm_start_seconds, queue_metrics=plan.backlog_metrics
        )
    if kind == "cpu-utilization":
        return lambda: scalers.AwsTargetTracking(
            scalers.DEFAULT_CPU_TARGET_PERCENT,
            max(1, lo),
            hi,
            plan.warm_start_seconds,
            vcpus=vcpus,
            gpus=gpus,
            metric="cpu",
        )
    # Azure and GCP see the waiting messages only: they scale at the backlog AWS's SQS method allows
    # (latency / service time x concurrency), the per-instance threshold their own guides describe.
    waiting = backlog_target_from_slo(serving.slo.target_seconds, serving.slo.service_seconds, plan.concurrency)
    if kind == "azure-autoscale":
        return lambda: scalers.AzureAutoscale(waiting, waiting * AZURE_SCALE_IN_FRACTION, lo, hi)
    if kind == "gcp-autoscaler":
        return lambda: scalers.GcpAutoscaler(waiting, lo, hi)
    if kind == "request-rate":
        # Target QPS per replica: what one replica clears (concurrency per service time) at the planner's
        # target utilization (planner.serving.replicas_for_load uses the same headroom).
        qps = plan.concurrency / serving.slo.service_seconds * DEFAULT_TARGET_UTILIZATION
        return lambda: scalers.RequestRate(qps, max(1, lo), hi)
    # Without a queue: the load balancer's requests per replica per minute at the plan's target.
    per_minute = plan.requests_per_replica_minute_target
    if kind == "aws-alb-requests":
        return lambda: scalers.AwsTargetTracking(per_minute, lo, hi, plan.warm_start_seconds, metric="requests")
    if kind == "azure-gateway-requests":
        return lambda: scalers.AzureAutoscale(per_minute, per_minute / 2, lo, hi, metric="requests")
    if kind == "gcp-lb-utilization":
        return lambda: scalers.GcpAutoscaler(per_minute / 60, lo, hi, metric_delay_seconds=60.0, metric="requests")
    if kind == "fixed":
        return lambda: scalers.Fixed(fixed_replicas if fixed_replicas is not None else hi)
    raise ValueError(f"--autoscaler {kind!r}: allowed: {', '.join(scalers.AUTOSCALERS)}")


def design_from_spec(
    serving: ServingSpec,
    prices: PriceBook,
    *,
    catalog: Catalog,
    autoscaler: str,
    name: str = "stack design",
    fixed_replicas: int | None = None,
) -> Design:
    """The design the stack deploys on the machine types of `catalog` (its cloud's), scaled by `autoscaler`
    (one of `autoscalers.AUTOSCALERS`): every number from `plan_serving`, the same call the component makes."""
    plan = plan_serving(serving, catalog)
    replicas = serving.replicas
    itype = catalog.instances.get(replicas.instance_type)
    vcpus = itype.vcpus if itype else 8
    gpus = plan.tensor_parallel
    policy = make_policy(autoscaler, plan=plan, serving=serving, vcpus=vcpus, gpus=gpus, fixed_replicas=fixed_replicas)
    fixed = autoscaler == "fixed"
    initial = (fixed_replicas if fixed_replicas is not None else replicas.max) if fixed else replicas.min
    # Admission on the replicas: each holds its share of the waiting requests for the bounded wait, and a request
    # on a replica that fails is lost (no queue redelivers it: one receive).
    direct = serving.admission.kind == "replica"
    if autoscaler in ("cpu-utilization", "request-rate"):
        initial = max(1, initial)  # neither can start the first replica from zero
    return Design(
        name=name,
        instance_type=replicas.instance_type,
        hourly_usd=prices.hourly(replicas.instance_type, replicas.capacity),
        replicas_min=initial if fixed else replicas.min,
        replicas_max=initial if fixed else replicas.max,
        initial_replicas=initial,
        warm_pool=0 if fixed else plan.warm_pool_size,
        concurrency=plan.concurrency,
        cold_start_seconds=float(plan.cold_start_seconds),
        warm_start_seconds=float(plan.warm_start_seconds),
        ttl_seconds=float(plan.replica_wait_seconds if direct else serving.admission.ttl_seconds),
        max_depth=serving.admission.max_depth,
        visibility_timeout_seconds=float(plan.visibility_timeout_seconds),
        max_receive_count=1 if direct else serving.admission.max_receive_count,
        unhealthy_seconds=float(UNHEALTHY_THRESHOLD * plan.health_check_interval_seconds),
        drain_seconds=float(plan.worker_drain_seconds),
        slo_target_seconds=serving.slo.target_seconds,
        service_seconds=serving.slo.service_seconds,
        backlog_target=plan.backlog_per_instance_target,
        root_volume_gib=plan.root_volume_gib,
        vcpus=vcpus,
        gpus=gpus,
        autoscaler=autoscaler,
        policy=policy,
        prices=prices,
        waiting_per_replica=plan.replica_waiting if direct else 0,
    )


def default_autoscaler(serving: ServingSpec, queue_autoscaler: str | None, load_autoscaler: str | None) -> str | None:
    """The autoscaler the stack deploys, by its topology (never by its cloud): none for a fixed fleet, the cloud's
    queue autoscaler with a queue, its load-balancer autoscaler without one (None: the cloud declares none)."""
    if serving.replicas.scaling == "fixed":
        return "fixed"
    return queue_autoscaler if serving.admission.kind == "queue" else load_autoscaler


def alternatives(serving: ServingSpec, prices: PriceBook, autoscaler: str, *, catalog: Catalog) -> list[Design]:
    """The stack's design and what `--compare` runs against it on the same requests."""
    base = design_from_spec(serving, prices, catalog=catalog, autoscaler=autoscaler)
    return [
        base,
        base.with_changes(name="no warm pool", warm_pool=0),
        design_from_spec(
            serving, prices, catalog=catalog, autoscaler="cpu-utilization", name="CPU-utilization scaling (50%)"
        ),
        design_from_spec(
            serving, prices, catalog=catalog, autoscaler="request-rate", name="request-rate scaling (SkyServe)"
        ),
        design_from_spec(
            serving, prices, catalog=catalog, autoscaler="fixed",
            name=f"fixed fleet at replicas.max ({serving.replicas.max})",
        ),
    ]  # fmt: skip
