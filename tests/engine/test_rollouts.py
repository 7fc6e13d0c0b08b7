"""The instances an edit reaches through their template (accelstack.engine.rollouts), and the updates that only carry
the config digest: on hand-made captures, so each rule is seen to fail as well as pass."""

from __future__ import annotations

import base64

from accelstack.engine.capture import Registration
from accelstack.engine.replacement import plan_changes
from accelstack.engine.rollouts import AWS_GROUP, AZURE_SCALE_SET, GCP_GROUPS, digest_only, plan_rollouts

TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
GCP_TEMPLATE = "gcp:compute/instanceTemplate:InstanceTemplate"


def reg(type_: str, name: str, inputs: dict, deps: dict | None = None) -> Registration:
    return Registration(
        urn=f"urn:pulumi:s::p::{type_}::{name}",
        type=type_,
        name=name,
        custom=True,
        parent="",
        provider="",
        dependencies=[],
        property_dependencies=deps or {},
        protect=False,
        retain_on_delete=False,
        delete_before_replace=False,
        ignore_changes=[],
        additional_secret_outputs=[],
        inputs=inputs,
    )


def aws(user_data: str, group: dict) -> list[Registration]:
    template = reg(TEMPLATE, "replica", {"userData": user_data})
    return [template, reg(AWS_GROUP, "replicas", group, {"launchTemplate": [template.urn]})]


REFRESH = {"instanceRefresh": {"strategy": "Rolling"}, "minSize": 1.0, "maxSize": 8.0}


def test_an_instance_refresh_replaces_the_running_replicas_when_the_template_changes() -> None:
    before, after = aws("a", REFRESH), aws("b", REFRESH)
    (rollout,) = plan_rollouts(before, after, plan_changes(before, after))
    assert rollout.replaced and rollout.mechanism == "instance refresh" and rollout.instances == "1 to 8"
    assert rollout.text() == "replicas: 1 to 8 instances replaced by instance refresh (replica changed)"
    assert plan_rollouts(before, before, plan_changes(before, before)) == []  # no template change, no rollout


def test_without_a_refresh_the_running_instances_keep_the_old_template_counted_as_deployed() -> None:
    before = aws("a", {"desiredCapacity": 4.0, "minSize": 4.0, "maxSize": 4.0})
    after = aws("b", {"desiredCapacity": 8.0, "minSize": 8.0, "maxSize": 8.0})
    (rollout,) = plan_rollouts(before, after, plan_changes(before, after))
    assert not rollout.replaced and rollout.instances == "4"
    assert "keep running on the old template" in rollout.text()


def test_a_replaced_instance_template_rolls_a_proactive_mig_even_when_the_mig_looks_unchanged() -> None:
    def gcp(metadata: str, policy: str) -> list[Registration]:
        template = reg(GCP_TEMPLATE, "node", {"metadata": metadata, "name": "node"})
        group = {"targetSize": 4.0, "updatePolicy": {"type": policy, "replacementMethod": "SUBSTITUTE"}}
        return [template, reg(GCP_GROUPS[0], "nodes", group, {"versions": [template.urn]})]

    before, after = gcp("a", "PROACTIVE"), gcp("b", "PROACTIVE")
    changes = plan_changes(before, after)
    assert [c.action for c in changes if c.name == "nodes"] == ["same"]
    (rollout,) = plan_rollouts(before, after, changes)
    assert rollout.replaced and rollout.mechanism.startswith("MIG update") and rollout.instances == "4"
    before, after = gcp("a", "OPPORTUNISTIC"), gcp("b", "OPPORTUNISTIC")
    (rollout,) = plan_rollouts(before, after, plan_changes(before, after))
    assert not rollout.replaced


def test_a_scale_set_model_change_rolls_by_its_upgrade_policy() -> None:
    def vmss(image: str, mode: str) -> list[Registration]:
        inputs = {"sku": {"capacity": 3.0}, "upgradePolicy": {"mode": mode}, "virtualMachineProfile": {"x": image}}
        return [reg(AZURE_SCALE_SET, "replicas", inputs)]

    for mode, replaced in (("Manual", False), ("Rolling", True), ("Automatic", True)):
        before, after = vmss("a", mode), vmss("b", mode)
        (rollout,) = plan_rollouts(before, after, plan_changes(before, after))
        assert (rollout.replaced, rollout.instances) == (replaced, "3"), mode
    capacity_only = [reg(AZURE_SCALE_SET, "replicas", {"sku": {"capacity": 4.0}, "virtualMachineProfile": {}})]
    before = [reg(AZURE_SCALE_SET, "replicas", {"sku": {"capacity": 3.0}, "virtualMachineProfile": {}})]
    assert plan_rollouts(before, capacity_only, plan_changes(before, capacity_only)) == []


def test_digest_only_updates_are_told_from_real_ones() -> None:
    old, new = "cfff22e70242", "d3e1ee26a3aa"

    def script(digest: str, nodes: int) -> str:
        return base64.b64encode(f"DIGEST={digest}\nNODES={nodes}\n".encode()).decode()

    def change(before: dict, after: dict):
        (result,) = plan_changes([reg(TEMPLATE, "t", before)], [reg(TEMPLATE, "t", after)])
        return result

    tags = change({"tags": {"accelstack:config-digest": old}}, {"tags": {"accelstack:config-digest": new}})
    assert digest_only(tags, old, new)
    assert digest_only(change({"userData": script(old, 4)}, {"userData": script(new, 4)}), old, new)
    assert not digest_only(change({"userData": script(old, 4)}, {"userData": script(new, 8)}), old, new)
    assert not digest_only(change({"tags": {"k": old}, "size": 1}, {"tags": {"k": new}, "size": 2}), old, new)
    # A secret is redacted on both sides: what changed in it cannot be told, so it is never folded.
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "x"}
    redacted = change({"value": secret}, {"value": {**secret, "value": "y"}})
    redacted.before["value"] = redacted.after["value"] = "[redacted]"
    assert not digest_only(redacted, old, new)


def test_a_replaced_group_takes_its_running_instances_with_it() -> None:
    before = [reg(AZURE_SCALE_SET, "replicas", {"sku": {"capacity": 2.0}, "virtualMachineProfile": {"x": "a"}})]
    after = [reg(AZURE_SCALE_SET, "replicas", {"sku": {"capacity": 2.0}, "virtualMachineProfile": {"x": "b"}})]
    after[0].replace_on_changes = ["virtualMachineProfile"]
    (rollout,) = plan_rollouts(before, after, plan_changes(before, after))
    assert (
        rollout.text()
        == "replicas: 2 instances replaced by a new scale set (create-first) (virtualMachineProfile changed)"
    )
