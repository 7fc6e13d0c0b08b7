"""The packs load under pulumi-policy: as the CLI runs them (a gRPC analyzer on 127.0.0.1) and as the
offline runner loads them (`__main__.py` with PolicyPack recorded); both expose the same policies."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import grpc
import pytest
from google.protobuf import empty_pb2
from pulumi.runtime import proto
from pulumi.runtime.proto import analyzer_pb2_grpc

from accelstack.engine.policy_runner import PACKS, PACKS_DIR, load_pack

REPO = Path(__file__).resolve().parents[2]

STACK_POLICIES = {
    "separation": {"accounts-configured", "disjoint-accounts", "cross-account-read-only-final"},
    "guardrails": {
        "bucket-encryption",
        "bucket-public-access-block",
        "nodes-in-private-subnets",
        "no-scheduled-data-loss",
        "no-public-buckets-final",
        "internet-ingress-only-to-load-balancer",
        "no-secrets-in-user-data-final",
        "iam-least-privilege-final",
        "bucket-versioning",
        "queue-dlq",
        "spot-training-needs-checkpoints",
        "serving-scales-on-queue-depth",
        "http-only-redirects",
        "waf-rate-limit",
        # policies/guardrails/observability.py
        "vpc-flow-logs",
        "default-security-group-closed",
        "bucket-access-logging",
        "waf-logging",
    },
}


@pytest.mark.parametrize("pack", PACKS)
def test_pack_main_declares_its_policies_with_config_schema(pack: str) -> None:
    loaded = load_pack(PACKS_DIR / pack)
    info = loaded.servicer().GetAnalyzerInfo(empty_pb2.Empty(), None)
    assert info.name == f"accelstack-{pack}" and info.version == "0.1.0" and info.supportsConfig
    stack = {p.name for p in info.policies if p.policy_type == proto.PolicyType.POLICY_TYPE_STACK}
    assert stack == STACK_POLICIES[pack]
    for policy in info.policies:
        assert policy.enforcementLevel == proto.MANDATORY
        assert {"workload", "trainingAccounts", "servingAccounts", "allowedRegions"} <= set(
            policy.configSchema.properties
        )


@pytest.mark.parametrize("pack", PACKS)
def test_every_rule_names_what_it_mirrors(pack: str) -> None:
    for policy in load_pack(PACKS_DIR / pack).policies:
        doc = policy.check.__doc__ or ""
        assert any(marker in doc for marker in ("CKV", "AVD-AWS", "https://", "Ours", "ours", "repeat of")), policy.name


@pytest.mark.parametrize("pack", PACKS)
def test_pack_serves_under_pulumi_policy_like_the_cli_runs_it(pack: str) -> None:
    """`python __main__.py` from the pack dir prints a port and serves the analyzer over gRPC (loopback)."""
    directory = PACKS_DIR / pack
    process = subprocess.Popen(
        [sys.executable, "__main__.py"], cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        line = process.stdout.readline().decode().strip()
        assert line.isdigit(), process.stderr.read().decode() if process.poll() is not None else line
        with grpc.insecure_channel(f"127.0.0.1:{line}") as channel:
            stub = analyzer_pb2_grpc.AnalyzerStub(channel)
            info = stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=20)
        assert info.name == f"accelstack-{pack}"
        assert {p.name for p in info.policies} == {p.name for p in load_pack(directory).policies}
    finally:
        process.kill()
        process.wait(timeout=10)
        process.stdout.close()
        process.stderr.close()


def test_pack_files_pin_the_cli_runtime() -> None:
    for pack in PACKS:
        directory = Path(PACKS_DIR / pack)
        assert (
            "runtime:\n  name: python\n  options:\n    virtualenv: venv"
            in (directory / "PulumiPolicy.yaml").read_text()
        )
        requirements = (directory / "requirements.txt").read_text().split()
        assert requirements[:3] == ["pulumi-policy==1.21.0", "pulumi==3.272.0", "policy-sentry==0.15.2"]
        # Each pin matches the project's own (one version of each library, in the packs and the CLI).
        pinned = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
        assert set(requirements) <= set(pinned), set(requirements) - set(pinned)


def test_packs_import_only_what_their_requirements_install() -> None:
    """The CLI builds each pack's venv from its requirements.txt alone: every third-party module the
    pack's code imports must come from a package listed there (or its dependencies)."""
    allowed = {
        "separation": {"pulumi_policy", "pulumi", "policy_sentry", "yaml", "google", "grpc"},
        "guardrails": {"pulumi_policy", "pulumi", "policy_sentry", "cloudsplaining", "yaml", "google", "grpc"},
    }
    stdlib = set(sys.stdlib_module_names) | {"policies", "__future__"}
    for pack, modules in allowed.items():
        files = [REPO / "policies" / "common.py", REPO / "policies" / "grants.py", REPO / "policies" / "concepts.py"]
        files += sorted((REPO / "policies" / pack).glob("*.py"))
        for path in files:
            for node in ast.walk(ast.parse(path.read_text())):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else ([node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else [])
                )
                for name in names:
                    top = name.split(".")[0]
                    assert top in stdlib or top in modules, (
                        f"{path.name} imports {name}, not in {pack}/requirements.txt"
                    )
