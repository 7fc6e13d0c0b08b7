"""AWS: the training cluster and the serving service, each in its own account."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from accelstack import outputs
from accelstack.components.base import CloudStack, ServingServiceArgs, TrainingClusterArgs
from accelstack.spec.models import ServingStack, TrainingStack

if TYPE_CHECKING:
    from accelstack.components.aws.serving.service import ServingService
    from accelstack.components.aws.training import TrainingCluster


class AwsStack(CloudStack):
    training_recipe = "accelstack.components.aws.training:TrainingCluster"
    serving_recipe = "accelstack.components.aws.serving.service:ServingService"
    # Stacks deployed before 0.2 exported these names; users' scripts read them until 0.3.
    legacy_output_names = outputs.LEGACY_NAMES

    def _root(self, kind: str) -> tuple[pulumi.ComponentResource, pulumi.ResourceOptions]:
        from accelstack.components.aws.provider import aws_provider  # pulumi_aws: only when a stack is built

        root = pulumi.ComponentResource(f"accelstack:aws:{kind}", self.spec.stack)
        provider = aws_provider(self.spec, root)
        return root, pulumi.ResourceOptions(parent=root, provider=provider)

    def build_training(self, spec: TrainingStack) -> TrainingCluster:
        from accelstack.components.aws.training import TrainingCluster

        _, opts = self._root("TrainingStack")
        return TrainingCluster(spec.stack, TrainingClusterArgs.of(spec), opts)

    def build_serving(self, spec: ServingStack) -> ServingService:
        from accelstack.components.aws.serving.service import ServingService

        _, opts = self._root("ServingStack")
        return ServingService(spec.stack, ServingServiceArgs.of(spec), opts)

    def replica_artifacts(self, args: ServingServiceArgs) -> dict[str, str]:
        from accelstack.components.aws.serving.user_data import render_replica_artifacts

        return render_replica_artifacts(args)


CLOUD_STACK = AwsStack
