"""What an edit does to the instances already running, which the per-resource diff does not say: a changed launch
template, instance template or scale set model is one line on its own resource, yet it may replace every running
node or replica (an EC2 instance refresh, a proactive MIG update, a rolling scale set upgrade) or leave them all on
the old template until something recreates them. And the config digest each stack tags its resources with moves
on every edit: updates that carry nothing else are folded (`digest_only`), so the lines that remain are the edit.

Pure: reads the edited capture's registrations and the planned changes.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from accelstack.engine.capture import Registration
from accelstack.engine.replacement import REPLACE, UPDATE, Change

AWS_GROUP = "aws:autoscaling/group:Group"
GCP_GROUPS = (
    "gcp:compute/instanceGroupManager:InstanceGroupManager",
    "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager",
)
AZURE_SCALE_SET = "azure-native:compute:VirtualMachineScaleSet"
# The input through which each group names its template (Pulumi records the template's URN under it).
TEMPLATE_INPUT = {AWS_GROUP: "launchTemplate", **dict.fromkeys(GCP_GROUPS, "versions")}


@dataclass(frozen=True)
class Rollout:
    """A group whose running instances an edit reaches through their template."""

    group: str
    type: str
    instances: str  # "4", "1 to 8": how many run (the group's own bounds)
    template: str  # the changed template (a scale set: its own model)
    replaced: bool  # True: replaced now by `mechanism`; False: they keep the old template until recreated
    mechanism: str

    def text(self) -> str:
        count = (
            "every running instance"
            if not self.instances
            else f"{self.instances} instance{'' if self.instances == '1' else 's'}"
        )
        if self.replaced:
            return f"{self.group}: {count} replaced by {self.mechanism} ({self.template} changed)"
        return (
            f"{self.group}: {count} keep running on the old template ({self.mechanism}); "
            f"only instances created later boot from the edited {self.template}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "type": self.type,
            "instances": self.instances,
            "template": self.template,
            "replaced": self.replaced,
            "mechanism": self.mechanism,
        }


def _number(value: Any) -> str:
    return str(int(value)) if isinstance(value, int | float) and not isinstance(value, bool) else ""


def _aws(group: Registration) -> tuple[str, bool, str]:
    inputs = group.inputs
    count = _number(inputs.get("desiredCapacity"))
    if not count and _number(inputs.get("minSize")):
        count = f"{_number(inputs.get('minSize'))} to {_number(inputs.get('maxSize'))}"
    if isinstance(inputs.get("instanceRefresh"), dict):
        # The provider starts an instance refresh when the group's launch template changes (aws_autoscaling_group
        # instance_refresh: "triggered by a change to launch_template"); min healthy % bounds how many at once.
        return count, True, "instance refresh"
    return count, False, "no instance refresh configured"


def _gcp(group: Registration) -> tuple[str, bool, str]:
    policy = group.inputs.get("updatePolicy") or {}
    count = _number(group.inputs.get("targetSize"))
    if isinstance(policy, dict) and policy.get("type") == "PROACTIVE":
        return count, True, f"MIG update (proactive, {str(policy.get('replacementMethod', 'SUBSTITUTE')).lower()})"
    # OPPORTUNISTIC: Compute Engine applies the new template only when an instance is recreated for another reason.
    return count, False, "opportunistic MIG update policy"


def _azure(scale_set: Registration) -> tuple[str, bool, str]:
    sku = scale_set.inputs.get("sku") or {}
    count = _number(sku.get("capacity")) if isinstance(sku, dict) else ""
    policy = scale_set.inputs.get("upgradePolicy") or {}
    mode = policy.get("mode", "Manual") if isinstance(policy, dict) else "Manual"
    if mode in ("Automatic", "Rolling"):
        return count, True, f"{mode.lower()} scale set upgrade"
    # Manual: the model changes, instances stay on the old one until `az vmss update-instances` or a reimage.
    return count, False, "Manual upgrade policy: `az vmss update-instances` applies it"


GROUP_RULES: dict[str, Callable[[Registration], tuple[str, bool, str]]] = {
    AWS_GROUP: _aws,
    **dict.fromkeys(GCP_GROUPS, _gcp),
    AZURE_SCALE_SET: _azure,
}
GROUP_KINDS = {
    AWS_GROUP: "Auto Scaling group",
    **dict.fromkeys(GCP_GROUPS, "instance group"),
    AZURE_SCALE_SET: "scale set",
}


def plan_rollouts(deployed: list[Registration], edited: list[Registration], changes: list[Change]) -> list[Rollout]:
    """One Rollout per group whose template the edit changes, or which the edit replaces. The count is the group's
    as deployed: those are the instances running when `pulumi up` starts."""
    by_urn = {change.urn: change for change in changes}
    running = {registration.urn: registration for registration in deployed}
    rollouts = []
    for edited_group in edited:
        group = running.get(edited_group.urn, edited_group)
        change = by_urn.get(group.urn)
        if change is None or group.type not in GROUP_RULES:
            continue
        if change.action == REPLACE:
            # A new group comes up beside (or after) the old one; every running instance goes with the old group.
            mechanism = f"a new {GROUP_KINDS[group.type]} ({change.order})"
            count = GROUP_RULES[group.type](group)[0]
            rollouts.append(Rollout(group.name, group.type, count, ", ".join(change.replacing), True, mechanism))
            continue
        if group.type == AZURE_SCALE_SET:
            if change.action != UPDATE or "virtualMachineProfile" not in change.changed:
                continue
            template = "scale set model"
        else:
            templates = [
                by_urn[urn]
                for urn in edited_group.property_dependencies.get(TEMPLATE_INPUT[group.type], [])
                if urn in by_urn and by_urn[urn].action in (UPDATE, REPLACE)
            ]
            if not templates:
                continue
            template = ", ".join(sorted(t.name for t in templates))
        rule = GROUP_RULES[group.type]
        # How many run now (as deployed); what `up` does to them, by the group's edited settings.
        count = rule(group)[0]
        _, replaced, mechanism = rule(edited_group)
        rollouts.append(Rollout(group.name, group.type, count, template, replaced, mechanism))
    return sorted(rollouts, key=lambda r: r.group)


def _with_digest(value: Any, old: str, new: str) -> Any:
    """`value` with the old config digest written as the new one, inside strings and base64 text (user data)."""
    if isinstance(value, str):
        if old in value:
            return value.replace(old, new)
        try:
            text = base64.b64decode(value, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return value
        return base64.b64encode(text.replace(old, new).encode()).decode() if old in text else value
    if isinstance(value, list):
        return [_with_digest(item, old, new) for item in value]
    if isinstance(value, dict):
        return {key: _with_digest(item, old, new) for key, item in value.items()}
    return value


def digest_only(change: Change, old: str, new: str) -> bool:
    """An update whose every changed value differs only by the config digest (a tag, a label, a line of user data)."""
    if change.action != UPDATE or old == new or not change.changed:
        return False
    # A secret shows redacted on both sides: equal as shown, so what changed in it cannot be told (never folded).
    return all(
        change.before.get(p) != change.after.get(p)
        and _with_digest(change.before.get(p), old, new) == change.after.get(p)
        for p in change.changed
    )
