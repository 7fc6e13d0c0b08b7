"""What only Vultr's rendered components can measure, registered beside accelstack.clouds.vultr.rules: the replicas'
cloud-config at its longest against Vultr's user-data limit (accelstack.spec.catalog_rules)."""

from __future__ import annotations

from collections.abc import Iterator

from accelstack.clouds import registry
from accelstack.components.recipes.serving import ReplicaAdmission
from accelstack.components.vultr.serving.user_data import LOAD_BALANCER_CLIENT_HOP, replica_user_data
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec.catalog_rules import BootData, boot_data
from accelstack.spec.models import ServingStack


@boot_data(workload="serving")
def replica_user_data_at_its_longest(spec: ServingStack) -> Iterator[BootData]:
    """The replica's cloud-config (the instance's user data), rendered as the Vultr components will."""
    serving = spec.serving
    try:
        plan = plan_serving(serving, registry.get(spec.cloud).catalog)
        admission = ReplicaAdmission.planned(serving, plan, client_hop=LOAD_BALANCER_CLIENT_HOP)
        text = replica_user_data(serving, plan, region=spec.account.region, admission=admission)
    except (ValueError, KeyError):
        return  # an input another rule reports stops rendering
    yield BootData.of_replicas(serving, text)
