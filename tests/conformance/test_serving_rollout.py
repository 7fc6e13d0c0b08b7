"""A change of the served model reaches the running replicas and the warm pool, on every cloud and topology.

A new model (here the precision: new weights layout, new server arguments) changes what a replica boots. Each
cloud's group must roll it out to the replicas already serving and to the pre-initialised pool beside them, or
scale-outs keep starting the old model. How each cloud spells it:

- AWS: the launch template's new version starts the group's rolling instance refresh, which replaces the warm
  pool's instances as well (InstanceRefreshProgressDetails: live pool and warm pool progress, Auto Scaling API).
- Azure: a Flexible scale set cannot update its VMs (no Update Instances) and standby-pool VMs keep their profile,
  so the scale set is replaced create-first, and its standby pool with it.
- GCP: the new instance template goes to a group whose update policy is PROACTIVE and REPLACE, surging new VMs
  before removing old ones (none unavailable).
- Vultr: no group and no pool: user data is ForceNew, so each replica is replaced create-first (the new instance
  before the old is deleted), with its weights key clock, whose new URL the new replica boots with.

Nothing stateful is replaced or deleted on the way (the day-2 rule of tests/conformance/test_day_2.py).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from cloud_stacks import SERVING_TOPOLOGIES, cloud_stacks, is_serving, stack_id, topology_applies
from stack_edits import stateful_losses

from accelstack.engine.capture import Capture, capture, config_for_pulumi
from accelstack.engine.replacement import CREATE_FIRST, REPLACE, UPDATE, Change, ExistingStackCloud, plan_changes
from accelstack.spec.loader import apply_overrides, read_stack_file

MAIN = Path(__file__).resolve().parents[2] / "__main__.py"
MODEL_CHANGE = ("serving.model.precision=fp8",)
TOPOLOGIES = (("as-written", ()), *SERVING_TOPOLOGIES)
CASES = [
    pytest.param(cloud, path, overrides, id=f"{stack_id(path)}[{name}]")
    for cloud, path in cloud_stacks()
    if is_serving(path)
    for name, overrides in TOPOLOGIES
    if topology_applies(cloud, name)
]


@cache
def rollout(path: Path, overrides: tuple[str, ...]) -> tuple[Capture, Capture, list[Change]]:
    """(as deployed, after the model change, the plan between them) for the stack in one topology."""
    stack = path.stem.removeprefix("Pulumi.")

    def config(extra: tuple[str, ...]) -> dict[str, str]:
        return config_for_pulumi(apply_overrides(read_stack_file(path), [*overrides, *extra]))

    base_config = config(())
    cloud = ExistingStackCloud.for_config(base_config)
    before = capture(MAIN, base_config, stack=stack, mocks=cloud)
    edited_config = config(MODEL_CHANGE)
    after = capture(
        MAIN,
        edited_config,
        stack=stack,
        mocks=ExistingStackCloud.for_config(edited_config, cloud.previous_for_edit(before)),
    )
    return before, after, plan_changes(before.resources, after.resources)


def _of(changes: list[Change], type_token: str) -> list[Change]:
    return [c for c in changes if c.type == type_token]


def _one(cap: Capture, type_token: str) -> dict[str, Any]:
    return cap.one(type_token).inputs


def aws_rolls(before: Capture, after: Capture, changes: list[Change]) -> list[str]:
    found = []
    [template] = _of(changes, "aws:ec2/launchTemplate:LaunchTemplate")
    if template.action not in (UPDATE, REPLACE) or "userData" not in template.changed:
        found.append(f"launch template: {template.action} {template.changed} (a new version carries the model)")
    group = _one(after, "aws:autoscaling/group:Group")
    refresh = group.get("instanceRefresh") or {}
    if refresh.get("strategy") != "Rolling":
        found.append(f"group: no rolling instance refresh ({refresh})")
    if (refresh.get("preferences") or {}).get("minHealthyPercentage") != 100:
        found.append("group: the refresh may take serving capacity down (minHealthyPercentage != 100)")
    return found


def azure_rolls(before: Capture, after: Capture, changes: list[Change]) -> list[str]:
    found = []
    [group] = _of(changes, "azure-native:compute:VirtualMachineScaleSet")
    if (group.action, group.order) != (REPLACE, CREATE_FIRST):
        found.append(f"scale set: {group.action} {group.order} (Flexible sets never update their VMs' profile)")
    pools = _of(changes, "azure-native:standbypool:StandbyVirtualMachinePool")
    pooled = after.by_type("azure-native:standbypool:StandbyVirtualMachinePool")
    if pooled and [(p.action, p.order) for p in pools] != [(REPLACE, CREATE_FIRST)]:
        found.append(f"standby pool: {[(p.action, p.order) for p in pools]} (its VMs keep the old profile)")
    return found


def gcp_rolls(before: Capture, after: Capture, changes: list[Change]) -> list[str]:
    found = []
    [template] = _of(changes, "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate")
    if (template.action, template.order) != (REPLACE, CREATE_FIRST):
        found.append(f"instance template: {template.action} {template.order}")
    policy = _one(after, "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager").get("updatePolicy") or {}
    wanted = {"type": "PROACTIVE", "minimalAction": "REPLACE", "maxUnavailableFixed": 0}
    if {key: policy.get(key) for key in wanted} != wanted or not policy.get("maxSurgeFixed"):
        found.append(f"group update policy {policy}: the new template would wait for VMs to be recreated")
    return found


def vultr_rolls(before: Capture, after: Capture, changes: list[Change]) -> list[str]:
    found = []
    replicas = _of(changes, "vultr:index/instance:Instance")
    clocks = {c.name: c for c in _of(changes, "time:index/static:Static")}
    for replica in replicas:
        if (replica.action, replica.order) != (REPLACE, CREATE_FIRST) or "userData" not in replica.replacing:
            found.append(
                f"{replica.name}: {replica.action} {replica.order} (its new boot must replace it create-first)"
            )
        clock = clocks.get(f"{replica.name}-key-clock")
        if clock is None or clock.action != REPLACE:
            found.append(f"{replica.name}: its weights key clock is kept (the new replica would boot with an old URL)")
    if len(replicas) != len(after.by_type("vultr:index/instance:Instance")):
        found.append(f"{len(replicas)} of the fleet's replicas change")
    return found


ROLLS = {"aws": aws_rolls, "azure": azure_rolls, "gcp": gcp_rolls, "vultr": vultr_rolls}


@pytest.mark.parametrize(("cloud", "path", "overrides"), CASES)
def test_a_model_change_rolls_the_replicas_and_the_pool(cloud: str, path: Path, overrides: tuple[str, ...]) -> None:
    before, after, changes = rollout(path, tuple(overrides))
    assert ROLLS[cloud](before, after, changes) == []
    assert stateful_losses(changes, after.resources) == []


def test_the_clouds_checks_catch_an_in_place_update() -> None:
    """Guards the guard: an update in place (the old Azure scale set) and a group without an update policy fail."""
    update = Change("urn:vmss", "azure-native:compute:VirtualMachineScaleSet", "replicas", UPDATE, changed=["x"])
    assert azure_rolls(Capture("p", "s", False, [], {}), Capture("p", "s", False, [], {}), [update])
    template = Change(
        "urn:t", "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate", "t", REPLACE, order=CREATE_FIRST
    )
    from accelstack.engine.capture import Registration

    group = Registration(
        "urn:g", "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager", "g", True, "", "", [], {},
        False, False, False, [], [], {"versions": []},
    )  # fmt: skip
    assert gcp_rolls(Capture("p", "s", False, [], {}), Capture("p", "s", False, [group], {}), [template])
