"""The GPU node health check (HealthCheckProgram) executed under bash on a modelled node: the image's nvidia-smi /
rocm-smi answer from a table of GPUs (refusing a field nvidia-smi does not know), Slurm's scontrol keeps the node's
drain reason, /sys/class is the machine type's, the shared file system is a real mount or not. Each run is its own
mount and host-name namespace (root only), so nothing of this host's /sys, PATH or mounts reaches the script.

What must hold: a healthy node passes and resumes only a drain of its own; a missing GPU, an uncorrectable ECC error
or failed row remap, a missing fabric device, an unmounted file system each drain the node with the reason; a node
an admin drained stays drained, with the admin's reason, whether the check passes or fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from accelstack.components import slurm
from accelstack.components.slurm.health_check import (
    DRAIN_REASON_PREFIX,
    HEALTH_CHECK_PATH,
    health_check_files,
    health_check_script,
)
from accelstack.examples import example_file
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file

NODE = "gpu-node-1"
MOUNT = "/mnt/lustre"  # under /mnt, which each run covers with its own tmpfs (the examples' /fsx has no parent to)
SHARED = [f"training.storage.lustre.mountPath={MOUNT}", f"training.storage.checkpoints.path={MOUNT}/checkpoints"]

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None, reason="runs the check in its own mount namespace (root)"
)

# nvidia-smi's --query-gpu fields (nvidia-smi --help-query-gpu) the model knows; any other is refused as the real
# tool refuses it ('Field "x" is not a valid field to query.').
NVIDIA_FIELDS = {
    "index", "name", "uuid", "pci.bus_id", "ecc.errors.uncorrected.volatile.total",
    "ecc.errors.uncorrected.aggregate.total", "retired_pages.pending", "remapped_rows.pending",
    "remapped_rows.failure", "remapped_rows.correctable", "remapped_rows.uncorrectable",
}  # fmt: skip

NVIDIA_SMI = r"""#!/usr/bin/python3
import json, os, sys
gpus = json.load(open(os.environ["HEALTH_STATE"] + "/gpus.json"))
known = set(json.load(open(os.environ["HEALTH_STATE"] + "/fields.json")))
args = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
fields = args["--query-gpu"].split(",")
for field in fields:
    if field not in known:
        sys.exit(f'Field "{field}" is not a valid field to query.')
assert args.get("--format") == "csv,noheader,nounits", args
for index, gpu in enumerate(gpus):
    values = {"index": str(index), **gpu}
    print(", ".join(values.get(f, "[N/A]") for f in fields))
"""
ROCM_SMI = r"""#!/usr/bin/python3
import json, os, sys
gpus = json.load(open(os.environ["HEALTH_STATE"] + "/gpus.json"))
assert sys.argv[1:] == ["--showid", "--csv"], sys.argv
print("device,Device ID")
for index, _ in enumerate(gpus):
    print(f"card{index},0x74a1")
"""
# Slurm's scontrol for this one node: `show node` with its Reason line ("reason [user@time]") while drained;
# `update state=drain reason=...` sets it, `state=resume` clears it. Every update is logged.
SCONTROL = r"""#!/usr/bin/python3
import json, os, socket, sys
state = os.environ["HEALTH_STATE"]
node = socket.gethostname()
reason = open(state + "/reason").read()
args = sys.argv[1:]
if args[:2] == ["show", "node"]:
    if args[2:] != [node]:
        sys.exit(f"Node {args[2:]} not found")
    print(f"NodeName={node} Arch=x86_64 CoresPerSocket=48\n   State=IDLE{'+DRAIN' if reason else ''}+DYNAMIC_NORM")
    if reason:
        print(f"   Reason={reason} [root@2026-12-06T10:00:00]")
    sys.exit(0)
assert args[0] == "update", args
values = dict(a.split("=", 1) for a in args[1:])
assert values.pop("nodename") == node, args
with open(state + "/updates.jsonl", "a") as log:
    log.write(json.dumps(values) + "\n")
if values["state"].lower() == "drain":
    open(state + "/reason", "w").write(values["reason"])
elif values["state"].lower() == "resume":
    open(state + "/reason", "w").write("")
else:
    sys.exit(f"state {values['state']} not modelled")
"""

HEALTHY_GPU = {
    "ecc.errors.uncorrected.volatile.total": "0",
    "retired_pages.pending": "[N/A]",  # H100s retire no pages: they remap rows
    "remapped_rows.pending": "No",
    "remapped_rows.failure": "No",
}


def spec_of(stack: str, *overrides: str):
    return parse_spec(apply_overrides(read_stack_file(example_file(stack)), list(overrides)), stack)


def run_check(
    tmp_path: Path,
    script: str,
    gpus: list[dict[str, str]],
    sysfs: list[str],
    mounted: bool = True,
    reason: str = "",
    node: str = NODE,
    slurm_env: dict[str, str] | None = None,
) -> tuple[int, str, str, list[dict]]:
    """(exit status, output, the node's drain reason after, scontrol updates) of one run on a modelled node. With
    `slurm_env` (SLURM_CONF) the node is a real slurmd's and scontrol the real one: no reason or updates are kept."""
    state, sbin = tmp_path / "state", tmp_path / "sbin"
    for folder in (state, sbin):
        folder.mkdir(parents=True)
    (state / "gpus.json").write_text(json.dumps(gpus))
    (state / "fields.json").write_text(json.dumps(sorted(NVIDIA_FIELDS)))
    (state / "reason").write_text(reason)
    stubs = {"nvidia-smi": NVIDIA_SMI, "rocm-smi": ROCM_SMI} | ({} if slurm_env else {"scontrol": SCONTROL})
    for name, text in stubs.items():
        (sbin / name).write_text(text)
    (sbin / "accelstack-health-check").write_text(script)
    for path in sbin.iterdir():
        path.chmod(0o755)
    setup = [
        f"hostname {node}",
        # The script's own PATH starts at /usr/local/sbin: the image's commands are found there.
        f"mount --bind {sbin} /usr/local/sbin",
        "mount -t tmpfs sysfs-model /sys/class",
        *(f"mkdir -p /sys/class/{entry}" for entry in sysfs),
        f"mount -t tmpfs mnt /mnt && mkdir -p {MOUNT}",
        *([f"mount -t tmpfs lustre {MOUNT}"] if mounted else []),
        # slurmd runs the program with no environment of its own (no PATH).
        "exec env -i "
        + " ".join(f"{k}={v}" for k, v in {"HEALTH_STATE": state, **(slurm_env or {})}.items())
        + f" /bin/bash {HEALTH_CHECK_PATH}",
    ]
    result = subprocess.run(
        ["unshare", "-mu", "--fork", "--propagation", "private", "bash", "-ec", "\n".join(setup)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    updates_file = state / "updates.jsonl"
    updates = [json.loads(line) for line in updates_file.read_text().splitlines()] if updates_file.exists() else []
    return result.returncode, result.stdout + result.stderr, (state / "reason").read_text(), updates


@pytest.fixture(scope="module")
def p5_script() -> str:
    """aws-training's p5.48xlarge, 4 nodes: 8 H100s, 32 EFA devices, FSx for Lustre."""
    return health_check_script(*((spec := spec_of("aws-training", *SHARED)), slurm.nodes_for(spec)))


EFA = [f"infiniband/rdmap{i}s0" for i in range(32)]
NICS = ["net/lo", "net/docker0", "net/enp0s12"] + [f"net/enp{i}s0" for i in (6, 7, 13, 14, 134, 135, 141, 142)]


def test_a_healthy_node_passes_and_touches_no_drain(tmp_path: Path, p5_script: str) -> None:
    status, output, reason, updates = run_check(tmp_path, p5_script, [HEALTHY_GPU] * 8, EFA)
    assert (status, reason, updates) == (0, "", []), output


def test_a_healthy_node_resumes_its_own_drain(tmp_path: Path, p5_script: str) -> None:
    own = f"{DRAIN_REASON_PREFIX}: 7 of 8 GPUs visible"
    status, output, reason, updates = run_check(tmp_path, p5_script, [HEALTHY_GPU] * 8, EFA, reason=own)
    assert (status, reason, updates) == (0, "", [{"state": "resume"}]), output


@pytest.mark.parametrize("healthy", [True, False], ids=["passing", "failing"])
def test_a_node_an_admin_drained_stays_drained(tmp_path: Path, p5_script: str, healthy: bool) -> None:
    admin = "admin: PSU replacement"
    gpus = [HEALTHY_GPU] * (8 if healthy else 7)
    status, output, reason, updates = run_check(tmp_path, p5_script, gpus, EFA, reason=admin)
    assert (reason, updates) == (admin, []), output
    assert status == (0 if healthy else 1), output


def test_spot_watcher_drain_is_not_resumed(tmp_path: Path, p5_script: str) -> None:
    watcher = "spot interruption notice: terminate at 2026-12-06T10:02:00Z"
    _, output, reason, updates = run_check(tmp_path, p5_script, [HEALTHY_GPU] * 8, EFA, reason=watcher)
    assert (reason, updates) == (watcher, []), output


FAILURES = {
    "missing-gpu": ({"gpus": [HEALTHY_GPU] * 7}, "7 of 8 GPUs visible"),
    "ecc": (
        {
            "gpus": [HEALTHY_GPU] * 3
            + [HEALTHY_GPU | {"ecc.errors.uncorrected.volatile.total": "2"}]
            + [HEALTHY_GPU] * 4
        },
        "GPU 3: 2 uncorrectable ECC errors",
    ),
    "row-remap": (
        {"gpus": [HEALTHY_GPU] * 5 + [HEALTHY_GPU | {"remapped_rows.failure": "Yes"}] + [HEALTHY_GPU] * 2},
        "GPU 5: row remap failed",
    ),
    "retired-pages": (
        {"gpus": [HEALTHY_GPU | {"retired_pages.pending": "Yes"}] + [HEALTHY_GPU] * 7},
        "GPU 0: retired pages pending",
    ),
    "missing-efa": ({"sysfs": EFA[:31]}, "31 of 32 EFA devices"),
    "unmounted": ({"mounted": False}, f"shared file system not mounted at {MOUNT}"),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_a_failure_drains_the_node_naming_it(tmp_path: Path, p5_script: str, case: str) -> None:
    change, expected = FAILURES[case]
    run = {"gpus": [HEALTHY_GPU] * 8, "sysfs": EFA, **change}
    status, output, reason, updates = run_check(tmp_path, p5_script, **run)  # type: ignore[arg-type]
    assert status == 1, output
    assert reason == f"{DRAIN_REASON_PREFIX}: {expected}", output
    assert updates == [{"state": "drain", "reason": reason}], output


def test_a_node_drained_by_the_check_is_drained_again_with_every_failure(tmp_path: Path, p5_script: str) -> None:
    own = f"{DRAIN_REASON_PREFIX}: 7 of 8 GPUs visible"
    status, output, reason, _ = run_check(tmp_path, p5_script, [HEALTHY_GPU] * 6, EFA[:30], reason=own)
    assert status == 1 and reason == f"{DRAIN_REASON_PREFIX}: 6 of 8 GPUs visible; 30 of 32 EFA devices", output


def test_gpudirect_tcpxo_counts_the_gpu_nics(tmp_path: Path) -> None:
    """GCP's A3 Mega: 8 GPU gVNICs beside the control NIC; docker's bridge is no fabric NIC."""
    spec = spec_of("gcp-training", *SHARED)
    script = health_check_script(spec, slurm.nodes_for(spec))
    status, output, _, _ = run_check(tmp_path / "all", script, [HEALTHY_GPU] * 8, NICS)
    assert status == 0, output
    status, output, reason, _ = run_check(tmp_path / "lost", script, [HEALTHY_GPU] * 8, NICS[:-1])
    assert reason == f"{DRAIN_REASON_PREFIX}: 7 of 8 GPUDirect-TCPXO devices", output


def test_amd_nodes_count_their_gpus_with_rocm_smi(tmp_path: Path) -> None:
    spec = spec_of(
        "azure-training", "training.nodes.instanceType=Standard_ND96isr_MI300X_v5", "account.location=westus3", *SHARED
    )
    script = health_check_script(spec, slurm.nodes_for(spec))
    ib = [f"infiniband/mlx5_ib{i}" for i in range(8)]
    status, output, _, _ = run_check(tmp_path / "all", script, [{}] * 8, ib)
    assert status == 0, output
    _, output, reason, _ = run_check(tmp_path / "lost", script, [{}] * 7, ib)
    assert reason == f"{DRAIN_REASON_PREFIX}: 7 of 8 GPUs visible", output


def test_every_training_example_carries_the_check_in_slurm_conf_and_on_its_nodes() -> None:
    for stack in ("aws-training", "azure-training", "gcp-training", "oci-training", "aws-finetune"):
        spec = spec_of(stack)
        nodes = slurm.nodes_for(spec)
        conf = slurm.slurm_conf(spec, nodes)
        assert f"HealthCheckProgram={HEALTH_CHECK_PATH}" in conf.splitlines(), stack
        assert {"HealthCheckInterval=300", "HealthCheckNodeState=ANY,CYCLE"} <= set(conf.splitlines()), stack
        assert HEALTH_CHECK_PATH in slurm.compute_cloud_init(spec, nodes, slurm.DeployValues()), stack
        assert HEALTH_CHECK_PATH not in slurm.head_cloud_init(spec, nodes, slurm.DeployValues()), stack


def test_nodes_without_slurm_gpus_get_no_check() -> None:
    spec = spec_of("aws-training", "training.nodes.instanceType=trn1.32xlarge")
    nodes = slurm.nodes_for(spec)
    assert "HealthCheck" not in slurm.slurm_conf(spec, nodes)
    assert health_check_files(spec, nodes) == []


def test_every_training_image_ships_what_the_check_calls() -> None:
    """The check installs nothing: each training node image's row (components/<cloud>/images.py) must carry its
    vendor's GPU tool and the base commands the script calls."""
    from accelstack.components.aws.images import IMAGES as AWS
    from accelstack.components.azure.images import IMAGES as AZURE
    from accelstack.components.gcp.images import IMAGES as GCP
    from accelstack.components.oci.images import IMAGES as OCI

    base = {"bash", "hostname", "timeout", "grep", "sed", "ls", "wc", "mountpoint"}
    rows = {f"{cloud}:{role}": image for cloud, table in (("aws", AWS), ("azure", AZURE), ("gcp", GCP), ("oci", OCI))
            for role, image in table.items() if role.startswith("training-node")}  # fmt: skip
    assert len(rows) == 6, sorted(rows)
    for name, image in rows.items():
        tool = "rocm-smi" if name.endswith("-rocm") else "nvidia-smi"
        assert base | {tool} <= image.ships, f"{name} lacks {sorted(base | {tool} - image.ships)}"
