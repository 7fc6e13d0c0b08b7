"""Which account quota a stack draws on: `cost` says it beside the nodes, in the quota's own unit, so the
quota can be raised in the stack's own account before the first `up` stalls on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.clouds import registry
from accelstack.commands.cost import quota_drawn

REPO = Path(__file__).resolve().parents[2]


def cost_json(*args: str) -> dict:
    result = CliRunner().invoke(app, ["cost", "--project-dir", str(REPO), *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize("cloud", ["aws", "azure", "gcp"])
def test_every_quota_row_is_a_catalog_machine_type(cloud):
    catalog = registry.get(cloud).catalog
    for capacity, rows in catalog.quotas.items():
        assert capacity in ("on-demand", "spot")
        assert set(rows) <= set(catalog.instances), f"{cloud} {capacity}: {set(rows) - set(catalog.instances)}"


def test_every_aws_type_has_both_quotas():
    catalog = registry.get("aws").catalog
    for capacity in ("on-demand", "spot"):
        assert set(catalog.quotas[capacity]) == set(catalog.instances)


def test_training_draws_vcpus_of_its_family_class():
    stack = cost_json("aws-training")["stacks"]["aws-training"]  # 4 x p5.48xlarge on-demand, 192 vCPUs each
    assert stack["quota"] == {
        "name": "Running On-Demand P instances",
        "unit": "vCPUs",
        "amount": 768,
        "basis": "Running On-Demand P instances: 768 vCPUs",
    }


def test_spot_draws_the_spot_quota_and_serving_counts_its_max():
    finetune = cost_json("aws-finetune")["stacks"]["aws-finetune"]  # 1 x g6e.12xlarge spot (48 vCPUs)
    assert (finetune["quota"]["name"], finetune["quota"]["amount"]) == ("All G and VT Spot Instance Requests", 48)
    serving = cost_json("aws-serving")["stacks"]["aws-serving"]  # at most 8 x g6e.xlarge (4 vCPUs)
    assert (serving["quota"]["name"], serving["quota"]["amount"]) == ("Running On-Demand G and VT instances", 32)


def test_azure_spot_is_one_regional_quota_and_gcp_counts_gpus():
    azure, gcp = registry.get("azure").catalog, registry.get("gcp").catalog
    assert quota_drawn(azure, "Standard_NC24ads_A100_v4", "spot", 3)["basis"] == (
        "lowPriorityCores (Total Regional Spot vCPUs): 72 vCPUs"
    )
    assert quota_drawn(azure, "Standard_ND96isr_H100_v5", "on-demand", 4)["amount"] == 384
    assert quota_drawn(gcp, "a3-megagpu-8g", "on-demand", 4)["basis"] == "NVIDIA_H100_MEGA_GPUS: 32 GPUs"
    assert quota_drawn(gcp, "g2-standard-48", "spot", 2)["basis"] == "PREEMPTIBLE_NVIDIA_L4_GPUS: 8 GPUs"
    # Flex-start VMs are charged against the preemptible quota, not the on-demand one.
    assert quota_drawn(gcp, "a3-megagpu-8g", "flex-start", 4)["basis"] == "PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS: 32 GPUs"


def test_an_unlisted_type_or_bought_capacity_is_said_not_guessed():
    azure = registry.get("azure").catalog
    unknown = quota_drawn(azure, "Standard_ND96isr_MI300X_v5", "on-demand", 1)
    assert unknown["name"] is None and "not in accelstack's azure quota table" in unknown["basis"]
    bought = quota_drawn(registry.get("aws").catalog, "p5.48xlarge", "capacity-block", 2)
    assert bought["name"] is None and "capacity-block capacity bought" in bought["basis"]


def test_the_azure_serving_sizes_name_their_nc_family():
    azure = registry.get("azure").catalog
    drawn = quota_drawn(azure, "Standard_NC24ads_A100_v4", "on-demand", 8)
    assert drawn["name"] == "standardNCADSA100v4Family" and drawn["amount"] == 192
    assert quota_drawn(azure, "Standard_NC80adis_H100_v5", "on-demand", 1)["name"] == "standardNCadsH100v5Family"
