"""Vultr: the serving service in its own account (Vultr's components build serving only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from accelstack.components.base import CloudStack, ServingServiceArgs
from accelstack.components.vultr.provider import vultr_provider
from accelstack.spec.models import ServingStack, TrainingStack

if TYPE_CHECKING:
    from accelstack.components.vultr.serving import ServingService


class VultrStack(CloudStack):
    serving_recipe = "accelstack.components.vultr.serving:ServingService"

    def build_training(self, spec: TrainingStack) -> pulumi.ComponentResource:
        # The spec refuses a Vultr training stack at `workload` (Cloud.workloads); a direct caller gets it here.
        raise NotImplementedError("Vultr's components build serving only")

    def build_serving(self, spec: ServingStack) -> ServingService:
        from accelstack.components.vultr.serving import ServingService

        root = pulumi.ComponentResource("accelstack:vultr:ServingStack", spec.stack)
        provider = vultr_provider(spec, root)
        opts = pulumi.ResourceOptions(parent=root, provider=provider)
        return ServingService(spec.stack, ServingServiceArgs.of(spec), opts)

    def replica_artifacts(self, args: ServingServiceArgs) -> dict[str, str]:
        from accelstack.components.vultr.serving.user_data import render_replica_artifacts

        return render_replica_artifacts(args)


CLOUD_STACK = VultrStack
