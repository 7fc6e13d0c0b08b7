"""`accelstack size serving|checkpoint|lustre`: the planner's numbers for a model, job or file system.

Pure arithmetic (no stack, no Pulumi). `--json` prints one JSON document; otherwise a table.
Bad flag values exit 2 with a message naming the flag. `--cloud` picks whose machine types, file
system tiers and prices the planner is handed (from the cloud registry).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.table import Table

from accelstack.clouds import registry
from accelstack.clouds.base import Cloud
from accelstack.commands.common import EXIT_FAILED, CliError, guarded, out
from accelstack.planner import checkpoint as ck
from accelstack.planner import cold_start, lustre, service_time, serving, token_lengths
from accelstack.planner.architectures import Architecture, custom, get_preset, preset_names
from accelstack.planner.hardware import GIB, instance
from accelstack.planner.kv_cache import BYTES_PER_ELEMENT
from accelstack.planner.pricing import PriceBook, load_book
from accelstack.planner.profile import service_time_from
from accelstack.planner.serving_plan import WORKER_CONCURRENCY_CAP, MeasuredProfile
from accelstack.planner.units import counted, duration
from accelstack.spec.json_input import read_json
from accelstack.spec.token_lengths import TokenLengths

T = TypeVar("T")

size_app = typer.Typer(
    name="size",
    help="Size serving replicas and KV cache, checkpoint intervals, or a Lustre file system.",
    no_args_is_help=True,
)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document instead of a table.")]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model", help=f"Architecture preset: {', '.join(preset_names())} (or give --layers ... for a custom one)."
    ),
]
PricesOpt = Annotated[
    Path | None,
    typer.Option("--prices", help="YAML/JSON file overriding prices (onDemandHourly, spotDiscount, lustreGbMonth, s3GbMonth, ebsGp3GbMonth).",
                 dir_okay=False, show_default=False),
]  # fmt: skip
ProfileOpt = Annotated[
    Path | None,
    typer.Option("--profile", dir_okay=False, show_default=False,
                 help="Measured service times replacing the data-sheet roofline: a profile `accelstack calibrate` "
                      "wrote, or the JSON `vllm bench serve --save-result` wrote."),
]  # fmt: skip
LENGTH_KINDS = ("fixed", "exponential", "lognormal:P99")
InputLengthsOpt = Annotated[
    str, typer.Option("--input-lengths", help="How prompt lengths spread around --input-tokens: fixed, exponential or "
                      "lognormal:P99 (serving.load.inputLengths; a histogram: state it in a stack and use --stack).")
]  # fmt: skip
OutputLengthsOpt = Annotated[
    str, typer.Option("--output-lengths", help="How output lengths spread around --output-tokens: fixed, exponential "
                      "(what `simulate` draws by default) or lognormal:P99 (serving.load.outputLengths).")
]  # fmt: skip


def lengths_option(flag: str, text: str, mean: int) -> TokenLengths:
    """--input-lengths / --output-lengths as serving.load states them (`TokenLengths`, checked against the mean);
    exit 2 naming the flag and the allowed forms."""
    kind, _, p99 = text.partition(":")
    try:
        lengths = TokenLengths.model_validate({"kind": kind, **({"p99": int(p99)} if p99 else {})})
        problem = lengths.mean_problem(mean)
    except (ValueError, TypeError):
        raise CliError(f"{flag} {text!r}: allowed: {', '.join(LENGTH_KINDS)} (P99 in tokens)") from None
    if problem is not None or lengths.kind == "histogram":
        raise CliError(f"{flag} {text!r}: {problem or 'a histogram is stated in a stack (serving.load)'}")
    return lengths


MAX_PROFILE_BYTES = 16 * 1024 * 1024  # a sweep is a few hundred points; a vLLM result with per-request lists is MBs


def read_profile(path: Path | None) -> MeasuredProfile | None:
    """The `--profile` document as read (size-limited, strict JSON); exit 2 naming the file otherwise."""
    if path is None:
        return None
    try:
        return MeasuredProfile(read_json(path, f"--profile {path}", MAX_PROFILE_BYTES), f"--profile {path}")
    except ValueError as error:
        raise CliError(str(error)) from None


def measured_model(profile: MeasuredProfile, base: service_time.ServiceTime | None) -> service_time.ServiceTime:
    """The profile's service-time model, shaped by the roofline `base` where it measured one point."""
    return planner_call(profile.source, lambda: service_time_from(profile.document, profile.source, base))


def planner_call(flag_hint: str, func: Callable[[], T]) -> T:
    """Run planner code; its ValueErrors are the user's bad input: exit 2 naming the flags."""
    try:
        return func()
    except ValueError as exc:
        raise CliError(f"{flag_hint}: {exc}") from None


def check_choice(flag: str, value: str, allowed: list[str] | tuple[str, ...]) -> str:
    if value not in allowed:
        raise CliError(f"{flag} {value!r}: allowed: {', '.join(allowed)}")
    return value


# The cloud `size` and `advise` plan for when no stack names one: the reference cloud.
DEFAULT_CLOUD = "aws"
CloudOpt = Annotated[
    str,
    typer.Option(
        "--cloud", help="Whose machine types, file system tiers and prices to plan with (a registered cloud)."
    ),
]


def cloud_named(name: str) -> Cloud:
    """The registered cloud, or exit 2 naming the registered ones."""
    return planner_call("--cloud", lambda: registry.get(name))


def book(
    prices: Path | None, spot_discount: float | None = None, *, cloud: Cloud, region: str | None = None
) -> PriceBook:
    """`cloud`'s price book (`region`'s instance prices where its table has them) with the --prices file and
    --spot-discount applied."""
    return planner_call(
        "--prices/--spot-discount",
        lambda: load_book(cloud.prices, prices, spot_discount=spot_discount, region=region),
    )


def emit(title: str, data: dict[str, Any], as_json: bool, rows: list[tuple[str, str]] | None = None) -> None:
    """JSON (machine-readable, every field) or a two-column table (the fields a person reads)."""
    if as_json:
        out().print_json(json.dumps(data, default=str))
        return
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    for key, value in rows if rows is not None else [(k, str(v)) for k, v in data.items()]:
        table.add_row(key, value)
    out().print(table)


def resolve_model(
    model: str | None,
    layers: int | None,
    hidden: int | None,
    heads: int | None,
    kv_heads: int | None,
    params_b: float | None,
    head_dim: int | None = None,
) -> Architecture:
    if model:
        return planner_call("--model", lambda: get_preset(model))
    given = {"--layers": layers, "--hidden": hidden, "--heads": heads, "--params-b": params_b}
    missing = [flag for flag, value in given.items() if value is None]
    if missing:
        raise CliError(f"give --model PRESET, or a custom architecture (missing {', '.join(missing)}); "
                       f"presets: {', '.join(preset_names())}")  # fmt: skip
    return planner_call(
        "--layers/--hidden/--heads/--kv-heads",
        lambda: custom(layers, hidden, heads, kv_heads, params_b, head_dim),  # type: ignore[arg-type]
    )


# Custom-architecture flags, shared by the commands that take a model.
LayersOpt = Annotated[int | None, typer.Option("--layers", min=1, help="Custom: num_hidden_layers.")]
HiddenOpt = Annotated[int | None, typer.Option("--hidden", min=1, help="Custom: hidden_size.")]
HeadsOpt = Annotated[int | None, typer.Option("--heads", min=1, help="Custom: num_attention_heads.")]
KvHeadsOpt = Annotated[
    int | None, typer.Option("--kv-heads", min=1, help="Custom: num_key_value_heads (default: --heads).")
]
HeadDimOpt = Annotated[int | None, typer.Option("--head-dim", min=1, help="Custom: head_dim (default hidden/heads).")]
ParamsOpt = Annotated[float | None, typer.Option("--params-b", min=0.001, help="Custom: parameters, billions.")]
PRECISIONS = list(BYTES_PER_ELEMENT)


@size_app.command("serving")
@guarded
def size_serving(
    instance_type: Annotated[str, typer.Option("--instance-type", help="Replica instance type, e.g. g6e.12xlarge.")],
    model: ModelOpt = None,
    precision: Annotated[str, typer.Option(help=f"Weights precision: {', '.join(PRECISIONS)}.")] = "bf16",
    kv_precision: Annotated[
        str | None, typer.Option(help="KV cache precision (default: --precision); fp8 doubles blocks.")
    ] = None,
    tp: Annotated[
        int | None, typer.Option("--tp", min=1, help="Tensor parallel degree (default: all accelerators).")
    ] = None,
    context: Annotated[int, typer.Option("--context", min=1, help="Context length per sequence, tokens.")] = 8192,
    gpu_memory_utilization: Annotated[
        float, typer.Option(min=0.05, max=1.0, help="vLLM gpu_memory_utilization.")
    ] = 0.9,
    lora_rank: Annotated[int, typer.Option(min=0, help="Resident LoRA adapters' rank.")] = 0,
    lora_adapters: Annotated[int, typer.Option(min=0, help="Resident LoRA adapters (vLLM max_loras).")] = 0,
    rps: Annotated[
        float | None,
        typer.Option("--rps", min=0.001, help="Peak requests per second (default: show one replica's capacity)."),
    ] = None,
    input_tokens: Annotated[int, typer.Option("--input-tokens", min=1, help="Prompt tokens per request.")] = 1000,
    output_tokens: Annotated[int, typer.Option("--output-tokens", min=1, help="Generated tokens per request.")] = 250,
    input_lengths: InputLengthsOpt = "fixed",
    output_lengths: OutputLengthsOpt = "exponential",
    latency_target: Annotated[
        float | None, typer.Option("--latency-target", min=0.001, help="Latency target, s, at --latency-percentile.")
    ] = None,
    latency_percentile: Annotated[
        float, typer.Option("--latency-percentile", min=50, max=99.99, help="Percentile the latency target is for.")
    ] = 95,
    target_utilization: Annotated[
        float, typer.Option("--target-utilization", min=0.05, max=1.0, help="Replica utilization at peak.")
    ] = serving.DEFAULT_TARGET_UTILIZATION,
    latency_slo: Annotated[
        float | None,
        typer.Option(
            min=0.001,
            help="Longest acceptable queue latency, s (SQS backlog target; default --latency-target, else 10).",
        ),
    ] = None,
    service_seconds: Annotated[
        float | None, typer.Option(min=0.001, help="Average processing time per request, s (default: the estimate).")
    ] = None,
    replicas_min: Annotated[int, typer.Option(min=0)] = 1,
    replicas_max: Annotated[int, typer.Option(min=1)] = 4,
    layers: LayersOpt = None,
    hidden: HiddenOpt = None,
    heads: HeadsOpt = None,
    kv_heads: KvHeadsOpt = None,
    head_dim: HeadDimOpt = None,
    params_b: ParamsOpt = None,
    profile: ProfileOpt = None,
    cloud: CloudOpt = DEFAULT_CLOUD,
    as_json: JsonFlag = False,
) -> None:
    """KV cache blocks and concurrency per replica, replicas for a load, queue backlog target, cold start.

    Exits 1 when the model does not fit the instance (the table says why), 2 on bad flags.
    """
    catalog = cloud_named(cloud).catalog
    check_choice("--precision", precision, PRECISIONS)
    if kv_precision is not None:
        check_choice("--kv-precision", kv_precision, PRECISIONS)
    if replicas_min > replicas_max:
        raise CliError(f"--replicas-min ({replicas_min}) must not exceed --replicas-max ({replicas_max})")
    arch = resolve_model(model, layers, hidden, heads, kv_heads, params_b, head_dim)
    itype = planner_call("--instance-type/--tp", lambda: instance(catalog, instance_type))
    fit = planner_call("--instance-type/--tp", lambda: serving.fits(
        arch, precision, itype, tp, context_length=context, kv_precision=kv_precision,
        gpu_memory_utilization=gpu_memory_utilization))  # fmt: skip
    kv = fit.kv
    if lora_adapters and lora_rank:
        from accelstack.planner.kv_cache import plan_for_instance

        kv = plan_for_instance(arch, itype, tp=fit.tp, precision=precision, kv_precision=kv_precision,
                               context_length=context, gpu_memory_utilization=gpu_memory_utilization,
                               lora_rank=lora_rank, lora_adapters=lora_adapters)  # fmt: skip
    if input_tokens + output_tokens > context:
        raise CliError(
            f"--input-tokens + --output-tokens ({input_tokens + output_tokens}) exceed --context ({context})"
        )
    # A replica's queue worker keeps this many requests in flight (planner.serving_plan): the batch.
    concurrency = min(WORKER_CONCURRENCY_CAP, max(1, kv.max_concurrent_sequences))
    measured = read_profile(profile)
    measured_time: service_time.ServiceTime | None = None
    if measured is not None:
        base = planner_call("--instance-type/--tp", lambda: service_time.roofline(
            arch, itype, precision=precision, kv_precision=kv_precision, tp=fit.tp))  # fmt: skip
        measured_time = measured_model(measured, base)
    lengths = token_lengths.load_lengths(
        input_tokens, output_tokens, lengths_option("--input-lengths", input_lengths, input_tokens),
        lengths_option("--output-lengths", output_lengths, output_tokens),
    )  # fmt: skip
    capacity = planner_call("--instance-type/--tp", lambda: serving.replica_capacity(
        arch, itype, input_tokens=input_tokens, output_tokens=output_tokens, max_batch=concurrency,
        precision=precision, kv_precision=kv_precision, tp=fit.tp, latency_seconds=latency_target,
        latency_percentile=latency_percentile if latency_target is not None else None, model=measured_time,
        lengths=lengths))  # fmt: skip
    # The stack's worker keeps the batch cut to the latency target in flight (planner.serving_plan.cut_to_latency),
    # and its request-rate target rests on the service time at that batch x the target utilization, as the plan's.
    in_flight = capacity.batch
    running = max(1.0, in_flight * target_utilization)
    service = service_seconds or float(
        capacity.model.service_seconds(input_tokens, output_tokens, running, context=capacity.context_tokens)
        if capacity.model is not None
        else capacity.service_seconds
    )
    slo = latency_slo or latency_target or 10.0
    # What the serving stack's scaling policy tracks (planner.serving_plan): messages a replica owns,
    # waiting plus in flight, at the target utilization; AWS's SQS method is shown beside it.
    backlog = serving.owned_backlog_target(in_flight, target_utilization)
    backlog_at_slo = serving.backlog_target_from_slo(slo, service, in_flight)
    # Without a queue (serving.admission.kind replica) the load balancer counts requests, not a backlog: the same
    # target by Little's law (planner.serving_plan.requests_per_replica_minute_target).
    per_minute = round(backlog * 60 / service, 3)
    load = serving.replicas_for_load(rps, capacity, target_utilization) if rps is not None else None
    start = cold_start.serving_defaults(arch, precision, replicas_min=replicas_min, replicas_max=replicas_max)
    data = {
        "model": arch.name, "modelSource": arch.source, "instanceType": instance_type, "fits": kv.fits,
        "reason": fit.reason, "kv": kv.as_dict(),
        "load": load.as_dict() if load is not None else None,
        "perReplica": {"requestsPerSecond": round(capacity.requests_per_second, 3), "batch": capacity.batch,
                       "serviceSeconds": round(capacity.service_seconds, 3), "meetsLatency": capacity.meets_latency},
        "backlogPerReplica": backlog, "backlogAtLatencySlo": backlog_at_slo,
        "requestsPerReplicaMinute": per_minute, "serviceSeconds": round(service, 3), "coldStart": start.as_dict(),
        "serviceModel": capacity.source,
    }  # fmt: skip
    rows = [
        ("model", f"{arch.name} ({arch.source})"),
        ("instance", f"{instance_type}, tp={kv.tp}, {precision} weights, {kv_precision or precision} KV cache"),
        ("fits", fit.reason),
        ("memory per GPU", f"{kv.budget_bytes / GIB:.2f} GiB usable = weights {kv.weights_bytes / GIB:.2f} + "
                           f"activations {kv.activation_bytes / GIB:.2f} + runtime {kv.runtime_overhead_bytes / GIB:.2f}"
                           f" + LoRA {kv.lora_bytes / GIB:.2f} + KV {max(kv.kv_cache_bytes, 0) / GIB:.2f}"),
        ("KV per token", f"{kv.kv_bytes_per_token / 1024:.0f} KiB per GPU"),
        ("blocks (16 tokens)", f"{kv.blocks} = {kv.tokens} tokens"),
        ("concurrency", f"{kv.max_concurrency}x at {context} tokens ({counted(kv.max_concurrent_sequences, 'sequence')} "
                        f"of {context} tokens; the queue worker keeps {in_flight} in flight"
                        f"{'' if in_flight == concurrency else f', cut from {concurrency} to meet the latency target'})"),
        ("one replica", capacity.formula()),
        ("replicas", f"{counted(load.replicas, 'replica')} for {rps:g} req/s: {load.count_formula()}" if load is not None
                     else "give --rps (and --latency-target) for the replicas a load needs"),
        ("assumed", f"{capacity.assumptions()}; {target_utilization:.0%} target utilization"),
        ("backlog per replica", f"{backlog:g} waiting + in flight (SQS Visible + NotVisible) = {in_flight} in flight x "
                                f"{target_utilization:.0%}, the stack's scaling target; AWS's SQS method "
                                f"would be {backlog_at_slo} ({slo:g} s / {service:.3g} s x {in_flight}), which "
                                "parks every replica saturated with a queue"),
        ("without a queue", f"{per_minute:g} requests per replica per minute at the load balancer = backlog {backlog:g}"
                            f" / {service:.3g} s x 60 (Little's law; serving.admission.kind replica)"),
        ("cold start", f"{start.total_seconds:.0f} s -> warm pool {start.warm_pool_size}, "
                       f"health check grace {start.health_check_grace_seconds} s without a launch hook"),
    ]  # fmt: skip
    emit("accelstack size serving", data, as_json, rows)
    if not kv.fits:
        raise typer.Exit(EXIT_FAILED)  # scripts can test "does it fit" by the exit code


@size_app.command("checkpoint")
@guarded
def size_checkpoint(
    nodes: Annotated[int, typer.Option("--nodes", min=1, help="Nodes in the job.")],
    model: ModelOpt = None,
    state_gb: Annotated[
        float | None, typer.Option(min=0.001, help="Checkpoint size, GB (default: from --model).")
    ] = None,
    mode: Annotated[str, typer.Option(help="full (Adam state, 14 B/param) or lora (adapter only).")] = "full",
    lora_rank: Annotated[int, typer.Option(min=1)] = 16,
    write_mbps: Annotated[float | None, typer.Option(min=1, help="File system write throughput, MB/s.")] = None,
    lustre_capacity_gib: Annotated[
        int | None, typer.Option(min=1, help="Derive throughput from a Lustre file system.")
    ] = None,
    throughput_per_tib: Annotated[int, typer.Option(min=1, help="With --lustre-capacity-gib: MB/s/TiB.")] = 250,
    capacity: Annotated[str, typer.Option(help="on-demand, spot or capacity-block.")] = "on-demand",
    interruptions_per_month: Annotated[
        float, typer.Option(min=0, help="Spot interruptions per node per month.")
    ] = ck.DEFAULT_SPOT_INTERRUPTIONS_PER_MONTH,
    node_mtbf_hours: Annotated[float, typer.Option(min=1, help="Hardware MTBF per node, h (Llama 3 report).")] = round(
        ck.LLAMA3_NODE_MTBF_HOURS, 1
    ),
    restart_seconds: Annotated[float, typer.Option(min=0)] = ck.DEFAULT_RESTART_SECONDS,
    layers: LayersOpt = None,
    hidden: HiddenOpt = None,
    heads: HeadsOpt = None,
    kv_heads: KvHeadsOpt = None,
    params_b: ParamsOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Young and Daly checkpoint intervals, write time and expected overhead for a job."""
    check_choice("--capacity", capacity, ["on-demand", "spot", "capacity-block"])
    check_choice("--mode", mode, ["full", "lora"])
    if state_gb is not None:
        state = state_gb * 1e9
    else:
        arch = resolve_model(model, layers, hidden, heads, kv_heads, params_b)
        state = ck.training_state_bytes(arch, mode, lora_rank)
    if write_mbps is not None:
        throughput = write_mbps
    elif lustre_capacity_gib is not None:
        throughput = lustre_capacity_gib / 1024 * throughput_per_tib
    else:
        raise CliError("give --write-mbps or --lustre-capacity-gib (with --throughput-per-tib)")
    result = planner_call("--state-gb/--write-mbps", lambda: ck.plan(
        state, throughput, nodes, capacity, restart_seconds=restart_seconds, node_mtbf_hours=node_mtbf_hours,
        spot_interruptions_per_month=interruptions_per_month))  # fmt: skip
    rows = [
        (
            "checkpoint",
            f"{state / GIB:.4g} GiB ({result.state_gb:g} GB) at {throughput:g} MB/s -> {result.write_seconds:g} s",
        ),
        (
            "job MTBF",
            f"{result.job_mtbf_hours:g} h ({nodes} x {capacity} {'node' if nodes == 1 else 'nodes'}; node MTBF "
            f"{node_mtbf_hours:g} h"
            + (f", spot {interruptions_per_month:.0%} interruptions/month per node" if capacity == "spot" else "")
            + ")",
        ),
        ("Young interval", duration(result.young_interval_minutes * 60)),
        ("Daly interval", duration(result.daly_interval_minutes * 60)),
        ("expected overhead", f"{result.overhead_fraction:.2%} (writes, lost work, {restart_seconds:g} s restarts)"),
        ("sources", "; ".join(result.sources)),
    ]
    emit("accelstack size checkpoint", result.as_dict(), as_json, rows)


@size_app.command("lustre")
@guarded
def size_lustre(
    dataset_gib: Annotated[float, typer.Option(min=0, help="Dataset staged on Lustre, GiB.")],
    checkpoint_gib: Annotated[float, typer.Option(min=0, help="One checkpoint, GiB.")],
    write_target_seconds: Annotated[
        float, typer.Option(min=1, help="Write one checkpoint within this many seconds.")
    ] = 300,
    deployment_type: Annotated[
        list[str] | None,
        typer.Option(
            help="Candidates (repeatable); default: the cloud's persistent types (AWS: PERSISTENT_1, PERSISTENT_2)."
        ),
    ] = None,
    retained_checkpoints: Annotated[int, typer.Option(min=0)] = lustre.DEFAULT_RETAINED_CHECKPOINTS,
    prices: PricesOpt = None,
    cloud: CloudOpt = DEFAULT_CLOUD,
    as_json: JsonFlag = False,
) -> None:
    """Cheapest managed Lustre (FSx for Lustre on AWS) capacity and throughput tier for a dataset and a checkpoint target."""
    chosen = cloud_named(cloud)
    catalog = chosen.catalog
    types = tuple(deployment_type or [name for name, tier in catalog.parallel_fs.items() if tier.persistent])
    result = planner_call("--deployment-type", lambda: lustre.size(
        dataset_gib, checkpoint_gib, write_target_seconds, catalog=catalog, deployment_types=types,
        retained_checkpoints=retained_checkpoints, prices=book(prices, cloud=chosen), allow_unpriced=True))  # fmt: skip
    best = result.best

    def monthly(option: lustre.LustreOption) -> str:
        if option.monthly_usd is None:
            return "NOT PRICED (no list price recorded; give one with --prices)"
        return f"${option.monthly_usd:,.2f}/month"

    rows = [
        ("needs", f"{result.needed_capacity_gib:.0f} GiB, {result.needed_throughput_mbps:.0f} MB/s"),
        ("choose", f"{best.deployment_type} {best.capacity_gib} GiB at {best.throughput_per_tib or 'baseline'} MB/s/TiB"),
        ("throughput", f"{best.throughput_mbps:g} MB/s -> checkpoint in {best.checkpoint_write_seconds:g} s"),
        ("cost", monthly(best)),
        *[("alternative", f"{a.deployment_type} {a.capacity_gib} GiB @ {a.throughput_per_tib}: {monthly(a)}")
          for a in result.alternatives],
        ("prices", result.price_source),
    ]  # fmt: skip
    emit("accelstack size lustre", result.as_dict(), as_json, rows)


def register(app: typer.Typer) -> None:
    app.add_typer(size_app, name="size")
