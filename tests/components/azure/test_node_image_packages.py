"""Every Azure boot asks apt only for packages its image can install (apt preferences included).

Mocks boot nothing: the compute nodes' old `apt-get install slurmd slurm-client` deployed green and then had no
candidate on the Ubuntu-HPC image, whose apt preferences pin Ubuntu's `slurm*` packages to priority -1
(Azure/azhpc-images components/slurm-repo/slurm-u.pin, installed as
/etc/apt/preferences.d/slurm-repository-pin-990 by components/install_pmix.sh). So munge was never installed
either (one failed `apt-get install` installs nothing) and no node joined. Here each VM's user data, as the
program deploys it, is read for every package it installs (cloud-config `packages:` and `apt-get install` in its
scripts), and each package is resolved the way apt does: the versions the image's sources offer, each with its
pin priority (apt_preferences(5): a version of priority < 0 is never installed), and a repository counts only if
the boot itself adds it.
"""

from __future__ import annotations

import base64
import fnmatch
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest
import yaml

from accelstack.components.azure.images import HEAD_IMAGE, HPC_NODE_IMAGE
from accelstack.components.azure.node_platform import PMC_SLURM
from accelstack.engine.capture import capture, config_for_pulumi
from accelstack.spec.loader import apply_overrides, read_stack_file

REPO = Path(__file__).resolve().parents[3]
APT_INSTALL = re.compile(r"\bapt-get install((?:[ \t]+-\S+)*)((?:[ \t]+[^\s;|&)}-][^\s;|&)}]*)+)")
UBUNTU = "archive.ubuntu.com"  # Azure's images use azure.archive.ubuntu.com: both match the pin's *ubuntu.com*
PMC = "packages.microsoft.com"
NVIDIA = "nvidia.github.io"
# Repositories a boot must add itself (the marker in its scripts) before it installs from them.
ADDED_BY_THE_BOOT = {PMC: "packages.microsoft.com/repos/slurm-ubuntu-", NVIDIA: "nvidia.github.io/libnvidia-container"}

# What the boots install and which origin offers it. Ubuntu 24.04 (noble) main/universe: Slurm 23.11 and munge
# 0.5.15 in universe, docker.io. PMC's slurm-ubuntu-noble: SchedMD's debian/ packaging (slurm-smd, slurm-smd-client,
# slurm-smd-slurmd, slurm-smd-slurmctld, ...), listed by CycleCloud Slurm's azure-slurm-install/ubuntu.sh.
OFFERED: dict[str, frozenset[str]] = {
    UBUNTU: frozenset(
        {
            "munge",
            "slurmd",
            "slurmctld",
            "slurm-client",
            "curl",
            "unzip",
            "nfs-common",
            "python3-venv",
            "docker.io",
            "build-essential",
        }
    ),
    PMC: frozenset(
        {"slurm-smd", "slurm-smd-client", "slurm-smd-slurmd", "slurm-smd-slurmctld", "slurm-smd-dev", "pmix"}
    ),
    NVIDIA: frozenset({"nvidia-container-toolkit"}),  # NVIDIA's container toolkit repository
}


@dataclass(frozen=True)
class Pin:
    """One apt preferences record: packages (glob), origin (glob), priority."""

    package: str
    origin: str
    priority: int


@dataclass(frozen=True)
class ImageApt:
    description: str
    pins: tuple[Pin, ...] = field(default=())

    def priority(self, package: str, origin: str) -> int:
        """The first record naming both the package and the origin decides; else apt's default 500."""
        for pin in self.pins:
            if fnmatch.fnmatchcase(package, pin.package) and fnmatch.fnmatchcase(origin, pin.origin):
                return pin.priority
        return 500


# The Ubuntu-HPC image's slurm-repository-pin-990 (azhpc-images components/slurm-repo/slurm-u.pin), in order.
HPC_IMAGE_APT = ImageApt(
    "Ubuntu-HPC 24.04 (microsoft-dsvm:ubuntu-hpc)",
    (
        Pin("slurm-smd*", PMC, 990),
        Pin("pmix", PMC, 990),
        Pin("slurm*", "*ubuntu.com*", -1),
        Pin("pmix", "*ubuntu.com*", -1),
    ),
)
CANONICAL_APT = ImageApt("Canonical Ubuntu Server 24.04 LTS")  # no preferences of its own
IMAGES = {HPC_NODE_IMAGE["offer"]: HPC_IMAGE_APT, HEAD_IMAGE["offer"]: CANONICAL_APT}


def requested(document: str) -> tuple[list[str], str]:
    """(package names asked of apt, the scripts' text) of a #cloud-config user data."""
    doc = yaml.safe_load(document)
    texts = [f.get("content", "") for f in doc.get("write_files", [])]
    texts += [" ".join(map(str, c)) if isinstance(c, list) else str(c) for c in doc.get("runcmd", [])]
    names = [str(p if isinstance(p, str) else p[0]) for p in doc.get("packages", [])]
    for text in texts:
        for match in APT_INSTALL.finditer(text.replace("$(uname -r)", "@KERNEL@")):
            names += [word.strip("\"'") for word in match.group(2).split()]
    # A downloaded .deb (apt installs the file; its dependencies come from the sources above) is no repository's.
    local = ("$", "/", "./")
    bare = [name.split("=", 1)[0] for name in names if not name.startswith(local) and "@KERNEL@" not in name]
    return bare, "\n".join(texts)


def problems(image: ImageApt, packages: list[str], script: str) -> list[str]:
    sources = [UBUNTU] + [origin for origin, marker in ADDED_BY_THE_BOOT.items() if marker in script]
    found = []
    for package in packages:
        offered = [(origin, image.priority(package, origin)) for origin in sources if package in OFFERED[origin]]
        if not offered:
            found.append(f"{package}: no source the boot has offers it (sources: {', '.join(sources)})")
        elif max(priority for _, priority in offered) < 0:
            found.append(f"{package}: pinned away on {image.description} ({offered})")
    return found


@cache
def azure_boots() -> list[tuple[str, ImageApt, str]]:
    """(what, image, user data) for every VM and scale set the Azure stacks deploy."""
    boots = []
    for stack, overrides in [
        ("azure-training", []),
        ("azure-training", ["training.nodes.capacity=spot"]),
        ("azure-training", ["training.scheduler.kind=none"]),
        ("azure-serving", []),
    ]:
        raw = apply_overrides(read_stack_file(REPO / "stacks" / f"Pulumi.{stack}.yaml"), overrides)
        cap = capture(REPO / "__main__.py", config_for_pulumi(raw), stack=stack)
        for resource in cap.resources:
            if resource.type not in (
                "azure-native:compute:VirtualMachine",
                "azure-native:compute:VirtualMachineScaleSet",
            ):
                continue
            profile = resource.inputs.get("virtualMachineProfile") or resource.inputs
            image = IMAGES[profile["storageProfile"]["imageReference"]["offer"]]
            data = base64.b64decode(profile["osProfile"]["customData"]).decode()
            boots.append((f"{stack} {' '.join(overrides)} {resource.name}", image, data))
    return boots


def test_every_azure_boot_installs_only_what_its_image_can() -> None:
    boots = azure_boots()
    assert {image.description for _, image, _ in boots} == {HPC_IMAGE_APT.description, CANONICAL_APT.description}
    found, asked = [], set()
    for what, image, data in boots:
        packages, script = requested(data)
        asked |= set(packages)
        found += [f"{what}: {p}" for p in problems(image, packages, script)]
    assert found == []
    assert {"munge", "slurm-smd-slurmd", "slurm-smd-slurmctld", "python3-venv"} <= asked  # the reader reads


def test_head_and_nodes_install_one_slurm_release() -> None:
    """Every Slurm package the Azure boots ask for carries the same pinned version: no head/node skew."""
    versions = set()
    for _, _, data in azure_boots():
        doc = yaml.safe_load(data)
        for text in (f.get("content", "") for f in doc.get("write_files", [])):
            versions |= set(re.findall(r"'slurm-smd[a-z-]*=([^'\s]+)'", text))
    assert versions == {f"{PMC_SLURM.common[1].split('=', 1)[1]}"}


@pytest.mark.parametrize(
    ("image", "packages", "script", "expected"),
    [
        # The old compute boot: Ubuntu's slurmd on the HPC image.
        (HPC_IMAGE_APT, ["munge", "slurmd", "slurm-client"], "", "slurmd: pinned away"),
        # slurm-smd without adding PMC's Slurm repository.
        (HPC_IMAGE_APT, ["slurm-smd-slurmd"], "", "slurm-smd-slurmd: no source"),
        (CANONICAL_APT, ["slurm-smd-slurmctld"], "apt-get update", "slurm-smd-slurmctld: no source"),
    ],
)
def test_the_check_catches_a_pinned_or_missing_package(
    image: ImageApt, packages: list[str], script: str, expected: str
) -> None:
    assert any(expected in p for p in problems(image, packages, script))


def test_the_pin_resolution_follows_apt() -> None:
    """PMC's slurm-smd wins on the HPC image, Ubuntu's slurm packages are refused there and allowed elsewhere."""
    assert HPC_IMAGE_APT.priority("slurm-smd-slurmd", PMC) == 990
    assert HPC_IMAGE_APT.priority("slurmd", "azure.archive.ubuntu.com") == -1
    assert HPC_IMAGE_APT.priority("munge", "azure.archive.ubuntu.com") == 500
    assert CANONICAL_APT.priority("slurmd", "azure.archive.ubuntu.com") == 500
