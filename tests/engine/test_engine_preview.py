"""`preview_stack`: validate, run the program in a worker process, classify failures."""

from __future__ import annotations

from pathlib import Path

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


def _registered_aliases(transformations=()):
    """The aliases an Azure resource group (which the SDK gives one type alias per earlier API version) and a
    user's name alias reach the engine with."""
    import pulumi
    import pulumi_azure_native as azure_native

    from accelstack.engine.capture import capture

    def program():
        azure_native.resources.ResourceGroup(
            "rg", location="eastus", opts=pulumi.ResourceOptions(aliases=[pulumi.Alias(name="old-rg")])
        )

    (group,) = capture(program, {}, transformations=transformations).by_type("azure-native:resources:ResourceGroup")
    return list(group.request.aliases)


def test_worker_drops_only_the_sdks_type_aliases():
    """pulumi-azure-native attaches an alias per earlier API version to every resource (~0.4 s of an Azure
    preview to resolve); the worker drops those, never an alias a program wrote (a wrong one must still fail)."""
    from accelstack.engine import worker

    everything = _registered_aliases()
    assert len([a for a in everything if a.spec.type]) >= 10  # the SDK's own, if it still attaches them
    (kept,) = _registered_aliases((worker.without_type_aliases,))
    assert kept.spec.name == "old-rg" and not kept.spec.type


def test_a_worker_preview_records_what_an_in_process_capture_records():
    """Everything the worker changes in the SDK (no stack walk, no type aliases) leaves the recorded preview
    as it was: the Azure training example, whose resources carry the most aliases, compared field by field."""
    from accelstack.engine.capture import capture, config_for_pulumi
    from accelstack.spec.loader import read_stack_file

    repo = Path(__file__).resolve().parents[2]
    path = repo / "stacks" / "Pulumi.azure-training.yaml"
    in_process = capture(repo / "__main__.py", config_for_pulumi(read_stack_file(path)), stack="azure-training")
    worker_preview = preview_stack(path)

    def recorded(registrations):
        fields = ("type", "name", "custom", "parent", "provider", "protect", "inputs", "outputs", "id")
        return {
            r.urn: ({f: getattr(r, f) for f in fields}, sorted(r.dependencies), sorted(r.property_dependencies))
            for r in registrations
        }

    assert recorded(worker_preview.resources) == recorded(in_process.resources)
    assert worker_preview.stack_outputs == in_process.stack_outputs


def test_a_worker_started_before_validation_gives_the_same_preview(fixture_project):
    """`accelstack preview` starts the worker first (start_preview) and validates while it runs: what it reads
    from that worker is what preview_stack reads from one it starts itself."""
    from accelstack.engine.preview import start_preview

    path = stack_file(fixture_project, "alpha")
    worker = start_preview(path, ["training.nodes.count=8"])
    assert worker is not None
    early = preview_stack(path, ["training.nodes.count=8"], worker=worker)
    late = preview_stack(path, ["training.nodes.count=8"])
    for export in (early.export, late.export):
        export["deployment"]["manifest"].pop("time")  # when each was made
    assert early.export == late.export
    assert early.resources == late.resources and early.stack_outputs == late.stack_outputs


def test_an_early_worker_is_stopped_when_the_config_does_not_validate(fixture_project):
    from accelstack.engine.preview import start_preview

    path = stack_file(fixture_project, "alpha")
    worker = start_preview(path, ["training.nodes.count=0"])
    assert worker is not None  # the request is made from the file; validation comes after
    with pytest.raises(SpecError):
        preview_stack(path, ["training.nodes.count=0"], worker=worker)
    assert worker._process.poll() is not None  # stopped, not left running


def test_an_early_worker_for_another_request_is_not_read(fixture_project):
    from accelstack.engine.preview import start_preview

    path = stack_file(fixture_project, "alpha")
    other = start_preview(path, ["training.nodes.count=4"])
    assert other is not None
    result = preview_stack(path, ["training.nodes.count=8"], worker=other)
    assert result.stack_outputs["nodeCount"] == 8  # from a worker of its own request
    assert other._process.poll() is not None


def test_no_early_worker_where_the_stack_file_cannot_make_a_request(tmp_path):
    from accelstack.engine.preview import start_preview

    assert start_preview(tmp_path / "stacks" / "Pulumi.nosuch.yaml") is None


def test_preview_module_starts_a_worker_without_pulumi_or_numpy():
    """The CLI's preview starts its workers with accelstack.engine.preview alone imported: were pulumi or numpy
    imported with it, the worker would start that much later (`make bench`)."""
    import subprocess
    import sys

    probe = (
        "import sys, accelstack.engine.preview, accelstack.commands.preview; "
        "print(sorted(m for m in ('pulumi', 'numpy', 'accelstack.planner.defaults') if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_validating_a_stack_imports_none_of_its_providers_service_modules():
    """`validate` and the CLI side of `preview` check every stack with the spec rules, which import the clouds'
    components (their boot data renderers, address plans): a component class body that touched a provider's
    service module (`gcp.compute`, `aws.ec2`: each hundreds of classes) imported it there, where nothing uses it
    (a Google Cloud landing preview spent most of its time importing pulumi_gcp.compute). Each shipped stack,
    landing stacks included, is validated in a fresh interpreter and the SDKs' service packages it loaded listed."""
    import subprocess
    import sys

    from accelstack.examples import example_files

    probe = """
import sys
from pathlib import Path
from accelstack.commands.common import is_landing_file, load_specs
from accelstack.commands.preview import landing_or_none
path = Path(sys.argv[1])
if is_landing_file(path):
    assert landing_or_none(path, path.parents[1]) is not None
else:
    assert all(spec is not None for _, spec in load_specs([path], []))
def service_package(name):
    top, _, sub = name.partition(".")
    if not (top.startswith("pulumi_") or top == "ediri_vultr") or not sub or "." in sub or top == "pulumi_policy":
        return False
    module = sys.modules[name]
    if type(module).__name__ == "_LazyModule":
        return False  # the SDKs register their services lazily (importlib.util.LazyLoader): not imported yet
    return module.__spec__.submodule_search_locations is not None  # a package: a cloud service's
print(sorted(name for name in list(sys.modules) if service_package(name)))
"""
    for path in example_files(landing=True):
        loaded = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True)
        assert loaded.returncode == 0, loaded.stderr[-2000:]
        assert loaded.stdout.strip() == "[]", (path.name, loaded.stdout)
