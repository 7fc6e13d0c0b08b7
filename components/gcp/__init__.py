"""Google Cloud: the training cluster and the serving service, each in its own project."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from accelstack.components.base import CloudStack, ServingServiceArgs, TrainingClusterArgs
from accelstack.components.gcp.apis import enable_apis
from accelstack.components.gcp.provider import account_of, gcp_provider
from accelstack.spec.models import ServingStack, TrainingStack

if TYPE_CHECKING:
    from accelstack.components.gcp.serving import ServingService
    from accelstack.components.gcp.training import TrainingCluster


class GcpStack(CloudStack):
    training_recipe = "accelstack.components.gcp.training:TrainingCluster"
    serving_recipe = "accelstack.components.gcp.serving:ServingService"

    def _root(self, kind: str) -> tuple[pulumi.ComponentResource, pulumi.ResourceOptions]:
        root = pulumi.ComponentResource(f"accelstack:gcp:{kind}", self.spec.stack)
        provider = gcp_provider(self.spec, root)
        at_root = pulumi.ResourceOptions(parent=root, provider=provider)
        # Every resource below waits for the APIs it calls, enabled by the stack (a fresh project has few).
        apis = enable_apis(self.spec.stack, account_of(self.spec).project_id, at_root)
        return root, pulumi.ResourceOptions.merge(
            at_root, pulumi.ResourceOptions(transformations=[apis.transformation])
        )

    def build_training(self, spec: TrainingStack) -> TrainingCluster:
        from accelstack.components.gcp.training import TrainingCluster

        _, opts = self._root("TrainingStack")
        return TrainingCluster(spec.stack, TrainingClusterArgs.of(spec), opts)

    def build_serving(self, spec: ServingStack) -> ServingService:
        from accelstack.components.gcp.serving import ServingService

        _, opts = self._root("ServingStack")
        return ServingService(spec.stack, ServingServiceArgs.of(spec), opts)

    def replica_artifacts(self, args: ServingServiceArgs) -> dict[str, str]:
        from accelstack.components.gcp.serving.user_data import render_replica_artifacts

        return render_replica_artifacts(args)


CLOUD_STACK = GcpStack
