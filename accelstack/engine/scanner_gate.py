"""A second opinion from an established scanner: Checkov on the Terraform plan view of every stack,
gated by the recorded exceptions (policies/scanner-exceptions.yaml).

`make scan` runs `python -m accelstack.engine.scanner_gate --checkov .venv-scan/bin/checkov`: each
stack is previewed offline, exported as a Terraform plan, scanned with Checkov's `terraform_plan`
framework (no network: `--skip-download`, no update check), and the run fails (exit 1) on a finding
no exception covers, on an exception that covers no finding any more (stale), and on a resource the
plan could not map. Bad input (an exceptions file that does not parse or misses a field) exits 2.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
EXCEPTIONS_FILE = REPO / "policies" / "scanner-exceptions.yaml"
CHECK_ID = re.compile(r"^CKV2?_(AWS|GCP)_\d+$")
# Checkov calls home for guidelines and newer versions unless told not to; the scan stays offline.
OFFLINE_ENV = {
    "BC_SKIP_MAPPING": "TRUE",
    "CKV_SKIP_PACKAGE_UPDATE_CHECK": "TRUE",
    "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": "false",
}
CHECKOV_TIMEOUT_SECONDS = 600


class ExceptionsError(ValueError):
    """The exceptions file is malformed: each message names the entry and field."""


@dataclass(frozen=True)
class ScannerException:
    check: str
    resources: tuple[str, ...]
    why: str
    source: str

    def covers(self, check: str, address: str) -> bool:
        return check == self.check and any(fnmatch.fnmatchcase(address, pattern) for pattern in self.resources)


@dataclass(frozen=True)
class Finding:
    stack: str
    check: str
    address: str
    title: str

    def line(self) -> str:
        return f"{self.stack}: {self.check} {self.address}: {self.title}"


@dataclass
class GateResult:
    unexpected: list[Finding] = field(default_factory=list)
    accepted: list[Finding] = field(default_factory=list)
    stale: list[tuple[ScannerException, str]] = field(default_factory=list)  # (exception, pattern)
    passed: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.unexpected and not self.stale


def load_exceptions(path: Path = EXCEPTIONS_FILE) -> list[ScannerException]:
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise ExceptionsError(f"{path}: {error}") from None
    entries = document.get("exceptions") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise ExceptionsError(f"{path}: expected a top-level `exceptions:` list")
    problems: list[str] = []
    loaded: list[ScannerException] = []
    for index, entry in enumerate(entries):
        where = f"{path.name}: exceptions[{index}]"
        if not isinstance(entry, dict):
            problems.append(f"{where}: expected a mapping with check, resources, why, source")
            continue
        unknown = sorted(set(entry) - {"check", "resources", "why", "source"})
        if unknown:
            problems.append(f"{where}: unknown field(s) {', '.join(unknown)}; allowed: check, resources, why, source")
        check = entry.get("check")
        if not isinstance(check, str) or not CHECK_ID.match(check):
            problems.append(
                f"{where}.check: {check!r} is not a Checkov check id of a scanned provider "
                "(CKV_AWS_n, CKV2_AWS_n, CKV_GCP_n, CKV2_GCP_n)"
            )
        resources = entry.get("resources")
        if (
            not isinstance(resources, list)
            or not resources
            or not all(isinstance(r, str) and "." in r for r in resources)
        ):
            problems.append(
                f"{where}.resources: expected a non-empty list of TYPE.NAME patterns, e.g. aws_s3_bucket.*-logs"
            )
        for key in ("why", "source"):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                problems.append(f"{where}.{key}: required (why the finding is accepted, and the document saying so)")
        if not problems and isinstance(check, str) and isinstance(resources, list):
            loaded.append(ScannerException(check, tuple(resources), entry["why"].strip(), entry["source"].strip()))
    if problems:
        raise ExceptionsError("\n".join(problems))
    return loaded


def findings_of(stack: str, report: Any) -> tuple[list[Finding], int]:
    """(failed checks, passed count) of a Checkov JSON report (one framework: an object; several: a list)."""
    reports = report if isinstance(report, list) else [report]
    failed: list[Finding] = []
    passed = 0
    for item in reports:
        results = item.get("results") or {}
        passed += len(results.get("passed_checks") or [])
        for check in results.get("failed_checks") or []:
            failed.append(Finding(stack, check["check_id"], check["resource"], check.get("check_name", "")))
    return failed, passed


def evaluate(reports: dict[str, Any], exceptions: list[ScannerException]) -> GateResult:
    result = GateResult()
    used: set[tuple[int, str]] = set()
    for stack, report in reports.items():
        failed, result.passed[stack] = findings_of(stack, report)
        for finding in failed:
            covering = [
                (index, pattern)
                for index, exception in enumerate(exceptions)
                if finding.check == exception.check
                for pattern in exception.resources
                if fnmatch.fnmatchcase(finding.address, pattern)
            ]
            used.update(covering)
            (result.accepted if covering else result.unexpected).append(finding)
    for index, exception in enumerate(exceptions):
        for pattern in exception.resources:
            if (index, pattern) not in used:
                result.stale.append((exception, pattern))
    return result


def run_checkov(checkov: Path, plan_file: Path) -> Any:
    """Checkov's JSON report for one plan file (exit 1 just means it found something)."""
    completed = subprocess.run(
        [
            str(checkov),
            "-f",
            str(plan_file),
            "--framework",
            "terraform_plan",
            "--skip-download",
            "-o",
            "json",
            "--compact",
        ],
        capture_output=True,
        text=True,
        timeout=CHECKOV_TIMEOUT_SECONDS,
        env={**os.environ, **OFFLINE_ENV},
        check=False,
    )
    try:
        report = json.loads(completed.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(
            f"checkov on {plan_file} exited {completed.returncode}:\n{completed.stderr[-4000:]}"
        ) from None
    if isinstance(report, dict) and "results" not in report and report.get("resource_count", 0) == 0:
        raise RuntimeError(f"checkov read no resource from {plan_file}: not a Terraform plan it recognises")
    return report


def unscanned_reason(cloud: str) -> str | None:
    """Why a cloud's stacks get no Terraform plan view (None: they do). Checkov reads Terraform plans; a plan view
    exists for the Terraform-bridged packages whose types the cloud maps (`Cloud.terraform`)."""
    from accelstack.clouds import registry

    described = registry.get(cloud)
    packages = set(described.pulumi_packages) - {"random"}
    if packages & {provider.package for provider in described.terraform}:
        return None
    return (
        f"not scanned: no Terraform plan view of {', '.join(sorted(packages))} resources yet "
        "(azure-native is not a Terraform-bridged provider, so Checkov has no plan of it to read); "
        "both policy packs judge them"
    )


def export_plans(
    out_dir: Path, project_dir: Path = REPO, skipped: dict[str, str] | None = None
) -> dict[str, tuple[Path, list[str]]]:
    """Preview every stack of the project and write STACK.tfplan.json: {stack: (file, unmapped URNs)}; a stack
    of a cloud without a plan view goes to `skipped` (stack -> why) instead."""
    from accelstack.engine.preview import preview_stack
    from accelstack.engine.terraform_plan import terraform_plan

    out_dir.mkdir(parents=True, exist_ok=True)
    plans: dict[str, tuple[Path, list[str]]] = {}
    for stack_file in sorted((project_dir / "stacks").glob("Pulumi.*.yaml")):
        result = preview_stack(stack_file, [], project_dir)
        reason = unscanned_reason(result.spec.cloud)
        if reason is not None:
            if skipped is not None:
                skipped[result.stack] = reason
            continue
        plan = terraform_plan(result.export)
        target = out_dir / f"{result.stack}.tfplan.json"
        target.write_text(json.dumps(plan.document, indent=2) + "\n")
        plans[result.stack] = (target, plan.unmapped)
    return plans


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m accelstack.engine.scanner_gate", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--checkov", type=Path, default=REPO / ".venv-scan" / "bin" / "checkov")
    parser.add_argument("--out", type=Path, default=REPO / "out" / "scan", help="where the plans and reports go")
    parser.add_argument("--exceptions", type=Path, default=EXCEPTIONS_FILE)
    args = parser.parse_args(argv)
    try:
        exceptions = load_exceptions(args.exceptions)
    except ExceptionsError as error:
        print(error, file=sys.stderr)
        return 2
    if not args.checkov.is_file():
        print(f"--checkov {args.checkov}: no such file; `make scan` installs Checkov into .venv-scan", file=sys.stderr)
        return 2
    skipped: dict[str, str] = {}
    plans = export_plans(args.out, skipped=skipped)
    for stack, reason in skipped.items():
        print(f"{stack}: checkov: {reason}")
    reports: dict[str, Any] = {}
    unmapped = []
    for stack, (plan_file, missing) in plans.items():
        unmapped += [f"{stack}: no Terraform type, not scanned: {urn}" for urn in missing]
        reports[stack] = run_checkov(args.checkov, plan_file)
        (args.out / f"{stack}.checkov.json").write_text(json.dumps(reports[stack], indent=2) + "\n")
    result = evaluate(reports, exceptions)
    for stack in reports:
        accepted = sum(1 for f in result.accepted if f.stack == stack)
        unexpected = sum(1 for f in result.unexpected if f.stack == stack)
        print(
            f"{stack}: checkov: {result.passed[stack]} checks pass; {accepted + unexpected} findings "
            f"({accepted} recorded exceptions, {unexpected} new)"
        )
    for finding in result.unexpected:
        print(f"NEW FINDING {finding.line()} (fix it, or record why in {args.exceptions.name})", file=sys.stderr)
    for exception, pattern in result.stale:
        print(
            f"STALE EXCEPTION {exception.check} {pattern}: matches no finding; remove it from {args.exceptions.name}",
            file=sys.stderr,
        )
    for line in unmapped:
        print(line, file=sys.stderr)
    total_passed = sum(result.passed.values())
    total_failed = len(result.accepted) + len(result.unexpected)
    # Worded unlike a test runner's "N passed, N failed" tally: these are checks, not tests.
    print(
        f"scan: {total_passed} checks pass; {total_failed} findings: {len(result.accepted)} recorded exceptions, "
        f"{len(result.unexpected)} new, {len(result.stale)} stale exceptions"
    )
    return 0 if result.ok and not unmapped else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
