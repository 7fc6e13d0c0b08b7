"""Azure: the training cluster and the serving service, each in its own subscription."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from accelstack.components.azure.provider import azure_provider
from accelstack.components.base import CloudStack, ServingServiceArgs, TrainingClusterArgs
from accelstack.spec.models import ServingStack, TrainingStack

if TYPE_CHECKING:
    from accelstack.components.azure.serving import ServingService
    from accelstack.components.azure.training import TrainingCluster


class AzureStack(CloudStack):
    training_recipe = "accelstack.components.azure.training:TrainingCluster"
    serving_recipe = "accelstack.components.azure.serving:ServingService"

    def _root(self, kind: str) -> tuple[pulumi.ComponentResource, pulumi.ResourceOptions]:
        root = pulumi.ComponentResource(f"accelstack:azure:{kind}", self.spec.stack)
        provider = azure_provider(self.spec, root)
        return root, pulumi.ResourceOptions(parent=root, provider=provider)

    def build_training(self, spec: TrainingStack) -> TrainingCluster:
        from accelstack.components.azure.training import TrainingCluster

        _, opts = self._root("TrainingStack")
        return TrainingCluster(spec.stack, TrainingClusterArgs.of(spec), opts)

    def build_serving(self, spec: ServingStack) -> ServingService:
        from accelstack.components.azure.serving import ServingService

        _, opts = self._root("ServingStack")
        return ServingService(spec.stack, ServingServiceArgs.of(spec), opts)

    def replica_artifacts(self, args: ServingServiceArgs) -> dict[str, str]:
        from accelstack.components.azure.serving.user_data import render_replica_artifacts

        return render_replica_artifacts(args)


CLOUD_STACK = AzureStack
