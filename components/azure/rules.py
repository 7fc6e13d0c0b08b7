"""The Azure replicas' custom data as the Azure components will render it, at its longest, for the spec rule that
holds it to Azure's limit (`accelstack.spec.catalog_rules.boot_data_fits_the_clouds_limit`; the limit is the
Azure description's `boot_data_limit`).

The replica's custom data carries the queue worker, its Service Bus client and one AzCopy line per LoRA adapter,
so enough adapters would make `pulumi up` fail at the scale set, after the gateway and the queues exist. The size
is only known by rendering, so Azure's registration lists this module among its rule modules (`Cloud.rules`).
"""

from __future__ import annotations

from collections.abc import Iterator

from accelstack.clouds import registry
from accelstack.components.azure.serving.user_data import replica_user_data
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec.catalog_rules import BootData, boot_data
from accelstack.spec.models import ServingStack

# What the components fill in at deploy time, at its longest: a namespace name (6-50 characters) and a client id.
LONGEST_NAMESPACE = "n" * 50 + ".servicebus.windows.net"
CLIENT_ID = "00000000-0000-0000-0000-000000000000"


@boot_data(workload="serving")
def replica_custom_data_at_its_longest(spec: ServingStack) -> Iterator[BootData]:
    """The replica's cloud-init, rendered as the Azure components will."""
    serving = spec.serving
    try:
        plan = plan_serving(serving, registry.get(spec.cloud).catalog)
        text = replica_user_data(serving, plan, namespace=LONGEST_NAMESPACE, client_id=CLIENT_ID)
    except (ValueError, KeyError):
        return  # an input another rule reports stops rendering
    yield BootData(
        "serving.model.adapters",
        "the replicas",
        text,
        cause=f"{len(serving.model.adapters)} adapter(s)",
        remedy="serve fewer adapters per stack",
    )
