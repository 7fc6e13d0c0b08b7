"""A fresh subscription (azure review R2): every azure-native type the components register names the resource
provider it is created through (accelstack.clouds.azure.services), so `accelstack preview` can say which ones a fresh
subscription must have registered; a type with no row fails here."""

from __future__ import annotations

from pathlib import Path

import pytest
from stack_edits import deployed, updated

from accelstack.clouds.azure import services
from accelstack.commands.preview import account_services_line
from accelstack.engine.preview import find_project_dir, preview_stack

VARIANTS = {
    "azure-training": (),
    "azure-serving": (),
    "azure-training managed": ("training.scheduler.kind=managed", "training.storage.lustre=null"),
    "azure-serving direct": ("serving.admission.kind=replica",),
}


def types(variant: str) -> set[str]:
    stack, *_ = variant.split()
    overrides = VARIANTS[variant]
    found = updated(stack, overrides).resources if overrides else deployed(stack)[0].resources
    return {r.type for r in found if r.custom and r.type.startswith("azure-native:")}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_azure_native_type_names_its_resource_provider(variant: str) -> None:
    needed, untabled = services.ACCOUNT_SERVICES.needed(types(variant))
    assert not untabled, f"add these types' resource providers to accelstack.clouds.azure.services: {untabled}"
    assert "Microsoft.Compute" in needed or variant.endswith("managed")


def test_the_variants_need_their_services_providers() -> None:
    assert "Microsoft.StorageCache" in services.ACCOUNT_SERVICES.needed(types("azure-training"))[0]
    serving = services.ACCOUNT_SERVICES.needed(types("azure-serving"))[0]
    assert {"Microsoft.ServiceBus", "Microsoft.StandbyPool", "Microsoft.Insights"} <= set(serving)
    assert "Microsoft.MachineLearningServices" in services.ACCOUNT_SERVICES.needed(types("azure-training managed"))[0]


def test_preview_names_the_providers_and_the_slow_one() -> None:
    root = find_project_dir(Path(__file__).resolve())
    result = preview_stack(root / "stacks" / "Pulumi.azure-serving.yaml", [], root)
    line = account_services_line(result)
    assert line is not None and "Microsoft.ServiceBus" in line and "Microsoft.StandbyPool can take 30 minutes" in line
    assert "not tabled" not in line
