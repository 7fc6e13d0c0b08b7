"""Preview speed and memory (`make bench`): the resource graph must not grow with the node count.

A 4000-node cluster is one auto scaling group, not 4000 instances: same resource count as 4 nodes,
and about the same preview time. Times and peak RSS of the preview worker are printed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from accelstack.engine.preview import preview_stack

pytestmark = pytest.mark.bench

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "engine" / "fixture_project"
REAL_STACK = REPO / "stacks" / "Pulumi.aws-training.yaml"
PEAK_RSS_LIMIT_MIB = 1024


def stacks():
    yield pytest.param(FIXTURE / "stacks" / "Pulumi.alpha.yaml", FIXTURE, id="fixture")
    yield pytest.param(
        REAL_STACK,
        REPO,
        id="aws-training",
        marks=pytest.mark.skipif(
            not (REPO / "components" / "aws" / "training.py").exists(), reason="AWS training components missing"
        ),
    )


def report(capsys, text: str) -> None:
    with capsys.disabled():
        print(f"\n[bench] {text}")


@pytest.mark.parametrize(("stack_file", "project"), list(stacks()))
def test_resource_count_and_time_do_not_scale_with_nodes(stack_file, project, capsys):
    small = preview_stack(stack_file, ["training.nodes.count=4"], project)
    large = preview_stack(stack_file, ["training.nodes.count=4000"], project)
    report(
        capsys,
        f"{small.stack}: count=4 -> {len(small.resources)} resources in {small.seconds:.2f}s; "
        f"count=4000 -> {len(large.resources)} resources in {large.seconds:.2f}s",
    )
    assert len(small.resources) == len(large.resources)
    assert sorted(r.type for r in small.resources) == sorted(r.type for r in large.resources)
    # Generous: both previews do the same work; 3x absorbs noise on a shared 2-core machine.
    assert large.seconds < 3 * small.seconds + 1.0


@pytest.mark.parametrize(("stack_file", "project"), list(stacks()))
def test_peak_rss_of_a_preview(stack_file, project, capsys):
    result = preview_stack(stack_file, None, project)
    peak_mib = result.peak_rss_kib / 1024
    report(capsys, f"{result.stack}: preview worker peak RSS {peak_mib:.0f} MiB ({len(result.resources)} resources)")
    assert 0 < peak_mib < PEAK_RSS_LIMIT_MIB
