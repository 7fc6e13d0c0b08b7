"""`preview_stack`: validate, run the program in a worker process, classify failures."""

from __future__ import annotations

import pytest

from accelstack.engine.preview import PreviewError, preview_stack
from accelstack.spec.problems import SpecError


def stack_file(project, name):
    return project / "stacks" / f"Pulumi.{name}.yaml"


def test_preview_result(fixture_project):
    result = preview_stack(stack_file(fixture_project, "alpha"), ["training.nodes.count=8"])
    assert result.stack == "alpha"
    assert result.resources[0].type == "pulumi:pulumi:Stack"
    assert len(result.resources) == 8 and result.custom_count == 5
    assert result.stack_outputs["nodeCount"] == 8  # the override reached the program
    assert result.export["deployment"]["resources"][0]["urn"] == result.resources[0].urn
    assert result.seconds > 0 and result.peak_rss_kib > 0
    assert result.capture.one("aws:s3/bucket:Bucket").protect


def test_invalid_config_runs_nothing(fixture_project):
    with pytest.raises(SpecError) as caught:
        preview_stack(stack_file(fixture_project, "alpha"), ["training.nodes.count=0"])
    assert [p.path for p in caught.value.problems] == ["training.nodes.count"]


def test_program_refusal_is_a_config_error(fixture_project):
    with pytest.raises(PreviewError) as caught:
        preview_stack(stack_file(fixture_project, "broken"))
    assert caught.value.kind == "config"
    assert "fixture:fail is set" in caught.value.message


def test_program_crash_keeps_its_traceback(fixture_project):
    with pytest.raises(PreviewError) as caught:
        preview_stack(stack_file(fixture_project, "crashy"))
    assert caught.value.kind == "program"
    assert caught.value.message == "ZeroDivisionError: fixture crashed on purpose"
    assert "__main__.py" in caught.value.traceback


def test_worker_skips_the_sdk_stack_walk_and_still_registers_everything(fixture_project, monkeypatch):
    """The worker replaces the SDK's per-registration stack walk; if an SDK upgrade renamed it, the skip would
    silently replace nothing, so the function must still exist and be what registration calls."""
    import inspect

    from pulumi.runtime import resource as pulumi_resource

    from accelstack.engine import worker

    assert "_get_stack_trace()" in inspect.getsource(pulumi_resource.register_resource)
    monkeypatch.setattr(pulumi_resource, "_get_stack_trace", pulumi_resource._get_stack_trace)
    worker.skip_source_positions()
    assert list(pulumi_resource._get_stack_trace().frames) == []
    result = preview_stack(stack_file(fixture_project, "alpha"))
    assert len(result.resources) == 8  # a preview in the worker (which skips the walk) is unchanged
