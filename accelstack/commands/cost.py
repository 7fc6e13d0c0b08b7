"""`accelstack cost [STACK... | --all]`: price training and serving stacks from their specs.

Training prices a job: its failure-free hours (--hours, else from training.model.trainingTokens, else a
month at 24x7), inflated by Daly's expected checkpoint and rework overhead, x nodes x hourly price (spot
discounted), plus the Slurm head node (and its accounting database, where training.scheduler.accounting is
database), Lustre and the object store for the job's wall time. Serving prices a month:
replica-hours from a 24-hour traffic profile between replicas.min and replicas.max, the replicas' root
volumes and the warm pool's stopped volumes; and a lifetime of --months. Every assumption a figure rests
on is printed beside it; what is not priced is listed.
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

import typer
from pydantic.alias_generators import to_camel
from rich.table import Table

from accelstack.clouds.base import Catalog, Cloud
from accelstack.clouds.not_priced import not_priced_for
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
from accelstack.commands.size import DEFAULT_CLOUD, PricesOpt, book, cloud_named, emit, planner_call
from accelstack.planner import checkpoint as ck
from accelstack.planner import cost as costs
from accelstack.planner.egress import copy_egress, handoff_egress
from accelstack.planner.hardware import GIB, instance
from accelstack.planner.pricing import PriceBook
from accelstack.planner.serving_plan import ROOT_VOLUME_IOPS, ROOT_VOLUME_THROUGHPUT_MIBPS, plan_serving
from accelstack.planner.training_plan import job_compute_hours, lustre_setting, plan_training
from accelstack.planner.units import counted
from accelstack.spec.copies import artifact_copies
from accelstack.spec.handoff import artifact_handoff
from accelstack.spec.models import ServingStack, TrainingStack

# Checkpoint size, write rate and interval come from `accelstack.planner.training_plan`, the same
# numbers the training component exports and `accelstack preview` shows.
DEFAULT_DATASET_GB = (
    1000.0  # object storage dataset size when neither --dataset-gb nor training.storage.datasets.sizeGiB gives one
)
PROFILE_BASIS = "business-hours profile (planner.cost.DEFAULT_DAILY_PROFILE, an assumption): ceil(peak x share of peak)"


def camel_keys(value: Any) -> Any:
    """The JSON document with every key camelCase (planner dataclasses are snake_case in Python)."""
    if isinstance(value, dict):
        return {to_camel(str(k)) if "_" in str(k) else k: camel_keys(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [camel_keys(v) for v in value]
    return value


def dataset_gb_of(spec: TrainingStack, given: float | None) -> tuple[float, str]:
    """The dataset's size in GB and where it came from: --dataset-gb, the stack file, or the default."""
    if given is not None:
        return given, "--dataset-gb"
    size_gib = spec.training.storage.datasets.size_gib
    if size_gib is not None:
        return round(size_gib * GIB / 1e9, 1), "training.storage.datasets.sizeGiB"
    return DEFAULT_DATASET_GB, "assumed (set training.storage.datasets.sizeGiB or --dataset-gb)"


def job_hours_of(spec: TrainingStack, given: float | None, catalog: Catalog) -> tuple[float, str]:
    """The job's failure-free compute hours and where they came from: --hours, the spec's tokens, or a month."""
    if given is not None:
        return given, "--hours"
    job = job_compute_hours(spec.training, catalog)
    if job is not None:
        return job.hours, job.basis
    return costs.HOURS_PER_MONTH, "a month at 24x7 (no job length: set training.model.trainingTokens or --hours)"


def quota_drawn(catalog: Catalog, instance_type: str, capacity: str, count: int) -> dict[str, Any]:
    """The account quota `count` machines bought as `capacity` draw on (what to raise before the first `up`)."""
    if capacity not in ("on-demand", "spot", "flex-start"):
        return {"name": None, "basis": f"the {capacity} capacity bought for the stack (its reservation)"}
    # Flex-start VMs are charged against the preemptible quota (Google Cloud, "Choose a consumption option").
    quota = catalog.quota(instance_type, "spot" if capacity == "flex-start" else capacity)
    if quota is None:
        return {
            "name": None,
            "basis": f"not in accelstack's {catalog.cloud} quota table; the cloud's usage API names it",
        }
    amount = quota.amount(catalog.instance(instance_type), count)
    return {"name": quota.name, "unit": quota.unit, "amount": amount, "basis": f"{quota.name}: {amount} {quota.unit}"}


def accounting_database_estimate(spec: TrainingStack, cloud: Cloud, wall_hours: float) -> dict[str, Any] | None:
    """The Slurm accounting database (training.scheduler.accounting: database) for a month and for the job's wall
    hours, at the size the cloud's component deploys (Prices.accounting_database); None without accounting."""
    if spec.training.scheduler.accounting != "database":
        return None
    database = cloud.prices.accounting_database
    if database is None:
        raise ValueError(
            f"training.scheduler.accounting: database has no price on {cloud.name} (accelstack deploys no accounting "
            "database there); use accounting: none"
        )
    monthly = database.monthly(costs.HOURS_PER_MONTH)
    return {
        "product": database.product,
        "monthlyUsd": round(monthly, 2),
        # Kept up for the job's wall hours, as the head node is (it is retained after the job: its records stay).
        "jobUsd": round(monthly / costs.HOURS_PER_MONTH * wall_hours, 2),
        "basis": database.basis(costs.HOURS_PER_MONTH),
    }


def training_estimate(
    spec: TrainingStack, hours: float | None, prices: PriceBook, dataset_gb: float | None = None, *, cloud: Cloud
) -> dict[str, Any]:
    training = spec.training
    catalog = cloud.catalog
    nodes = training.nodes
    setting = lustre_setting(training, catalog, prices)
    lustre_unpriced = lustre_key = None
    lustre_monthly = 0.0
    if setting is not None:
        try:
            lustre_monthly = setting.capacity_gib * prices.lustre(setting.deployment_type, setting.throughput_per_tib)
        except ValueError as error:
            # Price what is known and say, beside the figures, what is left out (not a zero in disguise).
            lustre_unpriced = f"{catalog.parallel_fs_service} {setting.deployment_type}: {error}"
            # The --prices key that prices it: the tier, with its throughput where the tier offers several.
            several = len(catalog.parallel_fs[setting.deployment_type].throughput_per_tib) > 1
            lustre_key = (
                f"{setting.deployment_type}/{setting.throughput_per_tib}" if several else setting.deployment_type
            )
    plan = plan_training(training, catalog=catalog, prices=prices)
    checkpoint = plan.checkpoint
    compute_hours, hours_source = job_hours_of(spec, hours, catalog)
    dataset_gb, dataset_source = dataset_gb_of(spec, dataset_gb)
    result = costs.training_cost(
        instance(catalog, nodes.instance_type), nodes.count, compute_hours, capacity=nodes.capacity,
        overhead_fraction=checkpoint.overhead_fraction, lustre_monthly_usd=lustre_monthly,
        object_storage_gb=dataset_gb + checkpoint.state_gb * 2, prices=prices,
    )  # fmt: skip
    head = 0.0
    # The Slurm head, or a managed Slurm's login node (Cluster Director): the stack sizes both from headNode.
    kind = training.scheduler.kind
    if kind == "slurm" or (kind == "managed" and cloud.managed_scheduler.login_node):
        head = prices.hourly(training.scheduler.head_node.instance_type) * result.wall_hours
    accounting = accounting_database_estimate(spec, cloud, result.wall_hours)
    database_job = accounting["jobUsd"] if accounting else 0.0
    database_monthly = accounting["monthlyUsd"] if accounting else 0.0
    total = result.total_usd + head + database_job
    spot = (
        f", spot interruptions {ck.DEFAULT_SPOT_INTERRUPTIONS_PER_MONTH:.0%}/month per node and "
        f"{prices.spot_discount:.0%} off on-demand"
        if nodes.capacity == "spot"
        else ""
    )
    if nodes.capacity == "flex-start":
        spot += ", flex-start priced at the on-demand list price (its discount varies by machine type; give it with --prices)"
    assumptions = (
        f"overhead {checkpoint.overhead_fraction:.1%} = Daly 2006 at a {checkpoint.write_seconds:g} s checkpoint write "
        f"({plan.write.write_mbps:.0f} MB/s: {plan.write.write_basis}), job MTBF {checkpoint.job_mtbf_hours:.0f} h "
        f"(node MTBF {ck.LLAMA3_NODE_MTBF_HOURS:.0f} h{spot}), {ck.DEFAULT_RESTART_SECONDS:.0f} s restarts"
    )
    return {
        "workload": "training",
        "instanceType": nodes.instance_type,
        "hourlyBasis": prices.hourly_basis(nodes.instance_type),
        "nodes": nodes.count,
        "capacity": nodes.capacity,
        "quota": quota_drawn(catalog, nodes.instance_type, nodes.capacity, nodes.count),
        "computeHours": round(compute_hours, 2),
        "computeHoursSource": hours_source,
        "assumptions": assumptions,
        "checkpoint": {
            **checkpoint.as_dict(),
            "state_basis": plan.write.state_basis,
            "state_assumed": plan.write.state_assumed,
        },
        "datasetGb": dataset_gb,
        "datasetSource": dataset_source,
        "training": result.as_dict(),
        "headNodeUsd": round(head, 2),
        "accountingDatabase": accounting,
        "totalUsd": round(total, 2),
        # The cluster kept up for a month: nodes (without overhead), head node, Lustre and object storage.
        "monthlyUsdAt24x7": round(
            (result.hourly_per_node * nodes.count + (head / result.wall_hours if result.wall_hours else 0.0))
            * costs.HOURS_PER_MONTH
            + lustre_monthly
            + (dataset_gb + checkpoint.state_gb * 2) * prices.object_gb_month
            + database_monthly,
            2,
        ),
        "notPriced": not_priced_for(
            cloud.prices.not_priced,
            "training",
            (nodes.instance_type, spec.training.scheduler.head_node.instance_type),
            parallel_fs_priced=lustre_unpriced is None,
        ),
        "lustreNotPriced": lustre_unpriced,
        "lustrePriceKey": lustre_key,
        "priceSource": prices.source(),
    }


def serving_estimate(spec: ServingStack, months: float, prices: PriceBook, *, cloud: Cloud) -> dict[str, Any]:
    serving = spec.serving
    replicas = serving.replicas
    plan = plan_serving(serving, cloud.catalog)
    load = plan.load
    # The peak hour runs what the stated load needs (within min..max), else max.
    peak = min(replicas.max, max(replicas.min, load.replicas)) if load is not None else replicas.max
    peak_basis = (
        f"peak {peak} = replicas serving.load needs within min..max"
        if load is not None
        else f"peak {peak} = replicas.max"
    )
    result = costs.serving_cost(
        replicas.instance_type, replicas.min, peak, capacity=replicas.capacity,
        lifetime_months=months, prices=prices, root_volume_gib=plan.root_volume_gib,
        root_volume_iops=ROOT_VOLUME_IOPS, root_volume_mibps=ROOT_VOLUME_THROUGHPUT_MIBPS, warm_pool=plan.warm_pool_size,
    )  # fmt: skip
    handoff = artifact_handoff(spec)
    copies = artifact_copies(spec)
    copied_gb = plan.weights_gb + 0.5 * sum(1 for c in copies if c.name != "weights")  # as the fetch: 0.5 GB each
    copy = copy_egress(copies[0].source_cloud, spec.cloud, copied_gb).as_dict() if copies else None
    egress = (
        handoff_egress(
            handoff.training_cloud, handoff.serving_cloud, plan.weights_gb + 0.5 * len(serving.model.adapters),
            result.replicas_by_hour, plan.warm_pool_size,
        ).as_dict()
        if handoff is not None
        else None
    )  # fmt: skip
    return {
        "workload": "serving",
        "instanceType": replicas.instance_type,
        "hourlyBasis": prices.hourly_basis(replicas.instance_type),
        "replicas": f"{replicas.min}..{replicas.max}",
        "capacity": replicas.capacity,
        # At most replicas.max run at once; stopped warm-pool replicas hold no running-instance quota.
        "quota": quota_drawn(cloud.catalog, replicas.instance_type, replicas.capacity, replicas.max),
        "profileBasis": f"{PROFILE_BASIS}; {peak_basis}",
        "rootVolume": f"{cloud.prices.block_product} {plan.root_volume_gib} GiB"
        + (
            f", {ROOT_VOLUME_IOPS} IOPS, {ROOT_VOLUME_THROUGHPUT_MIBPS} MiB/s"
            if cloud.prices.block_iops_month or cloud.prices.block_mibps_month
            else ""
        ),
        "load": load.as_dict() if load is not None else None,
        "serving": result.as_dict(),
        # Weights on another cloud: the training cloud's egress, billed to the training account (not in the totals).
        "crossCloudEgress": egress,
        # Weights copied from another cloud (serving.model.copyFrom): its egress once per checkpoint, not monthly.
        "copyEgress": copy,
        "totalUsd": result.lifetime_usd,
        "monthlyUsd": result.monthly_usd,
        "notPriced": not_priced_for(cloud.prices.not_priced, "serving", (replicas.instance_type,)),
        "priceSource": prices.source(),
    }


def training_table(results: dict[str, Any]) -> Table:
    table = Table(title="accelstack cost: training jobs", title_justify="left", caption_justify="left")
    for column in ("stack", "nodes", "job hours (wall)", "assumptions", "compute", "Lustre + object store", "head node",
                   "job total", "per month 24x7"):  # fmt: skip
        table.add_column(column, justify="right" if column[0] in "cLhjp" and column != "assumptions" else "left",
                         overflow="fold")  # fmt: skip
    for name, r in results.items():
        t = r["training"]
        table.add_row(
            name,
            f"{counted(r['nodes'], 'node')} x {r['instanceType']} {r['capacity']}; quota {r['quota']['basis']}",
            f"{t['compute_hours']:g} h x (1 + {t['overhead_fraction']:.1%}) = {t['wall_hours']:g} h "
            f"({t['gpu_hours']:g} GPU-h); hours from {r['computeHoursSource']}",
            r["assumptions"],
            f"${t['compute_usd']:,.0f} at the {r['hourlyBasis']}",
            f"${t['lustre_usd'] + t['s3_usd']:,.0f}"
            + (
                f" + Lustre NOT PRICED (no list price recorded; give it with --prices FILE: "
                f"lustreGbMonth: {{{r['lustrePriceKey']}: USD per GB-month}})"
                if r.get("lustreNotPriced")
                else ""
            ),
            f"${r['headNodeUsd']:,.0f}"
            + (
                f" + accounting database ${r['accountingDatabase']['jobUsd']:,.0f}"
                if r.get("accountingDatabase")
                else ""
            ),
            f"${r['totalUsd']:,.0f}",
            f"${r['monthlyUsdAt24x7']:,.0f}",
        )
    table.caption = (
        "job total = compute (nodes x price x wall hours) + Lustre + object store (S3, Blob, GCS) + head node for the job's wall hours; "
        "per month 24x7 = the same cluster kept up for 730 h, without checkpoint overhead"
    )
    for name, r in results.items():
        database = r.get("accountingDatabase")
        if database:  # training.scheduler.accounting: database
            table.caption += (
                f"\n{name}: Slurm accounting database ${database['monthlyUsd']:,.2f}/month = {database['basis']}"
            )
    return table


def serving_table(results: dict[str, Any]) -> Table:
    table = Table(title="accelstack cost: serving", title_justify="left", caption_justify="left")
    for column in ("stack", "replicas", "replica-hours per day", "compute/month", "volumes/month", "per month",
                   "lifetime"):  # fmt: skip
        table.add_column(column, justify="left" if column in ("stack", "replicas", "replica-hours per day") else "right",
                         overflow="fold")  # fmt: skip
    for name, r in results.items():
        s = r["serving"]
        by_hour = " ".join(str(n) for n in s["replicas_by_hour"])
        table.add_row(
            name,
            f"{r['replicas']} x {r['instanceType']} {r['capacity']}; quota at max {r['quota']['basis']}",
            f"{s['replica_hours_per_day']} = sum of replicas by hour 00-23 [{by_hour}] ({r['profileBasis'].rsplit('; ', 1)[-1]})",
            f"${s['compute_monthly_usd']:,.0f} at the {r['hourlyBasis']}",
            f"${s['running_volumes_monthly_usd'] + s['warm_pool_monthly_usd']:,.0f} (warm pool of "
            f"{counted(s['warm_pool'], 'replicas')}: ${s['warm_pool_monthly_usd']:,.0f})",
            f"${s['monthly_usd']:,.0f}",
            f"${s['lifetime_usd']:,.0f} ({s['lifetime_months']:g} months)",
        )
    table.caption = (
        f"replicas by hour: {PROFILE_BASIS}; compute = replica-hours x price x 30.4 days; volumes = each running "
        "replica's root volume + the stopped warm-pool volumes (the cloud's block storage; IOPS and throughput where "
        "billed apart, as gp3's); "
        "per month = both"
    )
    for name, r in results.items():
        egress = r.get("crossCloudEgress")
        if egress:  # weights on another cloud: billed to the training account, beside this stack's totals
            table.caption += (
                f"\n{name}: cross-cloud egress from {egress['training_cloud']} ${egress['monthly_usd']:,.0f}/month = "
                f"{egress['basis']}; list price as of {egress['as_of']}, {egress['source']}"
            )
        copy = r.get("copyEgress")
        if copy:  # copied into this stack's store: the training account pays once per checkpoint
            table.caption += (
                f"\n{name}: copy egress from {copy['training_cloud']} ${copy['usd_per_copy']:,.2f} per checkpoint = "
                f"{copy['basis']}; list price as of {copy['as_of']}, {copy['source']}"
            )
    return table


@guarded
def cost_command(
    stacks: StacksArg = None,
    all_stacks: AllOpt = False,
    overrides: SetOpt = None,
    project_dir: ProjectDirOpt = None,
    hours: Annotated[
        float | None,
        typer.Option(
            "--hours",
            min=0,
            help="Training: failure-free compute hours of the job (default: from training.model.trainingTokens, else a month at 24x7).",
        ),
    ] = None,
    months: Annotated[float, typer.Option("--months", min=0, help="Serving: lifetime in months.")] = 24.0,
    dataset_gb: Annotated[
        float | None,
        typer.Option(
            "--dataset-gb",
            min=0,
            help="Training: dataset kept in the object store (S3, Blob, GCS), GB (default: training.storage.datasets.sizeGiB, else 1000).",
        ),
    ] = None,
    prices: PricesOpt = None,
    spot_discount: Annotated[
        float | None,
        typer.Option("--spot-discount", min=0, max=0.99, help="Override the spot discount (0.6 = 60% off)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> int:
    """Price training and serving stacks from their specs and the dated price table (prices overridable)."""

    _, files = resolve_stacks(stacks, all_stacks, project_dir)
    # One book per cloud and region the stacks name (each cloud's table, the region's instance prices where it
    # has them, the same overrides); a bad --prices file stops the command before any stack is priced.
    books: dict[tuple[str, str | None], tuple[Cloud, PriceBook]] = {}

    def priced(cloud_name: str, region: str | None = None) -> tuple[Cloud, PriceBook]:
        if (cloud_name, region) not in books:
            cloud = cloud_named(cloud_name)
            books[cloud_name, region] = (cloud, book(prices, spot_discount, cloud=cloud, region=region))
        return books[cloud_name, region]

    priced(DEFAULT_CLOUD)
    results: dict[str, Any] = {}
    used: list[tuple[str, str | None]] = []
    failed = False
    for name, spec in load_specs(files, overrides or []):
        if spec is None:
            failed = True
            continue
        cloud, book_ = priced(spec.cloud, spec.account.region)
        used += [] if (spec.cloud, spec.account.region) in used else [(spec.cloud, spec.account.region)]
        if isinstance(spec, TrainingStack):
            estimate = partial(training_estimate, spec, hours, book_, dataset_gb, cloud=cloud)
        else:
            estimate = partial(serving_estimate, spec, months, book_, cloud=cloud)
        results[name] = planner_call(name, estimate)
    footer = [priced(*key) for key in used or [(DEFAULT_CLOUD, None)]]
    price_source = "; ".join(dict.fromkeys(b.source() for _, b in footer))
    # What the priced stacks leave out (a serving stack's footer names no training file system); with no stack
    # priced, the table's whole list.
    stated = [line for result in results.values() if isinstance(result, dict) for line in result.get("notPriced", ())]
    every = [line for cloud in {c.name: c for c, _ in footer}.values() for line in cloud.prices.not_priced]
    not_priced = list(dict.fromkeys(str(line) for line in (stated if results else every)))
    if as_json:
        emit("", camel_keys({"stacks": results, "priceSource": price_source, "notPriced": not_priced}), True)
    elif results:
        console = out()
        training = {n: r for n, r in results.items() if r["workload"] == "training"}
        serving = {n: r for n, r in results.items() if r["workload"] == "serving"}
        if training:
            console.print(training_table(training))
        if serving:
            console.print(serving_table(serving))
        console.print(f"prices: {price_source}; not priced: {', '.join(not_priced)}")
    return EXIT_CONFIG if failed else EXIT_OK


def register(app: typer.Typer) -> None:
    app.command("cost")(cost_command)
