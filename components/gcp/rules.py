"""The GCP replicas' user-data as the GCP components will render it, at its longest, for the spec rule that holds
it to Compute Engine's metadata limit (`accelstack.spec.catalog_rules.boot_data_fits_the_clouds_limit`; the limit
is the GCP description's `boot_data_limit`).

The replica's cloud-config carries the queue worker and one download line per LoRA adapter, so enough adapters
would make `pulumi up` fail at the instance template, after the load balancer and the topics exist. The size is
only known by rendering, so GCP's registration lists this module among its rule modules (`Cloud.rules`).
"""

from __future__ import annotations

from collections.abc import Iterator

from accelstack.clouds import registry
from accelstack.components.gcp.serving.user_data import replica_user_data
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec.catalog_rules import BootData, boot_data
from accelstack.spec.models import ServingStack

# What the components fill in at deploy time, at its longest: a project id (30 characters) and Pub/Sub names
# (255 characters, cloud.google.com/pubsub/docs/pubsub-basics#resource_names).
LONGEST_PROJECT = "p" * 30
LONGEST_SUBSCRIPTION = f"projects/{LONGEST_PROJECT}/subscriptions/{'s' * 255}"
LONGEST_TOPIC = f"projects/{LONGEST_PROJECT}/topics/{'t' * 255}"


@boot_data(workload="serving")
def replica_user_data_at_its_longest(spec: ServingStack) -> Iterator[BootData]:
    """The replica's cloud-config (metadata key user-data), rendered as the GCP components will."""
    serving = spec.serving
    queued = serving.admission.kind == "queue"
    try:
        plan = plan_serving(serving, registry.get(spec.cloud).catalog)
        text = replica_user_data(
            serving,
            plan,
            project=LONGEST_PROJECT,
            request_subscription=LONGEST_SUBSCRIPTION if queued else "",
            response_topic=LONGEST_TOPIC if queued else "",
        )
    except (ValueError, KeyError):
        return  # an input another rule reports stops rendering
    yield BootData(
        "serving.model.adapters",
        "the replicas",
        text,
        cause=f"{len(serving.model.adapters)} adapter(s)",
        remedy="serve fewer adapters per stack",
    )
