"""A day-2 `pulumi up` replaces nothing stateful, on every cloud's example stacks.

Each stack is captured as deployed, then again after each change an operator makes on day 2 (its row
in tests/stack_edits.py DAY_2_CHANGES; a cloud's example stack without one fails). For every stateful
resource (the packs' stateful concepts plus versioning, encryption, file-system links, secrets,
queues and generated key material) `accelstack diff`'s plan must neither delete nor replace it, it
keeps `protect`, and its type's replace-forcing inputs are tabled (else the check would be blind).
tests/components/test_stateful_survives_changes.py shows the check failing on changes that do replace.
"""

from __future__ import annotations

import dataclasses

import pytest
import stack_edits
from cloud_stacks import cloud_stacks, stack_id
from stack_edits import DAY_2_CHANGES, HOLDS_NOTHING_STATEFUL, deployed, losses, stateful, stateful_losses, updated

from accelstack.engine.replacement import REPLACE, SAME, Change, plan_changes

STACK_NAMES = [stack_id(path) for _, path in cloud_stacks()]
CASES = [
    pytest.param(stack, overrides, id=f"{stack}: {label}")
    for stack in STACK_NAMES
    for label, overrides in DAY_2_CHANGES.get(stack, {}).items()
]


@pytest.mark.parametrize("stack", STACK_NAMES)
def test_every_example_stack_has_day_2_changes(stack: str) -> None:
    assert DAY_2_CHANGES.get(stack), f"{stack}: add its day-2 changes to tests/stack_edits.py DAY_2_CHANGES"


def test_every_change_table_belongs_to_an_example_stack() -> None:
    assert sorted(set(DAY_2_CHANGES) - set(STACK_NAMES)) == []


@pytest.mark.parametrize("stack", STACK_NAMES)
def test_the_stack_has_stateful_resources_to_keep(stack: str) -> None:
    """Guards the guard: with no stateful resource found (a concept table without this cloud's
    types), every day-2 case would pass. A stack that creates nothing stateful says why, and stays so."""
    if stack in HOLDS_NOTHING_STATEFUL:
        assert stateful(deployed(stack)[0]) == {}, HOLDS_NOTHING_STATEFUL[stack]
        return
    assert stateful(deployed(stack)[0])


@pytest.mark.parametrize(("stack", "overrides"), CASES)
def test_a_day_2_change_keeps_every_stateful_resource(stack: str, overrides: tuple[str, ...]) -> None:
    assert losses(stack, overrides) == []


@pytest.mark.parametrize("stack", STACK_NAMES)
def test_each_day_2_change_reaches_the_program(stack: str) -> None:
    """A typo'd override would make its case vacuous."""
    base = {r.urn: r.inputs for r in deployed(stack)[0].resources}
    for label, overrides in DAY_2_CHANGES.get(stack, {}).items():
        after = {r.urn: r.inputs for r in updated(stack, overrides).resources}
        assert after != base, f"{stack}: {label} changed nothing"


def test_the_loss_check_sees_each_way_to_lose_a_stateful_resource() -> None:
    """Guards the guard, cloud-neutral: deleted, replaced (by an input or its provider), unprotected, untabled."""
    key = "aws:kms/key:Key"
    changes = [
        Change("urn:a", key, "gone", "delete", protect=True),
        Change("urn:b", key, "moved", "replace", replacing=["provider"], protect=True),
        Change("urn:c", "azure-native:storage:StorageAccount", "unknown", "update", known=False),
        Change("urn:d", key, "bare", "update", changed=["description"], protect=True),
        Change("urn:e", "aws:iam/role:Role", "not-stateful", "replace", replacing=["name"]),
    ]
    edited = [dataclasses.replace(deployed("aws-serving")[0].resources[0], urn="urn:d", protect=False)]
    with pytest.MonkeyPatch.context() as patch:
        # A cloud whose storage account is a stateful concept (its concept rows come with its components).
        patch.setattr(stack_edits, "is_stateful", lambda t: t in (key, "azure-native:storage:StorageAccount"))
        assert stateful_losses(changes, edited) == [
            f"{key} gone: no longer registered (pulumi up deletes it)",
            f"{key} moved: its provider is replaced",
            "azure-native:storage:StorageAccount unknown: its replace-forcing inputs are not tabled",
            f"{key} bare: protect dropped",
        ]


@pytest.mark.parametrize("stack", STACK_NAMES)
def test_an_up_of_the_unchanged_stack_changes_nothing_and_waits_for_nothing(stack: str) -> None:
    """Grants' propagation waits (components/propagation.py) included: a wait is created once, with its grants, and
    an `up` that changes no grant neither re-runs it nor touches what waited for it."""
    changes = plan_changes(deployed(stack)[0].resources, updated(stack, ()).resources)
    assert [(c.name, c.action, c.changed) for c in changes if c.action != SAME] == []


def test_a_new_grant_waits_again_and_leaves_what_waited_for_it_alone() -> None:
    """The HPC Cache provider's principal corrected on day 2: its role assignments are new grants, so their wait
    runs again (a new Sleep: its triggers are their ids), while the file system that waited for them is neither
    replaced nor updated (it only depends on the wait)."""
    changes = plan_changes(
        deployed("azure-training")[0].resources,
        updated("azure-training", ("account.hpcCachePrincipalId=6c4d3e2f-1a0b-4c9d-8e7f-6a5b4c3d2e1f",)).resources,
    )
    replaced = {c.name: c.replacing for c in changes if c.action == REPLACE}
    assert replaced == {
        "azure-training-storage-hpc-cache-account-contributor": ["principalId"],
        "azure-training-storage-hpc-cache-blob-contributor": ["principalId"],
        "azure-training-storage-hpc-cache-propagation": ["triggers"],
    }
    assert [c.action for c in changes if c.type == "azure-native:storagecache:AmlFilesystem"] == [SAME]
