"""The packs load under pulumi-policy: as the CLI runs them (a gRPC analyzer on 127.0.0.1) and as the
offline runner loads them (`__main__.py` with PolicyPack recorded); both expose the same policies."""

from __future__ import annotations

import ast
import json
import shutil
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
    "separation": {
        "accounts-configured",
        "disjoint-accounts",
        "cross-account-read-only-final",
        "no-network-path-across-sides",
        "landing-guardrails",
        "store-keys-only-where-needed",
        "handoff-reader-expires",  # a Vultr replica's PAR on OCI weights: its expiry against its clock (issue 31)
        "handoff-copy-into-own-store",  # a serving stack's copy of another cloud's artifacts (issue 31)
    },
    "guardrails": {
        "bucket-encryption",
        "bucket-public-access-block",
        "nodes-in-private-subnets",
        "no-scheduled-data-loss",
        "no-public-buckets-final",
        "internet-ingress-only-to-load-balancer",
        "internet-reaches-only-the-front-door",
        "no-secrets-in-user-data-final",
        "iam-least-privilege-final",
        "bucket-versioning",
        "queue-dlq",
        "spot-training-needs-checkpoints",
        "serving-scales-on-queue-depth",
        "http-only-redirects",
        "waf-rate-limit",
        "service-logs",
        "soft-delete-retention",
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


def _imports(tree: ast.AST) -> list[str]:
    return [
        name
        for node in ast.walk(tree)
        for name in (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else ([node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else [])
        )
    ]


def test_packs_import_only_what_their_requirements_install() -> None:
    """The CLI builds each pack's venv from its requirements.txt alone: every third-party module the
    pack's code imports must come from a package listed there (or its dependencies). The shared modules
    (everything outside the pack folders: common, concepts, the vendors) load in both packs: what they
    import when loaded must be in both packs' requirements; an import inside a function runs only for the
    policy that calls it (the standalone load below checks each pack without the other's libraries)."""
    allowed = {
        "separation": {"pulumi_policy", "pulumi", "policy_sentry", "yaml", "google", "grpc"},
        "guardrails": {"pulumi_policy", "pulumi", "policy_sentry", "cloudsplaining", "yaml", "google", "grpc"},
    }
    stdlib = set(sys.stdlib_module_names) | {"policies", "__future__"}
    root = REPO / "policies"
    shared = [p for p in sorted(root.rglob("*.py")) if p.relative_to(root).parts[0] not in allowed]
    assert {"common.py", "concepts.py", "vendors.py", "readers.py"} <= {p.name for p in shared}
    both, either = set.intersection(*allowed.values()), set.union(*allowed.values())
    checked: list[tuple[Path, set[str], list[str]]] = []
    for path in shared:
        tree = ast.parse(path.read_text())
        loaded = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        checked.append((path, both, _imports(ast.Module(body=loaded, type_ignores=[]))))
        checked.append((path, either, _imports(tree)))
    for pack, modules in allowed.items():
        checked += [
            (path, modules, _imports(ast.parse(path.read_text()))) for path in sorted((root / pack).glob("*.py"))
        ]
    for path, modules, names in checked:
        for name in names:
            top = name.split(".")[0]
            assert top in stdlib or top in modules, f"{path.relative_to(root)} imports {name}, not in {sorted(modules)}"


STANDALONE = """
import importlib.abc, json, runpy, sys

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in REFUSED:
            raise ImportError(f"{name} is not installed in this pack's venv")
        return None

REFUSED = set(sys.argv[1].split(","))
sys.meta_path.insert(0, Refuse())
import pulumi_policy

recorded = {}

class Recorder:
    def __init__(self, name, policies, **kwargs):
        recorded.update(name=name, policies=[p.name for p in policies])

pulumi_policy.PolicyPack = Recorder
runpy.run_path("__main__.py", run_name="__main__")
files = sorted({m.__file__ for n, m in sys.modules.items() if n.split(".")[0] == "policies" and m.__file__})
print(json.dumps({**recorded, "files": files, "accelstack": "accelstack" in sys.modules}))
"""


@pytest.mark.parametrize("pack", PACKS)
def test_pack_loads_standalone_from_its_own_folder(pack: str, tmp_path: Path) -> None:
    """As the CLI loads a pack (its folder, its own venv): a copy of policies/ outside the repository, run
    isolated from the environment, with accelstack (and the other pack's libraries) not importable."""
    copy = tmp_path / "policies"
    shutil.copytree(REPO / "policies", copy, ignore=shutil.ignore_patterns("__pycache__"))
    refused = ["accelstack", "components"] + (["cloudsplaining"] if pack == "separation" else [])
    result = subprocess.run(
        [sys.executable, "-I", "-c", STANDALONE, ",".join(refused)],
        cwd=copy / pack,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.splitlines()[-1])
    assert loaded["name"] == f"accelstack-{pack}" and not loaded["accelstack"]
    assert loaded["policies"] == [p.name for p in load_pack(PACKS_DIR / pack).policies]
    assert all(Path(f).is_relative_to(copy) for f in loaded["files"]), loaded["files"]
    assert {str(copy / "vendors.py"), str(copy / "gcp" / "__init__.py")} <= set(loaded["files"])
