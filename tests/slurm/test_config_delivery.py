"""Slurm's configuration files out of the head's boot data: the bundle, and the head's installer run for real.

The installer is the script the head's cloud-init writes (read back from `head_cloud_init`), run with bash as
each cloud's head runs it: its own fetch command reads the bundle through stand-in CLIs on PATH (`aws` for the
SSM parameter, `curl` for IMDS + Key Vault and for the GCE metadata server), and stand-in `scontrol` and
`systemctl` record what it asks of Slurm. Nothing here defines a shell function for the script.
"""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from accelstack.components import slurm
from accelstack.components.aws.node_platform import AwsNodePlatform
from accelstack.components.azure.node_platform import AzureNodePlatform
from accelstack.components.gcp.node_platform import GcpNodePlatform
from accelstack.components.slurm.config_delivery import (
    CONFIG_FILES,
    CONFIG_SYNC_PATH,
    CONFIG_SYNC_UNIT,
    bundle_files,
    config_bundle,
)
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file

REPO = Path(__file__).resolve().parents[2]
TRAINING_STACKS = ("aws-training", "aws-finetune", "azure-training", "gcp-training")
SSM_STANDARD_TIER_CHARS = (
    4096  # docs.aws.amazon.com/systems-manager/latest/userguide/parameter-store-advanced-parameters.html
)

# Each cloud's head as the components build it: its platform and the reference its config command reads.
CLOUDS = {
    "aws-training": (AwsNodePlatform(region="us-east-1"), "/accelstack/aws-training/slurm-config"),
    "azure-training": (
        AzureNodePlatform(identity_client_id="00000000-0000-0000-0000-00000000c0de"),
        "https://azure-training-kv.vault.azure.net/secrets/slurm-config",
    ),
    "gcp-training": (GcpNodePlatform(), "accelstack-slurm-config"),
}

# Stand-ins for the clouds' endpoints: they answer the bundle in $FAKE/bundle.b64 (as the store keeps it: base64
# text), fail while $FAKE/unreachable exists, and log each call to $FAKE/calls.
FAKE_AWS = """#!/usr/bin/env python3
import os, sys
fake = os.environ["FAKE"]
open(os.path.join(fake, "calls"), "a").write("aws " + " ".join(sys.argv[1:]) + "\\n")
args = sys.argv[1:]
wanted = ["ssm", "get-parameter", "--region", "us-east-1", "--name", "/accelstack/aws-training/slurm-config",
          "--with-decryption", "--query", "Parameter.Value", "--output", "text"]
if args != wanted or os.path.exists(os.path.join(fake, "unreachable")):
    sys.exit(254)
print(open(os.path.join(fake, "bundle.b64")).read())
"""
FAKE_CURL = """#!/usr/bin/env python3
import json, os, sys
fake = os.environ["FAKE"]
url = next(a for a in sys.argv[1:] if a.startswith("http"))
open(os.path.join(fake, "calls"), "a").write("curl " + url + "\\n")
bundle = open(os.path.join(fake, "bundle.b64")).read()
if "/metadata/identity/oauth2/token" in url and "resource=https://vault.azure.net&client_id=00000000-0000-0000-0000-00000000c0de" in url:
    print(json.dumps({"access_token": "token"}))
elif os.path.exists(os.path.join(fake, "unreachable")):
    sys.exit(22)
elif url.startswith("https://azure-training-kv.vault.azure.net/secrets/slurm-config?") and "Authorization: Bearer token" in sys.argv:
    print(json.dumps({"value": bundle, "contentType": "application/gzip;base64"}))
elif url == "http://metadata.google.internal/computeMetadata/v1/instance/attributes/accelstack-slurm-config" \\
        and "Metadata-Flavor:Google" in sys.argv:
    print(bundle)
else:
    sys.exit(22)
"""
FAKE_SCONTROL = """#!/usr/bin/env python3
import os, sys
fake = os.environ["FAKE"]
if sys.argv[1:] == ["--version"]:
    print("slurm-wlm " + open(os.path.join(fake, "slurm-version")).read().strip())
    sys.exit(0)
open(os.path.join(fake, "calls"), "a").write("scontrol " + " ".join(sys.argv[1:]) + "\\n")
sys.exit(1 if os.path.exists(os.path.join(fake, "refuse")) else 0)
"""
FAKE_SYSTEMCTL = """#!/usr/bin/env python3
import os, sys
fake = os.environ["FAKE"]
args = sys.argv[1:]
if args[:1] == ["is-active"]:
    sys.exit(0 if os.path.exists(os.path.join(fake, "slurmctld-active")) else 3)
open(os.path.join(fake, "calls"), "a").write("systemctl " + " ".join(args) + "\\n")
"""


def spec_for(stack: str, *overrides: str):
    return parse_spec(
        apply_overrides(read_stack_file(REPO / "stacks" / f"Pulumi.{stack}.yaml"), list(overrides)), stack
    )


def bundle_for(stack: str, *overrides: str) -> str:
    spec = spec_for(stack, *overrides)
    return config_bundle(slurm.config_files(spec, slurm.nodes_for(spec)))


@dataclass
class Head:
    """One head's installer, its configuration directory and its stand-in cloud and Slurm."""

    stack: str
    script: Path
    conf: Path
    fake: Path
    env: dict[str, str]

    def store(self, bundle: str) -> None:
        (self.fake / "bundle.b64").write_text(bundle)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(self.script), *args], env=self.env, capture_output=True, text=True, timeout=60
        )

    def calls(self) -> list[str]:
        path = self.fake / "calls"
        return path.read_text().splitlines() if path.exists() else []

    def slurm_calls(self) -> list[str]:
        return [c for c in self.calls() if c.startswith(("scontrol", "systemctl"))]

    def installed(self) -> dict[str, str]:
        return {p.name: p.read_text() for p in self.conf.iterdir() if p.is_file()}

    def leftovers(self) -> list[str]:
        return [p.name for p in self.conf.iterdir() if not p.is_file()]


def head_written_script(stack: str, reference: str, platform: object) -> str:
    """The installer exactly as the head's cloud-init writes it."""
    spec = spec_for(stack)
    nodes = slurm.Nodes(platform, slurm.nodes_for(spec).instance)  # type: ignore[arg-type]
    values = slurm.DeployValues(slurm_config=reference, head_address="10.0.0.10", state_volume="state")
    document = yaml.safe_load(slurm.head_cloud_init(spec, nodes, values))
    [entry] = [f for f in document["write_files"] if f["path"] == CONFIG_SYNC_PATH]
    assert entry["permissions"] == "0755"
    return entry["content"]


def make_head(stack: str, tmp_path: Path, reference: str | None = None) -> Head:
    platform, deployed_reference = CLOUDS[stack]
    script = tmp_path / "accelstack-slurm-config"
    reference = deployed_reference if reference is None else reference
    script.write_text(head_written_script(stack, reference, platform))
    fake, bin_dir, conf = tmp_path / "fake", tmp_path / "bin", tmp_path / "etc-slurm"
    fake.mkdir()
    bin_dir.mkdir()
    for name, text in {
        "aws": FAKE_AWS,
        "curl": FAKE_CURL,
        "scontrol": FAKE_SCONTROL,
        "systemctl": FAKE_SYSTEMCTL,
    }.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755 | stat.S_IXUSR)
    (fake / "slurm-version").write_text("23.11.4")
    (fake / "slurmctld-active").touch()
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "FAKE": str(fake),
        "ACCELSTACK_SLURM_CONF_DIR": str(conf),
        "HOME": str(tmp_path),
    }
    head = Head(stack, script, conf, fake, env)
    head.store(bundle_for(stack))
    return head


@pytest.fixture(params=sorted(CLOUDS))
def head(request: pytest.FixtureRequest, tmp_path: Path) -> Head:
    return make_head(request.param, tmp_path)


def test_the_bundle_is_the_same_bytes_for_the_same_files() -> None:
    files = slurm.config_files(spec_for("aws-training"), slurm.nodes_for(spec_for("aws-training")))
    assert tuple(files) == CONFIG_FILES
    assert config_bundle(files) == config_bundle(dict(reversed(list(files.items()))))
    assert bundle_files(config_bundle(files)) == files


@pytest.mark.parametrize("stack", TRAINING_STACKS)
def test_every_shipped_bundle_fits_the_free_ssm_tier(stack: str) -> None:
    """Compressed, every shipped stack's files take about half of SSM's standard tier, and 64 partitions with a
    feature each still fit (Key Vault takes 25 KB, a metadata value 256 KB)."""
    assert len(bundle_for(stack)) < SSM_STANDARD_TIER_CHARS
    many = ", ".join(
        f"{{name: p{i}, maxTime: '1-00:00:00', features: [f{i}], default: {str(i == 0).lower()}}}" for i in range(64)
    )
    assert len(bundle_for(stack, f"training.scheduler.partitions=[{many}]")) < SSM_STANDARD_TIER_CHARS


def test_the_head_boot_data_carries_no_slurm_configuration() -> None:
    """What follows the node count and partitions is out of the head's cloud-init: its text is the same for
    4 or 64 nodes and for other partitions, while the bundle differs."""
    values = slurm.DeployValues(slurm_config=CLOUDS["aws-training"][1])
    edits = [
        (),
        ("training.nodes.count=64",),
        ("training.scheduler.partitions=[{name: all, maxTime: '1-00:00:00', default: true}]",),
    ]
    heads, bundles = set(), set()
    for edit in edits:
        spec = spec_for("aws-training", *edit)
        heads.add(slurm.head_cloud_init(spec, slurm.nodes_for(spec), values))
        bundles.add(bundle_for("aws-training", *edit))
    assert len(heads) == 1 and len(bundles) == len(edits)
    [text] = heads
    assert "MaxNodeCount=" not in text and "PartitionName=" not in text and "NodeSet=" not in text
    assert f"{CONFIG_SYNC_UNIT}.timer" in text and f"{CONFIG_SYNC_PATH} install" in text


def test_first_boot_installs_the_files_without_touching_slurm(head: Head) -> None:
    result = head.run("install")
    assert result.returncode == 0, result.stdout + result.stderr
    spec = spec_for(head.stack)
    assert head.installed() == slurm.config_files(spec, slurm.nodes_for(spec))
    assert head.slurm_calls() == []
    assert head.leftovers() == []
    for path in head.conf.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_an_unchanged_configuration_does_nothing(head: Head) -> None:
    assert head.run("install").returncode == 0
    before = {p.name: p.stat().st_mtime_ns for p in head.conf.iterdir()}
    result = head.run()
    assert result.returncode == 0, result.stdout + result.stderr
    assert {p.name: p.stat().st_mtime_ns for p in head.conf.iterdir()} == before
    assert head.slurm_calls() == []


def test_a_node_count_and_partition_change_is_installed_and_reconfigured(head: Head) -> None:
    assert head.run("install").returncode == 0
    edits = (
        "training.nodes.count=6",
        "training.scheduler.partitions=[{name: all, maxTime: '1-00:00:00', default: true}]",
    )
    head.store(bundle_for(head.stack, *edits))
    result = head.run()
    assert result.returncode == 0, result.stdout + result.stderr
    conf = head.installed()["slurm.conf"]
    assert "MaxNodeCount=12" in conf and "PartitionName=all " in conf
    assert head.installed()["gres.conf"] == bundle_files(bundle_for(head.stack, *edits))["gres.conf"]
    assert head.slurm_calls() == ["scontrol reconfigure"]
    assert "installed slurm.conf" in result.stdout
    assert head.leftovers() == []


def test_a_failed_fetch_leaves_the_running_configuration_and_says_so(head: Head) -> None:
    assert head.run("install").returncode == 0
    before = head.installed()
    head.store(bundle_for(head.stack, "training.nodes.count=6"))
    (head.fake / "unreachable").touch()
    result = head.run()
    assert result.returncode != 0
    assert "could not read the configuration" in result.stdout
    assert head.installed() == before
    assert head.slurm_calls() == []
    assert head.leftovers() == []


def installed_aws_head(tmp_path: Path) -> Head:
    """The neutral logic (versions, restore, checks) once, on AWS's head, after its first boot."""
    h = make_head("aws-training", tmp_path)
    assert h.run("install").returncode == 0
    return h


def test_before_23_11_a_max_node_count_change_restarts_slurmctld(tmp_path: Path) -> None:
    """slurm.conf(5) of 22.05 and 23.02: MaxNodeCount needs a slurmctld restart; a partition change alone does not."""
    h = installed_aws_head(tmp_path)
    (h.fake / "slurm-version").write_text("22.05.8")
    h.store(bundle_for("aws-training", "training.nodes.count=6"))
    assert h.run().returncode == 0
    assert h.slurm_calls() == ["systemctl restart slurmctld"]
    h.store(bundle_for("aws-training", "training.nodes.count=6", "training.scheduler.partitions.0.maxTime=1-00:00:00"))
    assert h.run().returncode == 0
    assert h.slurm_calls() == ["systemctl restart slurmctld", "scontrol reconfigure"]


def test_a_configuration_slurmctld_refuses_is_put_back_and_retried(tmp_path: Path) -> None:
    h = installed_aws_head(tmp_path)
    before = h.installed()
    (h.fake / "refuse").touch()
    h.store(bundle_for("aws-training", "training.nodes.count=6"))
    result = h.run()
    assert result.returncode != 0
    assert "failed; putting the previous files back" in result.stdout
    assert h.installed() == before
    (h.fake / "refuse").unlink()
    assert h.run().returncode == 0  # the next run sees the change again
    assert h.slurm_calls() == ["scontrol reconfigure", "scontrol reconfigure"]
    assert "MaxNodeCount=12" in h.installed()["slurm.conf"]


def test_a_stopped_slurmctld_only_gets_the_files(tmp_path: Path) -> None:
    h = installed_aws_head(tmp_path)
    (h.fake / "slurmctld-active").unlink()
    h.store(bundle_for("aws-training", "training.nodes.count=6"))
    result = h.run()
    assert result.returncode == 0 and "reads the new files when it starts" in result.stdout
    assert h.slurm_calls() == []


@pytest.mark.parametrize(
    ("label", "bundle"),
    [
        ("another cluster's", lambda: bundle_for("aws-finetune")),
        ("missing gres.conf", lambda: config_bundle({"slurm.conf": "ClusterName=aws-training\n", "cgroup.conf": ""})),
        ("not a bundle", lambda: "bm90IGEgdGFyCg=="),
    ],
)
def test_a_bundle_that_is_not_this_clusters_leaves_the_files(tmp_path: Path, label: str, bundle) -> None:
    h = installed_aws_head(tmp_path)
    before = h.installed()
    h.store(bundle())
    result = h.run()
    assert result.returncode != 0, label
    assert h.installed() == before
    assert h.slurm_calls() == []
    assert h.leftovers() == []


@pytest.mark.parametrize("stack", sorted(CLOUDS))
def test_the_stand_ins_answer_only_the_deployed_reference(tmp_path: Path, stack: str) -> None:
    """Guards the stand-ins: a head reading another object gets nothing (else any command would pass)."""
    h = make_head(stack, tmp_path, reference="another-object")
    result = h.run()
    assert result.returncode != 0
    assert h.installed() == {}
    assert h.calls()  # it did ask
