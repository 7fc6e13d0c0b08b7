"""Boot scripts use only what their image has (`accelstack.components.aws.images.IMAGES`).

Mocks boot nothing, so a script that `apt-get install`s a package its image's repositories dropped
(Ubuntu 24.04's awscli) or calls `amazon-linux-extras` on Amazon Linux 2023 deploys green and then
fails on the node. Every script of every role is checked against its image's row: the installer is
the image's, every package is one its repositories offer, and a tool the image lacks is installed
before use.
"""

from __future__ import annotations

import base64
import email
import platform
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest
import yaml

from accelstack.components import slurm
from accelstack.components.aws.batch import batch_cloud_config, batch_user_data, efa_boothook
from accelstack.components.aws.images import IMAGES, NodeImage
from accelstack.components.aws.node_platform import AWS_CLI_FUNCTION
from accelstack.components.aws.serving import READY_HOOK, replica_user_data
from accelstack.engine.capture import capture, config_for_pulumi
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec import parse_spec
from accelstack.spec.loader import apply_overrides, read_stack_file
from tests.planner.aws_inputs import AWS_CATALOG

REPO = Path(__file__).resolve().parents[2]
INSTALLERS = {
    "apt": re.compile(r"\bapt-get install((?:[ \t]+-\S+)*)((?:[ \t]+[^\s;|&)}-][^\s;|&)}]*)+)"),
    "dnf": re.compile(r"\b(?:dnf|yum) install((?:[ \t]+-\S+)*)((?:[ \t]+[^\s;|&)}-][^\s;|&)}]*)+)"),
    "amazon-linux-extras": re.compile(
        r"\bamazon-linux-extras install((?:[ \t]+-\S+)*)((?:[ \t]+[^\s;|&)}-][^\s;|&)}]*)+)"
    ),
    "snap": re.compile(r"\bsnap install((?:[ \t]+-\S+)*)((?:[ \t]+[^\s;|&)}-][^\s;|&)}]*)+)"),
}
# A package from a repository the script adds itself (FSx's Ubuntu Lustre client repository).
# `$(uname -r)` is read as @KERNEL@ (the running kernel's package).
ADDED_REPOSITORIES = {
    "lustre-client-modules-@KERNEL@": "fsx-lustre-client-repo.s3.amazonaws.com/ubuntu",
    # where the image lacks nvidia-container-cli (enroot's NVIDIA hook), NVIDIA's repository first
    "nvidia-container-toolkit": "nvidia.github.io/libnvidia-container",
}


def spec_of(stack: str, *overrides: str):
    raw = apply_overrides(read_stack_file(REPO / "stacks" / f"Pulumi.{stack}.yaml"), list(overrides))
    return parse_spec(raw, stack)


def _cloud_config_texts(document: str) -> tuple[list[str], list[str]]:
    """(packages, script texts) of a #cloud-config document: write_files contents and runcmd."""
    doc = yaml.safe_load(document)
    texts = [f["content"] for f in doc.get("write_files", [])]
    texts += [" ".join(c) if isinstance(c, list) else c for c in doc.get("runcmd", [])]
    return list(doc.get("packages", [])), texts


@cache
def boot_texts() -> dict[str, list[tuple[str, list[str], list[str]]]]:
    """Per image role: (what, cloud-init packages, script texts) for every script that boots on it."""
    roles: dict[str, list] = {role: [] for role in IMAGES}
    values = slurm.DeployValues.placeholders()
    for stack in ("aws-training", "aws-finetune"):
        for capacity in ("on-demand", "spot"):
            spec = spec_of(stack, f"training.nodes.capacity={capacity}")
            roles["slurm-head"].append(
                (
                    f"{stack} {capacity} head",
                    *_cloud_config_texts(slurm.head_cloud_init(spec, slurm.nodes_for(spec), values)),
                )
            )
            roles["training-node"].append(
                (
                    f"{stack} {capacity} compute",
                    *_cloud_config_texts(slurm.compute_cloud_init(spec, slurm.nodes_for(spec), values)),
                )
            )
    # Nodes without a scheduler: the component's own cloud-init (Lustre client from FSx's repository).
    raw = apply_overrides(
        read_stack_file(REPO / "stacks" / "Pulumi.aws-training.yaml"), ["training.scheduler.kind=none"]
    )
    cap = capture(REPO / "__main__.py", config_for_pulumi(raw), stack="aws-training")
    [template] = [r for r in cap.by_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name == "aws-training-nodes"]
    roles["training-node"].append(
        ("no scheduler", *_cloud_config_texts(base64.b64decode(template.inputs["userData"]).decode()))
    )
    serving = spec_of("aws-serving").serving
    script = replica_user_data(
        serving, plan_serving(serving, AWS_CATALOG), region="us-east-1", group_name="g", hook_name=READY_HOOK,
        request_queue_url="https://q/1", response_queue_url="https://q/2",
    )  # fmt: skip
    roles["serving-replica"].append(("replica", [], [script]))
    batch = batch_user_data(batch_cloud_config("/fsx", "fs.example", "mnt", "/fsx/checkpoints"), efa_boothook())
    parts = [p.get_payload() for p in email.message_from_string(batch).walk() if not p.is_multipart()]
    packages, texts = _cloud_config_texts(next(p for p in parts if p.startswith("#cloud-config")))
    roles["batch-node"].append(("batch", packages, texts + [p for p in parts if p.startswith("#cloud-boothook")]))
    return roles


def problems(image: NodeImage, packages: list[str], texts: list[str]) -> list[str]:
    found = []
    wanted = [(image.package_manager if image.package_manager == "apt" else "dnf", p) for p in packages]
    for text in texts:
        text = text.replace("$(uname -r)", "@KERNEL@")
        for installer, pattern in INSTALLERS.items():
            for match in pattern.finditer(text):
                for package in match.group(2).split():
                    if not package.strip("\"'").startswith(("/", "./")):  # a downloaded .deb is no repository's
                        wanted.append((installer, package.strip("\"'")))
    for installer, package in wanted:
        if installer != image.package_manager:
            found.append(f"{installer} install {package}: {image.description} installs with {image.package_manager}")
        elif package in ADDED_REPOSITORIES:
            if not any(ADDED_REPOSITORIES[package] in t for t in texts):
                found.append(f"{package} needs {ADDED_REPOSITORIES[package]}, which the script does not add")
        elif package not in image.installable:
            found.append(
                f"{package}: not installable on {image.description}: {image.absent.get(package, 'not in the table')}"
            )
    script = "\n".join(texts)
    calls_aws = re.search(r"(^|[\s;|&(])aws\s", re.sub(r"#.*", "", script), re.MULTILINE)
    if calls_aws and "aws" not in image.ships and not re.search(r"^\s*ensure_aws_cli\b", script, re.MULTILINE):
        found.append(f"calls `aws` but {image.description} does not ship it and ensure_aws_cli is never called")
    return found


@pytest.mark.parametrize("role", list(IMAGES))
def test_boot_scripts_use_only_what_their_image_has(role: str) -> None:
    image = IMAGES[role]
    booted = boot_texts()[role]
    assert booted, f"no script boots on {role}"
    assert [f"{what}: {p}" for what, packages, texts in booted for p in problems(image, packages, texts)] == []


@pytest.mark.parametrize(
    ("role", "text", "expected"),
    [
        ("slurm-head", "apt-get update && apt-get install -y awscli", "awscli: not installable"),
        (
            "batch-node",
            "amazon-linux-extras install -y lustre || dnf install -y lustre-client",
            "amazon-linux-extras install lustre",
        ),
        ("batch-node", "apt-get install -y lustre-client", "apt install lustre-client"),
        ("slurm-head", "aws secretsmanager get-secret-value --secret-id x", "does not ship it"),
        ("training-node", 'apt-get install -y "lustre-client-modules-$(uname -r)"', "which the script does not add"),
    ],
)
def test_the_check_catches_each_kind_of_mistake(role: str, text: str, expected: str) -> None:
    """Guards the guard: the old head script (apt awscli), the old Batch script (AL2's
    amazon-linux-extras), a wrong installer, an unguarded `aws` and a repository never added."""
    assert any(expected in p for p in problems(IMAGES[role], [], [text]))


FAKE = """#!/bin/bash
echo "$(basename "$0") $*" >> "$LOG"
case "$(basename "$0") $*" in "apt-get install"*unzip*) cp "$0" "$(dirname "$0")/unzip" ;; esac
if [ "$(basename "$0")" = unzip ]; then
  dir="${@: -1}"; mkdir -p "$dir/aws"
  printf '#!/bin/bash\\necho "aws-install $*" >> "$LOG"\\n' > "$dir/aws/install"; chmod +x "$dir/aws/install"
fi
"""


def test_ensure_aws_cli_installs_the_v2_bundle_not_a_deb(tmp_path: Path) -> None:
    """On an image without `aws` (and without unzip), the function fetches AWS's bundle for this
    machine's architecture and runs its installer; it never asks apt for awscli."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for command in ("curl", "apt-get"):  # no unzip: apt-get's fake installs it
        (bin_dir / command).write_text(FAKE)
        (bin_dir / command).chmod(0o755)
    # Only the fakes and the few base tools the function needs: the test host may have aws or unzip.
    for tool in ("mktemp", "rm", "uname", "mkdir", "chmod", "basename"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    (bin_dir / "cp").symlink_to(shutil.which("cp"))
    (bin_dir / "dirname").symlink_to(shutil.which("dirname"))
    log = tmp_path / "log"
    script = AWS_CLI_FUNCTION + "ensure_aws_cli\n"
    env = {"PATH": str(bin_dir), "LOG": str(log)}
    subprocess.run([shutil.which("bash"), "-euo", "pipefail", "-c", script], env=env, check=True, timeout=30)
    assert [c.split()[:3] for c in log.read_text().splitlines() if c.startswith("apt-get")] == [
        ["apt-get", "update", "-q"],
        ["apt-get", "install", "-y"],
    ]
    calls = log.read_text().splitlines()
    [download] = [c for c in calls if c.startswith("curl")]
    assert f"https://awscli.amazonaws.com/awscli-exe-linux-{platform.machine()}.zip" in download
    assert any(c.startswith("aws-install --update") for c in calls)
    assert not any("awscli" in c for c in calls if c.startswith("apt-get"))
