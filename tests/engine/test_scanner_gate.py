"""The scan gate's bookkeeping (no Checkov needed): the recorded exceptions load, each names a check,
resources, why and source; a finding they do not cover fails the gate, and so does an exception that
no longer covers anything. Checkov itself runs in `make scan` (tests/scan)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from accelstack.engine.scanner_gate import (
    EXCEPTIONS_FILE,
    ExceptionsError,
    covered_by_checkov,
    evaluate,
    load_exceptions,
    main,
    run_checkov,
)

REPO = Path(__file__).resolve().parents[2]


def report(failed: list[tuple[str, str]], passed: int = 3) -> dict:
    """A Checkov JSON report (single framework) with these (check id, resource address) failures."""
    return {
        "check_type": "terraform_plan",
        "results": {
            "passed_checks": [{"check_id": "CKV_AWS_19", "resource": f"aws_s3_bucket.b{i}"} for i in range(passed)],
            "failed_checks": [{"check_id": c, "resource": r, "check_name": f"title of {c}"} for c, r in failed],
        },
        "summary": {"passed": passed, "failed": len(failed)},
    }


def test_shipped_exceptions_load_and_each_says_why_and_where_from() -> None:
    exceptions = load_exceptions()
    assert len(exceptions) >= 5
    for exception in exceptions:
        assert len(exception.why) > 80 and len(exception.source) > 20
        # An exception names resources of the provider its check belongs to (CKV_GCP_n: google_*).
        prefix = {"GCP": "google_", "AWS": "aws_", "AZURE": "Microsoft."}[exception.check.split("_")[1]]
        assert all(pattern.startswith(prefix) for pattern in exception.resources), exception.check


def test_the_fixed_findings_are_not_excepted() -> None:
    """The fourteen real findings were fixed in the stacks; recording them as exceptions would hide them."""
    excepted = {e.check for e in load_exceptions()}
    fixed = {"CKV2_AWS_11", "CKV2_AWS_12", "CKV2_AWS_31", "CKV_AWS_192", "CKV_AWS_126"}
    assert excepted & fixed == set()
    data_buckets = ["aws_s3_bucket.aws-training-storage-datasets", "aws_s3_bucket.aws-finetune-storage-checkpoints"]
    assert not any(e.covers("CKV_AWS_18", address) for e in load_exceptions() for address in data_buckets)


def test_the_policy_packs_page_shows_every_exception() -> None:
    page = (REPO / "docs" / "policy-packs.md").read_text()  # the README links it
    for exception in load_exceptions():
        row = next((line for line in page.splitlines() if f"`{exception.check}`" in line), None)
        assert row is not None, f"{exception.check} is not in docs/policy-packs.md's exceptions table"
        for pattern in exception.resources:
            assert f"`{pattern}`" in row, f"{exception.check}: {pattern} missing from its docs/policy-packs.md row"


def test_new_finding_fails_and_covered_finding_passes() -> None:
    exceptions = load_exceptions()
    reports = {
        "aws-training": report(
            [
                ("CKV_AWS_341", "aws_launch_template.aws-training-nodes"),  # recorded
                ("CKV2_AWS_11", "aws_vpc.aws-training-net-vpc"),  # not recorded: flow logs are required
            ]
        ),
    }
    result = evaluate(reports, exceptions)
    assert [f.check for f in result.accepted] == ["CKV_AWS_341"]
    assert [f.line() for f in result.unexpected] == [
        "aws-training: CKV2_AWS_11 aws_vpc.aws-training-net-vpc: title of CKV2_AWS_11"
    ]
    assert not result.ok
    assert result.passed == {"aws-training": 3}


def test_an_exception_for_the_same_check_on_another_resource_does_not_cover() -> None:
    """CKV_AWS_341 is accepted for the training nodes' template only: the serving replicas keep hop limit 1."""
    result = evaluate(
        {"aws-serving": report([("CKV_AWS_341", "aws_launch_template.aws-serving-replica")])}, load_exceptions()
    )
    assert [f.address for f in result.unexpected] == ["aws_launch_template.aws-serving-replica"]


def test_an_exception_matching_nothing_is_stale() -> None:
    exceptions = load_exceptions()
    result = evaluate({"aws-training": report([])}, exceptions)
    stale = {(e.check, pattern) for e, pattern in result.stale}
    assert ("CKV_AWS_341", "aws_launch_template.*-nodes") in stale
    assert not result.ok


def test_a_multi_framework_report_is_read_too() -> None:
    single = report([("CKV_AWS_341", "aws_launch_template.aws-training-nodes")])
    result = evaluate({"aws-training": [single, report([], passed=2)]}, load_exceptions())
    assert result.passed == {"aws-training": 5} and len(result.accepted) == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("exceptions: {}\n", "expected a top-level `exceptions:` list"),
        (
            "exceptions:\n  - check: CKV_AWS_18\n    resources: [aws_s3_bucket.x]\n    why: because\n",
            r"exceptions\[0\]\.source: required",
        ),
        (
            "exceptions:\n  - check: AVD-AWS-0086\n    resources: [aws_s3_bucket.x]\n    why: w\n    source: s\n",
            r"exceptions\[0\]\.check: 'AVD-AWS-0086' is not a Checkov check id of a scanned provider",
        ),
        (
            "exceptions:\n  - check: CKV_AWS_18\n    resources: []\n    why: w\n    source: s\n",
            r"exceptions\[0\]\.resources: expected a non-empty list",
        ),
        (
            "exceptions:\n  - check: CKV_AWS_18\n    resource: [aws_s3_bucket.x]\n    resources: [aws_s3_bucket.x]\n    why: w\n    source: s\n",
            r"unknown field\(s\) resource; allowed: check, resources, why, source",
        ),
        ("exceptions: [\n", "scanner-exceptions.yaml"),
    ],
)
def test_malformed_exceptions_are_named_and_exit_2(tmp_path: Path, text: str, message: str, capsys) -> None:
    path = tmp_path / "scanner-exceptions.yaml"
    path.write_text(text)
    with pytest.raises(ExceptionsError, match=message):
        load_exceptions(path)
    assert main(["--exceptions", str(path), "--checkov", "/nonexistent"]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_missing_checkov_is_a_clear_exit_2(capsys) -> None:
    assert main(["--checkov", "/nonexistent/checkov", "--exceptions", str(EXCEPTIONS_FILE)]) == 2
    assert "make scan" in capsys.readouterr().err


def test_each_cloud_is_scanned_in_its_view_and_one_without_a_view_is_reported_not_scanned():
    """Checkov reads AWS's and Google Cloud's stacks as Terraform plans (Terraform-bridged providers whose types
    are mapped) and Azure's as ARM templates (azure-native is generated from the ARM specs); a cloud with neither
    is said to be unscanned, by name, instead of failing the gate or passing silently."""
    from dataclasses import replace

    from accelstack.clouds import registry
    from accelstack.engine.scanner_gate import ARM, TERRAFORM_PLAN, scan_view, unscanned_reason

    assert scan_view("aws") == TERRAFORM_PLAN and scan_view("gcp") == TERRAFORM_PLAN
    assert scan_view("azure") == ARM and unscanned_reason("azure") is None
    with registry.registered(replace(registry.get("azure"), name="nowhere", arm=())):
        reason = unscanned_reason("nowhere")
    assert reason is not None and reason.startswith(
        "not scanned: no Terraform plan or ARM template view of azure-native"
    )


def test_every_gcp_resource_the_stacks_register_has_a_terraform_type_but_the_dynamic_import():
    """The gcp plan view leaves nothing out silently: every gcp type of the shipped GCP stacks maps to a
    google_* type; the Lustre import (the program's own dynamic resource) is no Terraform resource at all."""
    import json

    from accelstack.engine.terraform_plan import terraform_plan

    for stack in ("gcp-training", "gcp-serving"):
        export = json.loads((REPO / "tests" / "golden" / f"{stack}.json").read_text())
        plan = terraform_plan(export)
        assert plan.unmapped == [], stack
        types = {r["type"] for r in plan.document["planned_values"]["root_module"]["resources"]}
        # pulumi-random's and pulumiverse-time's rows (the grants' propagation waits are time_sleep) besides.
        assert all(t.startswith(("google_", "random_", "time_")) for t in types), types
    assert "time_sleep" in types  # gcp-serving: its topics wait for the Pub/Sub agent's key grant
    training = terraform_plan(json.loads((REPO / "tests" / "golden" / "gcp-training.json").read_text()))
    template = next(
        r
        for r in training.document["planned_values"]["root_module"]["resources"]
        if r["type"] == "google_compute_instance_template"
    )
    # Terraform's singular block names, one block per NIC (A3 Mega: 9), labels and metadata kept as maps.
    assert len(template["values"]["network_interface"]) == 9
    assert isinstance(template["values"]["metadata"], dict) and "user-data" in template["values"]["metadata"]


def test_every_exception_leaning_on_a_pack_names_a_policy_the_packs_have() -> None:
    """An exception that says the packs judge the concern instead names that pack policy, and the policy exists in
    the packs the runner loads: an exception never claims a pack check that does not exist."""
    from accelstack.engine.policy_runner import default_packs

    policies = {policy.name for pack in default_packs() for policy in pack.policies}
    assert {"encryption-at-rest", "protect-stateful", "no-public-buckets"} <= policies
    for exception in load_exceptions():
        if "the packs" in exception.why.lower():
            assert exception.pack is not None, f"{exception.check}: its why leans on the packs; name the policy"
        if exception.pack is not None:
            assert exception.pack in policies, f"{exception.check}: pack policy {exception.pack!r} does not exist"


def test_an_exception_naming_a_pack_policy_that_does_not_exist_is_caught(tmp_path: Path) -> None:
    from accelstack.engine.policy_runner import default_packs

    path = tmp_path / "scanner-exceptions.yaml"
    path.write_text(
        "exceptions:\n  - check: CKV_AZURE_2\n    resources: [Microsoft.Compute/disks.x]\n"
        "    why: encrypted, as the packs check\n    source: a doc\n    pack: disks-are-encrypted\n"
    )
    [exception] = load_exceptions(path)
    policies = {policy.name for pack in default_packs() for policy in pack.policies}
    assert exception.pack == "disks-are-encrypted" and exception.pack not in policies


def test_an_exception_relying_on_data_access_audit_logs_has_them_enabled_by_the_stack() -> None:
    """CKV_GCP_62 is accepted because Data Access audit logs record object reads and writes: the stacks whose
    buckets it covers must enable them for Cloud Storage (DATA_READ and DATA_WRITE), not assume a landing zone."""
    import json

    from accelstack.engine.terraform_plan import terraform_plan

    relying = [e for e in load_exceptions() if "data access" in e.why.lower()]
    assert [e.check for e in relying] == ["CKV_GCP_62"]
    export = json.loads((REPO / "tests" / "golden" / "gcp-training.json").read_text())
    resources = terraform_plan(export).document["planned_values"]["root_module"]["resources"]
    covered = [r for r in resources if any(relying[0].covers("CKV_GCP_62", r["address"]) for _ in [0])]
    assert covered, "the exception covers no bucket of gcp-training"
    configs = [r["values"] for r in resources if r["type"] == "google_project_iam_audit_config"]
    assert any(
        c.get("service") == "storage.googleapis.com"
        and {"DATA_READ", "DATA_WRITE"} <= {x.get("log_type") for x in c.get("audit_log_config", [])}
        for c in configs
    ), configs


def fake_checkov(tmp_path: Path, output: dict) -> Path:
    script = tmp_path / "checkov"
    script.write_text(f"#!/bin/sh\ncat <<'END'\n{json.dumps(output)}\nEND\n")
    script.chmod(0o755)
    return script


def test_a_report_of_nothing_read_fails_unless_the_view_may_be_unchecked(tmp_path: Path) -> None:
    """Checkov's summary-only answer means it read no resource: a workload stack's view it did not recognise fails
    the gate; a landing stack's organization kinds or a provider Checkov has no checks for (Vultr) may get it."""
    checkov = fake_checkov(tmp_path, {"passed": 0, "failed": 0, "resource_count": 0})
    plan = tmp_path / "stack.tfplan.json"
    plan.write_text("{}")
    with pytest.raises(RuntimeError, match="checkov read no resource"):
        run_checkov(checkov, plan)
    assert run_checkov(checkov, plan, may_be_unchecked=True)["resource_count"] == 0


def test_only_a_plan_with_a_provider_checkov_checks_counts_as_covered() -> None:
    def plan(*providers: str) -> dict:
        return {"resource_changes": [{"provider_name": f"registry.terraform.io/{p}"} for p in providers]}

    assert covered_by_checkov(plan("hashicorp/aws", "hashicorp/random"))
    assert covered_by_checkov(plan("hashicorp/google-beta"))
    assert not covered_by_checkov(plan("vultr/vultr", "hashicorp/time"))
    assert not covered_by_checkov(plan())
