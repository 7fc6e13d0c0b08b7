"""The dataset reaches the file system the same way on every cloud: each tier says when it imports
(`ParallelFsTier.dataset_import`), and what the stack deploys honours it.

- automatic (FSx for Lustre): the link on importPath imports new and changed objects by itself; the import trigger
  asks nothing more, so changing it changes no file system or link.
- on request (Managed Lustre on Google Cloud, Azure Managed Lustre): the stack imports when the file system is
  created and again whenever `training.storage.lustre.importTrigger` changes, as an import operation of its own
  whose change replaces that operation only, never the file system or any other stateful resource.
- `validate` warns where a bucket the same `up` creates would be imported empty (on-request tiers) and where the
  trigger asks nothing (a head node copies at its boots).
"""

from __future__ import annotations

from typing import Any

import pytest
from cloud_stacks import cloud_stacks, stack_id
from stack_edits import deployed, losses, stateful_losses, updated

from accelstack.clouds import registry
from accelstack.clouds.base import DatasetImport
from accelstack.engine.capture import Capture, Registration
from accelstack.engine.replacement import plan_changes, replacing_changes
from accelstack.policies import concepts
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file, spec_warnings
from accelstack.spec.models import TrainingStack
from accelstack.spec.problems import SpecError

TRIGGER = "training.storage.lustre.importTrigger"
# The stack's own import runs: Azure's import jobs, and on Google Cloud the importData call (the only dynamic
# resource accelstack registers).
IMPORT_OPERATION = ("file-system-import", "dynamic-operation")
STATEFUL_FILE_SYSTEM = ("parallel-file-system", "file-system-link")
# Links that carry their own import trigger: OCI's (start_import_from_object_trigger is "(Updatable)" in pulumi-oci's
# FileStorageObjectStorageLink: a new value starts an import, in place). There the link is the import operation.
TRIGGER_INPUTS = {
    "oci:Lustre/fileStorageObjectStorageLink:FileStorageObjectStorageLink": "startImportFromObjectTrigger"
}


def training_stacks_with_a_file_system() -> list[tuple[str, str]]:
    found = []
    for cloud, path in cloud_stacks():
        spec = parse_spec(read_stack_file(path), stack_id(path))
        if isinstance(spec, TrainingStack) and spec.training.storage.lustre is not None:
            found.append((cloud, stack_id(path)))
    return found


STACKS = training_stacks_with_a_file_system()
IDS = [stack for _, stack in STACKS]


def spec_of(stack: str, *overrides: str) -> TrainingStack:
    raw = apply_overrides(read_stack_file(next(p for _, p in cloud_stacks() if stack_id(p) == stack)), list(overrides))
    spec = parse_spec(raw, stack)
    assert isinstance(spec, TrainingStack)
    return spec


def import_behaviour(stack: str) -> DatasetImport:
    spec = spec_of(stack)
    assert spec.training.storage.lustre is not None
    tier = registry.get(spec.cloud).parallel_fs_tier(spec.training.storage.lustre.tier)
    assert tier is not None
    return tier.dataset_import


def import_operations(cap: Capture) -> list[Registration]:
    return [r for r in cap.resources if r.custom and concepts.is_a(r.type, *IMPORT_OPERATION)]


def file_system_state(cap: Capture) -> dict[str, dict[str, Any]]:
    """The file systems' and links' inputs, but a link's own import trigger."""
    return {
        r.urn: {k: v for k, v in r.inputs.items() if k != TRIGGER_INPUTS.get(r.type)}
        for r in cap.resources
        if r.custom and concepts.is_a(r.type, *STATEFUL_FILE_SYSTEM)
    }


def triggered_links(cap: Capture) -> list[Registration]:
    return [r for r in cap.resources if r.custom and r.type in TRIGGER_INPUTS]


def auto_import_events(node: Any) -> set[str]:
    """The events of every automatic import policy in a resource's inputs (a link's `autoImportPolicy.events`, or a
    file system's legacy `autoImportPolicy` string such as NEW_CHANGED_DELETED)."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "autoImportPolicy":
                if isinstance(value, str):
                    found |= set(value.split("_")) - {"NONE"}
                elif isinstance(value, dict):
                    found |= set(value.get("events") or [])
            else:
                found |= auto_import_events(value)
    elif isinstance(node, list):
        for item in node:
            found |= auto_import_events(item)
    return found


def test_the_example_stacks_cover_every_import_behaviour_with_a_link() -> None:
    assert {import_behaviour(stack) for stack in IDS} >= {DatasetImport.AUTOMATIC, DatasetImport.ON_REQUEST}


@pytest.mark.parametrize("cloud", sorted(registry.deployable()))
def test_every_tier_says_when_it_imports(cloud: str) -> None:
    for tier in registry.get(cloud).catalog.parallel_fs.values():
        assert isinstance(tier.dataset_import, DatasetImport), f"{cloud} {tier.name}"
        assert (tier.dataset_import is DatasetImport.HEAD_COPIES) == (not tier.imports_from_object_store)


@pytest.mark.parametrize("stack", IDS)
def test_bumping_the_trigger_imports_again_and_replaces_nothing_stateful(stack: str) -> None:
    first, second = updated(stack, (f"{TRIGGER}=corpus-v1",)), updated(stack, (f"{TRIGGER}=corpus-v2",))
    assert losses(stack, (f"{TRIGGER}=corpus-v1",)) == []
    assert stateful_losses(plan_changes(first.resources, second.resources), second.resources) == []
    # The file system and its links are the same resources with the same inputs, whatever the trigger.
    assert file_system_state(first) == file_system_state(second) != {}
    behaviour = import_behaviour(stack)
    if behaviour is DatasetImport.ON_REQUEST and triggered_links(second):
        # The link is the operation: its trigger changes, updated in place (nothing replaced, the import starts).
        [before], [after] = triggered_links(first), triggered_links(second)
        key = TRIGGER_INPUTS[after.type]
        assert before.urn == after.urn and before.inputs[key] != after.inputs[key]
        assert replacing_changes(after.type, before.inputs, after.inputs, after.ignore_changes) == []
        assert import_operations(second) == []
    elif behaviour is DatasetImport.ON_REQUEST:
        [before], [after] = import_operations(first), import_operations(second)
        assert before.urn == after.urn
        # A changed trigger is a replace-forcing change of the operation: Pulumi runs the import again.
        assert replacing_changes(after.type, before.inputs, after.inputs, after.ignore_changes) != []
    else:
        assert behaviour is DatasetImport.AUTOMATIC
        assert import_operations(second) == []
        # Automatic: the link imports objects added and changed after creation by itself.
        assert {"NEW", "CHANGED"} <= auto_import_events([r.inputs for r in second.resources if r.custom])


@pytest.mark.parametrize("stack", IDS)
def test_without_a_trigger_the_stack_asks_once_at_creation_where_the_tier_imports_on_request(stack: str) -> None:
    operations = import_operations(deployed(stack)[0])
    if import_behaviour(stack) is DatasetImport.ON_REQUEST:
        # At creation the file system imports the prefix itself (Azure's initial import prefixes) or the stack
        # asks once (Google's importData); an import job of its own only comes with a trigger.
        assert len(operations) <= 1
    else:
        assert operations == []


@pytest.mark.parametrize("stack", IDS)
def test_validate_warns_where_a_bucket_created_with_the_stack_would_be_imported_empty(stack: str) -> None:
    def trigger_warnings(*overrides: str) -> list[str]:
        return [p.message for p in spec_warnings(spec_of(stack, *overrides)) if p.path == TRIGGER]

    created = trigger_warnings("training.storage.datasets.create=true")
    if import_behaviour(stack) is DatasetImport.ON_REQUEST:
        [warning] = created
        assert "empty" in warning and "importTrigger" in warning
    else:
        assert created == []
    try:  # an existing bucket holds its data already (a cloud that cannot use one refuses create: false)
        existing = trigger_warnings("training.storage.datasets.create=false")
    except SpecError:
        existing = []
    assert existing == []
    assert trigger_warnings("training.storage.datasets.create=true", f"{TRIGGER}=corpus-v2") == []


def test_validate_says_the_trigger_asks_nothing_where_the_head_copies() -> None:
    stack = next(s for s in IDS if registry.get(spec_of(s).cloud).name == "gcp")
    filestore = (
        "training.storage.lustre.tier=filestore-zonal",
        "training.storage.lustre.capacityGiB=4608",
        "training.storage.lustre.throughputPerTiB=null",
    )
    spec = spec_of(stack, *filestore, f"{TRIGGER}=corpus-v2")
    tier = registry.get(spec.cloud).parallel_fs_tier(spec.training.storage.lustre.tier)  # type: ignore[union-attr]
    assert tier is not None and tier.dataset_import is DatasetImport.HEAD_COPIES
    [warning] = [p.message for p in spec_warnings(spec) if p.path == TRIGGER]
    assert "changes nothing" in warning
