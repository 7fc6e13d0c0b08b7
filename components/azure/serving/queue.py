"""The admission queue on Service Bus: a Standard namespace reachable only with Microsoft Entra tokens (local
SAS auth off) over TLS 1.2+, the request queue replicas drain with peek-lock, and the response queue.

Dead letters: Service Bus moves a message to the queue's built-in `<queue>/$DeadLetterQueue` after
maxDeliveryCount deliveries, and (deadLetteringOnMessageExpiration) when its TTL passes unserved, so an expired
request stays inspectable (learn.microsoft.com/azure/service-bus-messaging/service-bus-dead-letter-queues).
The lock is the queue's lockDuration (at most 5 minutes); the worker renews it while a generation runs.
Standard, not Premium: Premium's private endpoints and customer-managed keys cost a messaging unit (~$670 a month
each) and the requests are encrypted at rest with Microsoft-managed keys either way.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_azure_native as azure_native

from accelstack.clouds.azure.serving_rules import SERVICE_BUS_MAX_LOCK_SECONDS
from accelstack.components.azure.serving.placement import Placement
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import AdmissionPolicy

QUEUE_MAX_SIZE_MB = 1024  # Standard: 1, 2, 3, 4 or 5 GB per queue
QUEUE_METRIC_NAMESPACE = "Microsoft.ServiceBus/namespaces"
ACTIVE_MESSAGES = "ActiveMessages"
REQUESTS, RESPONSES = "requests", "responses"


def iso_seconds(seconds: int) -> str:
    """An ISO 8601 duration Service Bus takes (PT300S)."""
    return f"PT{int(seconds)}S"


def lock_seconds(visibility_timeout_seconds: int) -> int:
    return max(5, min(visibility_timeout_seconds, SERVICE_BUS_MAX_LOCK_SECONDS))


def dead_letter_path(queue_name: str) -> str:
    return f"{queue_name}/$DeadLetterQueue"


class AdmissionQueue(pulumi.ComponentResource):
    """`namespace`, `requests`, `responses`, `depth_alert`, and `endpoint` (the namespace's host name)."""

    def __init__(self, name: str, admission: AdmissionPolicy, plan: ServingPlan, placement: Placement):
        super().__init__("accelstack:azure:AdmissionQueue", name, None, placement.opts)
        child = pulumi.ResourceOptions(parent=self)
        rg, tags = placement.resource_group.name, placement.tags
        self.namespace = azure_native.servicebus.Namespace(
            f"{name}-sb",
            resource_group_name=rg,
            sku={"name": "Standard", "tier": "Standard"},
            disable_local_auth=True,  # no SAS keys: only the replicas' managed identity, through its roles
            minimum_tls_version="1.2",
            tags=tags,
            opts=child,
        )
        ttl = iso_seconds(admission.ttl_seconds)
        common: dict[str, Any] = {
            "resource_group_name": rg,
            "namespace_name": self.namespace.name,
            "default_message_time_to_live": ttl,
            "dead_lettering_on_message_expiration": True,
            "max_delivery_count": admission.max_receive_count,
            "max_size_in_megabytes": QUEUE_MAX_SIZE_MB,
            # Create-only settings, fixed here so an edit never replaces a queue with requests in it.
            "enable_partitioning": False,
            "requires_session": False,
            "requires_duplicate_detection": False,
        }
        self.requests = azure_native.servicebus.Queue(
            f"{name}-{REQUESTS}",
            queue_name=REQUESTS,
            lock_duration=iso_seconds(lock_seconds(plan.visibility_timeout_seconds)),
            **common,
            opts=child,
        )
        self.responses = azure_native.servicebus.Queue(
            f"{name}-{RESPONSES}", queue_name=RESPONSES, lock_duration="PT1M", **common, opts=child
        )
        self.endpoint = self.namespace.name.apply(lambda n: f"{n}.servicebus.windows.net")
        # Service Bus has no depth limit: at maxDepth waiting requests an alert fires (the edge's producers
        # should refuse new work then, as on the other clouds).
        self.depth_alert = azure_native.monitor.MetricAlert(
            f"{name}-depth",
            resource_group_name=rg,
            location="global",
            description=f"admission queue at its maximum depth ({admission.max_depth})",
            severity=2,
            enabled=True,
            scopes=[self.namespace.id],
            evaluation_frequency="PT1M",
            window_size="PT5M",
            # Typed: `criteria` is a union, and the SDK leaves a plain dict's keys in snake_case, which the provider
            # cannot read (pulumi/pulumi#21830): ARM would get empty criteria.
            criteria=azure_native.monitor.MetricAlertSingleResourceMultipleMetricCriteriaArgs(
                odata_type="Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria",
                all_of=[
                    azure_native.monitor.MetricCriteriaArgs(
                        criterion_type="StaticThresholdCriterion",
                        name="depth",
                        metric_name=ACTIVE_MESSAGES,
                        metric_namespace=QUEUE_METRIC_NAMESPACE,
                        operator="GreaterThanOrEqual",
                        threshold=admission.max_depth,
                        time_aggregation="Maximum",
                        dimensions=[
                            azure_native.monitor.MetricDimensionArgs(
                                name="EntityName", operator="Include", values=[REQUESTS]
                            )
                        ],
                    )
                ],
            ),
            auto_mitigate=True,
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.requests]),
        )
        self.register_outputs({"namespace": self.namespace.id, "requests": self.requests.id})
