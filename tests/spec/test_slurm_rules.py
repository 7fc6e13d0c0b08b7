"""Slurm names, time limits and sizes that validate but stop slurmctld or the head node later."""

from __future__ import annotations

from hashlib import sha256

import pytest

from accelstack.spec.problems import Level
from accelstack.spec.validators import SLURM_MAX_TIME_SECONDS, slurm_time_seconds
from tests.spec.spec_helpers import TRAINING_STACK, all_problems, edited, training_raw

PARTS = "training.scheduler.partitions"


def partitions(*items: dict) -> dict:
    return {PARTS: list(items)}


@pytest.mark.parametrize("name", ["DEFAULT", "default", "Default", "dEfAuLt"])
def test_a_partition_named_default_is_refused_in_any_case(name):
    problems = all_problems(edited(training_raw(), partitions({"name": name, "default": True})))
    assert [p.path for p in problems] == [f"{PARTS}.0.name"]
    assert "reserved by Slurm" in problems[0].message and problems[0].level is Level.ERROR


def test_default_as_part_of_a_name_is_fine():
    assert all_problems(edited(training_raw(), partitions({"name": "defaults", "default": True}))) == []


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 5400), ("1:30", 90), ("01:00:00", 3600), ("7-00:00:00", 604800), ("2-12", 216000), ("1-2:3", 93780)],
)
def test_time_limits_are_counted_like_slurm(text, seconds):
    assert slurm_time_seconds(text) == seconds


@pytest.mark.parametrize(
    "text",
    [
        "24856-00:00:00",  # days * 86400 overflows a C int
        "35791395",  # minutes * 60 overflows
        "596524:00:00",  # hours * 3600 overflows
        "35791394:59",  # minutes:seconds at the edge, plus Slurm's +59 rounding
        "99999999999999999999",
    ],
)
def test_time_limits_slurm_cannot_count_are_refused(text):
    problems = all_problems(edited(training_raw(), partitions({"name": "gpu", "default": True, "maxTime": text})))
    assert [(p.path, p.level) for p in problems] == [(f"{PARTS}.0.maxTime", Level.ERROR)]
    assert "longer than Slurm can count" in problems[0].message


def test_the_longest_countable_time_limit_passes():
    days = SLURM_MAX_TIME_SECONDS // 86400
    raw = edited(training_raw(), partitions({"name": "gpu", "default": True, "maxTime": f"{days}-00:00:00"}))
    assert all_problems(raw) == []


@pytest.mark.parametrize("text", ["0", "0:0", "00:00:00", "0-0"])
def test_a_zero_time_limit_is_refused(text):
    problems = all_problems(edited(training_raw(), partitions({"name": "gpu", "default": True, "maxTime": text})))
    assert [p.path for p in problems] == [f"{PARTS}.0.maxTime"] and "zero time limit" in problems[0].message


@pytest.mark.parametrize("feature", ["", "a&b", "a|b", "!a", "a,b", "a b", "[a]", "a*2", "-a", "x" * 64])
def test_features_slurm_cannot_select_are_refused(feature):
    raw = edited(training_raw(), partitions({"name": "gpu", "default": True, "features": ["h100", feature]}))
    problems = all_problems(raw)
    assert [p.path for p in problems] == [f"{PARTS}.0.features.1"]


def test_a_duplicate_feature_is_refused_whatever_its_case():
    raw = edited(training_raw(), partitions({"name": "gpu", "default": True, "features": ["h100", "H100"]}))
    assert [str(p) for p in all_problems(raw)] == [f"{PARTS}.0.features.1: duplicate feature 'H100' in this partition"]


def many_partitions(count: int) -> dict:
    return partitions(*({"name": f"p{i}", "maxTime": "7-00:00:00", "default": i == 0} for i in range(count)))


def featured_partitions(count: int) -> dict:
    """Partitions each selecting nodes by its own feature (hex names: little for gzip to share)."""
    return partitions(
        *(
            {
                "name": f"p{i}",
                "maxTime": "7-00:00:00",
                "default": i == 0,
                "features": [f"f{sha256(b'%d' % i).hexdigest()[:40]}"],
            }
            for i in range(count)
        )
    )


def test_too_many_partitions_for_the_ssm_parameter_are_refused_at_validate():
    """Slurm's configuration files travel in an SSM parameter (8 KB at most), not in the head's user data."""
    problems = all_problems(edited(training_raw(), featured_partitions(200)))
    # (their features also lengthen the nodes' slurmd line, which may overfill their user data: another problem)
    [problem] = [p for p in problems if "Slurm configuration" in p.message]
    assert problem.path == PARTS and problem.level is Level.ERROR
    assert (
        "200 partitions make the head's Slurm configuration" in problem.message and "at most 8,192" in problem.message
    )


def test_many_partitions_that_fit_pass():
    assert all_problems(edited(training_raw(), many_partitions(60))) == []
    # The head's user data no longer grows with them: 150 plain partitions once overflowed EC2's 16 KB.
    assert all_problems(edited(training_raw(), many_partitions(150))) == []


def test_the_rule_measures_what_the_component_sends(tmp_path):
    """The rules render with the longest realistic deploy-time values: the real head instance's user data (the
    AWS component under Pulumi mocks) is not larger than that estimate, and the SSM parameter holds exactly the
    bundle the parameter rule measures."""
    from accelstack.components import slurm
    from accelstack.components.aws.rules import aws_deploy_values
    from accelstack.components.slurm.config_delivery import bundle_files, config_bundle
    from accelstack.engine.capture import capture, config_for_pulumi
    from accelstack.spec import parse_spec

    raw = edited(training_raw(), many_partitions(60))
    cap = capture(TRAINING_STACK.parents[1] / "__main__.py", config_for_pulumi(raw), stack="aws-training")
    [head] = [r for r in cap.by_type("aws:ec2/instance:Instance") if r.name.endswith("-head")]
    sent = head.inputs["userData"]
    spec = parse_spec(raw, "aws-training")
    estimate = slurm.head_cloud_init(spec, slurm.nodes_for(spec), aws_deploy_values(spec))
    assert len(sent.encode()) <= len(estimate.encode())
    [parameter] = cap.by_type("aws:ssm/parameter:Parameter")
    value = parameter.inputs["value"]
    stored = value["value"] if isinstance(value, dict) else value  # a secret input arrives wrapped
    assert "PartitionName=p59" in bundle_files(stored)["slurm.conf"]
    assert stored == config_bundle(slurm.config_files(spec, slurm.nodes_for(spec)))


def test_an_unquoted_base_60_time_names_what_was_written(tmp_path):
    from accelstack.spec.loader import load_stack
    from accelstack.spec.problems import SpecError

    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(TRAINING_STACK.read_text().replace('maxTime: "01:00:00"', "maxTime: 1:30:00"))
    with pytest.raises(SpecError) as raised:
        load_stack(path)
    [problem] = raised.value.problems
    assert problem.path == f"{PARTS}.1.maxTime"
    assert (
        'quoted string ("1:30:00"' in problem.message and "reads unquoted 1:30:00 as the number 5400" in problem.message
    )
