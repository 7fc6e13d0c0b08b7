"""What users would see and what it would cost: a finished `Run` summarised, priced and plotted (from the
streaming statistics of `accelstack.simulate.stats`: no per-request list)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from accelstack.planner.cost import HOURS_PER_MONTH
from accelstack.planner.serving_plan import ROOT_VOLUME_IOPS, ROOT_VOLUME_THROUGHPUT_MIBPS
from accelstack.simulate.engine import DEAD_LETTER, EXPIRED, REFUSED, Run
from accelstack.simulate.stats import counts_between, percentiles

# Load balancer and queue prices come with the design (its cloud's `Prices.extra`; a key the cloud does not
# give is not priced); what a request costs in API calls is here. Per request: send, receive and delete on the request queue, and the same on the response queue.
SQS_CALLS_PER_REQUEST = 6
# Each queue worker long-polls (20 s wait) when idle: 3 receives per replica-minute at most.
SQS_IDLE_POLLS_PER_REPLICA_HOUR = 180


def littles_law(run: Run) -> dict[str, float | None]:
    """L (requests in the system, averaged over the metric samples) against lambda x W (accepted
    arrivals per second x mean time in the system, from each request's own times, clipped to the
    horizon). Two independent paths through the simulator's state: they agree unless one is wrong; with
    one-minute samples `relativeError` is mostly the sampling of L, not an error of the model."""
    horizon = run.workload.horizon
    if not run.samples:
        return {"sampledL": None, "lambdaW": None, "relativeError": None}
    sampled = float(np.mean([s.backlog + s.in_flight for s in run.samples]))
    lambda_w = run.queue.stats.totals.time_in_system / horizon
    error = abs(sampled - lambda_w) / lambda_w if lambda_w > 0 else (0.0 if sampled == 0 else None)
    return {
        "sampledL": round(sampled, 4),
        "lambdaW": round(lambda_w, 4),
        "relativeError": None if error is None else round(error, 4),
    }


def cost(run: Run) -> dict[str, Any]:
    design, hours = run.design, run.workload.horizon / 3600
    replica_hours = {state: seconds / 3600 for state, seconds in run.meter.seconds.items()}
    running = sum(h for state, h in replica_hours.items() if state != "pool_stopped")
    instances = running * design.hourly_usd
    # Every instance has its root volume, running or stopped in the warm pool.
    listed = design.prices.listed.extra
    # Storage and the provisioned IOPS and throughput, priced as `accelstack cost` prices the same volume.
    volume_hourly = (
        design.prices.block_volume_monthly(design.root_volume_gib, ROOT_VOLUME_IOPS, ROOT_VOLUME_THROUGHPUT_MIBPS)
        / HOURS_PER_MONTH
    )
    volumes_running = running * volume_hourly
    volumes_stopped = replica_hours["pool_stopped"] * volume_hourly
    arrivals = run.queue.arrival
    per_hour = counts_between(arrivals, 3600.0, max(1, int(np.ceil(hours))))
    per_unit = listed.get("load_balancer_new_connections_per_capacity_unit")
    # Capacity units billed on new connections/s (they dominate for long generations).
    unit_hours = float((per_hour / 3600 / per_unit).sum()) if per_unit else 0.0
    load_balancer = hours * listed.get("load_balancer_hourly", 0.0) + unit_hours * listed.get(
        "load_balancer_capacity_unit_hourly", 0.0
    )
    sqs_calls = len(arrivals) * SQS_CALLS_PER_REQUEST + replica_hours["serving"] * SQS_IDLE_POLLS_PER_REPLICA_HOUR
    # Admission on the replicas (waiting_per_replica) has no queue to pay for.
    queue = 0.0 if design.waiting_per_replica else sqs_calls / 1e6 * listed.get("queue_per_million_requests", 0.0)
    # The lines `accelstack cost` prices (instances, running and stopped root volumes), for these hours; the load
    # balancer and the queue are priced here from the simulated traffic, which `cost` lists as not priced.
    as_cost = instances + volumes_running + volumes_stopped
    total = as_cost + load_balancer + queue
    # A line the cloud's price book has no price for is said so by its own name, never shown as $0.
    terms = design.terms
    unpriced = [terms.load_balancer] if "load_balancer_hourly" not in listed else []
    if not design.waiting_per_replica and terms.queue is not None and "queue_per_million_requests" not in listed:
        unpriced.append(terms.queue)
    return {
        "instancesUsd": round(instances, 2),
        "volumesRunningUsd": round(volumes_running, 2),
        "warmPoolVolumesUsd": round(volumes_stopped, 2),
        "loadBalancerUsd": round(load_balancer, 2),
        "queueUsd": round(queue, 2),
        "accelstackCostUsd": round(as_cost, 2),
        "totalUsd": round(total, 2),
        "perDayUsd": round(total * 24 / hours, 2) if hours else 0.0,
        "notPriced": unpriced,
    }


def summarize(run: Run, slo_share: float) -> dict[str, Any]:
    design, stats = run.design, run.queue.stats
    counts, totals = stats.status_counts, stats.totals
    total = run.queue.n
    attainment = totals.met / total if total else 1.0
    hours = {state: round(seconds / 3600, 2) for state, seconds in run.meter.seconds.items()}
    ready = run.ready_events
    return {
        "design": design.name,
        "autoscaler": design.autoscaler,
        "replicas": f"{design.replicas_min}..{design.replicas_max}",
        "warmPool": design.warm_pool,
        "concurrency": design.concurrency,
        "backlogTarget": design.backlog_target,
        "coldStartSeconds": design.cold_start_seconds,
        "warmStartSeconds": design.warm_start_seconds,
        "start": {"state": run.start, "replicas": run.initial_replicas, "backlog": 0},
        "requests": {
            "arrived": total,
            "served": totals.served,
            "refused": counts.get(REFUSED, 0),
            "expired": counts.get(EXPIRED, 0),
            "deadLettered": counts.get(DEAD_LETTER, 0),
        },
        # Percentiles from a sketch: within `percentileRelativeError` of the exact order statistic.
        "queueWaitSeconds": percentiles(stats.wait, totals.wait_sum),
        "latencySeconds": percentiles(stats.latency, totals.latency_sum),
        "percentileRelativeError": stats.latency.relative_error,
        "slo": {
            "targetSeconds": design.slo_target_seconds,
            "attainment": round(attainment, 5),
            "required": slo_share,
            "met": attainment >= slo_share,
        },
        "replicaHours": {
            "serving": hours["serving"],
            "warmStarting": hours["starting_warm"],
            "coldStarting": hours["starting_cold"],
            "warmPoolPreparing": hours["pool_preparing"],
            "warmPoolStopped": hours["pool_stopped"],
        },
        "scaling": {
            "events": len(run.scaling_events),
            "launchesWarm": sum(1 for _, warm in ready if warm),
            "launchesCold": sum(1 for _, warm in ready if not warm),
            "peakReplicas": max([s.in_service for s in run.samples], default=run.initial_replicas),
            "failures": run.failures,
        },
        "cost": cost(run),
        "littlesLaw": littles_law(run),
    }


def plot(run: Run, path: Path, title: str) -> None:
    """Timeline PNG of what users feel beside what the fleet does, on one time axis: arrivals; latency
    p50/p95/p99 per interval (of the requests arriving in it) against the SLO target; the share of each
    interval's requests missing the SLO (late, and refused/expired/dead-lettered apart); the queue's backlog
    against its depth limit and the requests in flight; replicas in service, starting, desired and stopped
    in the warm pool."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    samples, design = run.samples, run.design
    series = run.queue.stats.series()
    hours = np.array([s.time for s in samples]) / 3600
    mid = series["time"] / 3600
    arrived = np.maximum(series["arrivals"], 1)
    fig, axes = plt.subplots(5, 1, figsize=(11, 12), sharex=True)
    axes[0].plot(mid, series["arrivals"] / run.queue.stats.interval_seconds, lw=0.8)
    axes[0].set_ylabel("arrivals/s")
    for key, colour in (("p50", "tab:green"), ("p95", "tab:orange"), ("p99", "tab:red")):
        axes[1].plot(mid, series[key], lw=0.8, color=colour, label=f"latency {key}")
    axes[1].axhline(design.slo_target_seconds, ls=":", color="grey", lw=0.8, label="SLO target")
    axes[1].set_yscale("log")
    axes[1].set_ylabel("latency (s)")
    late = (series["misses"] - series["dropped"]) / arrived * 100
    axes[2].fill_between(mid, 0, late, step="mid", color="tab:orange", alpha=0.6, lw=0, label="late")
    axes[2].fill_between(mid, late, late + series["dropped"] / arrived * 100, step="mid", color="tab:red", alpha=0.6, lw=0,
                         label="refused / expired / dead-lettered")  # fmt: skip
    axes[2].set_ylabel("SLO misses (%)")
    axes[3].plot(hours, [s.backlog for s in samples], lw=0.8, color="tab:red", label="backlog (waiting)")
    axes[3].plot(hours, [s.in_flight for s in samples], lw=0.8, color="tab:green", label="requests in flight")
    if not design.waiting_per_replica:
        axes[3].axhline(
            design.max_depth, ls=":", color="grey", lw=0.8, label=f"max depth {design.max_depth:,} (admission.maxDepth)"
        )
    axes[3].set_ylabel("requests")
    axes[4].step(hours, [s.in_service for s in samples], where="post", label="in service")
    axes[4].step(hours, [s.starting for s in samples], where="post", label="starting")
    axes[4].step(hours, [s.desired for s in samples], where="post", ls="--", lw=0.8, label="desired")
    axes[4].step(hours, [s.pool for s in samples], where="post", label="warm pool (stopped)")
    axes[4].set_ylabel("replicas")
    axes[4].set_xlabel("hour")
    for axis in axes[1:]:
        axis.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
