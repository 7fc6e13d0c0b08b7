"""A second opinion from an established scanner: Checkov on every stack, gated by the recorded exceptions
(policies/scanner-exceptions.yaml). AWS and Google Cloud stacks are read as a Terraform plan (Checkov's
`terraform_plan` framework), Azure stacks as an ARM template (its `arm` framework).

`make scan` runs `python -m accelstack.engine.scanner_gate --checkov .venv-scan/bin/checkov`: each
stack is previewed offline, exported in its cloud's view, scanned with Checkov (no network:
`--skip-download`, no update check), and the run fails (exit 1) on a finding
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
CHECK_ID = re.compile(r"^CKV2?_(AWS|GCP|AZURE)_\d+$")
TERRAFORM_PLAN, ARM = "terraform_plan", "arm"
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
    pack: str | None = None  # the pack policy that judges the same concern, where the why leans on one

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
        unknown = sorted(set(entry) - {"check", "resources", "why", "source", "pack"})
        if unknown:
            problems.append(
                f"{where}: unknown field(s) {', '.join(unknown)}; allowed: check, resources, why, source, pack"
            )
        if "pack" in entry and (not isinstance(entry["pack"], str) or not entry["pack"].strip()):
            problems.append(f"{where}.pack: the name of a pack policy (e.g. encryption-at-rest)")
        check = entry.get("check")
        if not isinstance(check, str) or not CHECK_ID.match(check):
            problems.append(
                f"{where}.check: {check!r} is not a Checkov check id of a scanned provider "
                "(CKV_AWS_n, CKV2_AWS_n, CKV_GCP_n, CKV2_GCP_n, CKV_AZURE_n, CKV2_AZURE_n)"
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
            pack = entry.get("pack")
            loaded.append(
                ScannerException(
                    check,
                    tuple(resources),
                    entry["why"].strip(),
                    entry["source"].strip(),
                    pack.strip() if isinstance(pack, str) else None,
                )
            )
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


def run_checkov(
    checkov: Path, plan_file: Path, framework: str = TERRAFORM_PLAN, *, may_be_unchecked: bool = False
) -> Any:
    """Checkov's JSON report for one plan or template file (exit 1 just means it found something). A report of no
    resource at all means Checkov did not read the file, unless `may_be_unchecked`: a landing stack's organization
    kinds (management groups, subscription aliases, policy assignments) have no Checkov check to count them."""
    completed = subprocess.run(
        [
            str(checkov),
            "-f",
            str(plan_file),
            "--framework",
            framework,
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
        if may_be_unchecked:
            return report
        raise RuntimeError(f"checkov read no resource from {plan_file}: not a {framework} file it recognises")
    return report


def scan_view(cloud: str) -> str | None:
    """The view Checkov reads a cloud's stacks in: a Terraform plan for the Terraform-bridged packages the cloud
    maps (`Cloud.terraform`), an ARM template for the packages generated from the Azure REST API specs
    (`Cloud.arm`); None: neither."""
    from accelstack.clouds import registry
    from accelstack.policies.concepts import LOCAL_PACKAGES

    described = registry.get(cloud)
    # pulumi-random's and pulumiverse-time's resources make no cloud calls: nothing of theirs picks the view.
    packages = set(described.pulumi_packages) - LOCAL_PACKAGES
    if packages & {provider.package for provider in described.terraform}:
        return TERRAFORM_PLAN
    if packages & {provider.package for provider in described.arm}:
        return ARM
    return None


def unscanned_reason(cloud: str) -> str | None:
    """Why a cloud's stacks get no view Checkov reads (None: they get one)."""
    if scan_view(cloud) is not None:
        return None
    from accelstack.clouds import registry
    from accelstack.policies.concepts import LOCAL_PACKAGES

    packages = set(registry.get(cloud).pulumi_packages) - LOCAL_PACKAGES
    return (
        f"not scanned: no Terraform plan or ARM template view of {', '.join(sorted(packages))} resources yet; "
        "both policy packs judge them"
    )


# The Terraform providers whose resource types Checkov's terraform_plan checks cover (those accelstack's clouds map).
CHECKOV_TERRAFORM_PROVIDERS = frozenset(
    f"registry.terraform.io/{name}" for name in ("hashicorp/aws", "hashicorp/google", "hashicorp/google-beta")
)


def covered_by_checkov(plan: dict[str, Any]) -> bool:
    """Whether any resource of a Terraform plan view is of a provider Checkov has checks for."""
    return any(r.get("provider_name") in CHECKOV_TERRAFORM_PROVIDERS for r in plan.get("resource_changes", []))


@dataclass(frozen=True)
class View:
    file: Path
    framework: str  # Checkov's framework for it
    unmapped: list[str]  # URNs of custom resources the view has no type for
    # Checkov may have no check for any of its kinds: a landing stack's organization kinds (management groups,
    # subscription aliases, policy assignments) or a provider Checkov does not cover (Vultr).
    may_be_unchecked: bool = False


def export_views(out_dir: Path, project_dir: Path = REPO, skipped: dict[str, str] | None = None) -> dict[str, View]:
    """Preview every stack of the project and write its view (STACK.tfplan.json or STACK.arm.json); a stack of a
    cloud without one goes to `skipped` (stack -> why) instead."""
    from accelstack.engine.arm_template import arm_template
    from accelstack.engine.preview import preview_stack
    from accelstack.engine.terraform_plan import terraform_plan

    out_dir.mkdir(parents=True, exist_ok=True)
    views: dict[str, View] = {}
    for stack_file in sorted((project_dir / "stacks").glob("Pulumi.*.yaml")):
        result = preview_stack(stack_file, [], project_dir)
        framework = scan_view(result.spec.cloud)
        if framework is None:
            if skipped is not None:
                skipped[result.stack] = unscanned_reason(result.spec.cloud) or ""
            continue
        if framework == ARM:
            template = arm_template(result.export)
            document, unmapped, target = template.document, template.unmapped, out_dir / f"{result.stack}.arm.json"
        else:
            plan = terraform_plan(result.export)
            document, unmapped, target = plan.document, plan.unmapped, out_dir / f"{result.stack}.tfplan.json"
        target.write_text(json.dumps(document, indent=2) + "\n")
        uncovered = framework == TERRAFORM_PLAN and not covered_by_checkov(document)
        views[result.stack] = View(target, framework, unmapped, result.landing_plan is not None or uncovered)
    return views


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
    views = export_views(args.out, skipped=skipped)
    for stack, reason in skipped.items():
        print(f"{stack}: checkov: {reason}")
    reports: dict[str, Any] = {}
    unmapped = []
    for stack, view in views.items():
        unmapped += [f"{stack}: no {view.framework} type, not scanned: {urn}" for urn in view.unmapped]
        reports[stack] = run_checkov(args.checkov, view.file, view.framework, may_be_unchecked=view.may_be_unchecked)
        if view.may_be_unchecked and "results" not in reports[stack] and not reports[stack].get("passed"):
            print(f"{stack}: checkov: no check of Checkov's covers its kinds; both policy packs judge them")
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
