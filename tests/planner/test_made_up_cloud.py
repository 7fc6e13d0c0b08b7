"""The planner plans for any cloud it is handed: a made-up cloud ("acme") with its own machine types,
file system tiers and prices. Every number below follows from acme's tables, none from AWS's: capacity
steps of 1000 GiB (AWS's PERSISTENT_2 takes 1200 or multiples of 2400), a fixed 150 MB/s/TiB scratch
tier capped at 4000 GiB, prices in round numbers, and no AWS instance type.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.clouds import registry
from accelstack.clouds.base import BootDataLimit, Catalog, Cloud, Feature, InstanceType, ParallelFsTier, Prices
from accelstack.planner import lustre
from accelstack.planner import serving_plan as sp
from accelstack.planner import training_plan as tp
from accelstack.planner.advisor import advise
from accelstack.planner.architectures import get_preset
from accelstack.planner.cost import serving_cost, training_cost
from accelstack.planner.defaults import derived_defaults
from accelstack.planner.hardware import instance
from accelstack.planner.pricing import PriceBook, load_book
from accelstack.simulate.design import design_from_spec
from accelstack.spec import SpecError, parse_spec, spec_warnings
from accelstack.spec.loader import apply_overrides, load_stack, read_stack_file
from tests.planner.aws_inputs import AWS_CATALOG

STACKS = Path(__file__).resolve().parents[2] / "stacks"
GIB = 2**30

ACME = Catalog(
    cloud="acme",
    checked="2026-01-01",
    sources=("made up for this test",),
    instances={
        "acme.gpu8": InstanceType("acme.gpu8", "H100", 8, 80, 96, 1024, fabric="infiniband", fabric_interfaces=8),
        "acme.gpu1": InstanceType("acme.gpu1", "L40S", 1, 48, 8, 64),
    },
    regions=("eu-central",),
    parallel_fs={
        "fast": ParallelFsTier("fast", throughput_per_tib=(100, 400), min_gib=1000, increment_gib=1000),
        "scratch": ParallelFsTier(
            "scratch", throughput_per_tib=(), min_gib=500, increment_gib=500, max_gib=4000,
            baseline_throughput_per_tib=150, persistent=False,
        ),
    },
    parallel_fs_service="AcmeFS",
    object_store_service="Acme Blobs",
)  # fmt: skip
ACME_PRICES = Prices(
    checked="2026-01-01",
    region="eu-central",
    source="made up for this test",
    on_demand_hourly={"acme.gpu8": 10.0, "acme.gpu1": 1.0, "m7i.2xlarge": 0.5},
    spot_discount=0.5,
    parallel_fs_gb_month={"fast/100": 0.1, "fast/400": 0.3, "scratch": 0.05},
    object_gb_month=0.01,
    block_gb_month=0.02,
    block_iops_month=0.001,
    block_free_iops=3000,
    block_mibps_month=0.01,
    block_free_mibps=500,
    label="acme list prices",
)


def acme_book() -> PriceBook:
    return PriceBook.from_prices(ACME_PRICES)


def test_lustre_capacity_comes_from_the_tiers_steps_and_its_cost_from_the_cloud_prices():
    # 1500 GiB dataset + 2 x 200 GiB checkpoints + 20% = 2280 GiB; 200 GiB in 300 s = 715.8 MB/s.
    # fast/100 needs 715.8 / 100 x 1024 = 7330 GiB for the throughput -> 8000 GiB x $0.10 = $800;
    # fast/400 only the 2280 GiB -> 3000 GiB x $0.30 = $900. scratch (150 MB/s/TiB) would need
    # 4887 -> 5000 GiB, over its 4000 GiB maximum, so it is no option.
    plan = lustre.size(
        1500, 200, 300, catalog=ACME, prices=acme_book(), deployment_types=("fast", "scratch")
    )  # fmt: skip
    assert (plan.best.deployment_type, plan.best.capacity_gib, plan.best.throughput_per_tib) == ("fast", 8000, 100)
    assert plan.best.monthly_usd == pytest.approx(800)
    assert plan.best.throughput_mbps == pytest.approx(781.2, abs=0.1)
    assert [(a.deployment_type, a.capacity_gib, a.monthly_usd) for a in plan.alternatives] == [("fast", 3000, 900)]
    assert plan.price_source == "acme list prices eu-central checked 2026-01-01"


def test_a_tier_without_throughput_choice_writes_at_its_baseline():
    # 20 GiB checkpoints: 1548 GiB x 1.2 = 1848 GiB -> 2000 GiB either way; scratch at $0.05 beats fast/100
    # at $0.10, and writes at 2000 / 1024 x 150 = 293 MB/s (20 GiB in 73.3 s).
    plan = lustre.size(1500, 20, 300, catalog=ACME, prices=acme_book(), deployment_types=("fast", "scratch"))
    best = plan.best
    assert (best.deployment_type, best.capacity_gib, best.throughput_per_tib) == ("scratch", 2000, None)
    assert best.throughput_mbps == pytest.approx(293.0, abs=0.1)
    assert best.checkpoint_write_seconds == pytest.approx(73.3, abs=0.1)
    assert best.monthly_usd == pytest.approx(100)


def test_only_the_clouds_own_deployment_types_and_prices_are_known():
    with pytest.raises(ValueError, match=r"unknown deployment type\(s\) PERSISTENT_2; allowed: fast, scratch"):
        lustre.size(100, 10, 300, catalog=ACME, prices=acme_book(), deployment_types=("PERSISTENT_2",))
    with pytest.raises(ValueError, match="no parallel file system price for fast/250; known: fast/100, fast/400"):
        acme_book().lustre("fast", 250)
    with pytest.raises(ValueError, match=r"unknown instance type 'p5.48xlarge'; allowed: acme.gpu8, acme.gpu1"):
        instance(ACME, "p5.48xlarge")


def test_training_and_serving_costs_use_the_clouds_prices(tmp_path: Path):
    # 2 x acme.gpu8 on spot (50% off $10) for 100 h: 2 x $5 x 100 = $1,000; Lustre $730/month for 100 h
    # = $100; 1000 GB of object storage at $0.01 for 100/730 of a month = $1.37.
    cost = training_cost(
        instance(ACME, "acme.gpu8"), 2, 100, prices=acme_book(), capacity="spot",
        lustre_monthly_usd=730, object_storage_gb=1000,
    )  # fmt: skip
    assert (cost.compute_usd, cost.lustre_usd, cost.s3_usd, cost.gpu_hours) == (1000, 100, 1.37, 1600)
    # One replica volume: 200 GiB x $0.02 + 1000 IOPS over the free 3000 x $0.001 + 500 MiB/s over the free
    # 500 x $0.01 = $4 + $1 + $5 = $10/month; two replicas all day: 48 replica-hours x 730 / 24 x $1 = $1,460.
    serving = serving_cost(
        "acme.gpu1", 2, 2, profile=[1.0] * 24, prices=acme_book(), root_volume_gib=200, root_volume_iops=4000,
        root_volume_mibps=1000, warm_pool=1,
    )  # fmt: skip
    assert serving.volume_monthly_usd == pytest.approx(10)
    assert serving.monthly_usd == pytest.approx(1460 + 2 * 10 + 10)
    # Overrides apply to the cloud's own table.
    override = tmp_path / "prices.yaml"
    override.write_text("onDemandHourly: {acme.gpu1: 2.0}\nlustreGbMonth: {fast/100: 0.2}\n")
    custom = load_book(ACME_PRICES, override)
    assert (custom.hourly("acme.gpu1"), custom.lustre("fast", 100), custom.lustre("fast", 400)) == (2.0, 0.2, 0.3)
    assert custom.list_prices().hourly("acme.gpu1") == 1.0


def acme_training(**lustre: object):
    """The AWS example's training spec moved to acme: its nodes, file system tier and sizes."""
    training = load_stack(STACKS / "Pulumi.aws-training.yaml").training
    assert training is not None
    nodes = training.nodes.model_copy(update={"instance_type": "acme.gpu8"})
    assert training.storage.lustre is not None
    fs = training.storage.lustre.model_copy(update=lustre)
    storage = training.storage.model_copy(update={"lustre": fs})
    return training.model_copy(update={"nodes": nodes, "storage": storage})


def test_a_training_stack_is_planned_on_the_clouds_tiers_and_prices():
    # llama-3.1-70b full: 70.554 B x 14 B = 919.9 GiB per checkpoint, 2 kept; dataset 2000 GiB:
    # (2000 + 1839.8) x 1.2 = 4608 GiB, and 919.9 GiB within the stack's 900 s = 1097.5 MB/s.
    # fast/100 needs 11,238 -> 12,000 GiB ($1,200/month); fast/400 5000 GiB ($1,500): 12,000 GiB at 100.
    training = acme_training(tier="fast", capacity_gib=None, throughput_per_tib=None)
    setting = tp.lustre_setting(training, ACME, acme_book())
    assert setting is not None
    assert (setting.capacity_gib, setting.throughput_per_tib) == (12000, 100)
    assert (
        "cheapest fast size and tier by acme list prices eu-central checked 2026-01-01 ($1,200/month)" in setting.basis
    )
    assert "AcmeFS cannot shrink" in setting.basis
    plan = tp.plan_training(training, catalog=ACME, prices=acme_book())
    assert plan.write.write_mbps == pytest.approx(12000 / 1024 * 100)
    assert plan.lustre is not None and plan.lustre.monthly_usd == pytest.approx(1200)
    rows = {d.path: d for d in derived_defaults_for(training)}
    assert rows["training.storage.lustre.capacityGiB"].value == 12000
    # Without Lustre, checkpoints go to the cloud's object storage, named as it names it.
    no_fs = training.model_copy(update={"storage": training.storage.model_copy(update={"lustre": None})})
    assert (
        "Acme Blobs at an assumed 1000 MB/s per node x 4" in tp.checkpoint_write(no_fs, ACME, acme_book()).write_basis
    )
    # The H100's per-accelerator facts come with the catalog's row, keyed by the accelerator: the same
    # compute hours as on AWS's p5.48xlarge (8 x H100).
    assert training.model is not None
    tokens = training.model.model_copy(update={"training_tokens": 1e11})
    on_acme = training.model_copy(update={"model": tokens})
    on_aws = on_acme.model_copy(update={"nodes": training.nodes.model_copy(update={"instance_type": "p5.48xlarge"})})
    hours = tp.job_compute_hours(on_acme, ACME)
    aws_hours = tp.job_compute_hours(on_aws, AWS_CATALOG)
    # 6 x 70.554e9 x 1e11 FLOPs / (4 x 8 x 989e12 x 40%) FLOP/s = 3.344e6 s = 928.9 h
    assert hours is not None and aws_hours is not None and hours.hours == aws_hours.hours
    assert hours.hours == pytest.approx(928.9, abs=0.1)
    # An AWS instance type means nothing to acme.
    with pytest.raises(ValueError, match=r"unknown instance type 'p5\.48xlarge'"):
        tp.job_compute_hours(on_aws, ACME)


def derived_defaults_for(training):
    spec = load_stack(STACKS / "Pulumi.aws-training.yaml")
    return derived_defaults(spec.model_copy(update={"training": training}), catalog=ACME, prices=acme_book())


def test_a_serving_stack_is_planned_on_the_clouds_machine_types():
    serving = load_stack(STACKS / "Pulumi.aws-serving.yaml").serving
    assert serving is not None
    on_acme = serving.model_copy(
        update={"replicas": serving.replicas.model_copy(update={"instance_type": "acme.gpu1"})}
    )
    plan = sp.plan_serving(on_acme, ACME)
    # acme.gpu1 and AWS's g6e.xlarge (the example's) both carry one 48 GiB L40S: the same KV cache.
    assert plan.tensor_parallel == 1
    assert plan.concurrency == sp.plan_serving(serving, AWS_CATALOG).concurrency == 11
    assert "on acme.gpu1 (tp=1" in plan.concurrency_basis
    # The example's own AWS type is not in acme's catalog: the plan says so instead of borrowing AWS's row.
    assert "unknown instance type 'g6e.xlarge'" in sp.plan_serving(serving, ACME).concurrency_basis
    design = design_from_spec(on_acme, acme_book(), autoscaler="request-rate", catalog=ACME)
    assert design.hourly_usd == 1.0 and design.vcpus == 8


def test_advice_names_the_clouds_machine_types_and_stacks():
    serve = advise(
        custom_weights=True, need_train=False, model=get_preset("llama-3.1-8b"), catalog=ACME, prices=acme_book()
    )
    assert serve.details["serving"]["instanceType"] == "acme.gpu1" and serve.stacks == ("acme-serving",)
    big = advise(
        custom_weights=True, need_train=True, model=get_preset("llama-3.1-70b"), data_tokens=2e12,
        catalog=ACME, prices=acme_book(),
    )  # fmt: skip
    # No shortlist in acme's catalog: the priced type with a fabric and the most accelerator memory.
    assert big.details["training"]["instanceType"] == "acme.gpu8"
    assert big.stacks == ("acme-training", "acme-serving")
    hosted = advise(custom_weights=False, need_train=False, catalog=ACME, prices=acme_book())
    assert hosted.steps[0].why == "a managed model API serves a hosted model per token with no fleet"


def test_size_and_advise_plan_for_the_cloud_named_on_the_command_line():
    acme = Cloud(
        name="acme", title="Acme Cloud", account_kind="project", pulumi_packages=frozenset({"acme"}),
        features=frozenset(), catalog=ACME, prices=ACME_PRICES,
    )  # fmt: skip
    runner = CliRunner()
    with registry.registered(acme):
        sized = runner.invoke(
            app, ["size", "lustre", "--cloud", "acme", "--dataset-gib", "1500", "--checkpoint-gib", "200", "--json"]
        )
        advised = runner.invoke(app, ["advise", "--cloud", "acme", "--custom-weights", "--model", "llama-3.1-8b"])
    assert sized.exit_code == 0, sized.output
    best = json.loads(sized.output)["best"]
    # Default candidates: acme's persistent types (fast); scratch is not persistent.
    assert (best["deployment_type"], best["capacity_gib"], best["monthly_usd"]) == ("fast", 8000, 800.0)
    assert advised.exit_code == 0, advised.output
    assert "Serve llama-3.1-8b on acme.gpu1" in advised.output
    unknown = runner.invoke(app, ["size", "lustre", "--cloud", "nope", "--dataset-gib", "1", "--checkpoint-gib", "1"])
    assert unknown.exit_code == 2 and "--cloud: unknown cloud 'nope'; registered: aws" in unknown.output


def test_a_price_table_without_file_system_prices_says_so_and_how_to_supply_one():
    """A described cloud may leave its managed Lustre unpriced (not_priced says why): the error must not end
    in an empty 'known:' list."""
    import dataclasses

    from accelstack.clouds.aws import PRICES
    from accelstack.planner.pricing import PriceBook

    book = PriceBook.from_prices(dataclasses.replace(PRICES, parallel_fs_gb_month={}))
    with pytest.raises(
        ValueError,
        match=r"known: none: this price table records no parallel file system price \(give one with --prices\)",
    ):
        book.lustre("PERSISTENT_2", 250)


# --- the spec rules every cloud shares, from acme's own description ------------------------------


def acme_cloud(**changes: Any) -> Cloud:
    """acme registered as a cloud: every feature, AWS's account block, and no rule module of its own."""
    described = Cloud(
        name="acme", title="Acme Cloud", account_kind="project", pulumi_packages=frozenset({"acme"}),
        features=frozenset(Feature), catalog=ACME, prices=ACME_PRICES,
        account_model="accelstack.spec.accounts:AwsAccount",
    )  # fmt: skip
    return dataclasses.replace(described, **changes)


def acme_problems(stack: str, path: str, *overrides: str) -> list[str]:
    """The messages at `path` for the example `stack` moved to acme (errors if rejected, else warnings)."""
    raw = apply_overrides(read_stack_file(STACKS / f"Pulumi.{stack}.yaml"), ["cloud=acme", *overrides])
    try:
        found = spec_warnings(parse_spec(raw, stack))
    except SpecError as exc:
        found = exc.problems
    return [p.message for p in found if p.path == path]


def test_a_cloud_with_no_rule_module_gets_the_shared_rules_from_its_catalog():
    nodes, replicas = "training.nodes", "serving.replicas"
    with registry.registered(acme_cloud()):
        unknown = acme_problems("aws-training", f"{nodes}.instanceType")  # the example's p5.48xlarge
        no_fabric = acme_problems("aws-training", f"{nodes}.instanceType", f"{nodes}.instanceType=acme.gpu1")
        fabric = acme_problems("aws-training", f"{nodes}.instanceType", f"{nodes}.instanceType=acme.gpu8")
        unknown_replicas = acme_problems("aws-serving", f"{replicas}.instanceType")  # the example's g6e.xlarge
        on_gpu1 = f"{replicas}.instanceType=acme.gpu1"
        too_parallel = acme_problems(
            "aws-serving", f"{replicas}.tensorParallel", on_gpu1, f"{replicas}.tensorParallel=2"
        )
        spot = acme_problems("aws-serving", f"{replicas}.capacity", on_gpu1, f"{replicas}.capacity=spot")
    allowed = "allowed: acme.gpu8, acme.gpu1"
    assert unknown == [f"'p5.48xlarge' is not a supported accelerated machine type; {allowed}"]
    assert unknown_replicas == [f"'g6e.xlarge' is not a supported accelerated machine type; {allowed}"]
    # The example trains on 4 nodes: acme.gpu1 has no InfiniBand, acme.gpu8 has.
    assert no_fabric == [
        "acme.gpu1 has no low-latency fabric, so 4 nodes would train over the ordinary network; use count: 1 or a "
        "machine type with one: acme.gpu8"
    ]
    assert fabric == []
    assert too_parallel == ["2 exceeds the 1 L40S GPU(s) of acme.gpu1"]
    assert spot == ["'spot' is not allowed for serving (interruptible or time-boxed capacity drops requests in flight); "
                    "allowed: on-demand"]  # fmt: skip


def test_boot_data_is_held_to_the_limit_the_cloud_declares():
    """acme built on AWS's components: their boot-data renderers are its only rule module, the limit its own."""
    on_aws = {"components": "accelstack.components.aws", "rules": ("accelstack.components.aws.rules",)}
    limit = BootDataLimit("boot script", 4096, refused_by="Acme")
    path, gpu8 = "training.scheduler", "training.nodes.instanceType=acme.gpu8"
    with registry.registered(acme_cloud(**on_aws, boot_data_limit=limit)):
        refused = acme_problems("aws-training", path, gpu8)
    with registry.registered(acme_cloud(**on_aws)):
        unlimited = acme_problems("aws-training", path, gpu8)
    # The head's and the nodes' boot scripts both pass 4 KB (slurm.conf no longer rides in the head's).
    nodes, head = sorted(refused)
    assert nodes.startswith("the compute nodes' boot script is ")
    # AWS's renderer names what to give up first where the nodes carry pyxis and enroot.
    assert nodes.endswith(
        " bytes; Acme accepts at most 4,096, so the compute nodes could not launch; set training.scheduler.containers: none"
    )
    assert head.startswith("the head node's boot script is ") and head.endswith("so the head node could not launch")
    assert unlimited == []
