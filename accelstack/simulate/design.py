"""A serving design to simulate: exactly the numbers the stack deploys (`plan_serving`), its price,
and the autoscaler, which is the one design choice the spec does not state: the caller names it (the
stack's cloud declares the one its components deploy, `Cloud.default_autoscaler`). A cloud's own
autoscaler replays the plan's scaling rule (`ServingPlan.scaling`, made from the `ScalingRules` the
caller hands in): the very value the cloud's components turn into resources.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from accelstack.clouds.base import Catalog
from accelstack.clouds.serving_terms import ServingTerms
from accelstack.planner.pricing import PriceBook
from accelstack.planner.scaling_rules import FixedFleet, ScalingRule, ScalingRules, TargetTracking
from accelstack.planner.service_time import ServiceTime
from accelstack.planner.serving import DEFAULT_TARGET_UTILIZATION
from accelstack.planner.serving_plan import (
    DEFAULT_INPUT_TOKENS,
    UNHEALTHY_THRESHOLD,
    MeasuredProfile,
    ServingPlan,
    plan_serving,
)
from accelstack.simulate import autoscalers as scalers
from accelstack.spec.models import ServingSpec

# The peers `--compare` runs, which no cloud's components deploy: built here from the plan.
PEER_AUTOSCALERS = ("request-rate", "cpu-utilization")


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
    # The scaling rule the policy replays (a cloud's deployed rule, or a fixed fleet); None: a peer autoscaler.
    rule: ScalingRule | None = None
    # The plan's service-time model (`ServingPlan.service_time`): each request's service from its prompt and output
    # lengths at the batch it runs in; None: `service_seconds` is the mean (a per-sequence rate, whatever the batch).
    service_time: ServiceTime | None = None
    input_tokens: float = DEFAULT_INPUT_TOKENS  # prompt tokens of a request stream that states none
    terms: ServingTerms = field(
        default_factory=ServingTerms
    )  # the stack's cloud's names for its load balancer, queue and warm pool

    def with_changes(self, **changes) -> Design:
        return dataclasses.replace(self, **changes)


def scaling_rule(
    kind: str, *, plan: ServingPlan, serving: ServingSpec, rules: ScalingRules | None, fixed_replicas: int | None = None
) -> ScalingRule | None:
    """The rule autoscaler `kind` replays: the plan's own where it is that kind (what the stack deploys), else the
    one `rules` makes for this spec and plan; None for a peer autoscaler. ValueError when no rule of that kind is
    known (a cloud's autoscaler needs that cloud's rules)."""
    if kind in PEER_AUTOSCALERS:
        return None
    if kind == FixedFleet.autoscaler:
        return FixedFleet(fixed_replicas if fixed_replicas is not None else serving.replicas.max)
    if plan.scaling is not None and plan.scaling.autoscaler == kind:
        return plan.scaling
    if rules is not None and kind in rules.builders:
        return rules.rule(kind, serving, plan)
    if kind not in scalers.AUTOSCALERS:
        raise ValueError(f"--autoscaler {kind!r}: allowed: {', '.join(scalers.AUTOSCALERS)}")
    raise ValueError(f"--autoscaler {kind!r} replays its cloud's scaling rule: none was given for it")


def make_policy(
    kind: str, *, plan: ServingPlan, serving: ServingSpec, vcpus: int, gpus: int, rule: ScalingRule | None = None
):
    """A factory for the autoscaler `kind`: the replay of `rule` where there is one (a cloud's own autoscaler or a
    fixed fleet), else the peer autoscaler tuned from the plan."""
    if rule is not None:
        return lambda: scalers.replay(rule)
    lo, hi = serving.replicas.min, serving.replicas.max
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
    if kind == "request-rate":
        # Target QPS per replica: what one replica clears (concurrency per service time) at the planner's
        # target utilization (planner.serving.replicas_for_load uses the same headroom).
        qps = plan.replica_full_rate_per_second * DEFAULT_TARGET_UTILIZATION
        return lambda: scalers.RequestRate(qps, max(1, lo), hi)
    raise ValueError(f"--autoscaler {kind!r}: allowed: {', '.join(scalers.AUTOSCALERS)}")


def warm_capacity(rule: ScalingRule | None, plan: ServingPlan) -> int:
    """The stopped instances the design keeps: the rule's warm pool or standby pool, else the plan's."""
    if isinstance(rule, FixedFleet):
        return 0
    if rule is None:
        return plan.warm_pool_size
    return rule.warm_pool if isinstance(rule, TargetTracking) else rule.standby_pool


def design_from_spec(
    serving: ServingSpec,
    prices: PriceBook,
    *,
    catalog: Catalog,
    autoscaler: str,
    name: str = "stack design",
    fixed_replicas: int | None = None,
    rules: ScalingRules | None = None,
    profile: MeasuredProfile | None = None,
) -> Design:
    """The design the stack deploys on the machine types of `catalog` (its cloud's), scaled by `autoscaler`
    (one of `autoscalers.AUTOSCALERS`): every number from `plan_serving`, the same call the component makes,
    with the stack's cloud's scaling `rules` (a cloud's own autoscaler needs its cloud's), service times from the
    measured `profile` where one is given."""
    plan = plan_serving(serving, catalog, rules, profile)
    replicas = serving.replicas
    itype = catalog.instances.get(replicas.instance_type)
    vcpus = itype.vcpus if itype else 8
    gpus = plan.tensor_parallel
    rule = scaling_rule(autoscaler, plan=plan, serving=serving, rules=rules, fixed_replicas=fixed_replicas)
    policy = make_policy(autoscaler, plan=plan, serving=serving, vcpus=vcpus, gpus=gpus, rule=rule)
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
        warm_pool=warm_capacity(rule, plan),
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
        rule=rule,
        service_time=plan.service_time,
        input_tokens=float(serving.load.input_tokens) if serving.load is not None else DEFAULT_INPUT_TOKENS,
        terms=catalog.serving_terms,
    )


def default_autoscaler(serving: ServingSpec, queue_autoscaler: str | None, load_autoscaler: str | None) -> str | None:
    """The autoscaler the stack deploys, by its topology (never by its cloud): none for a fixed fleet, the cloud's
    queue autoscaler with a queue, its load-balancer autoscaler without one (None: the cloud declares none)."""
    if serving.replicas.scaling == "fixed":
        return "fixed"
    return queue_autoscaler if serving.admission.kind == "queue" else load_autoscaler


def alternatives(
    serving: ServingSpec,
    prices: PriceBook,
    autoscaler: str,
    *,
    catalog: Catalog,
    rules: ScalingRules | None = None,
    profile: MeasuredProfile | None = None,
) -> list[Design]:
    """The stack's design and what `--compare` runs against it on the same requests: without its warm pool (named
    as its cloud names one) where it keeps one, and the peers."""
    base = design_from_spec(serving, prices, catalog=catalog, autoscaler=autoscaler, rules=rules, profile=profile)
    pool = base.terms.warm_pool or "warm pool"
    return [
        base,
        *([base.with_changes(name=f"no {pool}", warm_pool=0)] if base.warm_pool else []),
        design_from_spec(
            serving, prices, catalog=catalog, autoscaler="cpu-utilization", name="CPU-utilization scaling (50%)",
            profile=profile,
        ),
        design_from_spec(
            serving, prices, catalog=catalog, autoscaler="request-rate", name="request-rate scaling (SkyServe)",
            profile=profile,
        ),
        design_from_spec(
            serving, prices, catalog=catalog, autoscaler="fixed",
            name=f"fixed fleet at replicas.max ({serving.replicas.max})", profile=profile,
        ),
    ]  # fmt: skip
