"""NCCL/gIB on the RDMA machine types (A3 Ultra, A4): Google's plugin and its NCCL installed pinned and held at first
boot, its settings resolved at every boot and handed to the tasks of multi-node jobs, the RDMA ports checked before
one starts. The boot script and Prolog run for real (bash) against a fake sysfs and a settings script shaped like
Google's; the install is read as rendered (it writes system paths). Also A3 Mega's dma-buf helper patch."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from accelstack.clouds import registry
from accelstack.clouds.gcp.catalog import GPUDIRECT_GIB, GPUDIRECT_TCPXO
from accelstack.components import slurm
from accelstack.components.gcp import gpudirect
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file

EXAMPLE = Path(__file__).resolve().parents[3] / "stacks" / "Pulumi.gcp-training.yaml"
CATALOG = registry.get("gcp").catalog.instances
RDMA_TYPES = sorted(name for name, itype in CATALOG.items() if itype.fabric == "rdma")

# A settings script shaped like /usr/local/gib/scripts/set_nccl_env.sh: exports through variables and a machine
# check, sets a library path and the eth names of a non-Ubuntu guest.
GIB_SETTINGS = r"""gib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export LD_LIBRARY_PATH="${gib_dir}/lib64:${LD_LIBRARY_PATH}"
export NCCL_NET=gIB
export NCCL_SOCKET_IFNAME=eth0,eth1
export NCCL_CROSS_NIC=0
export NCCL_NET_GDR_LEVEL=PIX
export NCCL_IB_GID_INDEX=3
export NCCL_IB_TC=52
export NCCL_TUNER_CONFIG_PATH="${gib_dir}/configs/tuner_config.txtpb"
"""


def spec(*overrides: str):
    return parse_spec(apply_overrides(read_stack_file(EXAMPLE), list(overrides)), "gcp-training")


def hooks_for(machine_type: str):
    hooks = gpudirect.fabric_hooks(CATALOG[machine_type])
    assert hooks is not None
    return hooks


def run(script: str, env: dict[str, str], tmp_path: Path, **job: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "script.sh"
    path.write_text(script)
    return subprocess.run(["bash", str(path)], env={**env, **job}, capture_output=True, text=True, timeout=30)


@pytest.fixture
def node(tmp_path: Path) -> dict[str, str]:
    """An A3 Ultra / A4 node: 8 RDMA NICs with active ports, the two gVNICs, nccl-gib's settings script."""
    sysfs = tmp_path / "sys"
    for index in range(8):
        port = sysfs / "class" / "infiniband" / f"mlx5_{index}" / "ports" / "1"
        port.mkdir(parents=True)
        (port / "state").write_text("4: ACTIVE\n")
    for nic in GPUDIRECT_GIB.socket_nics:
        (sysfs / "class" / "net" / nic).mkdir(parents=True)
    script = tmp_path / "gib" / "scripts" / "set_nccl_env.sh"
    script.parent.mkdir(parents=True)
    script.write_text(GIB_SETTINGS)
    return {
        "PATH": os.environ["PATH"],
        "ACCELSTACK_SYSFS": str(sysfs),
        "ACCELSTACK_GIB_SCRIPT": str(script),
        "ACCELSTACK_FABRIC_ENV": str(tmp_path / "fabric.env"),
    }


# --- which machine types get it, and what is installed ------------------------------------------------


def test_every_rdma_machine_type_gets_gib_and_no_other_does():
    assert RDMA_TYPES == ["a3-ultragpu-8g", "a4-highgpu-8g"]
    for name, itype in CATALOG.items():
        hooks = gpudirect.fabric_hooks(itype)
        assert (hooks is not None and hooks.name.startswith("NCCL/gIB")) is (itype.fabric == "rdma"), name


@pytest.mark.parametrize("machine_type", RDMA_TYPES)
def test_the_first_boot_installs_the_pinned_plugin_and_its_nccl_and_holds_both(machine_type):
    install = hooks_for(machine_type).install
    subprocess.run(["bash", "-n"], input=f"f() {{\n{install}\n}}", text=True, check=True)
    assert f'"libnccl2={GPUDIRECT_GIB.nccl_version}" "nccl-gib={GPUDIRECT_GIB.plugin_version}"' in install
    assert "apt-mark hold libnccl2 nccl-gib" in install
    assert (
        f'{GPUDIRECT_GIB.plugin_repository}"' in install
        and "signed-by=/usr/share/keyrings/gpudirect-gib.gpg" in install
    )
    assert "apt-get install -y apt-transport-artifact-registry" in install  # the ar+https transport, before its repo
    assert install.index("apt-transport-artifact-registry\n") < install.index("gpudirect-gib-apt")
    assert GPUDIRECT_GIB.cuda_keyring_url in install  # libnccl2's repository


@pytest.mark.parametrize("machine_type", RDMA_TYPES)
def test_the_compute_node_installs_it_and_its_tasks_get_the_settings_and_libraries(machine_type, tmp_path):
    stack = spec(f"training.nodes.instanceType={machine_type}")
    nodes = slurm.nodes_for(stack)
    hooks = hooks_for(machine_type)
    doc = yaml.safe_load(slurm.compute_cloud_init(stack, nodes, slurm.DeployValues.placeholders()))
    files = {f["path"]: f["content"] for f in doc["write_files"]}
    assert f"nccl-gib={GPUDIRECT_GIB.plugin_version}" in files[slurm.COMPUTE_SETUP_PATH]
    assert files[slurm.FABRIC_SETUP_PATH] == hooks.boot_script and files[slurm.PROLOG_PATH] == hooks.prolog
    conf = slurm.slurm_conf(stack, nodes).splitlines()
    assert f"Prolog={slurm.PROLOG_PATH}" in conf and f"BatchStartTimeout={gpudirect.GIB_PROLOG_SECONDS}" in conf
    # The TaskProlog as rendered, run with the settings the boot script wrote.
    (tmp_path / "fabric.env").write_text("NCCL_NET=gIB\nNCCL_IB_TC=52\n")
    task_prolog = files[slurm.TASK_PROLOG_PATH].replace(hooks.environment_file, str(tmp_path / "fabric.env"))
    done = subprocess.run(
        ["bash", "-c", task_prolog],
        env={"PATH": os.environ["PATH"], "SLURM_JOB_NUM_NODES": "2"},
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert "export NCCL_NET=gIB" in lines and "export NCCL_IB_TC=52" in lines
    assert f"export LD_LIBRARY_PATH={GPUDIRECT_GIB.library_path}" in lines


# --- the boot script ------------------------------------------------------------------------------------


def settings(tmp_path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in (tmp_path / "fabric.env").read_text().splitlines())


def test_boot_writes_the_scripts_settings_resolved_with_gib_and_ubuntus_bootstrap_nics(node, tmp_path):
    result = run(hooks_for("a3-ultragpu-8g").boot_script, node, tmp_path)
    assert result.returncode == 0, result.stderr
    assert settings(tmp_path) == {
        "NCCL_CROSS_NIC": "0",
        "NCCL_NET_GDR_LEVEL": "PIX",
        "NCCL_IB_GID_INDEX": "3",
        "NCCL_IB_TC": "52",
        "NCCL_TUNER_CONFIG_PATH": f"{tmp_path}/gib/configs/tuner_config.txtpb",
        "NCCL_NET": "gIB",
        "NCCL_SOCKET_IFNAME": ",".join(GPUDIRECT_GIB.socket_nics),  # the guest's names, not the script's eth0,eth1
    }


def test_boot_fails_without_the_plugin_so_slurmd_stays_down(node, tmp_path):
    Path(node["ACCELSTACK_GIB_SCRIPT"]).unlink()
    result = run(hooks_for("a4-highgpu-8g").boot_script, node, tmp_path)
    assert result.returncode == 1 and "nccl-gib not installed" in result.stderr
    assert not (tmp_path / "fabric.env").exists()


def test_boot_fails_when_an_rdma_nic_is_missing(node, tmp_path):
    for path in sorted((tmp_path / "sys/class/infiniband/mlx5_7").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    (tmp_path / "sys/class/infiniband/mlx5_7").rmdir()
    result = run(hooks_for("a4-highgpu-8g").boot_script, node, tmp_path)
    assert result.returncode == 1 and "7 of 8 RDMA NICs" in result.stderr


# --- the Prolog -----------------------------------------------------------------------------------------


def test_a_multi_node_job_starts_when_every_rdma_port_is_active(node, tmp_path):
    hooks = hooks_for("a3-ultragpu-8g")
    assert run(hooks.boot_script, node, tmp_path).returncode == 0
    result = run(hooks.prolog, node, tmp_path, SLURM_JOB_ID="4", SLURM_JOB_NUM_NODES="2")
    assert result.returncode == 0, result.stderr
    assert run(hooks.epilog, node, tmp_path, SLURM_JOB_ID="4").returncode == 0


def test_a_port_down_fails_the_prolog_so_slurm_drains_the_node(node, tmp_path):
    hooks = hooks_for("a3-ultragpu-8g")
    assert run(hooks.boot_script, node, tmp_path).returncode == 0
    (tmp_path / "sys/class/infiniband/mlx5_3/ports/1/state").write_text("1: DOWN\n")
    result = run(hooks.prolog, node, tmp_path, SLURM_JOB_ID="4", SLURM_JOB_NUM_NODES="2")
    assert result.returncode == 1 and "7 of 8 RDMA ports active" in result.stderr and "mlx5_3" in result.stderr
    # A one-node job does not use the fabric: it runs.
    assert run(hooks.prolog, node, tmp_path, SLURM_JOB_ID="5", SLURM_JOB_NUM_NODES="1").returncode == 0


# --- A3 Mega's dma-buf import helper --------------------------------------------------------------------


def _patch_decision() -> str:
    (line,) = [line for line in gpudirect.tcpxo_hooks().install.splitlines() if "sort -V" in line]
    return line.strip()


@pytest.mark.parametrize(
    ("kernel", "patched"),
    [("6.17.0-1010-gcp", True), ("6.13.0-1001-gcp", True), ("6.8.0-1015-gcp", False), ("6.11.0-1004-gcp", False)],
)
def test_the_helper_source_is_patched_only_for_kernels_whose_module_import_ns_takes_a_string(kernel, patched, tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "uname").write_text(f"#!/bin/bash\necho {kernel}\n")
    (fake / "uname").chmod(0o755)
    script = f"{_patch_decision()}\n    echo patch\nfi\n"
    done = subprocess.run(
        ["bash", "-c", script], env={"PATH": f"{fake}:{os.environ['PATH']}"}, capture_output=True, text=True
    )
    assert (done.stdout.strip() == "patch") is patched


def test_the_helper_is_built_by_dkms_from_the_patched_source_not_by_its_package_install():
    install = gpudirect.tcpxo_hooks().install
    package, version = GPUDIRECT_TCPXO.helper_package, GPUDIRECT_TCPXO.helper_version
    assert f"apt-get install -y {package}" not in install  # its own postinst would build the unpatched source
    assert f"apt-get download {package}" in install
    patch = install.index("""s/MODULE_IMPORT_NS(DMA_BUF)/MODULE_IMPORT_NS("DMA_BUF")/""")
    assert patch < install.index(f"dkms build -m {package} -v {version}") < install.index("dkms install")
    assert re.search(rf"source_dir=/usr/src/{package}-{re.escape(version)}\n", install)
