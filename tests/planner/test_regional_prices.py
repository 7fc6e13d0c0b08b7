"""`accelstack cost` prices a stack's instances at its own region's list price where the cloud's table records one
(Azure: `accelstack.clouds.azure.regional_prices`), and otherwise names, on the cost line itself, the region whose
price it used. Prices worked by hand from the Azure table: ND96isr_H200_v5 westus3 $84.80/h, ND96isr_H100_v5
swedencentral $127.816/h (eastus $98.32/h); AWS p5.48xlarge us-east-1 from accelstack.clouds.aws.prices.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.clouds import registry
from accelstack.clouds.azure import catalog, prices, regional_prices
from accelstack.examples import example_files
from accelstack.planner.pricing import PriceBook

REPO = Path(__file__).resolve().parents[2]


def stack_in(tmp_path: Path, example: str, region_from: str, region_to: str, *edits: tuple[str, str]) -> Path:
    """A copy of a shipped example moved to another region (every mention of it, provider config included)."""
    [source] = [path for path in example_files() if path.name == f"Pulumi.{example}.yaml"]
    text = source.read_text().replace(region_from, region_to)
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    moved = tmp_path / f"Pulumi.{example}-{region_to}.yaml"
    moved.write_text(text)
    return moved


def cost(*args: str):
    return CliRunner().invoke(app, ["cost", "--project-dir", str(REPO), *args], env={"COLUMNS": "400"})


def priced(path: Path, *args: str) -> dict:
    result = cost(str(path), "--json", *args)
    assert result.exit_code == 0, result.output
    [stack] = json.loads(result.output)["stacks"].values()
    return stack


def test_an_azure_stack_outside_eastus_is_priced_at_its_regions_list_price(tmp_path):
    h200 = ("Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5")
    stack = priced(stack_in(tmp_path, "azure-training", "eastus", "westus3", h200))
    assert stack["hourlyBasis"] == "westus3 list price"
    training = stack["training"]
    assert training["hourlyPerNode"] == 84.80
    assert training["computeUsd"] == pytest.approx(4 * 84.80 * training["wallHours"], rel=1e-5)
    # Not East US's: H100 in Sweden Central is $127.816/h there, $98.32 in eastus.
    sweden = priced(stack_in(tmp_path, "azure-training", "eastus", "swedencentral"))
    assert sweden["training"]["hourlyPerNode"] == 127.816
    assert "list prices eastus checked" in sweden["priceSource"]
    assert "swedencentral's instance prices where recorded" in sweden["priceSource"]
    table = cost(str(stack_in(tmp_path, "azure-training", "eastus", "swedencentral"))).output
    assert "at the swedencentral list price" in table


def test_a_region_without_recorded_prices_is_named_on_the_cost_line(tmp_path):
    """AWS's table is us-east-1's only: a us-west-2 stack is priced at it, and the compute line says so."""
    path = stack_in(tmp_path, "aws-training", "us-east-1", "us-west-2", ("[us-west-2, us-west-2]", "[us-west-2]"))
    stack = priced(path)
    assert stack["hourlyBasis"] == "us-east-1 list price (none recorded for us-west-2; --prices to give it)"
    hourly = registry.get("aws").prices.on_demand_hourly[stack["instanceType"]]
    assert stack["training"]["hourlyPerNode"] == pytest.approx(hourly)
    assert "at the us-east-1 list price (none recorded for us-west-2" in cost(str(path)).output


def test_a_prices_file_is_named_as_the_source_of_the_hourly_price(tmp_path):
    path = stack_in(tmp_path, "azure-training", "eastus", "westus3")
    overrides = tmp_path / "prices.yaml"
    overrides.write_text("onDemandHourly: {Standard_ND96isr_H100_v5: 90.0}\n")
    stack = priced(path, "--prices", str(overrides))
    assert stack["hourlyBasis"] == f"--prices {overrides}"
    assert stack["training"]["hourlyPerNode"] == 90.0


def test_the_book_falls_back_to_the_tables_region_where_the_stacks_has_no_price():
    azure = registry.get("azure").prices
    # norwaywest has Dsv5 meters but no ND H100 v5: the head node is its own region's, the nodes eastus's.
    book = PriceBook.from_prices(azure, "norwaywest")
    assert book.hourly("Standard_D8s_v5") == regional_prices.HOURLY_BY_REGION["norwaywest"]["Standard_D8s_v5"]
    assert book.hourly_basis("Standard_D8s_v5") == "norwaywest list price"
    assert book.hourly("Standard_ND96isr_H100_v5") == 98.32
    assert book.hourly_basis("Standard_ND96isr_H100_v5").startswith("eastus list price (none recorded for norwaywest")
    assert PriceBook.from_prices(azure).hourly_basis("Standard_ND96isr_H100_v5") == "eastus list price"


def test_the_regional_table_covers_the_catalog_and_agrees_with_the_two_record_east_us_prices():
    table = regional_prices.HOURLY_BY_REGION
    assert set(table) == set(catalog.REGIONS)
    priced_sizes = {size for sizes in table.values() for size in sizes}
    assert set(catalog.ACCELERATED_INSTANCES) <= priced_sizes
    for size, hourly in prices.ON_DEMAND_HOURLY.items():
        assert table[prices.REGION][size] == hourly, size
    assert all(price > 0 for sizes in table.values() for price in sizes.values())


@pytest.mark.parametrize("cloud", ["azure", "gcp"])
def test_an_unpriced_managed_lustre_names_the_prices_key_that_prices_it(tmp_path, cloud):
    """No Managed Lustre list price is recorded on Azure or Google Cloud (their prices.py say what was searched):
    the cost line says so and names the --prices key, and that key then prices the file system."""
    [path] = [p for p in example_files() if p.name == f"Pulumi.{cloud}-training.yaml"]
    stack = priced(path)
    assert stack["lustreNotPriced"] and stack["training"]["lustreUsd"] == 0
    key = stack["lustrePriceKey"]
    assert key in registry.get(cloud).catalog.parallel_fs
    assert f"lustreGbMonth: {{{key}: USD per GB-month}}" in cost(str(path)).output
    overrides = tmp_path / "prices.yaml"
    overrides.write_text(f"lustreGbMonth: {{{key}: 0.2}}\n")
    given = priced(path, "--prices", str(overrides))
    assert given["lustreNotPriced"] is None and given["training"]["lustreUsd"] > 0
    # Friction 7: once the file system has a price, no footer says it has none (the other lines stay).
    service = registry.get(cloud).catalog.parallel_fs_service
    assert any(line.startswith(service) for line in stack["notPriced"])
    assert not any(line.startswith(service) for line in given["notPriced"]) and given["notPriced"]
    footer = cost(str(path), "--prices", str(overrides)).output
    assert "not priced:" in footer and f"{service} (" not in footer
