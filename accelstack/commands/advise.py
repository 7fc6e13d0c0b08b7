"""`accelstack advise`: managed model API -> LoRA on one machine -> serving only -> distributed training.

Walks the list in order, stops at the first honest answer, and prints which stacks to create.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from accelstack.clouds.base import Catalog, Cloud
from accelstack.commands.advise_clouds import ALL_CLOUDS, deploys_example, every_cloud, table_lines, workload_of
from accelstack.commands.common import (
    STACKS_DIR,
    CliError,
    ProjectDirOpt,
    SetOpt,
    echo_lines,
    find_project_dir,
    guarded,
    load_specs,
    resolve_stacks,
)
from accelstack.commands.size import (
    DEFAULT_CLOUD,
    PRECISIONS,
    HeadsOpt,
    HiddenOpt,
    InputLengthsOpt,
    JsonFlag,
    KvHeadsOpt,
    LayersOpt,
    ModelOpt,
    OutputLengthsOpt,
    ParamsOpt,
    PricesOpt,
    ProfileOpt,
    book,
    check_choice,
    cloud_named,
    emit,
    lengths_option,
    measured_model,
    planner_call,
    read_profile,
    resolve_model,
)
from accelstack.planner.advisor import DEFAULT_MAX_DAYS, Advice, Load, advise
from accelstack.planner.architectures import Architecture
from accelstack.planner.hardware import instance
from accelstack.planner.model_size import architecture_of
from accelstack.planner.pricing import PriceBook
from accelstack.planner.service_time import ServiceTime, roofline
from accelstack.planner.serving_plan import MeasuredProfile
from accelstack.planner.token_lengths import load_lengths, of_load
from accelstack.spec.models import ServingStack, TrainingStack

DESCRIPTION_CHARS = 110


def example_description(name: str, project_dir: Path | None) -> str:
    """What an example stack is, from its own file: the first sentence of its header comment (clipped), and
    where it is; a cloud's example stack describes itself, so no table here names one."""
    try:
        path = find_project_dir(project_dir) / STACKS_DIR / f"Pulumi.{name}.yaml"
        header = []
        for line in path.read_text().splitlines():
            if not line.startswith("#") or line.startswith("#   "):
                break
            header.append(line.lstrip("# ").strip())
    except (OSError, CliError):
        cloud, _, workload = name.partition("-")
        if workload == "finetune" and "no example" not in (
            training := example_description(f"{cloud}-training", project_dir)
        ):
            # A cloud without a fine-tuning example: its training example, cut down to one node and LoRA.
            return (
                f"no example of its own; start from {cloud}-training with training.nodes.count 1 and "
                f"training.model.method lora: {training}"
            )
        return "no example stack file for it in this project"
    sentence = " ".join(header).split(". ", 1)[0].rstrip(".")
    if len(sentence) > DESCRIPTION_CHARS:
        sentence = sentence[:DESCRIPTION_CHARS].rsplit(" ", 1)[0] + " ..."
    return f"{sentence} ({STACKS_DIR}/{path.name})"


@guarded
def advise_command(
    custom_weights: Annotated[
        bool | None,
        typer.Option(
            "--custom-weights/--no-custom-weights",
            help="Do you need weights you control (private data, fine-tuning, data residency)? "
            "Required unless --stack names a serving stack.",
            show_default=False,
        ),
    ] = None,
    stack: Annotated[
        str | None,
        typer.Option(
            "--stack",
            help="A serving stack (its model, precision, context and serving.load) or a training stack (its "
            "model preset and trainingTokens); flags given as well win.",
        ),
    ] = None,
    project_dir: ProjectDirOpt = None,
    overrides: SetOpt = None,
    need_train: Annotated[
        bool, typer.Option("--need-train/--no-need-train", help="Must the weights be trained or tuned?")
    ] = False,
    model: ModelOpt = None,
    data_tokens: Annotated[
        float, typer.Option("--data-tokens", min=0, help="Training tokens (dataset tokens x epochs).")
    ] = 0.0,
    max_days: Annotated[
        float, typer.Option("--max-days", min=0.01, help="Longest acceptable training time, days.")
    ] = DEFAULT_MAX_DAYS,
    precision: Annotated[str, typer.Option(help="Weights precision for fit checks.")] = "bf16",
    context: Annotated[int, typer.Option("--context", min=1, help="Serving context length.")] = 8192,
    rps: Annotated[
        float | None,
        typer.Option(
            "--rps",
            min=0.001,
            help="Serving: peak requests per second (sizes replicas and picks the instance type that carries it at least cost).",
        ),
    ] = None,
    input_tokens: Annotated[
        int, typer.Option("--input-tokens", min=1, help="Serving: prompt tokens per request (with --rps).")
    ] = 1000,
    output_tokens: Annotated[
        int, typer.Option("--output-tokens", min=1, help="Serving: generated tokens per request (with --rps).")
    ] = 250,
    input_lengths: InputLengthsOpt = "fixed",
    output_lengths: OutputLengthsOpt = "exponential",
    latency_p95: Annotated[
        float | None,
        typer.Option("--latency-p95", min=0.001, help="Serving: 95th-percentile latency target, s (with --rps)."),
    ] = None,
    prices: PricesOpt = None,
    profile: ProfileOpt = None,
    cloud: Annotated[
        str | None,
        typer.Option(
            "--cloud",
            help="Whose machine types and prices to plan with; `all`: every registered cloud side by side "
            f"(default: the --stack's cloud, else {DEFAULT_CLOUD}).",
            show_default=False,
        ),
    ] = None,
    layers: LayersOpt = None,
    hidden: HiddenOpt = None,
    heads: HeadsOpt = None,
    kv_heads: KvHeadsOpt = None,
    params_b: ParamsOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Decide what to build: a managed model API, LoRA on one machine, serving only, or distributed training."""
    stack_instance_type = None
    stated_lengths = None
    latency_percentile = 95.0  # --latency-p95; a --stack's serving.load.latency states its own
    stack_workload = None
    if stack is not None:
        spec = _stack_spec(stack, project_dir, overrides or [])
        cloud, stack_workload = cloud or spec.cloud, spec.workload
        if isinstance(spec, TrainingStack):
            custom_weights, need_train = True, True
            model = model or _training_preset(spec)
            if not data_tokens:
                data_tokens = _training_tokens(spec)
        else:
            serving = spec.serving
            stack_instance_type = serving.replicas.instance_type
            custom_weights = True if custom_weights is None else custom_weights
            model = model or serving.model.preset or _preset_of(serving.model.name)
            precision = serving.model.precision if precision == "bf16" else precision
            context = serving.model.context_length if context == 8192 else context
            if serving.load is not None and rps is None:
                rps, input_tokens, output_tokens = (
                    serving.load.requests_per_second,
                    serving.load.input_tokens,
                    serving.load.output_tokens,
                )
                latency = serving.load.latency
                if latency is not None and latency_p95 is None:
                    latency_p95, latency_percentile = latency.target_seconds, latency.percentile
                stated_lengths = of_load(serving.load)
    if custom_weights is None:
        raise CliError("give --custom-weights or --no-custom-weights (or --stack with a serving or training stack)")
    check_choice("--precision", precision, PRECISIONS)
    arch = None
    if custom_weights:
        if model is None and layers is None:
            raise CliError("--custom-weights needs --model PRESET (or --layers/--hidden/--heads/--params-b)")
        arch = resolve_model(model, layers, hidden, heads, kv_heads, params_b)
    if latency_p95 is not None and rps is None:
        raise CliError("--latency-p95 needs --rps (the load it is a target for)")
    lengths = stated_lengths or load_lengths(
        input_tokens, output_tokens, lengths_option("--input-lengths", input_lengths, input_tokens),
        lengths_option("--output-lengths", output_lengths, output_tokens),
    )  # fmt: skip
    load = (
        Load(rps, input_tokens, output_tokens, latency_p95, latency_percentile, lengths=lengths)
        if rps is not None
        else None
    )
    if cloud == ALL_CLOUDS:
        for flag, given in (("--prices", prices), ("--profile", profile)):
            if given is not None:
                raise CliError(f"{flag} is one cloud's (its instance types): give --cloud NAME with it, not all")
    measured = read_profile(profile)
    if measured is not None and arch is None:
        raise CliError("--profile sizes serving replicas: give --custom-weights and --model (or --stack)")

    def answer(chosen: Cloud) -> tuple[Advice, PriceBook]:
        book_ = book(prices, cloud=chosen)
        times = measured_times(measured, arch, precision, stack_instance_type, chosen.catalog) if arch else None
        return advise(
            custom_weights=custom_weights, need_train=need_train, model=arch, data_tokens=data_tokens,
            max_days=max_days, precision=precision, context_length=context, catalog=chosen.catalog, prices=book_,
            load=load, measured=times), book_  # fmt: skip

    if cloud == ALL_CLOUDS:
        answers = every_cloud(answer)
        if as_json:
            emit("", {"clouds": [a.as_dict() for a in answers]}, True)
        else:
            echo_lines(table_lines(answers))
        return
    advice, _ = planner_call("--need-train/--data-tokens/--rps", lambda: answer(cloud_named(cloud or DEFAULT_CLOUD)))
    if as_json:
        emit("", advice.as_dict(), True)
        return
    lines = [f"{i}. {s.question} {s.answer}: {s.why}" for i, s in enumerate(advice.steps, 1)]
    lines += ["", f"=> {advice.summary}"]
    if advice.stacks:
        lines += stack_lines(advice.stacks, stack, stack_workload, project_dir)
    echo_lines(lines)


def stack_lines(names: tuple[str, ...], stack: str | None, workload: str | None, project_dir: Path | None) -> list[str]:
    """The stacks to create: the cloud's examples, except where --stack is already the user's stack of that kind
    (a training stack stands for `<cloud>-training` and `<cloud>-finetune`, a serving stack for `<cloud>-serving`)."""
    covered = [name for name in names if stack is not None and workload_of(name) == workload]
    others = [name for name in names if name not in covered]
    lines = [f"Your stack {stack} is the {workload} stack this plan needs."] if covered else []
    if others:
        lines.append("Create these stacks (copy the example, then edit accounts, buckets and sizes):")
        lines += [f"  {name}: {_deployable_description(name, project_dir)}" for name in others]
    buildable = [name for name in others if deploys_example(name)]
    every = ([stack] if stack is not None and covered else []) + buildable
    lines.append(f"  then: accelstack validate {' '.join(every)} && accelstack cost {' '.join(every)}")
    return lines


def _deployable_description(name: str, project_dir: Path | None) -> str:
    """The example's description, or that accelstack does not build that workload on that cloud (a cloud's
    features follow from the parts it implements: OCI trains, Vultr serves)."""
    if not deploys_example(name):
        return (
            f"accelstack does not deploy {workload_of(name)} on {name.split('-', 1)[0]} yet; put that stack on "
            "another cloud (docs/cross-cloud.md: train on one cloud, serve on another)"
        )
    return example_description(name, project_dir)


def measured_times(
    measured: MeasuredProfile | None,
    arch: Architecture,
    precision: str,
    stack_instance_type: str | None,
    catalog: Catalog,
) -> dict[str, ServiceTime] | None:
    """The --profile's service-time model, keyed by the instance type it was measured on: the profile's
    instanceType (as `accelstack calibrate` writes it), else the --stack's replicas.instanceType (a vllm bench serve
    result names none). Read by the same reader as `size --profile` and `simulate --profile`."""
    if measured is None:
        return None
    stated = measured.document.get("instanceType") if isinstance(measured.document, dict) else None
    name = stated if isinstance(stated, str) and stated else stack_instance_type
    if name is None:
        raise CliError(
            f"{measured.source}: names no instanceType it was measured on; give --stack (its replicas.instanceType) "
            "or write instanceType into the profile"
        )
    itype = planner_call(f"{measured.source}: instanceType", lambda: instance(catalog, name))
    base = planner_call(f"{measured.source}: instanceType", lambda: roofline(arch, itype, precision=precision))
    return {itype.name: measured_model(measured, base)}


def _stack_spec(stack: str, project_dir: Path | None, overrides: list[str]) -> ServingStack | TrainingStack:
    _, files = resolve_stacks([stack], False, project_dir)
    [(_, spec)] = list(load_specs(files, overrides))
    if spec is None:
        raise CliError(f"--stack {stack}: its config has problems (above)")
    if not isinstance(spec, ServingStack | TrainingStack):
        raise CliError(f"--stack {stack}: a {spec.workload} stack; advise reads serving and training stacks")
    return spec


def _training_preset(spec: TrainingStack) -> str:
    model = spec.training.model
    if model is None or model.preset is None:
        raise CliError(
            "--stack: training.model.preset is not set (advise needs the architecture); set it or give --model"
        )
    return model.preset


def _training_tokens(spec: TrainingStack) -> float:
    model = spec.training.model
    if model is None or model.training_tokens is None:
        raise CliError("--stack: training.model.trainingTokens is not set; set it or give --data-tokens")
    return model.training_tokens


def _preset_of(model_name: str) -> str:
    arch = architecture_of(model_name, None)
    if arch is None:
        raise CliError(f"--stack: {model_name!r} has no known architecture; set serving.model.preset or give --model")
    return arch.name


def register(app: typer.Typer) -> None:
    app.command("advise")(advise_command)
