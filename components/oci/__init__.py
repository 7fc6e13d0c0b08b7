"""Oracle Cloud Infrastructure: the training cluster in the stack's compartment (serving is not built yet)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from accelstack.components.base import CloudStack, ServingServiceArgs, TrainingClusterArgs
from accelstack.components.oci.provider import oci_provider
from accelstack.spec.models import ServingStack, TrainingStack

if TYPE_CHECKING:
    from accelstack.components.oci.training import TrainingCluster


class OciStack(CloudStack):
    training_recipe = "accelstack.components.oci.training:TrainingCluster"
    serving_recipe = None

    def build_training(self, spec: TrainingStack) -> TrainingCluster:
        from accelstack.components.oci.training import TrainingCluster

        root = pulumi.ComponentResource("accelstack:oci:TrainingStack", spec.stack)
        provider = oci_provider(spec, root)
        opts = pulumi.ResourceOptions(parent=root, provider=provider)
        return TrainingCluster(spec.stack, TrainingClusterArgs.of(spec), opts)

    def build_serving(self, spec: ServingStack) -> pulumi.ComponentResource:
        # The description's workloads say training only; the spec refuses a serving stack first.
        raise ValueError("serving stacks are not deployable on oci yet")

    def replica_artifacts(self, args: ServingServiceArgs) -> dict[str, str]:
        raise ValueError("serving stacks are not deployable on oci yet")


CLOUD_STACK = OciStack
