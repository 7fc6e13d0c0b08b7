"""Lustre sizing, prices, costs and the advisor's decision order."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelstack.planner.advisor import advise
from accelstack.planner.architectures import get_preset
from accelstack.planner.cost import replicas_by_hour, serving_cost, training_compute_hours, training_cost
from accelstack.planner.lustre import next_allowed_capacity
from accelstack.planner.lustre import size as lustre_size
from accelstack.planner.pricing import load_book
from tests.planner.aws_inputs import AWS, AWS_CATALOG, aws_book, aws_itype

LUSTRE_DEPLOYMENT_TYPES = AWS_CATALOG.parallel_fs
P2 = LUSTRE_DEPLOYMENT_TYPES["PERSISTENT_2"]


def size(*args: float, **kwargs: object):
    """`accelstack.planner.lustre.size` on AWS's tiers and list prices (PERSISTENT_2 unless told)."""
    kwargs = {"deployment_types": ("PERSISTENT_2",), "prices": aws_book(), **kwargs}
    return lustre_size(*args, catalog=AWS_CATALOG, **kwargs)


def test_capacity_steps_follow_fsx() -> None:
    # PERSISTENT_2 SSD: 1200 GiB, then multiples of 2400 GiB.
    assert next_allowed_capacity(P2, 1) == 1200
    assert next_allowed_capacity(P2, 1201) == 2400
    assert next_allowed_capacity(P2, 4801) == 7200
    assert next_allowed_capacity(LUSTRE_DEPLOYMENT_TYPES["SCRATCH_1"], 2000) == 2400


def test_lustre_picks_cheapest_tier_that_meets_the_checkpoint_target() -> None:
    # 1000 GiB checkpoint in 120 s needs ~8.95 GB/s: 9600 GiB at 1000 MB/s/TiB (9.4 GB/s) costs
    # 9600 x $0.60 = $5,760/month, less than the capacity lower tiers would need for that throughput.
    plan = size(4000, 1000, 120)
    assert (plan.best.capacity_gib, plan.best.throughput_per_tib) == (9600, 1000)
    assert plan.best.monthly_usd == pytest.approx(5760)
    assert plan.best.checkpoint_write_seconds <= 120
    assert all(o.monthly_usd >= plan.best.monthly_usd for o in plan.alternatives)
    # A relaxed target lets the dataset drive capacity and the cheapest tier win.
    relaxed = size(4000, 100, 3600)
    assert relaxed.best.throughput_per_tib == 125 and relaxed.best.capacity_gib == 7200


@settings(max_examples=40, deadline=None)
@given(st.floats(0, 50_000), st.floats(1, 5_000), st.floats(10, 7200))
def test_lustre_plan_always_meets_its_constraints(dataset: float, checkpoint: float, target: float) -> None:
    plan = size(dataset, checkpoint, target, deployment_types=("PERSISTENT_2", "SCRATCH_2"))
    best = plan.best
    assert LUSTRE_DEPLOYMENT_TYPES[best.deployment_type].capacity_allowed(best.capacity_gib)
    assert best.capacity_gib >= plan.needed_capacity_gib
    assert best.checkpoint_write_seconds <= target + 0.1


def test_price_table_is_dated_and_overridable(tmp_path: Path) -> None:
    assert AWS.prices.checked and AWS.prices.region == "us-east-1"
    book = aws_book()
    assert book.hourly("p5.48xlarge", "spot") == pytest.approx(55.04 * 0.4)
    override = tmp_path / "prices.yaml"
    override.write_text(
        "onDemandHourly: {p5.48xlarge: 40}\nspotDiscount: 0.5\nlustreGbMonth: {PERSISTENT_2/250: 0.2}\n"
    )
    custom = load_book(AWS.prices, override)
    assert custom.hourly("p5.48xlarge", "spot") == 20
    assert custom.lustre("PERSISTENT_2", 250) == 0.2
    assert "prices.yaml" in custom.source()
    assert load_book(AWS.prices, spot_discount=0.7).spot_discount == 0.7
    override.write_text("onDemand: {}\n")
    with pytest.raises(ValueError, match=r"unknown key.*allowed"):
        load_book(AWS.prices, override)
    with pytest.raises(ValueError, match="no price for"):
        book.hourly("p9.huge")


def test_training_cost_components() -> None:
    # 4 x p5 on demand for 100 h, 10% overhead: 4 x 55.04 x 110 = $24,217.60.
    cost = training_cost(aws_itype("p5.48xlarge"), 4, 100, overhead_fraction=0.1, prices=aws_book())
    assert cost.compute_usd == pytest.approx(24217.60)
    assert cost.gpu_hours == 4 * 8 * 110
    spot = training_cost(aws_itype("p5.48xlarge"), 4, 100, capacity="spot", overhead_fraction=0.1, prices=aws_book())
    assert spot.compute_usd == pytest.approx(cost.compute_usd * 0.4)


def test_compute_hours_from_tokens() -> None:
    # 6 x 8.03e9 x 1e9 tokens / (8 x 989e12 x 0.4) = 15,227 s = 4.23 h on one p5.
    hours = training_compute_hours(get_preset("llama-3.1-8b"), 1e9, aws_itype("p5.48xlarge"), 1)
    assert hours == pytest.approx(4.23, abs=0.01)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 200), st.integers(1, 200), st.floats(1, 1000))
def test_cost_monotone_in_node_count(a: int, b: int, hours: float) -> None:
    small, large = sorted((a, b))
    assert (
        training_cost(aws_itype("p5.48xlarge"), large, hours, prices=aws_book()).total_usd
        >= training_cost(aws_itype("p5.48xlarge"), small, hours, prices=aws_book()).total_usd
    )


def test_serving_cost_from_daily_profile() -> None:
    flat = serving_cost("g6e.xlarge", 2, 2, profile=[1.0] * 24, lifetime_months=12, prices=aws_book())
    assert flat.replica_hours_per_day == 48
    assert flat.monthly_usd == pytest.approx(48 * 730 / 24 * 1.861, rel=1e-6)
    assert flat.lifetime_usd == pytest.approx(flat.monthly_usd * 12, rel=1e-6)
    assert replicas_by_hour([0.0] * 12 + [0.5] * 12, 1, 4) == [1] * 12 + [2] * 12
    with pytest.raises(ValueError, match="24 hourly values"):
        replicas_by_hour([1.0], 1, 2)


def test_advisor_walks_the_list_in_order() -> None:
    assert (
        advise(custom_weights=False, need_train=True, catalog=AWS_CATALOG, prices=aws_book()).outcome
        == "managed-model-api"
    )
    small = advise(
        custom_weights=True,
        need_train=True,
        model=get_preset("llama-3.1-8b"),
        data_tokens=5e7,
        catalog=AWS_CATALOG,
        prices=aws_book(),
    )
    assert small.outcome == "peft-one-machine" and small.stacks == ("aws-finetune", "aws-serving")
    serve = advise(
        custom_weights=True, need_train=False, model=get_preset("llama-3.1-70b"), catalog=AWS_CATALOG, prices=aws_book()
    )
    assert serve.outcome == "serving-only" and serve.stacks == ("aws-serving",)
    big = advise(
        custom_weights=True,
        need_train=True,
        model=get_preset("llama-3.1-70b"),
        data_tokens=2e12,
        catalog=AWS_CATALOG,
        prices=aws_book(),
    )
    assert big.outcome == "distributed-training" and big.details["training"]["nodes"] > 1
    with pytest.raises(ValueError, match="--data-tokens"):
        advise(
            custom_weights=True,
            need_train=True,
            model=get_preset("llama-3.1-8b"),
            catalog=AWS_CATALOG,
            prices=aws_book(),
        )


def test_a_cloud_without_file_system_prices_is_still_sized_and_said_unpriced() -> None:
    """Managed Lustre on Google Cloud has no recorded price: 2,000 GiB + 2 x 920 GiB checkpoints x 1.2 = 4,608 GiB
    and 920 GiB in 300 s = 3,293 MB/s; the 1000 MB/s/TiB tier's minimum, 9,000 GiB (8,789 MB/s), holds both and is
    the smallest size; the planner's own callers still get the error (they fall back on their own)."""
    from accelstack.clouds import registry
    from accelstack.planner.pricing import PriceBook

    gcp = registry.get("gcp")
    tiers = tuple(gcp.catalog.parallel_fs)
    book = PriceBook.from_prices(gcp.prices)
    plan = lustre_size(2000, 920, 300, catalog=gcp.catalog, prices=book, deployment_types=tiers, allow_unpriced=True)
    assert (plan.best.deployment_type, plan.best.capacity_gib, plan.best.monthly_usd) == (
        "managed-lustre-1000",
        9000,
        None,
    )
    assert plan.best.checkpoint_write_seconds <= 300
    assert [o.capacity_gib for o in plan.alternatives] == [18_000, 36_000, 72_000]
    assert "no price recorded" in plan.price_source
    with pytest.raises(ValueError, match="no priced throughput tier"):
        lustre_size(2000, 920, 300, catalog=gcp.catalog, prices=book, deployment_types=tiers)
