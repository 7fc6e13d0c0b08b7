"""What users would see and what it would cost: a finished `Run` summarised, priced and plotted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from accelstack.planner.cost import HOURS_PER_MONTH
from accelstack.simulate.engine import DEAD_LETTER, EXPIRED, PENDING, REFUSED, Run

# Load balancer and queue prices come with the design (its cloud's `Prices.extra`; a key the cloud does not
# give is not priced); what a request costs in API calls is here. Per request: send, receive and delete on the request queue, and the same on the response queue.
SQS_CALLS_PER_REQUEST = 6
# Each queue worker long-polls (20 s wait) when idle: 3 receives per replica-minute at most.
SQS_IDLE_POLLS_PER_REPLICA_HOUR = 180


def percentiles(values: np.ndarray) -> dict[str, float | None]:
    if len(values) == 0:
        return {"p50": None, "p95": None, "p99": None, "mean": None}
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return {
        "p50": round(float(p50), 3),
        "p95": round(float(p95), 3),
        "p99": round(float(p99), 3),
        "mean": round(float(values.mean()), 3),
    }


def outcomes(run: Run) -> dict[str, np.ndarray]:
    queue = run.queue
    arrival = np.asarray(queue.arrival)
    start = np.asarray(queue.start)
    status = np.frombuffer(bytes(queue.status), dtype=np.uint8)
    served = (status == PENDING) & (start >= 0)
    service = np.asarray(queue.service)
    wait = start[served] - arrival[served]
    return {
        "arrival": arrival,
        "status": status,
        "served": served,
        "wait": wait,
        "latency": wait + service[served],
        "finish": start[served] + service[served],
    }


def littles_law(run: Run, o: dict[str, np.ndarray]) -> dict[str, float | None]:
    """L (requests in the system, averaged over the metric samples) against lambda x W (accepted
    arrivals per second x mean time in the system, from each request's own times, clipped to the
    horizon). Two independent paths through the simulator's state: they agree unless one is wrong."""
    horizon = run.workload.horizon
    if not run.samples:
        return {"sampledL": None, "lambdaW": None, "relativeError": None}
    sampled = float(np.mean([s.backlog + s.in_flight for s in run.samples]))
    arrival, status = o["arrival"], o["status"]
    leave = np.full(len(arrival), np.nan)
    leave[o["served"]] = o["finish"]
    expired = status == EXPIRED
    leave[expired] = arrival[expired] + run.design.ttl_seconds
    accepted = ~np.isnan(leave)
    time_in_system = np.clip(np.minimum(leave[accepted], horizon) - arrival[accepted], 0, None)
    lambda_w = float(time_in_system.sum() / horizon)
    error = abs(sampled - lambda_w) / lambda_w if lambda_w > 0 else (0.0 if sampled == 0 else None)
    return {
        "sampledL": round(sampled, 4),
        "lambdaW": round(lambda_w, 4),
        "relativeError": None if error is None else round(error, 4),
    }


def cost(run: Run) -> dict[str, float]:
    design, hours = run.design, run.workload.horizon / 3600
    replica_hours = {state: seconds / 3600 for state, seconds in run.meter.seconds.items()}
    running = sum(h for state, h in replica_hours.items() if state != "pool_stopped")
    instances = running * design.hourly_usd
    # Every instance has its root volume, running or stopped in the warm pool.
    listed = design.prices.listed.extra
    volume_hourly = design.root_volume_gib * design.prices.block_gb_month / HOURS_PER_MONTH
    volumes_running = running * volume_hourly
    volumes_stopped = replica_hours["pool_stopped"] * volume_hourly
    arrivals = np.asarray(run.queue.arrival)
    per_hour = (
        np.bincount((arrivals // 3600).astype(int), minlength=max(1, int(np.ceil(hours))))
        if len(arrivals)
        else np.zeros(1)
    )
    per_unit = listed.get("load_balancer_new_connections_per_capacity_unit")
    # Capacity units billed on new connections/s (they dominate for long generations).
    unit_hours = float((per_hour / 3600 / per_unit).sum()) if per_unit else 0.0
    load_balancer = hours * listed.get("load_balancer_hourly", 0.0) + unit_hours * listed.get(
        "load_balancer_capacity_unit_hourly", 0.0
    )
    sqs_calls = len(arrivals) * SQS_CALLS_PER_REQUEST + replica_hours["serving"] * SQS_IDLE_POLLS_PER_REPLICA_HOUR
    # Admission on the replicas (waiting_per_replica) has no queue to pay for.
    queue = 0.0 if design.waiting_per_replica else sqs_calls / 1e6 * listed.get("queue_per_million_requests", 0.0)
    total = instances + volumes_running + volumes_stopped + load_balancer + queue
    return {
        "instancesUsd": round(instances, 2),
        "volumesRunningUsd": round(volumes_running, 2),
        "warmPoolVolumesUsd": round(volumes_stopped, 2),
        "loadBalancerUsd": round(load_balancer, 2),
        "queueUsd": round(queue, 2),
        "totalUsd": round(total, 2),
        "perDayUsd": round(total * 24 / hours, 2) if hours else 0.0,
    }


def summarize(run: Run, slo_share: float) -> dict[str, Any]:
    design, o = run.design, outcomes(run)
    total = len(o["arrival"])
    status = o["status"]
    met = int((o["latency"] <= design.slo_target_seconds).sum())
    attainment = met / total if total else 1.0
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
        "requests": {
            "arrived": total,
            "served": int(o["served"].sum()),
            "refused": int((status == REFUSED).sum()),
            "expired": int((status == EXPIRED).sum()),
            "deadLettered": int((status == DEAD_LETTER).sum()),
        },
        "queueWaitSeconds": percentiles(o["wait"]),
        "latencySeconds": percentiles(o["latency"]),
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
            "peakReplicas": max([s.in_service for s in run.samples], default=design.initial_replicas),
            "failures": run.failures,
        },
        "cost": cost(run),
        "littlesLaw": littles_law(run, o),
    }


def cheapest_meeting_slo(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    meeting = [s for s in summaries if s["slo"]["met"]]
    if meeting:
        best = min(meeting, key=lambda s: s["cost"]["totalUsd"])
        return {"design": best["design"], "totalUsd": best["cost"]["totalUsd"], "meetsSlo": True,
                "why": f"meets the SLO ({best['slo']['attainment']:.2%} of requests within {best['slo']['targetSeconds']:g} s) at the least cost"}  # fmt: skip
    best = max(summaries, key=lambda s: s["slo"]["attainment"])
    return {"design": best["design"], "totalUsd": best["cost"]["totalUsd"], "meetsSlo": False,
            "why": f"no design meets the SLO; the closest reaches {best['slo']['attainment']:.2%} (required {best['slo']['required']:.2%})"}  # fmt: skip


def plot(run: Run, path: Path, title: str) -> None:
    """Timeline PNG: arrivals per second, backlog, requests in service, replicas (in service,
    starting, stopped in the warm pool)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    samples = run.samples
    hours = np.array([s.time for s in samples]) / 3600
    fig, axes = plt.subplots(4, 1, figsize=(11, 9), sharex=True)
    axes[0].plot(hours, [s.arrivals / run.sample_seconds for s in samples], lw=0.8)
    axes[0].set_ylabel("arrivals/s")
    axes[1].plot(hours, [s.backlog for s in samples], lw=0.8, color="tab:red")
    axes[1].axhline(run.design.max_depth, ls=":", color="grey", lw=0.8)
    axes[1].set_ylabel("backlog")
    axes[2].plot(hours, [s.in_flight for s in samples], lw=0.8, color="tab:green")
    axes[2].set_ylabel("in service")
    axes[3].step(hours, [s.in_service for s in samples], where="post", label="in service")
    axes[3].step(hours, [s.starting for s in samples], where="post", label="starting")
    axes[3].step(hours, [s.pool for s in samples], where="post", label="warm pool (stopped)")
    axes[3].set_ylabel("replicas")
    axes[3].set_xlabel("hour")
    axes[3].legend(loc="upper left", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
