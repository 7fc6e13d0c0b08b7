"""Lustre capacity and tier, when the stack file omits them, are the planner's: the cheapest valid size
and tier that hold the dataset + 2 retained checkpoints + 20% headroom and write one checkpoint within
the target (`accelstack size lustre`'s arithmetic). The components build those numbers, preview shows
the formula, stated values are kept and validated, and a later change never silently shrinks Lustre.

Prices (accelstack.clouds.aws.prices, PERSISTENT_2 SSD $/GB-month): 125 -> 0.145, 250 -> 0.210,
500 -> 0.340, 1000 -> 0.600. PERSISTENT_2 sizes: 1200, then multiples of 2400 GiB.
Llama-3.1-70B checkpoint: 70.554e9 params x 14 B = 987.756e9 B = 919.92 GiB.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from accelstack.engine.capture import capture, config_for_pulumi
from accelstack.planner import training_plan as tp
from accelstack.planner.defaults import derived_defaults
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file, spec_warnings
from accelstack.spec.problems import SpecError
from tests.planner.aws_inputs import AWS_CATALOG, aws_book

REPO = Path(__file__).resolve().parents[2]
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
OMITTED = ("training.storage.lustre.capacityGiB=null", "training.storage.lustre.throughputPerTiB=null")
# The new-user trial's story (a): 70B full fine-tuning on 16 spot p5.48xlarge, a 20 TB (18,627 GiB)
# corpus, the planner's 300 s write target.
STORY_A = (
    "training.nodes.count=16", "training.nodes.capacity=spot", "training.storage.datasets.sizeGiB=18627",
    "training.storage.checkpoints.writeTargetSeconds=null", *OMITTED,
)  # fmt: skip


def raw_of(*overrides: str) -> dict:
    return apply_overrides(read_stack_file(REPO / "stacks" / "Pulumi.aws-training.yaml"), list(overrides))


def training_of(*overrides: str):
    return parse_spec(raw_of(*overrides), "aws-training").training


def lustre_registration(*overrides: str):
    cap = capture(REPO / "__main__.py", config_for_pulumi(raw_of(*overrides)), stack="aws-training")
    [fs] = [r for r in cap.resources if r.type == LUSTRE]
    return fs


def test_story_a_gets_the_cheapest_size_and_tier_not_a_fixed_4800():
    """need = (18627 + 2 x 919.92) x 1.2 = 24560.2 GiB; write = 987.756e9 B / 300 s = 3292.5 MB/s.
    125 MB/s/TiB: 3292.5 / 125 x 1024 = 26972.6 GiB -> 28800 GiB, x 0.145 = $4,176/month.
    250: max(24560.2, 13486.3) -> 26400 GiB, x 0.210 = $5,544. 500: 26400 x 0.34 = $8,976.
    So 28800 GiB at 125, which writes at 28800/1024 x 125 = 3515.6 MB/s: 987756 / 3515.6 = 281 s."""
    setting = tp.lustre_setting(training_of(*STORY_A), AWS_CATALOG, aws_book())
    assert (setting.capacity_gib, setting.throughput_per_tib) == (28800, 125)
    assert setting.capacity_derived and setting.tier_derived
    assert "24560 GiB" in setting.basis and "3293 MB/s" in setting.basis and "$4,176/month" in setting.basis
    plan = tp.plan_training(training_of(*STORY_A), catalog=AWS_CATALOG, prices=aws_book())
    assert plan.lustre.capacity_gib == 28800 and plan.lustre.write_seconds == 281.0 and plan.lustre.meets_target


def test_the_component_builds_the_planned_numbers_and_preview_shows_the_formula():
    fs = lustre_registration(*STORY_A)
    assert (fs.inputs["storageCapacity"], fs.inputs["perUnitStorageThroughput"]) == (28800, 125)
    assert fs.protect
    spec = parse_spec(raw_of(*STORY_A), "aws-training")
    rows = {d.path: d for d in derived_defaults(spec, catalog=AWS_CATALOG, prices=aws_book())}
    capacity, tier = rows["training.storage.lustre.capacityGiB"], rows["training.storage.lustre.throughputPerTiB"]
    assert (capacity.value, capacity.unit, tier.value, tier.unit) == (28800, "GiB", 125, "MB/s/TiB")
    assert "(dataset 18627 GiB + 2 checkpoints x 919.9 GiB) x 1.2 headroom = 24560 GiB" in capacity.source
    assert "FSx for Lustre cannot shrink" in capacity.source and "capacityGiB: 28800" in capacity.source
    assert rows["training.storage.lustre"].ok


def test_only_the_omitted_value_is_derived():
    """Shipped stack: 2000 GiB data, 900 s target. Checkpoint rate 987756 / 900 = 1097.5 MB/s.
    Tier omitted at 4800 GiB: 125 -> 585.9 MB/s (1686 s, too slow), 250 -> 1171.9 MB/s (843 s): 250.
    Same at the 300 s default (3292.5 MB/s): 500 -> 2343.75 MB/s (421 s) misses, 1000 -> 4687.5: 1000.
    Capacity omitted at 125: max((2000 + 1839.84) x 1.2 = 4607.8, 1097.5 / 125 x 1024 = 8991) -> 9600."""
    tier_only = tp.lustre_setting(training_of("training.storage.lustre.throughputPerTiB=null"), AWS_CATALOG, aws_book())
    assert (tier_only.capacity_gib, tier_only.throughput_per_tib, tier_only.capacity_derived) == (4800, 250, False)
    fast = tp.lustre_setting(training_of(
        "training.storage.lustre.throughputPerTiB=null", "training.storage.checkpoints.writeTargetSeconds=null"), AWS_CATALOG, aws_book())  # fmt: skip
    assert fast.throughput_per_tib == 1000
    capacity_only = tp.lustre_setting(
        training_of("training.storage.lustre.capacityGiB=null", "training.storage.lustre.throughputPerTiB=125"),
        AWS_CATALOG,
        aws_book(),
    )
    assert (capacity_only.capacity_gib, capacity_only.throughput_per_tib, capacity_only.tier_derived) == (
        9600,
        125,
        False,
    )


def test_stated_values_are_kept_even_when_a_cheaper_one_exists_and_still_validated():
    """The shipped stack states 4800 GiB at 250: nothing derived, no rows; a bad size is still an error."""
    stated = tp.lustre_setting(training_of(), AWS_CATALOG, aws_book())
    assert (stated.capacity_gib, stated.throughput_per_tib, stated.derived) == (4800, 250, False)
    paths = {
        d.path for d in derived_defaults(parse_spec(raw_of(), "aws-training"), catalog=AWS_CATALOG, prices=aws_book())
    }
    assert "training.storage.lustre.capacityGiB" not in paths
    with pytest.raises(SpecError) as error:
        parse_spec(raw_of("training.storage.lustre.capacityGiB=25000"), "aws-training")
    assert any("25000 GiB is not a valid PERSISTENT_2 size" in str(p) for p in error.value.problems)
    with pytest.raises(SpecError) as error:
        parse_spec(raw_of("training.storage.lustre.throughputPerTiB=300"), "aws-training")
    assert any("allowed: 125, 250, 500, 1000" in str(p) for p in error.value.problems)


def test_scratch_gets_capacity_only():
    """SCRATCH_2 has a fixed 200 MB/s/TiB baseline: 1097.5 / 200 x 1024 = 5619 GiB > 4607.8 -> 7200 GiB."""
    setting = tp.lustre_setting(
        training_of("training.storage.lustre.tier=SCRATCH_2", *OMITTED), AWS_CATALOG, aws_book()
    )
    assert (setting.capacity_gib, setting.throughput_per_tib, setting.tier_derived) == (7200, None, False)


def test_no_dataset_size_keeps_4800_and_validate_warns():
    """Without datasets.sizeGiB the data is unknown: 4800 GiB as before (2 x 919.92 x 1.2 = 2208 fits), with a warning."""
    overrides = (*OMITTED, "training.storage.datasets.sizeGiB=null")
    assert tp.lustre_setting(training_of(*overrides), AWS_CATALOG, aws_book()).capacity_gib == 4800
    warnings = spec_warnings(parse_spec(raw_of(*overrides), "aws-training"))
    assert [w.path for w in warnings if "cannot be sized for the data" in w.message] == [
        "training.storage.datasets.sizeGiB"
    ]
    assert not [
        w for w in spec_warnings(parse_spec(raw_of(*OMITTED), "aws-training")) if "cannot be sized" in w.message
    ]


def test_day_two_growth_grows_in_place_and_a_shrink_is_refused_not_applied():
    """2000 GiB of data: 250 -> max(4607.8, 4495.5) -> 4800 GiB ($1,008) beats 125 -> 9600 GiB ($1,392).
    6000 GiB: need (6000 + 1839.84) x 1.2 = 9407.8 -> 9600 at 125 ($1,392) vs 9600 at 250 ($2,016): 9600 at 125.
    Growth: same URN, larger storageCapacity (FSx grows in place; only a smaller value replaces, see
    tests/components/test_stateful_survives_changes.py SHRINK_REPLACES). Going back to 2000 GiB would derive
    4800 < 9600: a replacement, which the protected file system makes `pulumi up` refuse (data kept), and
    the preview row told the user beforehand to pin capacityGiB."""
    small = lustre_registration(
        "training.storage.lustre.capacityGiB=null", "training.storage.lustre.throughputPerTiB=null"
    )
    grown = lustre_registration(*OMITTED, "training.storage.datasets.sizeGiB=6000")
    assert small.urn == grown.urn
    assert (small.inputs["storageCapacity"], small.inputs["perUnitStorageThroughput"]) == (4800, 250)
    assert (grown.inputs["storageCapacity"], grown.inputs["perUnitStorageThroughput"]) == (9600, 125)
    assert small.protect and grown.protect
    grown_rows = {
        d.path: d
        for d in derived_defaults(
            parse_spec(raw_of(*OMITTED, "training.storage.datasets.sizeGiB=6000"), "x"),
            catalog=AWS_CATALOG,
            prices=aws_book(),
        )
    }
    assert "set capacityGiB: 9600" in grown_rows["training.storage.lustre.capacityGiB"].source
    pinned = lustre_registration(*OMITTED, "training.storage.lustre.capacityGiB=9600")  # the advice followed
    assert pinned.inputs["storageCapacity"] == 9600


def test_a_derived_size_above_the_fsx_quota_warns_like_a_stated_one():
    """90000 GiB of data: (90000 + 1839.84) x 1.2 = 110207.8 GiB -> 110400 GiB > the 100800 GiB default quota."""
    spec = parse_spec(
        raw_of("training.storage.lustre.capacityGiB=null", "training.storage.datasets.sizeGiB=90000"), "x"
    )
    assert tp.lustre_setting(spec.training, AWS_CATALOG, aws_book()).capacity_gib == 110400
    [warning] = [w for w in spec_warnings(spec) if w.path == "training.storage.lustre.capacityGiB"]
    assert warning.message.startswith("derived 110400 GiB is above the default FSx for Lustre storage quota")
