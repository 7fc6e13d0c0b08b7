"""How the packs read Azure capacity that can be taken away: Spot (and its old name, low priority) on scale sets,
VMs and Azure Machine Learning computes, in every spelling the API accepts."""

from __future__ import annotations

from typing import Any

from ..readers import count_of, get, items_at
from .readers import AUTOSCALE, ML_COMPUTE, SCALE_SET, VM, _kind

# "Low" is Spot's old name (https://learn.microsoft.com/azure/virtual-machine-scale-sets/use-spot); compare
# case-insensitively: the API does.
SPOT_PRIORITIES = ("spot", "low")


def _spot_only(profile: Any, where: str) -> str | None:
    """Settings the API takes only for Spot VMs (evictionPolicy, billingProfile.maxPrice:
    https://learn.microsoft.com/azure/virtual-machines/spot-vms#eviction-policy): their presence says Spot."""
    priority = str(get(profile, "priority") or "")
    if priority.lower() in SPOT_PRIORITIES:
        return f"{where}priority {priority}"
    if get(profile, "evictionPolicy"):
        return f"{where}evictionPolicy {get(profile, 'evictionPolicy')} (Spot only)"
    if get(profile, "billingProfile", "maxPrice") is not None:
        return f"{where}billingProfile.maxPrice (Spot only)"
    return None


def spot_usage(resource: Any) -> str | None:
    """Why the resource runs on capacity Azure can evict at any time, or None: Spot or Low priority on a VM or a
    scale set's VM profile (or the Spot-only eviction and price settings), a flexible scale set mixing Spot in
    (priorityMixPolicy: regularPriorityPercentageAboveBase below 100,
    https://learn.microsoft.com/azure/virtual-machine-scale-sets/spot-priority-mix), Spot restore, and an Azure ML
    compute of low-priority nodes (vmPriority LowPriority)."""
    kind, props = _kind(resource), resource.props
    if kind == SCALE_SET:
        if why := _spot_only(get(props, "virtualMachineProfile"), "virtualMachineProfile."):
            return f"runs Spot VMs ({why})"
        share = count_of(get(props, "priorityMixPolicy", "regularPriorityPercentageAboveBase"))
        if get(props, "priorityMixPolicy") is not None and (share is None or share < 100):
            return f"mixes Spot VMs in (priorityMixPolicy.regularPriorityPercentageAboveBase {share})"
        if str(get(props, "spotRestorePolicy", "enabled")).lower() == "true":
            return "restores evicted Spot VMs (spotRestorePolicy.enabled)"
    elif kind == VM:
        if why := _spot_only(props, ""):
            return f"is a Spot VM ({why})"
    elif kind in ML_COMPUTE:
        priority = str(get(props, "properties", "properties", "vmPriority") or "")
        if priority.lower() in ("lowpriority", "spot"):
            return f"runs low-priority (Spot) nodes (vmPriority {priority})"
    return None


def time_limited_usage(resource: Any) -> str | None:
    """Capacity taken away at a set time: an autoscale profile that applies on a schedule (`recurrence` or
    `fixedDate`, https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-multiprofile) and caps the
    fleet at zero (capacity.maximum 0), as AWS's scheduled action to zero."""
    if _kind(resource) not in AUTOSCALE:
        return None
    for profile in items_at(resource.props, "profiles"):
        scheduled = get(profile, "recurrence") is not None or get(profile, "fixedDate") is not None
        if scheduled and str(get(profile, "capacity", "maximum")).strip() in ("0", "0.0"):  # the API takes strings
            return f"takes the fleet to zero on a schedule (profile {get(profile, 'name')}: capacity.maximum 0)"
    return None
