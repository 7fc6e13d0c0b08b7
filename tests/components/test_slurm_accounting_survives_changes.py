"""A day-2 `pulumi up` never loses slurmdbd's database (training.scheduler.accounting: database), on every cloud.

The stacks are captured as deployed with accounting on, then again after the day-2 edits an operator makes (the
rows of tests/stack_edits.py that touch the nodes, the partitions and the head); the database, its secret and
everything stateful keep their URNs, `protect` and replace-forcing inputs (the same check as tests/conformance/
test_day_2.py). The negative cases show the check sees a loss: switching accounting off would delete the database
(which is protected, so `pulumi up` refuses), and a new key would replace it.
"""

from __future__ import annotations

import dataclasses
from functools import cache

import pulumi
import pytest
from stack_edits import DAY_2_CHANGES, MAIN, ExistingStackCloud, _config, stateful_losses

from accelstack.engine.capture import Capture, capture
from accelstack.engine.replacement import plan_changes

ON = ("training.scheduler.accounting=database",)
DATABASE = {
    "aws-training": "aws:rds/instance:Instance",
    "azure-training": "azure-native:dbformysql:Server",
    "gcp-training": "gcp:sql/databaseInstance:DatabaseInstance",
}
# The edits Slurm sees (nodes, partitions, the head) and one it does not, per stack.
EDITS = ("nodes 4 -> 64", "partitions edited", "Slurm maxTime", "on-demand -> spot")
HEAD_EDIT = {
    "aws-training": "head node type",
    "azure-training": "head node size",
    "gcp-training": "head node type",
}


@cache
def deployed(stack: str) -> tuple[Capture, ExistingStackCloud]:
    config = _config(stack, ON)
    cloud = ExistingStackCloud.for_config(config)
    return capture(MAIN, config, stack=stack, mocks=cloud), cloud


def updated(stack: str, overrides: tuple[str, ...]) -> Capture:
    base, base_cloud = deployed(stack)
    config = _config(stack, (*ON, *overrides))
    return capture(
        MAIN, config, stack=stack, mocks=ExistingStackCloud.for_config(config, base_cloud.previous_for_edit(base))
    )


def losses(stack: str, overrides: tuple[str, ...]) -> list[str]:
    after = updated(stack, overrides)
    return stateful_losses(plan_changes(deployed(stack)[0].resources, after.resources), after.resources)


CASES = [
    pytest.param(stack, DAY_2_CHANGES[stack][label], id=f"{stack}: {label}")
    for stack in DATABASE
    for label in (*EDITS, HEAD_EDIT[stack])
    if label in DAY_2_CHANGES[stack]
]


@pytest.mark.parametrize(("stack", "overrides"), CASES)
def test_a_day_2_edit_keeps_the_accounting_database(stack: str, overrides: tuple[str, ...]) -> None:
    assert losses(stack, overrides) == []
    [before] = deployed(stack)[0].by_type(DATABASE[stack])
    [after] = updated(stack, overrides).by_type(DATABASE[stack])
    assert after.urn == before.urn and after.protect


@pytest.mark.parametrize("stack", list(DATABASE))
def test_switching_accounting_off_would_delete_the_database_and_is_seen(stack: str) -> None:
    found = losses(stack, ("training.scheduler.accounting=none",))
    assert any(DATABASE[stack] in line and "no longer registered" in line for line in found), found


@pytest.mark.parametrize(
    ("stack", "prop"),
    [("aws-training", "kmsKeyId"), ("gcp-training", "encryptionKeyName"), ("azure-training", "administratorLogin")],
)
def test_a_replace_forcing_input_of_the_database_is_seen(stack: str, prop: str) -> None:
    """A new key (or admin login) would replace the database: the replace rows table it, so the check sees it."""
    before = deployed(stack)[0].resources
    after = [
        dataclasses.replace(r, inputs={**r.inputs, prop: "changed"}) if r.type == DATABASE[stack] else r for r in before
    ]
    found = stateful_losses(plan_changes(before, after), after)
    assert any(DATABASE[stack] in line and prop in line for line in found), found


class RotatedServerCa(pulumi.runtime.Mocks):
    """The GCP mocks after an operator adds an upcoming server CA to the Cloud SQL instance (the first step of a
    rotation: cloud.google.com/sql/docs/mysql/manage-ssl-instance), which `pulumi up` reads back."""

    def __init__(self, cloud: pulumi.runtime.Mocks):
        self.cloud = cloud

    def call(self, args: pulumi.runtime.MockCallArgs):
        return self.cloud.call(args)

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        resource_id, outputs = self.cloud.new_resource(args)
        if args.typ == DATABASE["gcp-training"]:
            upcoming = {"cert": "-----BEGIN CERTIFICATE-----\nVXBjb21pbmc=\n-----END CERTIFICATE-----\n"}
            outputs["serverCaCerts"] = [*outputs["serverCaCerts"], upcoming]
        return resource_id, outputs


def test_a_cloud_sql_ca_rotation_updates_the_heads_metadata_in_place() -> None:
    """The instance's CA certificates are a metadata key of the head, not its user-data: a new CA is an in-place
    setMetadata, no new head, and nothing else changes."""
    stack = "gcp-training"
    base, base_cloud = deployed(stack)
    config = _config(stack, ON)
    cloud = RotatedServerCa(ExistingStackCloud.for_config(config, base_cloud.previous_for_edit(base)))
    rotated = capture(MAIN, config, stack=stack, mocks=cloud)
    changes = [c for c in plan_changes(base.resources, rotated.resources) if c.action != "same"]
    assert [(c.type, c.action, c.changed, c.replacing) for c in changes] == [
        ("gcp:compute/instance:Instance", "update", ["metadata"], [])
    ]
    [head] = changes
    assert head.name.endswith("-head")
