"""What must reach what on Azure (review F1, F2), by class: a storage account's firewall admits the subnets of
everything that reads it (the Managed Lustre file system reads its dataset container from its own subnet, and
Microsoft.StorageCache is no trusted service the bypass admits), and every private subnet without default outbound
access has an explicit way out (Managed Lustre reaches Key Vault, Storage and monitoring from its subnet)."""

from __future__ import annotations

import pytest
from stack_edits import deployed, updated

AZURE_STACKS = ("azure-training", "azure-serving")


def urn_of(resources, type_token: str, suffix: str) -> str:
    [found] = [r.urn for r in resources if r.type == type_token and r.name.endswith(suffix)]
    return found


def test_the_dataset_account_admits_the_file_systems_subnet() -> None:
    resources = deployed("azure-training")[0].resources
    lustre_subnet = urn_of(resources, "azure-native:network:Subnet", "-lustre")
    [datasets] = [
        r for r in resources if r.type == "azure-native:storage:StorageAccount" and r.name.endswith("-datasets")
    ]
    assert lustre_subnet in datasets.property_dependencies.get("networkRuleSet", [])
    assert len(datasets.inputs["networkRuleSet"]["virtualNetworkRules"]) == 2  # the nodes and the file system
    assert datasets.inputs["networkRuleSet"]["defaultAction"] == "Deny"


def test_without_a_file_system_the_dataset_account_admits_the_nodes_alone() -> None:
    resources = updated("azure-training", ("training.storage.lustre=null",)).resources
    [datasets] = [
        r for r in resources if r.type == "azure-native:storage:StorageAccount" and r.name.endswith("-datasets")
    ]
    assert len(datasets.inputs["networkRuleSet"]["virtualNetworkRules"]) == 1


@pytest.mark.parametrize("stack", AZURE_STACKS)
def test_every_private_subnet_has_a_way_out(stack: str) -> None:
    subnets = [r for r in deployed(stack)[0].resources if r.type == "azure-native:network:Subnet"]
    private = [s for s in subnets if s.inputs.get("defaultOutboundAccess") is False]
    assert private, "the stack's private subnets"
    assert [s.name for s in private if not s.inputs.get("natGateway")] == []
