"""`accelstack cost [STACK... | --all]`: price training and serving stacks from their specs.

Training: nodes x hourly price for --hours of wall time (spot discounted), inflated by Daly's expected
checkpoint and rework overhead, plus Slurm head node, Lustre and S3. Serving: replica-hours from a
24-hour traffic profile between replicas.min and replicas.max, per month and over --months.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from accelstack.commands.common import (
    EXIT_CONFIG,
    EXIT_OK,
    AllOpt,
    ProjectDirOpt,
    SetOpt,
    StacksArg,
    guarded,
    load_specs,
    out,
    resolve_stacks,
)
from accelstack.commands.size import PricesOpt, book, emit, planner_call
from accelstack.planner import cost as costs
from accelstack.planner.pricing import PriceBook
from accelstack.planner.hardware import GIB
from accelstack.planner.training_plan import plan_training
from accelstack.spec.models import StackSpec

# Checkpoint size, write rate and interval come from `accelstack.planner.training_plan`, the same
# numbers the training component exports and `accelstack preview` shows.
DEFAULT_DATASET_GB = 1000.0  # S3 dataset size when neither --dataset-gb nor training.storage.datasets.sizeGiB gives one


def dataset_gb_of(spec: StackSpec, given: float | None) -> tuple[float, str]:
    """The dataset's size in GB and where it came from: --dataset-gb, the stack file, or the default."""
    if given is not None:
        return given, "--dataset-gb"
    assert spec.training is not None
    size_gib = spec.training.storage.datasets.size_gib
    if size_gib is not None:
        return round(size_gib * GIB / 1e9, 1), "training.storage.datasets.sizeGiB"
    return DEFAULT_DATASET_GB, "assumed (set training.storage.datasets.sizeGiB or --dataset-gb)"


def training_estimate(spec: StackSpec, hours: float, prices: PriceBook, dataset_gb: float | None = None) -> dict[str, Any]:
    training = spec.training
    assert training is not None
    nodes = training.nodes
    lustre = training.storage.lustre
    lustre_monthly = (
        lustre.capacity_gib * prices.lustre(lustre.deployment_type, lustre.throughput_per_tib) if lustre is not None else 0.0
    )
    plan = plan_training(training, prices=prices)
    checkpoint = plan.checkpoint
    dataset_gb, dataset_source = dataset_gb_of(spec, dataset_gb)
    result = costs.training_cost(
        nodes.instance_type, nodes.count, hours, capacity=nodes.capacity,
        overhead_fraction=checkpoint.overhead_fraction, lustre_monthly_usd=lustre_monthly,
        s3_gb=dataset_gb + checkpoint.state_gb * 2, prices=prices,
    )  # fmt: skip
    head = 0.0
    if training.scheduler.kind == "slurm":
        head = prices.hourly(training.scheduler.head_node.instance_type) * result.wall_hours
    total = result.total_usd + head
    return {
        "workload": "training",
        "instanceType": nodes.instance_type,
        "nodes": nodes.count,
        "capacity": nodes.capacity,
        "hours": hours,
        "checkpoint": {**checkpoint.as_dict(), "state_basis": plan.write.state_basis, "state_assumed": plan.write.state_assumed},
        "datasetGb": dataset_gb,
        "datasetSource": dataset_source,
        "training": result.as_dict(),
        "headNodeUsd": round(head, 2),
        "totalUsd": round(total, 2),
        "monthlyUsdAt24x7": round(total / result.wall_hours * costs.HOURS_PER_MONTH, 2) if result.wall_hours else 0.0,
        "priceSource": prices.source(),
    }


def serving_estimate(spec: StackSpec, months: float, prices: PriceBook) -> dict[str, Any]:
    serving = spec.serving
    assert serving is not None
    replicas = serving.replicas
    result = costs.serving_cost(
        replicas.instance_type, replicas.min, replicas.max, capacity=replicas.capacity,
        lifetime_months=months, prices=prices,
    )  # fmt: skip
    return {
        "workload": "serving",
        "instanceType": replicas.instance_type,
        "replicas": f"{replicas.min}..{replicas.max}",
        "capacity": replicas.capacity,
        "serving": result.as_dict(),
        "totalUsd": result.lifetime_usd,
        "monthlyUsd": result.monthly_usd,
        "priceSource": prices.source(),
    }


@guarded
def cost_command(
    stacks: StacksArg = None,
    all_stacks: AllOpt = False,
    overrides: SetOpt = None,
    project_dir: ProjectDirOpt = None,
    hours: Annotated[float, typer.Option("--hours", min=0, help="Training: failure-free wall hours of the job/cluster.")] = costs.HOURS_PER_MONTH,
    months: Annotated[float, typer.Option("--months", min=0, help="Serving: lifetime in months.")] = 24.0,
    dataset_gb: Annotated[float | None, typer.Option("--dataset-gb", min=0, help="Training: dataset kept in S3, GB (default: training.storage.datasets.sizeGiB, else 1000).")] = None,
    prices: PricesOpt = None,
    spot_discount: Annotated[float | None, typer.Option("--spot-discount", min=0, max=0.99, help="Override the spot discount (0.6 = 60% off).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> int:
    """Price training and serving stacks from their specs and the dated price table (prices overridable)."""

    _, files = resolve_stacks(stacks, all_stacks, project_dir)
    book_ = book(prices, spot_discount)
    results: dict[str, Any] = {}
    failed = False
    for name, spec in load_specs(files, overrides or []):
        if spec is None:
            failed = True
            continue
        if spec.workload == "training":
            results[name] = planner_call(name, lambda: training_estimate(spec, hours, book_, dataset_gb))
        else:
            results[name] = planner_call(name, lambda: serving_estimate(spec, months, book_))
    if as_json:
        emit("", {"stacks": results, "priceSource": book_.source()}, True)
    elif results:
        table = Table(title="accelstack cost", title_justify="left")
        for column in ("stack", "what", "capacity", "basis", "per month", "total"):
            table.add_column(column, justify="right" if column in ("per month", "total") else "left")
        for name, r in results.items():
            if r["workload"] == "training":
                t = r["training"]
                basis = (f"{t['compute_hours']:g} h x (1 + {t['overhead_fraction']:.1%} ckpt/rework) = "
                         f"{t['gpu_hours']:g} GPU-h")  # fmt: skip
                what = f"{r['nodes']} x {r['instanceType']}"
                monthly = r["monthlyUsdAt24x7"]
            else:
                s = r["serving"]
                basis = f"{s['replica_hours_per_day']} replica-h/day, {s['lifetime_months']:g} months"
                what = f"{r['replicas']} x {r['instanceType']}"
                monthly = r["monthlyUsd"]
            table.add_row(name, what, r["capacity"], basis, f"${monthly:,.0f}", f"${r['totalUsd']:,.0f}")
        table.caption = book_.source()
        out().print(table)
    return EXIT_CONFIG if failed else EXIT_OK


def register(app: typer.Typer) -> None:
    app.command("cost")(cost_command)
