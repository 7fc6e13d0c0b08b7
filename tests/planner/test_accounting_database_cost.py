"""`accelstack cost` prices the Slurm accounting database (training.scheduler.accounting: database, issue 29) at the
size the stack deploys: the database is read from the previewed program (its class or SKU or tier, and its storage),
priced by hand from the cloud's dated table, and compared with the cost report's line, its job share and the totals.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from stack_edits import MAIN, ExistingStackCloud, _config
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.clouds.aws import prices as aws_prices
from accelstack.clouds.azure import prices as azure_prices
from accelstack.clouds.gcp import prices as gcp_prices
from accelstack.engine.capture import capture

REPO = Path(__file__).resolve().parents[2]
ON = "training.scheduler.accounting=database"
HOURS_PER_MONTH = 730


@cache
def deployed_database(stack: str) -> dict[str, Any]:
    """The database resource's inputs as the stack's program registers it with accounting on."""
    config = _config(stack, (ON,))
    captured = capture(MAIN, config, stack=stack, mocks=ExistingStackCloud.for_config(config))
    token = {
        "aws-training": "aws:rds/instance:Instance",
        "azure-training": "azure-native:dbformysql:Server",
        "gcp-training": "gcp:sql/databaseInstance:DatabaseInstance",
    }[stack]
    return captured.one(token).inputs


def worked_monthly(stack: str, inputs: dict[str, Any]) -> tuple[str, float]:
    """(what the report must name, the month's price) worked from the deployed inputs and the price table."""
    if stack == "aws-training":
        size, storage = inputs["instanceClass"], inputs["allocatedStorage"]
        assert inputs["storageType"] == "gp3" and not inputs.get("multiAz")
        # Backups up to the provisioned storage are free: a week of a database its minimum size costs nothing more.
        return size, aws_prices.RDS_MYSQL_HOURLY[size] * HOURS_PER_MONTH + storage * aws_prices.RDS_GP3_GB_MONTH
    if stack == "azure-training":
        size, storage = inputs["sku"]["name"], inputs["storage"]["storageSizeGB"]
        assert inputs.get("highAvailability") in (None, {}) or inputs["highAvailability"].get("mode") == "Disabled"
        monthly = azure_prices.MYSQL_FLEXIBLE_HOURLY[size] * HOURS_PER_MONTH
        return size.removeprefix("Standard_"), monthly + storage * azure_prices.MYSQL_FLEXIBLE_STORAGE_GB_MONTH
    settings = inputs["settings"]
    tier, storage = settings["tier"], settings["diskSize"]
    assert settings["availabilityType"] == "ZONAL" and settings["edition"] == "ENTERPRISE"
    vcpus, memory_mb = map(int, re.fullmatch(r"db-custom-(\d+)-(\d+)", tier).groups())  # type: ignore[union-attr]
    hourly = vcpus * gcp_prices.CLOUD_SQL_VCPU_HOURLY + memory_mb / 1024 * gcp_prices.CLOUD_SQL_MEMORY_GB_HOURLY
    # Cloud SQL bills every backup: seven retained, assumed the disk's size in all.
    monthly = hourly * HOURS_PER_MONTH + storage * (
        gcp_prices.CLOUD_SQL_SSD_GB_MONTH + gcp_prices.CLOUD_SQL_BACKUP_GB_MONTH
    )
    return tier, monthly


def cost(stack: str, *args: str, as_json: bool = True) -> Any:
    result = CliRunner().invoke(
        app,
        ["cost", stack, "--project-dir", str(REPO), *args, *(["--json"] if as_json else [])],
        env={"COLUMNS": "400"},
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["stacks"][stack] if as_json else result.output


@pytest.mark.parametrize("stack", ["aws-training", "azure-training", "gcp-training"])
def test_cost_prices_the_accounting_database_the_stack_deploys(stack: str) -> None:
    size, monthly = worked_monthly(stack, deployed_database(stack))
    off, on = cost(stack), cost(stack, "--set", ON)
    database = on["accountingDatabase"]
    assert off["accountingDatabase"] is None
    assert size in database["product"]
    assert database["monthlyUsd"] == pytest.approx(monthly, abs=0.01)
    wall_hours = on["training"]["wallHours"]
    assert database["jobUsd"] == pytest.approx(monthly / HOURS_PER_MONTH * wall_hours, abs=0.01)
    # The job and the month at 24x7 carry it; nothing else moves.
    assert on["totalUsd"] == pytest.approx(off["totalUsd"] + database["jobUsd"], abs=0.02)
    assert on["monthlyUsdAt24x7"] == pytest.approx(off["monthlyUsdAt24x7"] + database["monthlyUsd"], abs=0.02)
    table = cost(stack, "--set", ON, as_json=False)
    assert f"accounting database ${database['jobUsd']:,.0f}" in table
    assert f"Slurm accounting database ${database['monthlyUsd']:,.2f}/month" in table
