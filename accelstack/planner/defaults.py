"""Every number a stack gets from the planner rather than from its stack file, and where it came from.

`derived_defaults(spec)` reads the same plans the components build from (`serving_plan.plan_serving`,
`training_plan.plan_training`), so what `accelstack preview` prints is what the resources receive.
Each entry names what it fills: a config path (`serving.replicas.warmPool`), a resource property
(`aws-serving-replicas (Group) healthCheckGracePeriod`), a stack output, an estimate the others rest
on, or a check of the configured value (`training.storage.lustre`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Literal

from accelstack.clouds.base import SERVING_PLAN_NUMBERS, Catalog
from accelstack.planner import checkpoint as ck
from accelstack.planner import cold_start as cs
from accelstack.planner import lustre as lustre_sizing
from accelstack.planner import serving_plan as sp
from accelstack.planner import training_plan as tp
from accelstack.planner.hardware import GIB
from accelstack.planner.pricing import PriceBook
from accelstack.planner.serving import DEFAULT_TARGET_UTILIZATION
from accelstack.planner.units import counted, duration
from accelstack.spec.models import ServingSpec, ServingStack, StackSpec, TrainingSpec

Kind = Literal["config", "resource", "output", "estimate", "check"]
FROM_STACK_FILE = "set in the stack file"


@dataclass(frozen=True)
class DerivedDefault:
    path: str  # config path, stack output name, estimate name, or "<resource name>.<property>"
    value: int | float | str
    unit: str
    source: str  # the planner function and the inputs/assumptions it used
    kind: Kind = "config"
    resource_type: str | None = None  # for kind "resource": the Pulumi type token it lands in
    ok: bool = True  # False: a check the configured value fails

    @property
    def display(self) -> str:
        """The value as the table prints it: `1 replica`, `2 GPUs`, a long interval also in hours or days."""
        if not isinstance(self.value, int | float):
            return f"{self.value} {self.unit}"
        text = counted(self.value, self.unit)
        if self.unit == "s" and self.value >= 120:
            text += f" ({duration(self.value)})"
        return text

    @property
    def target(self) -> str:
        """What a person reads in the table's first column."""
        if self.kind == "resource" and self.resource_type:
            name, _, prop = self.path.partition(".")
            return f"{name} ({self.resource_type.rsplit(':', 1)[-1]}) {prop}"
        if self.kind == "output":
            return f"output {self.path}"
        return self.path

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "target": self.target, "display": self.display}


def derived_defaults(spec: StackSpec, *, catalog: Catalog, prices: PriceBook) -> list[DerivedDefault]:
    """The planner-derived values of `spec`'s stack, each with its source (pure; no Pulumi), on the
    machine types of `catalog` (the stack's cloud) priced by `prices`."""
    if isinstance(spec, ServingStack):
        return serving_defaults(spec.stack, spec.serving, catalog)
    return training_defaults(spec.stack, spec.training, catalog=catalog, prices=prices)


def _resource(type_token: str, name: str, prop: str, value: int | float, unit: str, source: str) -> DerivedDefault:
    return DerivedDefault(f"{name}.{prop}", value, unit, source, "resource", type_token)


def _placed(catalog: Catalog, stack: str, key: str, value: int | float, unit: str, source: str) -> list[DerivedDefault]:
    """The row of serving-plan number `key` where `catalog`'s cloud places it: a resource property, an
    estimate (a number the cloud uses without a property of its own), or nothing (not used on that cloud)."""
    if key not in catalog.serving_properties:
        return [DerivedDefault(SERVING_PLAN_NUMBERS[key], value, unit, source, "estimate")]
    placed = catalog.serving_properties[key]
    if placed is None:
        return []
    note = f"; {placed.note}" if placed.note else ""
    return [_resource(placed.type_token, f"{stack}{placed.name_suffix}", placed.prop, value, unit, source + note)]


def serving_defaults(stack: str, serving: ServingSpec, catalog: Catalog) -> list[DerivedDefault]:
    plan = sp.plan_serving(serving, catalog)
    replicas, slo, admission = serving.replicas, serving.slo, serving.admission
    est = plan.estimate
    cold = plan.cold_start_seconds
    estimated_weights_gb = est.weights_seconds * cs.DEFAULT_WEIGHTS_MBPS / 1000
    measured = replicas.cold_start_seconds is not None
    cold_source = (
        f"{FROM_STACK_FILE} (measured)"
        if measured
        else (
            f"planner.cold_start: boot {est.boot_seconds:g} s + image {cs.DEFAULT_IMAGE_GB:g} GB at "
            f"{cs.DEFAULT_IMAGE_PULL_MBPS:g} MB/s ({est.image_seconds:g} s) + weights {estimated_weights_gb:.1f} GB "
            f"({serving.model.precision}) at {cs.DEFAULT_WEIGHTS_MBPS:g} MB/s ({est.weights_seconds:g} s) + server "
            f"start {est.server_start_seconds:g} s = {est.total_seconds:g} s, rounded up"
        )
    )
    headroom = replicas.max - replicas.min
    if replicas.warm_pool is not None:
        pool_source = FROM_STACK_FILE
    elif headroom == 0:
        pool_source = "serving_plan: replicas.min = replicas.max, no room to grow into"
    else:
        burst_replicas = plan.warm_pool_burst + replicas.min
        pool_source = (
            f"serving_plan: the largest of 1, growth during one {cold} s cold start on a {replicas.min}->{replicas.max} "
            f"ramp over 1 h ({plan.warm_pool_growth}) and a full-queue burst (ceil({admission.max_depth} x "
            f"{slo.service_seconds:g} s / {admission.ttl_seconds} s TTL) = {counted(burst_replicas, 'replicas')}, "
            f"of which {replicas.min} already run: {max(0, plan.warm_pool_burst)} more), at most max - min = {headroom}"
        )
    itype = catalog.instances.get(replicas.instance_type)
    tp_source = (
        FROM_STACK_FILE
        if replicas.tensor_parallel is not None
        else f"every accelerator of {replicas.instance_type}"
        + (f" ({itype.accelerators} x {itype.accelerator})" if itype else " (unknown type: 1)")
    )
    grace_source = (
        f"serving_plan: (healthy threshold {sp.HEALTHY_THRESHOLD} + 1) x interval {plan.health_check_interval_seconds} s, "
        f"at least {sp.MIN_GRACE_SECONDS} s"
    )
    low, high = sp.HEALTH_CHECK_INTERVAL_BOUNDS
    if catalog.serving_backlog_metric:
        tracked = f"tracked on {catalog.serving_backlog_metric}"
    else:
        tracked = (
            f"tracked on ({' + '.join(plan.backlog_metrics)}) / GroupInServiceInstances; scale-out acts after "
            f"{sp.SCALE_OUT_ALARM_SECONDS // 60} one-minute datapoints + warm start {plan.warm_start_seconds} s = "
            f"{sp.SCALE_OUT_ALARM_SECONDS + plan.warm_start_seconds} s, within which load may grow "
            f"{1 / DEFAULT_TARGET_UTILIZATION:.2f}x before requests wait in the queue"
        )

    def placed(key: str, value: int | float, unit: str, source: str) -> list[DerivedDefault]:
        return _placed(catalog, stack, key, value, unit, source)

    queued = serving.admission.kind == "queue"
    concurrency_knob = "the queue worker's WORKER_CONCURRENCY" if queued else "the admission proxy's CONCURRENCY"

    return [
        DerivedDefault("serving.replicas.coldStartSeconds", cold, "s", cold_source),
        DerivedDefault("serving.replicas.warmPool", plan.warm_pool_size, "replicas", pool_source),
        DerivedDefault("serving.replicas.tensorParallel", plan.tensor_parallel, "GPUs", tp_source),
        *_load_rows(serving, plan),
        DerivedDefault(
            "replica concurrency",
            plan.concurrency,
            "requests in flight",
            f"{concurrency_knob}, {plan.concurrency_basis}",
            "estimate",
        ),
        *placed("healthCheckGrace", plan.health_check_grace_seconds, "s", grace_source),
        *placed(
            "unhookedGrace",
            plan.unhooked_grace_seconds,
            "s",
            f"serving_plan: cold start {cold} s + the first verdict ({grace_source}), at most "
            f"{sp.UNHOOKED_GRACE_MAX_SECONDS} s",
        ),
        *placed(
            "warmStart",
            plan.warm_start_seconds,
            "s",
            f"serving_plan: warm-pool start = boot {sp.WARM_BOOT_SECONDS} s + weights {plan.weights_gb:.1f} GB at "
            f"{sp.EBS_READ_GBPS:g} GB/s from the root volume + server warm-up {sp.SERVER_WARMUP_SECONDS} s, at most "
            "the cold start",
        ),
        *placed(
            "launchBudget",
            plan.lifecycle_heartbeat_seconds,
            "s",
            f"serving_plan: cold start {cold} s x {sp.LIFECYCLE_HEARTBEAT_MARGIN:g} (at most 7200 s): the replica "
            "heartbeats its launch hook this long, then the launch is abandoned",
        ),
        *placed(
            "healthCheckInterval",
            plan.health_check_interval_seconds,
            "s",
            f"serving_plan: cold start {cold} s x {sp.HEALTH_CHECK_FRACTION_OF_COLD_START:.0%} / healthy threshold "
            f"{sp.HEALTHY_THRESHOLD}, within {low}..{high} s",
        ),
        *placed(
            "healthCheckTimeout",
            plan.health_check_timeout_seconds,
            "s",
            "serving_plan: interval - 1, within 2..10 s",
        ),
        *placed(
            "drain",
            plan.deregistration_delay_seconds,
            "s",
            f"serving_plan: latency SLO {slo.target_seconds:g} s x {sp.DEREGISTRATION_SLO_MULTIPLE}, within 30..3600 s",
        ),
        *placed(
            "idleTimeout",
            plan.idle_timeout_seconds,
            "s",
            f"serving_plan: latency SLO {slo.target_seconds:g} s x {sp.IDLE_TIMEOUT_SLO_MULTIPLE}, within 60..4000 s",
        ),
        *_admission_rows(serving, plan, placed, tracked),
        *placed(
            "rootVolume",
            plan.root_volume_gib,
            "GiB",
            f"serving_plan: 100 GiB + 1.5 x (weights {plan.weights_gb:.1f} GB + {counted(len(serving.model.adapters), 'adapters')} x "
            f"{sp.LORA_ADAPTER_GB:g} GB), at least 200 GiB",
        ),
    ]


def _admission_rows(
    serving: ServingSpec,
    plan: sp.ServingPlan,
    placed: Callable[[str, int | float, str, str], list[DerivedDefault]],
    tracked: str,
) -> list[DerivedDefault]:
    """The numbers of the stack's topology: the queue's lease and alarm, or the replicas' own admission; and the
    scaling target, unless the fleet is fixed."""
    admission, slo = serving.admission, serving.slo
    autoscaled = serving.replicas.scaling == "backlog"
    backlog = (
        f"planner.serving.owned_backlog_target: {plan.concurrency} requests in flight per replica (the "
        f"{'queue worker' if admission.kind == 'queue' else 'admission proxy'}'s concurrency) x target utilization "
        f"{DEFAULT_TARGET_UTILIZATION:.0%}"
    )
    if admission.kind == "queue":
        return [
            *(
                placed("backlogTarget", plan.backlog_per_instance_target, "messages/replica", f"{backlog}, {tracked}")
                if autoscaled
                else []
            ),
            *placed(
                "lease",
                plan.visibility_timeout_seconds,
                "s",
                f"serving_plan: service time {slo.service_seconds:g} s x {sp.VISIBILITY_TIMEOUT_SERVICE_MULTIPLE}, within 30..43200 s",
            ),
            *placed(
                "ageAlarm",
                plan.age_alarm_seconds,
                "s",
                f"serving_plan: {sp.AGE_ALARM_TTL_FRACTION:.0%} of the {admission.ttl_seconds} s admission TTL",
            ),
        ]
    rows = [
        DerivedDefault(
            "requests waiting per replica", plan.replica_waiting, "requests",
            f"serving_plan: admission.maxDepth {admission.max_depth} shared by replicas.max {serving.replicas.max} "
            "(the admission proxy's MAX_WAITING)",
            "estimate",
        ),
        DerivedDefault(
            "longest wait on a replica", plan.replica_wait_seconds, "s",
            f"serving_plan: admission.ttlSeconds {admission.ttl_seconds}, at most the load balancer's request timeout "
            f"{plan.idle_timeout_seconds} s (the admission proxy's TTL_SECONDS)",
            "estimate",
        ),
        *placed(
            "replicaFullRate", plan.replica_full_rate_per_second, "requests/s",
            f"serving_plan: concurrency {plan.concurrency} / service time {slo.service_seconds:g} s",
        ),
    ]  # fmt: skip
    if autoscaled:
        rows += placed(
            "loadTarget", plan.requests_per_replica_minute_target, "requests/replica/minute",
            f"serving_plan: backlog target {plan.backlog_per_instance_target:g} ({backlog}) / service time "
            f"{slo.service_seconds:g} s x 60 (Little's law), counted by the load balancer per healthy replica",
        )  # fmt: skip
    return rows


def _load_rows(serving: ServingSpec, plan: sp.ServingPlan) -> list[DerivedDefault]:
    """Replicas the stated load needs, checked against replicas.min..max (validate warns on the same)."""
    load, replicas = plan.load, serving.replicas
    if load is None:
        return []
    fits = replicas.min <= load.replicas <= replicas.max and load.capacity.meets_latency
    verdict = (
        f"within min..max {replicas.min}..{replicas.max}"
        if fits
        else f"outside min..max {replicas.min}..{replicas.max} or misses the latency target"
    )
    return [
        DerivedDefault(
            "replicas for serving.load", load.replicas, "replicas",
            f"planner.serving.replica_capacity, batch = the queue worker's concurrency: {load.basis()}; {verdict}",
            "check", ok=fits,
        )
    ]  # fmt: skip


def training_defaults(
    stack: str, training: TrainingSpec, *, catalog: Catalog, prices: PriceBook
) -> list[DerivedDefault]:
    plan = tp.plan_training(training, catalog=catalog, prices=prices)
    write, nodes = plan.write, training.nodes
    mtbf_hours = plan.mtbf_seconds / 3600
    spot = (
        f" + spot interruptions {ck.DEFAULT_SPOT_INTERRUPTIONS_PER_MONTH:.0%}/month per node (Spot Instance Advisor top bucket)"
        if nodes.capacity == "spot"
        else ""
    )
    # `state_basis` starts with "assumed:" and says how to make it exact when the spec names no model.
    size_source = write.state_basis if write.state_assumed else f"exact: {write.state_basis}"
    rows = [
        # GiB, as Lustre capacity and `size lustre` count it; throughput stays in FSx's MB/s (10^6 B/s).
        DerivedDefault(
            "checkpoint size", round(write.state_bytes / GIB, 2), "GiB", f"planner.training_plan: {size_source}", "estimate",
        ),
        DerivedDefault(
            "checkpoint write time", round(write.seconds, 1), "s",
            f"planner.training_plan: {write.state_bytes / GIB:.1f} GiB ({write.state_bytes / 1e6:,.0f} MB) / "
            f"{write.write_mbps:.0f} MB/s ({write.write_basis})",
            "estimate",
        ),
        DerivedDefault(
            "job MTBF", round(mtbf_hours, 1), "h",
            f"planner.checkpoint.job_mtbf_hours: {counted(nodes.count, 'nodes')} ({nodes.capacity}), node MTBF "
            f"{ck.LLAMA3_NODE_MTBF_HOURS:.0f} h (Llama 3 report s3.3.4){spot}",
            "estimate",
        ),
        DerivedDefault(
            "checkpointIntervalSeconds", plan.interval_seconds, "s",
            f"planner.checkpoint.daly_interval (Daly 2006): write {write.seconds:.0f} s, job MTBF {mtbf_hours:.0f} h, "
            f"restart {ck.DEFAULT_RESTART_SECONDS:.0f} s (assumed); "
            f"expected checkpoint + rework overhead {plan.checkpoint.overhead_fraction:.1%}",
            "output",
        ),
    ]  # fmt: skip
    setting = tp.lustre_setting(training, catalog, prices)
    if setting is not None and setting.capacity_derived:
        rows.append(DerivedDefault(
            "training.storage.lustre.capacityGiB", setting.capacity_gib, "GiB",
            f"planner.training_plan.lustre_setting: {setting.basis}",
        ))  # fmt: skip
    if setting is not None and setting.tier_derived:
        rows.append(DerivedDefault(
            "training.storage.lustre.throughputPerTiB", setting.throughput_per_tib or 0, "MB/s/TiB",
            "planner.training_plan.lustre_setting: chosen with capacityGiB (row above)"
            if setting.capacity_derived
            else f"planner.training_plan.lustre_setting: {setting.basis}",
        ))  # fmt: skip
    if setting is not None:
        rows += _file_system_placements(stack, setting, catalog)
    if plan.lustre is not None:
        rows.append(_lustre_row(plan.lustre))
    return rows


def _file_system_placements(stack: str, setting: tp.LustreSetting, catalog: Catalog) -> list[DerivedDefault]:
    """Where each derived file system number lands on the cloud's resource (ParallelFsTier.capacity_property,
    .throughput_property), in the property's own unit: what `pulumi up` sends, checked by the conformance suite."""
    tier = catalog.parallel_fs[setting.deployment_type]
    derived = [
        (tier.capacity_property, setting.capacity_derived, setting.capacity_gib, "GiB", "training.storage.lustre.capacityGiB"),
        (tier.throughput_property, setting.tier_derived, setting.throughput_per_tib, "MB/s/TiB",
         "training.storage.lustre.throughputPerTiB"),
    ]  # fmt: skip
    rows = []
    for placed, was_derived, value, unit, key in derived:
        if placed is None or not was_derived or value is None:
            continue
        note = f"; {placed.note}" if placed.note else ""
        rows.append(_resource(
            placed.type_token, f"{stack}{placed.name_suffix}", placed.prop,
            placed.convert(value) if placed.convert is not None else value if placed.scale == 1 else value * placed.scale,
            placed.unit or unit, f"{key} (row above){note}",
        ))  # fmt: skip
    return rows


def _lustre_row(check: tp.LustreCheck) -> DerivedDefault:
    """The configured file system against the data it must hold and the checkpoint write target."""
    tier = check.throughput_per_tib or "baseline"
    price = f"${check.monthly_usd:,.0f}/month" if check.monthly_usd is not None else "no known price"
    configured = (
        f"planner.lustre: {check.capacity_gib} GiB x {tier} MB/s/TiB = {check.throughput_mbps:g} MB/s ({price}) "
        f"writes a {check.checkpoint_gib:g} GiB checkpoint in {check.write_seconds:g} s"
    )
    target = f"the {check.target_seconds:g} s target ({check.target_basis})"
    best = check.cheapest
    best_text = (
        f"{best.deployment_type} {best.capacity_gib} GiB at {best.throughput_per_tib or 'baseline'} MB/s/TiB "
        f"({best.checkpoint_write_seconds:g} s, ${best.monthly_usd:,.0f}/month)"
        if best is not None
        else "none priced"
    )
    if not check.meets_target:
        verdict = f"misses {target}; cheapest that meets it: {best_text}"
    elif check.cheaper_option is not None:
        verdict = f"within {target}; cheaper and still within it: {best_text}"
    else:
        verdict = f"within {target}; no cheaper {check.deployment_type} option holds the same data"
    if check.dataset_assumed:
        data = (
            f"dataset assumed {check.dataset_gib:g} GiB: the capacity less {counted(check.retained_checkpoints, 'checkpoints')} "
            "kept on it and headroom; set training.storage.datasets.sizeGiB to make this exact"
        )
    else:
        data = f"dataset {check.dataset_gib:g} GiB (training.storage.datasets.sizeGiB)"
    if check.required_gib is not None:
        holds = "holds" if check.holds_data else "cannot hold"
        data += (
            f"; {holds} the stated data + {lustre_sizing.DEFAULT_HEADROOM:.0%} headroom = {check.required_gib:g} GiB"
            + ("" if check.holds_data else f" ({check.smallest_holding()})")
        )
    return DerivedDefault(
        "training.storage.lustre", check.write_seconds, "s per checkpoint", f"{configured}: {verdict} ({data})",
        "check", ok=check.meets_target and check.holds_data,
    )  # fmt: skip
