"""The ARM template view of Azure stacks (accelstack.engine.arm_template), which Checkov's `arm` framework reads
(`make scan`): every azure-native resource of the shipped Azure stacks gets its ARM type, the API version the
installed SDK calls, its ARM name, and its properties where ARM puts them (checked here without Checkov)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelstack.engine.arm_template import api_version, arm_template
from accelstack.engine.capture import UNKNOWN

REPO = Path(__file__).resolve().parents[2]


def template(stack: str) -> dict:
    export = json.loads((REPO / "tests" / "golden" / f"{stack}.json").read_text())
    view = arm_template(export)
    assert view.unmapped == [], stack
    return view.document


def one(document: dict, arm_type: str, name_ends: str) -> dict:
    [found] = [r for r in document["resources"] if r["type"] == arm_type and r["name"].endswith(name_ends)]
    return found


@pytest.mark.parametrize("stack", ["azure-training", "azure-serving"])
def test_every_azure_native_resource_is_an_arm_resource_with_its_sdks_api_version(stack: str) -> None:
    export = json.loads((REPO / "tests" / "golden" / f"{stack}.json").read_text())
    native = [r for r in export["deployment"]["resources"] if r["custom"] and r["type"].startswith("azure-native:")]
    document = template(stack)
    assert document["$schema"].endswith("deploymentTemplate.json#")
    assert len(document["resources"]) == len(native)
    for resource in document["resources"]:
        assert resource["type"].startswith("Microsoft.") and resource["name"], resource["type"]
        assert resource["apiVersion"][:2] == "20", resource["type"]
        # A child resource's name has one segment per level of its type (vaults/secrets: vault/secret).
        assert resource["name"].count("/") == resource["type"].count("/") - 1, (resource["type"], resource["name"])
        assert UNKNOWN not in json.dumps(resource)


def test_properties_go_back_under_properties_with_arms_own_names() -> None:
    document = template("azure-training")
    account = one(document, "Microsoft.Storage/storageAccounts", "ckpts")
    assert account["kind"] == "StorageV2" and account["sku"] == {"name": "Standard_LRS"}
    assert account["location"] == "eastus"  # the provider's location, as azure-native applies it
    properties = account["properties"]
    # ARM's names for what the SDK calls enableHttpsTrafficOnly and networkRuleSet.
    assert properties["supportsHttpsTrafficOnly"] is True and properties["networkAcls"]["defaultAction"] == "Deny"
    assert properties["minimumTlsVersion"] == "TLS1_2"
    assert "accountName" not in properties and "resourceGroupName" not in properties
    container = one(document, "Microsoft.Storage/storageAccounts/blobServices/containers", "/checkpoints")
    assert container["name"].split("/")[1] == "default"
    nodes = one(document, "Microsoft.Compute/virtualMachineScaleSets", "-nodes")
    profile = nodes["properties"]["virtualMachineProfile"]
    configuration = profile["networkProfile"]["networkInterfaceConfigurations"][0]
    # Sub-resources nest their settings under properties, as ARM does (Checkov reads them there).
    assert set(configuration) <= {"name", "id", "properties"} and "ipConfigurations" in configuration["properties"]
    assert profile["osProfile"]["linuxConfiguration"]["disablePasswordAuthentication"] is True
    # The boot script as a template writes it (ARM's base64() around the text), so a scanner reads the script.
    head = one(document, "Microsoft.Compute/virtualMachines", "-head")
    assert head["properties"]["osProfile"]["customData"].startswith("[base64('#cloud-config")


def test_secrets_never_reach_the_template() -> None:
    for stack in ("azure-training", "azure-serving"):
        text = json.dumps(template(stack))
        assert "4dabf18193072939515e22adb298388d" not in text  # Pulumi's secret signature


def test_nsg_rules_are_arm_sub_resources() -> None:
    document = template("azure-serving")
    for group in [r for r in document["resources"] if r["type"] == "Microsoft.Network/networkSecurityGroups"]:
        for rule in group["properties"].get("securityRules", []):
            assert set(rule) <= {"name", "id", "properties"} and "access" in rule["properties"]


def test_the_api_version_is_read_from_the_installed_sdk() -> None:
    assert api_version("azure-native:storage:StorageAccount") == "2024-01-01"
    assert api_version("azure-native:nowhere:Nothing") is None
