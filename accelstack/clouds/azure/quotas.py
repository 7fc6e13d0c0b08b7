"""Which Azure compute quota each VM size draws on (pure data).

Azure counts vCPUs per VM family, per subscription and region (Microsoft.Compute usages; the portal's
Quotas > Compute), and every Spot VM of any family against the region's one "Total Regional Spot vCPUs"
quota, `lowPriorityCores` (learn.microsoft.com/azure/virtual-machines/spot-vms: "Spot VMs ... use a separate
quota"). Only the family names read from the usages API are listed; a size missing here is reported as
not known (`az vm list-usage --location <region>` names it).
"""

from __future__ import annotations

from accelstack.clouds.azure.catalog import ACCELERATED_INSTANCES
from accelstack.clouds.base import Quota

ON_DEMAND_FAMILIES: dict[str, str] = {
    "Standard_ND96isr_H100_v5": "standardNDSH100v5Family",
    "Standard_ND96isr_H200_v5": "standardNDISRH200V5Family",
    # The NC serving sizes' families as `az vm list-usage` / `az quota show --resource-name` name them (the
    # usages API matches names case-insensitively): NC A100 v4 and NCads H100 v5.
    **dict.fromkeys(
        ("Standard_NC24ads_A100_v4", "Standard_NC48ads_A100_v4", "Standard_NC96ads_A100_v4"),
        "standardNCADSA100v4Family",
    ),
    **dict.fromkeys(("Standard_NC40ads_H100_v5", "Standard_NC80adis_H100_v5"), "standardNCadsH100v5Family"),
}
SPOT = Quota("lowPriorityCores (Total Regional Spot vCPUs)", "vCPUs")

QUOTAS: dict[str, dict[str, Quota]] = {
    "on-demand": {name: Quota(family, "vCPUs") for name, family in ON_DEMAND_FAMILIES.items()},
    "spot": dict.fromkeys(ACCELERATED_INSTANCES, SPOT),
}


def quota_request_command(subscription: str, region: str, quota: str, amount: int) -> str:
    """The manual quota step for one need (azure-native has no per-subscription quota request resource): `az quota
    create` (learn.microsoft.com/cli/azure/quota) on the subscription's Microsoft.Compute location, the family's
    usage name as resource name; Spot counts under resource type lowPriority, the families under dedicated."""
    import shlex

    name = quota.split(" ", 1)[0]
    kind = "lowPriority" if name == "lowPriorityCores" else "dedicated"
    scope = f"/subscriptions/{subscription}/providers/Microsoft.Compute/locations/{region}"
    return (
        f"az quota create --resource-name {shlex.quote(name)} --scope {shlex.quote(scope)} "
        f"--limit-object value={int(amount)} --resource-type {kind}"
    )
