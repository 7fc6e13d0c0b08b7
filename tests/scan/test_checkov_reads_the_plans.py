"""Checkov itself on the Terraform plan view of the shipped stacks (`make scan` runs these with the
pinned Checkov of .venv-scan; `CHECKOV` names its executable). What must hold for the view to be
faithful: Checkov reads every resource, its cross-resource graph checks follow our references (a
bucket's public access block, a VPC's flow log), and removing a fix makes the matching check fail."""

from __future__ import annotations

import copy
import json
import os
from functools import cache
from pathlib import Path

import pytest

from accelstack.engine.preview import preview_stack
from accelstack.engine.scanner_gate import findings_of, run_checkov
from accelstack.engine.terraform_plan import terraform_plan

pytestmark = pytest.mark.scan
REPO = Path(__file__).resolve().parents[2]


def checkov() -> Path:
    path = os.environ.get("CHECKOV")
    if not path or not Path(path).is_file():
        pytest.fail("CHECKOV must name the checkov executable (make scan sets it)")
    return Path(path)


@cache
def plan(stack: str) -> dict:
    result = preview_stack(REPO / "stacks" / f"Pulumi.{stack}.yaml", [], REPO)
    return terraform_plan(result.export).document


def scan(document: dict, tmp_path: Path, name: str) -> tuple[set[tuple[str, str]], set[tuple[str, str]], dict]:
    """(failed (check, address), passed (check, address), the report) of one Checkov run."""
    path = tmp_path / f"{name}.tfplan.json"
    path.write_text(json.dumps(document))
    report = run_checkov(checkov(), path)
    failed, _ = findings_of(name, report)
    passed = {(c["check_id"], c["resource"]) for c in report["results"]["passed_checks"]}
    return {(f.check, f.address) for f in failed}, passed, report


def drop(document: dict, address: str) -> None:
    for section in (
        document["planned_values"]["root_module"]["resources"],
        document["resource_changes"],
        document["configuration"]["root_module"]["resources"],
    ):
        before = len(section)
        section[:] = [r for r in section if r["address"] != address]
        assert len(section) == before - 1, address


def values(document: dict, address: str) -> dict:
    [resource] = [r for r in document["planned_values"]["root_module"]["resources"] if r["address"] == address]
    return resource["values"]


def test_training_plan_is_read_whole_and_graph_checks_follow_references(tmp_path: Path) -> None:
    document = plan("aws-training")
    _failed, passed, report = scan(document, tmp_path, "aws-training")
    assert report["summary"]["resource_count"] == len(document["planned_values"]["root_module"]["resources"])
    assert report["summary"]["parsing_errors"] == 0
    for bucket in ("aws-training-storage-datasets", "aws-training-storage-checkpoints"):
        address = f"aws_s3_bucket.{bucket}"
        # Graph checks: the bucket is linked to its public access block, versioning, encryption, logging.
        for check in ("CKV2_AWS_6", "CKV_AWS_21", "CKV_AWS_145", "CKV_AWS_18"):
            assert (check, address) in passed, (check, address)
    # The flow-log bucket is SSE-KMS under its own key (no exception recorded for it).
    assert ("CKV_AWS_145", "aws_s3_bucket.aws-training-net-flow-logs") in passed
    for check in ("CKV_AWS_7", "CKV_AWS_33", "CKV2_AWS_64"):
        assert (check, "aws_kms_key.aws-training-net-flow-logs") in passed, check
    assert ("CKV2_AWS_11", "aws_vpc.aws-training-net-vpc") in passed
    assert ("CKV2_AWS_12", "aws_vpc.aws-training-net-vpc") in passed
    assert ("CKV_AWS_126", "aws_instance.aws-training-head") in passed


def test_removing_each_training_fix_makes_checkov_fail(tmp_path: Path) -> None:
    document = copy.deepcopy(plan("aws-training"))
    drop(document, "aws_flow_log.aws-training-net-flow-logs")
    drop(document, "aws_default_security_group.aws-training-net-default")
    drop(document, "aws_s3_bucket_logging.aws-training-storage-datasets-access-logging")
    values(document, "aws_instance.aws-training-head")["monitoring"] = False
    [flow_log_rule] = values(
        document, "aws_s3_bucket_server_side_encryption_configuration.aws-training-net-flow-logs-encryption"
    )["rule"]
    flow_log_rule["apply_server_side_encryption_by_default"][0]["sse_algorithm"] = "AES256"
    values(document, "aws_s3_bucket_public_access_block.aws-training-storage-checkpoints-public-access")[
        "block_public_acls"
    ] = False
    failed, _, _ = scan(document, tmp_path, "aws-training-mutated")
    assert {
        ("CKV2_AWS_11", "aws_vpc.aws-training-net-vpc"),
        ("CKV2_AWS_12", "aws_vpc.aws-training-net-vpc"),
        ("CKV_AWS_18", "aws_s3_bucket.aws-training-storage-datasets"),
        ("CKV_AWS_126", "aws_instance.aws-training-head"),
        ("CKV_AWS_145", "aws_s3_bucket.aws-training-net-flow-logs"),
        ("CKV_AWS_53", "aws_s3_bucket_public_access_block.aws-training-storage-checkpoints-public-access"),
    } <= failed


def test_removing_the_serving_waf_fixes_makes_checkov_fail(tmp_path: Path) -> None:
    clean_failed, passed, _ = scan(plan("aws-serving"), tmp_path, "aws-serving")
    assert ("CKV2_AWS_31", "aws_wafv2_web_acl.aws-serving-edge") in passed
    assert ("CKV_AWS_192", "aws_wafv2_web_acl.aws-serving-edge") in passed
    document = copy.deepcopy(plan("aws-serving"))
    drop(document, "aws_wafv2_web_acl_logging_configuration.aws-serving-waf-logs")
    acl = values(document, "aws_wafv2_web_acl.aws-serving-edge")
    acl["rule"] = [r for r in acl["rule"] if r["name"] != "aws-known-bad-inputs"]
    failed, _, _ = scan(document, tmp_path, "aws-serving-mutated")
    assert {
        ("CKV2_AWS_31", "aws_wafv2_web_acl.aws-serving-edge"),
        ("CKV_AWS_192", "aws_wafv2_web_acl.aws-serving-edge"),
    } <= failed
    assert not clean_failed & {("CKV2_AWS_31", "aws_wafv2_web_acl.aws-serving-edge")}


@cache
def arm(stack: str) -> dict:
    from accelstack.engine.arm_template import arm_template

    result = preview_stack(REPO / "stacks" / f"Pulumi.{stack}.yaml", [], REPO)
    return arm_template(result.export).document


def scan_arm(document: dict, tmp_path: Path, name: str) -> tuple[set[tuple[str, str]], set[tuple[str, str]], dict]:
    path = tmp_path / f"{name}.arm.json"
    path.write_text(json.dumps(document))
    report = run_checkov(checkov(), path, "arm")
    failed, _ = findings_of(name, report)
    passed = {(c["check_id"], c["resource"]) for c in report["results"]["passed_checks"]}
    return {(f.check, f.address) for f in failed}, passed, report


def test_the_azure_template_is_read_whole_and_removing_a_fix_makes_checkov_fail(tmp_path: Path) -> None:
    document = arm("azure-serving")
    _failed, passed, report = scan_arm(document, tmp_path, "azure-serving")
    assert report["summary"]["resource_count"] == len(document["resources"])
    assert report["summary"]["parsing_errors"] == 0
    [account] = [r for r in document["resources"] if r["type"] == "Microsoft.Storage/storageAccounts"]
    address = f"Microsoft.Storage/storageAccounts.{account['name']}"
    # Read where ARM puts them: TLS 1.2 minimum and HTTPS only (the SDK's enableHttpsTrafficOnly).
    assert {("CKV_AZURE_44", address), ("CKV_AZURE_3", address)} <= passed
    mutated = copy.deepcopy(document)
    [account] = [r for r in mutated["resources"] if r["type"] == "Microsoft.Storage/storageAccounts"]
    account["properties"]["minimumTlsVersion"] = "TLS1_0"
    account["properties"]["supportsHttpsTrafficOnly"] = False
    failed, _, _ = scan_arm(mutated, tmp_path, "azure-serving-mutated")
    assert {("CKV_AZURE_44", address), ("CKV_AZURE_3", address)} <= failed


def test_checkov_reads_the_azure_training_vaults_firewall_and_fails_without_it(tmp_path: Path) -> None:
    """Only the vault's own resources (the head VM's boot script alone takes minutes to scan): its firewall
    (networkAcls defaultAction Deny) passes CKV_AZURE_109 where ARM puts it, and fails it once removed."""
    document = copy.deepcopy(arm("azure-training"))
    document["resources"] = [r for r in document["resources"] if r["type"].startswith("Microsoft.KeyVault/vaults")]
    [vault] = [r for r in document["resources"] if r["type"] == "Microsoft.KeyVault/vaults"]
    address = f"Microsoft.KeyVault/vaults.{vault['name']}"
    failed, passed, _ = scan_arm(document, tmp_path, "azure-training-vault")
    assert ("CKV_AZURE_109", address) in passed and ("CKV_AZURE_109", address) not in failed
    assert ("CKV_AZURE_189", address) in failed  # the recorded exception: the public endpoint stays on
    del vault["properties"]["networkAcls"]
    failed, _, _ = scan_arm(document, tmp_path, "azure-training-vault-mutated")
    assert ("CKV_AZURE_109", address) in failed
