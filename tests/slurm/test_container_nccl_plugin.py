"""Which NCCL net plugin a job's container loads: its environment composed as enroot composes it, from an NGC-like
image whose ENV puts a decoy libnccl-net.so (HPC-X's SHARP plugin) first on LD_LIBRARY_PATH, then NCCL's own rules
for finding the plugin, per release. The fabric's plugin must win on every fabric that has one.

enroot (v3.5.0, src/runtime.sh runtime::_do_environ / _do_hooks, src/common.sh envsubst / envfmt, bin/common.h
load_environment): the environment file is the image's /etc/environment, then each environ.d file (`${VAR}`
expanded from the host's environment), then pyxis' --container-env lines; hooks.d scripts run next and may append;
enroot-switchroot clears the environment and sets the lines in order, the last naming a variable winning.
NCCL: NCCL_NET_PLUGIN unset opens libnccl-net.so; set to X, releases up to 2.20 open libnccl-net-X.so only
(src/net.cc), 2.21 and later try X as a file first and then libnccl-net-X.so (src/net.cc, src/plugin/plugin_open.cc),
and "none" loads none (2.24+). dlopen of a bare name searches LD_LIBRARY_PATH, then the loader cache.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from accelstack.components import slurm
from accelstack.components.slurm.containers import FABRIC_ENVIRONMENT, FABRIC_HOOK
from tests.slurm.test_containers import _spec

DECOY_DIR = "/opt/hpcx/nccl_rdma_sharp_plugin/lib"
IMAGE_ENVIRONMENT = (
    f"PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/bin:/bin\n"
    f"LD_LIBRARY_PATH={DECOY_DIR}:/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64\n"
    "NCCL_VERSION=2.23.4\n"
)
# (stack, overrides, the fabric's plugin file on the node, settings a multi-node job's container must carry)
FABRICS = [
    ("aws-training", (), "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so", {"FI_PROVIDER": "efa"}),
    ("gcp-training", (), "/var/lib/tcpxo/lib64/libnccl-net.so", {"NCCL_FASTRAK_IFNAME": "enp6s0,enp7s0"}),
    (
        "gcp-training",
        ("training.nodes.instanceType=a3-ultragpu-8g",),
        "/usr/local/gib/lib64/libnccl-net.so",
        {"NCCL_NET": "gIB"},
    ),
]


def _compute_files(stack: str, overrides: tuple[str, ...]) -> dict[str, str]:
    spec = _spec(stack, *overrides)
    document = slurm.compute_cloud_init(spec, slurm.nodes_for(spec), slurm.DeployValues.placeholders())
    return {f["path"]: f["content"] for f in yaml.safe_load(document)["write_files"]}


def _envsubst(text: str, host: dict[str, str]) -> str:
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: host.get(m.group(1), ""), text)


def _envfmt(text: str) -> str:
    lines = []
    for line in text.splitlines():
        line = line.lstrip()
        if not re.match(r"[A-Za-z_][A-Za-z0-9_]*=", line) or line.startswith("ENROOT_"):
            continue
        lines.append(re.sub(r"^([A-Za-z_][A-Za-z0-9_]*)=[\"'](.*)[\"']\s*$", r"\1=\2", line))
    return "\n".join(lines) + "\n"


def _container_environment(files: dict[str, str], rootfs: Path, tmp: Path, nodes: int) -> dict[str, str]:
    """The environment a task in the container starts with, as enroot composes it and the fabric's hook edits it."""
    host = {"PATH": os.environ["PATH"], "SLURM_JOB_NUM_NODES": str(nodes)}
    environ = tmp / "environment"
    composed = _envsubst((rootfs / "etc/environment").read_text(), host)
    composed += _envsubst(files[FABRIC_ENVIRONMENT], host)
    environ.write_text(_envfmt(composed))
    if FABRIC_HOOK in files:  # a fabric without libraries of its own gets no hook (the image's choice stays)
        hook = tmp / "hook.sh"
        hook.write_text(files[FABRIC_HOOK])
        settings = tmp / "fabric.env"
        settings.write_text("NCCL_FASTRAK_IFNAME=enp6s0,enp7s0\nNCCL_NET=gIB\n")
        run_env = {**host, "ENROOT_ROOTFS": str(rootfs), "ENROOT_ENVIRON": str(environ)}
        run_env["ACCELSTACK_FABRIC_ENV"] = str(settings)
        subprocess.run(["bash", str(hook)], env=run_env, check=True, capture_output=True, text=True)
    environment: dict[str, str] = {}
    for line in _envfmt(environ.read_text()).splitlines():  # enroot-switchroot: in order, the last one wins
        name, _, value = line.partition("=")
        environment[name] = value
    return environment


def _dlopen(name: str, environment: dict[str, str], rootfs: Path) -> str | None:
    """The file (a path inside the container, links resolved) that dlopen(name) loads, or None."""
    if "/" in name:
        candidates = [name]
    else:
        cache = [
            line.strip()
            for conf in sorted((rootfs / "etc/ld.so.conf.d").glob("*.conf"))
            for line in conf.read_text().splitlines()
            if line.strip()
        ]
        search = [d for d in environment.get("LD_LIBRARY_PATH", "").split(":") if d] + cache + ["/usr/lib"]
        candidates = [f"{d}/{name}" for d in search]
    for candidate in candidates:
        path = rootfs / candidate.lstrip("/")
        while path.is_symlink():  # links inside the container point at paths inside it
            target = os.readlink(path)
            path = rootfs / target.lstrip("/") if target.startswith("/") else path.parent / target
        if path.is_file():
            return "/" + str(path.relative_to(rootfs))
    return None


def _nccl_net_plugin(environment: dict[str, str], rootfs: Path, release: tuple[int, int]) -> str | None:
    """The net plugin NCCL `release` loads in this environment (None: its internal IB and socket transports)."""
    name = environment.get("NCCL_NET_PLUGIN", "")
    if not name:
        return _dlopen("libnccl-net.so", environment, rootfs)
    if release >= (2, 24) and name.lower() == "none":
        return None
    if release >= (2, 21):
        found = _dlopen(name, environment, rootfs)
        if found:
            return found
    return _dlopen(f"libnccl-net-{name}.so", environment, rootfs)


def _image(tmp_path: Path, plugin: str) -> Path:
    """An NGC-like container root: the decoy plugin on the image's LD_LIBRARY_PATH, the fabric's bound in."""
    rootfs = tmp_path / "rootfs"
    (rootfs / "etc/ld.so.conf.d").mkdir(parents=True)
    (rootfs / "etc/environment").write_text(IMAGE_ENVIRONMENT)
    for path in (f"{DECOY_DIR}/libnccl-net.so", plugin):
        (rootfs / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (rootfs / path.lstrip("/")).write_text(path)
    return rootfs


def test_the_simulated_image_alone_loads_the_decoy(tmp_path: Path) -> None:
    """The gap the hook closes: the loader cache alone loses to the image's LD_LIBRARY_PATH."""
    rootfs = _image(tmp_path, "/var/lib/tcpxo/lib64/libnccl-net.so")
    (rootfs / "etc/ld.so.conf.d/000-fabric.conf").write_text("/var/lib/tcpxo/lib64\n")
    environment = dict(line.split("=", 1) for line in IMAGE_ENVIRONMENT.splitlines())
    assert _nccl_net_plugin(environment, rootfs, (2, 23)) == f"{DECOY_DIR}/libnccl-net.so"


@pytest.mark.parametrize(
    ("stack", "overrides", "plugin", "settings"), FABRICS, ids=[f"{s}{o}" for s, o, _, _ in FABRICS]
)
@pytest.mark.parametrize("release", [(2, 18), (2, 21), (2, 27)], ids=lambda r: f"nccl-{r[0]}.{r[1]}")
def test_a_multi_node_container_loads_the_fabrics_plugin(
    stack: str, overrides: tuple[str, ...], plugin: str, settings: dict[str, str], release, tmp_path: Path
) -> None:
    files = _compute_files(stack, overrides)
    rootfs = _image(tmp_path, plugin)
    environment = _container_environment(files, rootfs, tmp_path, nodes=2)
    assert _nccl_net_plugin(environment, rootfs, release) == plugin, environment
    library_path = environment["LD_LIBRARY_PATH"].split(":")
    plugin_dir = str(Path(plugin).parent)
    # the fabric's libraries (its NCCL build too, where it ships one) ahead of the image's, which are all kept
    assert library_path.index(plugin_dir) < library_path.index(DECOY_DIR)
    assert library_path[-3:] == [DECOY_DIR, "/usr/local/cuda/compat/lib", "/usr/local/nvidia/lib64"]
    for name, value in settings.items():
        assert environment[name] == value


@pytest.mark.parametrize("stack", ["gcp-training"])
def test_one_node_jobs_keep_the_images_choice_where_the_prolog_readies_the_plugin(stack: str, tmp_path: Path) -> None:
    """TCPXO's plugin needs RxDM, which the Prolog starts for multi-node jobs only (as the TaskProlog hands them)."""
    files = _compute_files(stack, ())
    rootfs = _image(tmp_path, "/var/lib/tcpxo/lib64/libnccl-net.so")
    environment = _container_environment(files, rootfs, tmp_path, nodes=1)
    assert "NCCL_NET_PLUGIN" not in environment
    assert "NCCL_FASTRAK_IFNAME" not in environment


def test_infiniband_pins_no_plugin(tmp_path: Path) -> None:
    """Azure's InfiniBand: NCCL's own IB transport and HPC-X's IB plugin both drive the HCAs (neither falls back to
    sockets), and the node binds no plugin of its own: the image's LD_LIBRARY_PATH and choice stay as they are."""
    files = _compute_files("azure-training", ())
    assert FABRIC_HOOK not in files
    rootfs = _image(tmp_path, "/opt/microsoft/ndv5-topo.xml")
    environment = _container_environment(files, rootfs, tmp_path, nodes=2)
    assert "NCCL_NET_PLUGIN" not in environment
    assert environment["LD_LIBRARY_PATH"].startswith(DECOY_DIR)
    assert environment["MELLANOX_VISIBLE_DEVICES"] == "all"
