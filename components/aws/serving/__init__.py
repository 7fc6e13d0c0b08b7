"""The AWS serving service: ALB (HTTPS only, WAF rate limit per client) -> replicas in private
subnets, an SQS admission queue the replicas drain, and an Auto Scaling group that scales on
backlog per instance with a warm pool of stopped, pre-pulled replicas. Without a queue
(admission.kind replica) each replica's admission proxy admits what the ALB sends, and the group
scales on the ALB's requests per target; a fixed fleet has no scaling policy.

One module per concern, each building its resources as children of `ServingService` (so their URNs
are those of the single-module component they came from): `edge` (security groups, ALB, WAF, logs),
`queue` (SQS queues and their alarms), `identity` (KMS key, replica role), `replicas` (launch
template, group, warm pool, launch hook), `scaling` (policies), `user_data` (the boot script).

Sizing (cold start, warm pool, health-check timing, backlog target) is pure and lives in the planner
(`accelstack.planner.serving_plan.ServingPlan`), so it can be tested and reported without Pulumi.
"""

# The package is imported by `validate` for its pure modules (the boot script, the hook's names): the service and
# its provider SDK classes load only when asked for (PEP 562), so validation does not pay for pulumi_aws.
from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "AwsServingParts": "service",
    "ServingService": "service",
    "READY_HOOK": "hook",
    "elb_log_delivery_statements": "edge",
    "USER_DATA_LIMIT_BYTES": "user_data",
    "replica_user_data": "user_data",
    "user_data_size_problem": "user_data",
    "worker_environment": "user_data",
}
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
