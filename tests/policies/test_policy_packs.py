"""The packs load under pulumi-policy: as the CLI runs them (a gRPC analyzer on 127.0.0.1) and as the
offline runner loads them (`__main__.py` with PolicyPack recorded); both expose the same policies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from google.protobuf import empty_pb2
from pulumi.runtime import proto
from pulumi.runtime.proto import analyzer_pb2_grpc

from accelstack.engine.policy_runner import PACKS, PACKS_DIR, load_pack

STACK_POLICIES = {
    "separation": {"disjoint-accounts", "cross-account-read-only-final"},
    "guardrails": {
        "bucket-encryption", "bucket-public-access-block", "no-public-buckets-final", "internet-ingress-only-to-load-balancer",
        "no-secrets-in-user-data-final", "iam-least-privilege-final", "bucket-versioning", "queue-dlq",
        "spot-training-needs-checkpoints", "serving-scales-on-queue-depth",
        # policies/guardrails/observability.py
        "vpc-flow-logs", "default-security-group-closed", "bucket-access-logging", "waf-logging",
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
        assert {"workload", "trainingAccounts", "servingAccounts", "allowedRegions"} <= set(policy.configSchema.properties)


@pytest.mark.parametrize("pack", PACKS)
def test_every_rule_names_what_it_mirrors(pack: str) -> None:
    for policy in load_pack(PACKS_DIR / pack).policies:
        doc = policy.check.__doc__ or ""
        assert any(marker in doc for marker in ("CKV", "AVD-AWS", "https://", "Ours", "ours", "repeat of")), policy.name


@pytest.mark.parametrize("pack", PACKS)
def test_pack_serves_under_pulumi_policy_like_the_cli_runs_it(pack: str) -> None:
    """`python __main__.py` from the pack dir prints a port and serves the analyzer over gRPC (loopback)."""
    directory = PACKS_DIR / pack
    process = subprocess.Popen([sys.executable, "__main__.py"], cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
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
        assert "runtime:\n  name: python\n  options:\n    virtualenv: venv" in (directory / "PulumiPolicy.yaml").read_text()
        assert (directory / "requirements.txt").read_text().split() == ["pulumi-policy==1.21.0", "pulumi==3.272.0"]
