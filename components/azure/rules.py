"""Azure spec rules that need the components' renderers: whether a replica's custom data fits Azure's limit.

Azure refuses custom data over 64 KB once base64-encoded (learn.microsoft.com/azure/virtual-machines/
custom-data: "The maximum size of custom data is 64 KB, after it's Base64 encoded"), and the replica's carries
the queue worker, its Service Bus client and one AzCopy line per LoRA adapter, so enough adapters would make
`pulumi up` fail at the scale set, after the gateway and the queues exist. The size is only known by
rendering, so Azure's registration lists this module among its rule modules (`Cloud.rules`).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator

from accelstack.clouds import registry
from accelstack.components.azure.serving.user_data import CUSTOM_DATA_LIMIT_BYTES, replica_user_data
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec.models import ServingStack
from accelstack.spec.problems import Problem
from accelstack.spec.validators import rule

# What the components fill in at deploy time, at its longest: a namespace name (6-50 characters) and a client id.
LONGEST_NAMESPACE = "n" * 50 + ".servicebus.windows.net"
CLIENT_ID = "00000000-0000-0000-0000-000000000000"


@rule(workload="serving")
def replica_custom_data_fits_azure(spec: ServingStack) -> Iterator[Problem]:
    """The replica's cloud-init, rendered as the Azure components will, fits in custom data once base64-encoded."""
    serving = spec.serving
    try:
        plan = plan_serving(serving, registry.get(spec.cloud).catalog)
        text = replica_user_data(serving, plan, namespace=LONGEST_NAMESPACE, client_id=CLIENT_ID)
    except (ValueError, KeyError):
        return  # an input another rule reports stops rendering
    size = len(base64.b64encode(text.encode()))
    if size > CUSTOM_DATA_LIMIT_BYTES:
        yield Problem(
            "serving.model.adapters",
            f"{len(serving.model.adapters)} adapter(s) make the replica custom data {size} bytes base64-encoded, "
            f"over Azure's {CUSTOM_DATA_LIMIT_BYTES}-byte limit; serve fewer adapters per stack",
        )
