"""Azure: the training cluster and the serving service, each in its own subscription."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from accelstack.components.azure.provider import azure_provider
from accelstack.components.base import CloudStack, TrainingClusterArgs
from accelstack.spec.models import ServingStack, TrainingStack

if TYPE_CHECKING:
    from accelstack.components.azure.training import TrainingCluster


class AzureStack(CloudStack):
    def _root(self, kind: str) -> tuple[pulumi.ComponentResource, pulumi.ResourceOptions]:
        root = pulumi.ComponentResource(f"accelstack:azure:{kind}", self.spec.stack)
        provider = azure_provider(self.spec, root)
        return root, pulumi.ResourceOptions(parent=root, provider=provider)

    def build_training(self, spec: TrainingStack) -> TrainingCluster:
        from accelstack.components.azure.training import TrainingCluster

        _, opts = self._root("TrainingStack")
        return TrainingCluster(spec.stack, TrainingClusterArgs.of(spec), opts)

    # Serving (Application Gateway WAF_v2, Service Bus, Flexible scale set with a standby pool) is not built yet:
    # the Azure description's `workloads` lists training only, so the spec refuses an Azure serving stack first.
    def build_serving(self, spec: ServingStack) -> pulumi.ComponentResource:
        raise NotImplementedError("Azure serving components are not built yet (accelstack.clouds.azure: workloads)")

    def replica_artifacts(self, spec: ServingStack) -> dict[str, str]:
        raise NotImplementedError("Azure serving components are not built yet (accelstack.clouds.azure: workloads)")


CLOUD_STACK = AzureStack
