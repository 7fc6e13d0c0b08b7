"""`accelstack simulate serving STACK`: replay a day of requests against what the stack would deploy.

The design is the stack's spec and plan (`plan_serving`, what the components deploy), so `--set`
changes the design. Reports requests served/refused/expired, queue wait and latency percentiles,
SLO attainment, replica-hours and the day's cost; `--compare` runs the alternatives on the same
requests and names the cheapest that meets the SLO, and what the stack's design costs at equal SLO against the best
peer (request rate as SkyServe, queue length as KEDA, a fixed fleet, CPU); `--seeds N` repeats every run on N
request streams and reports 95% intervals, calling a design better only when they separate; `--plot FILE` writes
the timeline PNG. Runs start at the steady state of the initial load (`--start minimum`: at replicas.min).

This entry is where the simulator meets the cloud registry: `accelstack.simulate` is handed the stack's
cloud's catalog and price book and asks no registry itself, like the planner.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.table import Table

from accelstack.clouds import registry
from accelstack.clouds.base import Cloud
from accelstack.clouds.serving_terms import REPLICA_ADMISSION, ServingTerms
from accelstack.commands.common import (
    EXIT_CONFIG,
    EXIT_OK,
    CliError,
    ProjectDirOpt,
    SetOpt,
    guarded,
    load_specs,
    out,
    resolve_stacks,
)
from accelstack.commands.output_files import check_output_file, staged_file
from accelstack.commands.size import (
    DEFAULT_CLOUD,
    PricesOpt,
    ProfileOpt,
    book,
    check_choice,
    cloud_named,
    emit,
    planner_call,
    read_profile,
)
from accelstack.planner.scaling_rules import ScalingRules
from accelstack.planner.serving import DEFAULT_TARGET_UTILIZATION
from accelstack.planner.token_lengths import of_load
from accelstack.simulate import autoscalers, workload
from accelstack.simulate.compare import (
    DEFAULT_SEEDS,
    against_peers,
    combined,
    peer_designs,
    recommend,
    simulate_designs,
)
from accelstack.simulate.design import Design, default_autoscaler, design_from_spec
from accelstack.simulate.engine import Run
from accelstack.simulate.report import plot
from accelstack.simulate.start import STARTS
from accelstack.spec.models import ServingSpec, ServingStack

# A run holds its requests' arrival and service times and two bytes of state each (~26 bytes; outcomes are
# streamed into sketches), ~40 bytes while the stream is drawn, and costs ~2 us a request: 25 million (the
# expected count of the pattern) stay within about 1 GB.
MAX_REQUESTS = 25_000_000

simulate_app = typer.Typer(
    name="simulate",
    help="Simulate a stack before paying for it: `simulate serving STACK` replays a day of requests.",
    no_args_is_help=True,
)


def default_peak_rps(serving: ServingSpec, concurrency: int) -> float:
    """The stated load (serving.load.requestsPerSecond), else the load the design is sized for: max replicas x
    concurrency per service time, at the planner's target utilization."""
    if serving.load is not None:
        return serving.load.requests_per_second
    return serving.replicas.max * concurrency / serving.slo.service_seconds * DEFAULT_TARGET_UTILIZATION


def service_model_summary(design: Design, tokens_per_second: float | None, mean_tokens: float) -> dict[str, Any]:
    """What each request's service time came from, for the report."""
    if tokens_per_second:
        return {"source": "--tokens-per-second", "tokensPerSecond": tokens_per_second, "batchDependent": False}
    if design.service_time is None:
        return {"source": "serving.slo.serviceSeconds", "meanServiceSeconds": design.service_seconds,
                "tokensPerSecond": round(mean_tokens / design.service_seconds, 3), "batchDependent": False}  # fmt: skip
    return {**design.service_time.as_dict(), "batchDependent": True, "inputTokensIfUnstated": design.input_tokens}


DEFAULT_SLO_SHARE = 0.99


def _slo_word(slo: dict) -> str:
    """meets / misses the required share; with several seeds, by the attainment interval (it may not tell)."""
    verdict = slo.get("verdict", "met" if slo["met"] else "missed")
    return {"met": "meets", "missed": "misses", "undecided": "interval straddles"}[verdict]


def stated_slo_share(serving: ServingSpec) -> float:
    """The share of requests the stack says must meet its latency: the percentile serving.load.latency states (p95:
    0.95), else 0.99."""
    latency = serving.load.latency if serving.load is not None else None
    return latency.percentile / 100 if latency is not None else DEFAULT_SLO_SHARE


def scaling_rules_for(kind: str, cloud: Cloud) -> ScalingRules | None:
    """The scaling rules that make autoscaler `kind`'s rule: the stack's cloud's, or (a what-if with another cloud's
    autoscaler) the cloud whose components deploy that kind."""
    for candidate in (cloud, *registry.clouds().values()):
        if candidate.serving_scaling is not None and kind in candidate.serving_scaling.builders:
            return candidate.serving_scaling
    return cloud.serving_scaling


def _fmt(value: Any, unit: str = "") -> str:
    return "-" if value is None else f"{value:g}{unit}" if isinstance(value, float) else f"{value}{unit}"


def _pm(interval: dict[str, float] | None, scale: float, unit: str, prefix: str = "") -> str:
    return "" if interval is None else f" +- {prefix}{interval['halfWidth'] * scale:,.2f}{unit}"


def _start(summary: dict[str, Any]) -> str:
    start = summary["start"]
    replicas = start["replicas"]
    shown = replicas if isinstance(replicas, int) else "/".join(str(r) for r in sorted(set(replicas)))
    return f"{start['state']}: replicas {shown}, backlog 0"


def _priced(name: str, usd: float, cost: dict[str, Any]) -> str:
    return f"{name} not priced" if name in cost.get("notPriced", ()) else f"{name} ${usd:,.2f}"


def table_rows(summary: dict[str, Any], terms: ServingTerms, direct: bool) -> list[tuple[str, str]]:
    """The report's rows, each labelled in the stack's cloud's words (`terms`): its load balancer, its queue -- or
    admission on the replicas (`direct`, or a cloud without a queue) -- and its warm pool where it has one."""
    r, w, lat, slo, h, c = (
        summary[k] for k in ("requests", "queueWaitSeconds", "latencySeconds", "slo", "replicaHours", "cost")
    )
    admission, pool = terms.admission(direct), terms.warm_pool
    lines = [_priced(terms.load_balancer, c["loadBalancerUsd"], c)]
    if admission != REPLICA_ADMISSION:
        lines.append(_priced(admission, c["queueUsd"], c))
    volumes = c["volumesRunningUsd"] + c["warmPoolVolumesUsd"]
    rows = [
        ("autoscaler", summary["autoscaler"]),
        (f"replicas / {pool}" if pool else "replicas", f"{summary['replicas']} / {summary['warmPool']}" if pool else summary["replicas"]),
        ("served / refused / expired", f"{r['served']:,} / {r['refused']:,} / {r['expired']:,}" + (f" (+{r['deadLettered']} dead-lettered)" if r["deadLettered"] else "")),
        (f"{admission} wait p50/p95/p99", f"{_fmt(w['p50'])} / {_fmt(w['p95'])} / {_fmt(w['p99'])} s"),
        ("latency p50/p95/p99", f"{_fmt(lat['p50'])} / {_fmt(lat['p95'])} / {_fmt(lat['p99'])} s"),
        ("start", _start(summary)),
        (f"within {slo['targetSeconds']:g} s SLO", f"{slo['attainment']:.2%}{_pm(slo.get('interval'), 100, '%')} ({_slo_word(slo)} {slo['required']:.1%})"),
        ("replica-h serving / starting", f"{h['serving']:g} / {h['warmStarting']:g} from the {pool} + {h['coldStarting']:g} cold" if pool else f"{h['serving']:g} / {h['coldStarting']:g}"),
        *([(f"replica-h {pool}", f"{h['warmPoolStopped']:g} stopped + {h['warmPoolPreparing']:g} preparing")] if pool else []),
        (f"launches from the {pool} / cold" if pool else "launches", f"{summary['scaling']['launchesWarm']} / {summary['scaling']['launchesCold']}" if pool else f"{summary['scaling']['launchesCold']}"),
        ("cost", f"${c['totalUsd']:,.2f}{_pm(c.get('interval'), 1, '', '$')} (instances ${c['instancesUsd']:,.2f}, volumes ${volumes:,.2f}, {', '.join(lines)})"),
    ]  # fmt: skip
    return rows


@simulate_app.command("serving")
@guarded
def serving_command(
    stack: Annotated[
        str, typer.Argument(metavar="STACK", help="Serving stack name or stack file.", show_default=False)
    ],
    trace: Annotated[
        Path | None,
        typer.Option(
            "--trace",
            dir_okay=False,
            help="CSV of `timestamp,tokens` rows (seconds, output tokens) to replay.",
            show_default=False,
        ),
    ] = None,
    pattern: Annotated[
        str | None,
        typer.Option(
            "--pattern",
            help=f"Synthetic Poisson load: {', '.join(workload.PATTERNS)} (default diurnal).",
            show_default=False,
        ),
    ] = None,
    rate: Annotated[
        float | None,
        typer.Option(
            "--rate",
            min=0.001,
            help="Peak requests/s of --pattern (default: max replicas x concurrency / service time x 70%).",
            show_default=False,
        ),
    ] = None,
    spike_factor: Annotated[
        float | None,
        typer.Option(
            "--spike-factor",
            help="--pattern spike: the peak (--rate) over the base rate (default 5: the base is 20% of the peak).",
            show_default=False,
        ),
    ] = None,
    spike_minutes: Annotated[
        float | None,
        typer.Option(
            "--spike-minutes",
            help="--pattern spike: how long the peak lasts, from noon or mid-window (default 15).",
            show_default=False,
        ),
    ] = None,
    hours: Annotated[
        float | None,
        typer.Option(
            "--hours",
            min=0.01,
            max=24 * 31,
            help="Simulated hours (default: 24; a trace: its span).",
            show_default=False,
        ),
    ] = None,
    tokens: Annotated[
        float | None,
        typer.Option(
            "--tokens",
            min=1,
            help="Mean output tokens per request of --pattern, exponential (default: serving.load.outputTokens, "
            f"else {workload.DEFAULT_MEAN_TOKENS:g}).",
            show_default=False,
        ),
    ] = None,
    tokens_per_second: Annotated[
        float | None,
        typer.Option(
            "--tokens-per-second",
            min=0.001,
            help="Decode rate of one sequence, whatever the batch (default: the plan's service-time model -- the "
            "roofline, or --profile -- with serving.load stated; else mean tokens / serving.slo.serviceSeconds).",
            show_default=False,
        ),
    ] = None,
    autoscaler: Annotated[
        str | None,
        typer.Option(
            "--autoscaler",
            help=f"{', '.join(autoscalers.AUTOSCALERS)} (default: the one the stack's cloud deploys; a cloud without one needs this option).",
            show_default=False,
        ),
    ] = None,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare",
            help="Also run: without the warm pool (where the stack keeps one) and the peers: CPU-utilization, "
            "request-rate (SkyServe), queue-length (KEDA, with a queue) scaling, a fixed fleet at max.",
        ),
    ] = False,
    seeds: Annotated[
        int | None,
        typer.Option(
            "--seeds",
            min=1,
            max=100,
            help=f"Request streams (seeds --seed, --seed+1, ...) per design, for 95% intervals (default {DEFAULT_SEEDS}; "
            "a --trace: 1, as its requests are fixed).",
            show_default=False,
        ),
    ] = None,
    start: Annotated[
        str,
        typer.Option(
            "--start",
            help="steady: the fleet the first 10 minutes' load needs, backlog empty; minimum: replicas.min.",
        ),
    ] = "steady",
    slo_share: Annotated[
        float | None,
        typer.Option(
            "--slo-attainment",
            min=0.0,
            max=1.0,
            help="Share of requests that must finish within serving.slo.targetSeconds (default: the percentile "
            "serving.load.latency states, e.g. 0.95 for p95; 0.99 without one).",
            show_default=False,
        ),
    ] = None,
    failures: Annotated[
        float,
        typer.Option(
            "--failures-per-replica-day",
            min=0.0,
            max=1000.0,
            help="Replica failures (health-check replacement), per replica per day.",
        ),
    ] = 0.0,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Random seed of the synthetic load and failures.")] = 0,
    plot_path: Annotated[
        Path | None,
        typer.Option(
            "--plot", dir_okay=False, help="Write the stack design's timeline (PNG) here.", show_default=False
        ),
    ] = None,
    overrides: SetOpt = None,
    project_dir: ProjectDirOpt = None,
    prices: PricesOpt = None,
    profile: ProfileOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> int:
    """Replay a day of requests against exactly what a serving stack would deploy; report what users see and the cost."""

    if trace is not None and pattern is not None:
        raise CliError("give --trace FILE or --pattern, not both")
    if trace is not None and rate is not None:
        raise CliError("--rate sets a --pattern's peak; a --trace has its own rate")
    if pattern is not None:
        check_choice("--pattern", pattern, workload.PATTERNS)
    spike = spike_shape(pattern, spike_factor, spike_minutes, hours)
    check_choice("--start", start, STARTS)
    if autoscaler is not None:
        check_choice("--autoscaler", autoscaler, autoscalers.AUTOSCALERS)
    if plot_path is not None:
        check_output_file(plot_path, "--plot")  # before the runs, and again on writing
    _, files = resolve_stacks([stack], False, project_dir)
    book(prices, cloud=cloud_named(DEFAULT_CLOUD))  # a bad --prices file stops here, before the stack loads
    [(name, spec)] = list(load_specs(files, overrides or []))
    if spec is None:
        return EXIT_CONFIG
    cloud = cloud_named(spec.cloud)
    catalog, prices_ = cloud.catalog, book(prices, cloud=cloud)
    if not isinstance(spec, ServingStack):
        raise CliError(
            f"{name}: workload is {spec.workload}; `simulate serving` needs a serving stack (accelstack:serving)"
        )
    serving = spec.serving
    kind = autoscaler or default_autoscaler(serving, cloud.default_autoscaler, cloud.load_balancer_autoscaler)
    if kind is None:
        raise CliError(
            f"{name}: {cloud.title} ({cloud.name}) declares no autoscaler of its own to simulate: give --autoscaler, "
            f"one of {', '.join(autoscalers.AUTOSCALERS)}"
        )
    if autoscaler is None:
        # A cloud plug-in's declaration, not the user's input: said as such if it names no simulated autoscaler.
        field = "default_autoscaler" if serving.admission.kind == "queue" else "load_balancer_autoscaler"
        check_choice(f"{cloud.name}'s default autoscaler (Cloud.{field})", kind, autoscalers.AUTOSCALERS)
    rules = scaling_rules_for(kind, cloud)
    measured = read_profile(profile)
    designs = planner_call(
        f"{name}{f' with --profile {profile}' if profile else ''}",
        lambda: (
            peer_designs(serving, prices_, kind, catalog=catalog, rules=rules, profile=measured)
            if compare
            else [design_from_spec(serving, prices_, catalog=catalog, autoscaler=kind, rules=rules, profile=measured)]
        ),
    )
    tokens_flag = tokens
    if tokens is None:
        tokens = float(serving.load.output_tokens) if serving.load is not None else workload.DEFAULT_MEAN_TOKENS
    if trace is not None:
        try:
            load = workload.load_trace(trace, horizon=None if hours is None else hours * 3600)
        except ValueError as error:  # each names --trace PATH and the line
            raise CliError(str(error)) from None
        count = seeds or 1
        streams = ((seed + k, load) for k in range(count))
        source = plotted = load.source
        horizon = load.horizon
    else:
        peak = rate if rate is not None else default_peak_rps(serving, designs[0].concurrency)
        horizon = (hours if hours is not None else 24.0) * 3600
        starts, rates = workload.rate_profile(pattern or "diurnal", peak, horizon, spike)
        expected = float((rates * np.diff(np.append(starts, horizon))).sum())
        if expected > MAX_REQUESTS:
            raise CliError(
                f"--rate {peak:g} requests/s over {horizon / 3600:g} h is ~{expected:.3g} requests; one run simulates "
                f"at most {MAX_REQUESTS:,} (about a minute each 5 million): lower --rate or --hours"
            )
        count = seeds or DEFAULT_SEEDS
        name_of = pattern or "diurnal"
        # serving.load's length distributions, the planner's, unless --tokens restates the mean output.
        lengths = of_load(serving.load) if serving.load is not None and tokens_flag is None else None
        streams = (
            (
                seed + k,
                workload.synthetic(
                    name_of, peak, horizon=horizon, mean_tokens=tokens, seed=seed + k, lengths=lengths, spike=spike
                ),
            )
            for k in range(count)
        )
        plotted = f"{name_of} pattern, peak {peak:g} requests/s" + (
            f" ({spike.factor:g}x the base for {spike.seconds / 60:g} min)" if spike is not None else ""
        )
        source = f"{plotted}, seeds {seed}..{seed + count - 1}" if count > 1 else f"{plotted}, seed {seed}"
    arrived: list[int] = []
    mean_tokens: list[float] = []

    def counted(stream):
        for seed_k, load_k in stream:
            arrived.append(len(load_k.arrivals))
            mean_tokens.append(load_k.mean_tokens)
            yield seed_k, load_k
            del load_k  # not held while the next seed's requests are drawn

    def plot_first(index: int, seed_k: int, run: Run) -> None:
        if plot_path is None or index != 0 or seed_k != seed:
            return
        try:
            with staged_file(plot_path, option="--plot") as temporary:  # no link followed; no partial PNG left
                plot(run, temporary, f"{name}: {designs[0].name} ({designs[0].autoscaler}), {plotted}, seed {seed}")
        except OSError as exc:
            raise CliError(f"--plot {plot_path}: cannot write ({exc.strerror or exc})") from None

    share = slo_share if slo_share is not None else stated_slo_share(serving)
    results = simulate_designs(
        designs,
        counted(streams),
        slo_share=share,
        each=plot_first,
        tokens_per_second=tokens_per_second,
        failures_per_replica_day=failures,
        start=start,
    )
    summaries = [combined(result, share) for result in results]
    terms, direct = designs[0].terms, bool(designs[0].waiting_per_replica)
    requests = sum(arrived)
    document: dict[str, Any] = {
        "stack": name,
        "workload": {"source": source, "requests": requests, "seeds": count, "hours": round(horizon / 3600, 3),
                     "meanTokens": round(sum(mean_tokens) / len(mean_tokens), 1),
                     "meanRps": round(requests / count / horizon, 3) if horizon else 0.0},
        "serviceModel": service_model_summary(designs[0], tokens_per_second, sum(mean_tokens) / len(mean_tokens)),
        "designs": summaries,
        # What the stack's cloud calls what the report counts (None: it has none; admission: its queue, or the replicas).
        "products": {"loadBalancer": terms.load_balancer, "admission": terms.admission(direct), "warmPool": terms.warm_pool},
        "priceSource": prices_.source(),
    }  # fmt: skip
    if compare:
        document["recommendation"] = recommend(summaries)
        document["againstPeers"] = against_peers(summaries, [d.autoscaler for d in designs])
    if plot_path is not None:
        document["plot"] = str(plot_path)
        hint = sliver_hint(spike, horizon)
        if hint is not None:
            document["plotHint"] = hint
    if as_json:
        emit("", document, True)
        return EXIT_OK
    runs = f"{count} runs of {horizon / 3600:g} h" if count > 1 else f"{horizon / 3600:g} h"
    title = f"accelstack simulate serving {name}: {source}, {requests:,} requests over {runs}"
    if len(summaries) == 1:
        emit(title, document, False, table_rows(summaries[0], terms, direct))
    else:
        table = Table(title=title, title_justify="left")
        table.add_column("what", style="bold")
        for summary in summaries:
            table.add_column(summary["design"])
        columns = [dict(table_rows(s, terms, direct)) for s in summaries]
        for key in columns[0]:
            table.add_row(key, *(column[key] for column in columns))
        out().print(table)
        pick = document["recommendation"]
        out().print(
            f"{pick['design']}: {pick['why']}" + (f" (${pick['totalUsd']:,.2f})" if pick["meetsSlo"] else ""),
            markup=False,
        )
        out().print(f"against the peers: {document['againstPeers']['why']}", markup=False)
    if plot_path is not None:
        out().print(f"timeline: {plot_path}", markup=False)
        if "plotHint" in document:
            out().print(document["plotHint"], markup=False)
    return EXIT_OK


# A burst narrower than this share of the plot's width is a sliver: a 15-minute spike is 1% of a day.
SLIVER_SHARE = 0.05


def spike_shape(
    pattern: str | None, factor: float | None, minutes: float | None, hours: float | None
) -> workload.SpikeShape | None:
    """The spike pattern's shape from --spike-factor and --spike-minutes (None for other patterns); exit 2 when
    given without --pattern spike or outside their bounds."""
    if pattern != "spike":
        if factor is not None or minutes is not None:
            raise CliError("--spike-factor and --spike-minutes shape --pattern spike; add --pattern spike")
        return None
    default = workload.SpikeShape()
    shape = workload.SpikeShape(
        factor=factor if factor is not None else default.factor,
        seconds=minutes * 60 if minutes is not None else default.seconds,
    )
    if not (math.isfinite(shape.factor) and math.isfinite(shape.seconds)):
        raise CliError("--spike-factor and --spike-minutes take finite numbers")
    problem = shape.problem((hours if hours is not None else 24.0) * 3600)
    if problem is not None:
        raise CliError(problem)
    return shape


def sliver_hint(spike: workload.SpikeShape | None, horizon: float) -> str | None:
    """What to run to see a spike the plot shows as a sliver (a 15-minute spike on a 24 h axis), or None."""
    if spike is None or spike.seconds >= SLIVER_SHARE * horizon:
        return None
    hours = max(1, math.ceil(4 * spike.seconds / 3600))  # the spike a quarter of the window or more
    return (
        f"the {spike.seconds / 60:g}-minute spike is {spike.seconds / horizon:.1%} of this {horizon / 3600:g} h plot: "
        f"add --hours {hours} to see it (the spike lands mid-window)"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(simulate_app)
