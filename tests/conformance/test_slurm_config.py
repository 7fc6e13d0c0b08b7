"""A node-count or partition change reaches slurmctld without a new controller, on every cloud.

Slurm's configuration files travel in a versioned object out of the head's boot data (the neutral Slurm recipe;
components/slurm/config_delivery.py), which the head polls and applies with `scontrol reconfigure`. For every
shipped Slurm stack and each such edit (tests/stack_edits.py SLURM_CONFIG_CHANGES), as `accelstack diff` plans
it: the resource holding the bundle (found by its value: the generator's bundle of the edited stack, wherever the
cloud keeps it) is updated in place, and nothing of the Slurm cluster is replaced or deleted, the head above all.
"""

from __future__ import annotations

from typing import Any

import pytest
from cloud_stacks import cloud_stacks, stack_id
from stack_edits import SLURM_CONFIG_CHANGES, deployed, stack_file, updated

from accelstack.components import slurm
from accelstack.components.base import TrainingClusterArgs
from accelstack.components.slurm.config_delivery import config_bundle
from accelstack.engine.capture import Capture
from accelstack.engine.cloud_tables import replace_rules
from accelstack.engine.replacement import DELETE, REPLACE, UPDATE, plan_changes
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file

SLURM_STACKS = [
    stack_id(path)
    for _, path in cloud_stacks()
    if (read_stack_file(path).get("training") or {}).get("scheduler", {}).get("kind") == "slurm"
]
CASES = [
    pytest.param(stack, overrides, id=f"{stack}: {label}")
    for stack in SLURM_STACKS
    for label, overrides in SLURM_CONFIG_CHANGES.get(stack, {}).items()
]


def bundle_of(stack: str, overrides: tuple[str, ...]) -> str:
    """The configuration object's value for the stack as edited: the spec as the training recipe resolves it."""
    spec = parse_spec(apply_overrides(read_stack_file(stack_file(stack)), list(overrides)), stack)
    resolved = TrainingClusterArgs.of(spec).spec
    return config_bundle(slurm.config_files(resolved, slurm.nodes_for(resolved)))


def holds(value: Any, text: str) -> bool:
    if isinstance(value, dict):
        return any(holds(v, text) for v in value.values())
    if isinstance(value, list):
        return any(holds(v, text) for v in value)
    return value == text


def holders(cap: Capture, bundle: str) -> list[str]:
    return [r.urn for r in cap.resources if r.custom and holds(r.inputs, bundle)]


def slurm_cluster(cap: Capture) -> set[str]:
    """Every resource under the stack's Slurm cluster component (`accelstack:<cloud>:SlurmCluster`)."""
    [root] = [r.urn for r in cap.resources if r.type.endswith(":SlurmCluster")]
    inside, grew = {root}, True
    while grew:
        found = {r.urn for r in cap.resources if r.parent in inside}
        grew = not found <= inside
        inside |= found
    return inside - {root}


def test_every_slurm_stack_has_configuration_edits() -> None:
    assert SLURM_STACKS
    assert sorted(SLURM_CONFIG_CHANGES) == sorted(SLURM_STACKS)
    for stack in SLURM_STACKS:
        assert set(SLURM_CONFIG_CHANGES[stack]) == {"node count", "partitions"}, stack
    assert {stack.split("-")[0] for stack in SLURM_STACKS} == {"aws", "azure", "gcp", "oci"}


@pytest.mark.parametrize(("stack", "overrides"), CASES)
def test_the_edit_updates_the_configuration_object_and_replaces_nothing_of_the_cluster(
    stack: str, overrides: tuple[str, ...]
) -> None:
    before, after = deployed(stack)[0], updated(stack, overrides)
    old, new = bundle_of(stack, ()), bundle_of(stack, overrides)
    assert old != new, "the edit must change Slurm's configuration files"
    [holder] = holders(before, old)
    assert holders(after, new) == [holder]
    changes = {c.urn: c for c in plan_changes(before.resources, after.resources)}
    assert changes[holder].action == UPDATE, changes[holder].replacing
    cluster = slurm_cluster(after)
    assert holder in cluster
    lost = [
        f"{c.action} {c.type} {c.name}: {c.replacing}"
        for c in changes.values()
        if c.urn in cluster and c.action in (REPLACE, DELETE)
    ]
    assert lost == []
    # Not vacuous: the head (and what shares its name: its role, address, NIC) is in the cluster and kept.
    assert any(changes[urn].name == f"{stack}-head" for urn in cluster)


@pytest.mark.parametrize("stack", SLURM_STACKS)
def test_what_the_cluster_replaces_on_is_tabled_for_the_engine(stack: str) -> None:
    """`accelstack diff` reads replace-forcing inputs from the clouds' tables, not from the program's
    replace_on_changes: each path the Slurm cluster's resources ask to be replaced on (the head's boot data) must be
    tabled, or the diff would show an update where `pulumi up` rebuilds the controller."""
    cap = deployed(stack)[0]
    cluster = slurm_cluster(cap)
    forcing = replace_rules().forcing
    for registration in cap.resources:
        if registration.urn not in cluster or registration.request is None:
            continue
        for path in registration.request.replaceOnChanges:
            dotted = path.replace('["', ".").replace('"]', "")
            tabled = forcing.get(registration.type, ())
            assert any(dotted == p or dotted.startswith(p + ".") for p in tabled), (registration.name, path)


# An edit of what the head's own setup carries (the checkpoint directory its login shells export).
HEAD_SETUP_EDITS = {
    "aws-training": ("training.storage.checkpoints.path=/fsx/ckpt",),
    "azure-training": ("training.storage.checkpoints.path=/lustre/ckpt",),
    "gcp-training": ("training.storage.checkpoints.path=/lustre/ckpt",),
}


@pytest.mark.parametrize("stack", sorted(HEAD_SETUP_EDITS))
def test_the_check_sees_a_head_that_is_rebuilt(stack: str) -> None:
    """Guards the check: an edit of the head's own setup does replace the head, and the plan says so."""
    overrides = HEAD_SETUP_EDITS[stack]
    before, after = deployed(stack)[0], updated(stack, overrides)
    cluster = slurm_cluster(after)
    replaced = {
        c.name for c in plan_changes(before.resources, after.resources) if c.urn in cluster and c.action == REPLACE
    }
    assert f"{stack}-head" in replaced
