"""A3 Mega's GPUDirect-TCPXO around jobs, on a node its own boot document built: the Prolog and Epilog slurmd runs
as root on each node of a job (PrologFlags=Alloc), executed in the boot machine, with RxDM's whole lifecycle.

What must hold (Google's A3 Mega GPUDirect guide, cloud.google.com/compute/docs/gpus/gpudirect, and the prolog
slurm-gcp ships for it, tools/prologs-epilogs/receive-data-path-manager-mega): a multi-node job's prolog installs
the NCCL plugin from its container into /var/lib/tcpxo/lib64, starts the receive-datapath manager and waits for
its ready line; the tasks get the plugin's NCCL settings with Ubuntu's NIC names (the profile's eth* names are not
this image's) and the plugin first on the loader path; RxDM stays while any job on the node uses it and stops with
the last; a one-node job starts nothing; a prolog that cannot start RxDM fails (Slurm drains the node and requeues
the job) and leaves no job registered. The machine's docker models the images (tests/boot/machine/stub.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from accelstack.components.gcp.gpudirect import ENVIRONMENT_FILE, LIBRARY_PATH, RXDM_CONTAINER, STATE_DIR
from accelstack.components.slurm import EPILOG_PATH, PROLOG_PATH, TASK_PROLOG_PATH
from tests.boot.machine import Boot, can_boot
from tests.boot.test_boots_run import boot_launched, captured, documents, image_for, role_of

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))

# Ubuntu's names on A3 Mega (Cluster Toolkit's a3-megagpu-8g nccl-tests script), not the catalog's: a wrong name
# there must fail here.
GPU_NICS = "enp6s0,enp7s0,enp13s0,enp14s0,enp134s0,enp135s0,enp141s0,enp142s0"
CONTROL_NIC = "enp0s12"


def job(job_id: int, nodes: int) -> str:
    return f"export SLURM_JOB_ID={job_id} SLURM_JOB_NUM_NODES={nodes} SLURM_NNODES={nodes} SLURM_JOB_USER=root\n"


def running_rxdm() -> str:
    return f"docker ps --quiet --filter 'name=^{RXDM_CONTAINER}$' | grep -q . && echo rxdm=up || echo rxdm=down\n"


def booted_a3_mega(tmp_path: Path, after: str) -> Boot:
    capture = captured("gcp-training", ())
    node = next(r for r in capture.resources if documents(r.inputs) and role_of(r) == "training-node")
    assert node.inputs.get("machineType") == "a3-megagpu-8g"
    machine = boot_launched("gcp", capture, node, image_for("gcp", "training-node", node), tmp_path, after=after)
    assert machine.ok, machine.explain()
    return machine


def test_two_jobs_share_rxdm_and_the_last_epilog_stops_it(tmp_path: Path) -> None:
    script = (
        "set -e\n"
        # slurmd runs Prolog/Epilog with an empty environment but the job's SLURM_* (PATH included: none).
        f"(unset PATH; {job(7, 2)} /bin/bash {PROLOG_PATH}) || {{ echo prolog-7-failed; exit 3; }}\n"
        f"(unset PATH; {job(8, 2)} /bin/bash {PROLOG_PATH}) || {{ echo prolog-8-failed; exit 3; }}\n"
        f"{running_rxdm()}"
        f"({job(7, 2)} {TASK_PROLOG_PATH}) > /tmp/task-exports\n"
        "cat /tmp/task-exports\n"
        f"(unset PATH; {job(7, 2)} /bin/bash {EPILOG_PATH}) || echo epilog-failed\n"
        f"echo after-first-epilog; {running_rxdm()}"
        f"(unset PATH; {job(8, 2)} /bin/bash {EPILOG_PATH}) || echo epilog-failed\n"
        f"echo after-last-epilog; {running_rxdm()}"
        f"ls {STATE_DIR}/jobs | wc -l | sed 's/^/registered=/'\n"
        "echo last-step\n"
    )
    machine = booted_a3_mega(tmp_path, script)
    status, output = machine.after
    assert status == 0 and output.rstrip().endswith("last-step"), output
    before, first, last = output.split("rxdm=")[1:4]
    assert before.startswith("up") and first.startswith("up") and last.startswith("down"), output
    assert "registered=0" in output and "epilog-failed" not in output, output
    exports = {line.removeprefix("export ") for line in output.splitlines() if line.startswith("export ")}
    assert {f"NCCL_FASTRAK_IFNAME={GPU_NICS}", f"NCCL_FASTRAK_CTRL_DEV={CONTROL_NIC}"} <= exports, output
    assert {f"NCCL_SOCKET_IFNAME={CONTROL_NIC}", "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY=/dev/aperture_devices"} <= exports
    # The profile's values that name files are resolved against the installed plugin, not left as ${NCCL_LIB_DIR}.
    assert f"NCCL_TUNER_CONFIG_PATH={LIBRARY_PATH}/a3plus_tuner_config.textproto" in exports, output
    assert not any(e.startswith("CUDA_VISIBLE_DEVICES=") for e in exports), "Slurm binds the job's GPUs"
    assert any(e.startswith(f"LD_LIBRARY_PATH={LIBRARY_PATH}") for e in exports), output
    assert machine.has_file(f"{LIBRARY_PATH}/libnccl-net.so") and machine.has_file(ENVIRONMENT_FILE)
    runs = [c["args"] for c in machine.calls if c["command"] == "docker" and c["args"][:1] == ["run"]]
    assert sum(any("tcpgpudmarxd" in a for a in args) for args in runs) == 1, "one RxDM serves both jobs"
    assert sum(any("nccl-plugin" in a for a in args) for args in runs) == 1, "the plugin is installed once"


def test_a_one_node_job_starts_nothing(tmp_path: Path) -> None:
    script = f"{job(9, 1)} {PROLOG_PATH} && {EPILOG_PATH} && {running_rxdm()}echo last-step\n"
    machine = booted_a3_mega(tmp_path, script)
    status, output = machine.after
    assert status == 0 and "rxdm=down" in output and output.rstrip().endswith("last-step"), output
    assert not [c for c in machine.calls if c["command"] == "docker" and c["args"][:1] == ["run"]]


def test_a_prolog_that_cannot_start_rxdm_fails_and_registers_no_job(tmp_path: Path) -> None:
    """The registry refuses the pull (docker's credential helper for Artifact Registry gone): the prolog must exit
    non-zero, so Slurm drains the node and requeues the job instead of running NCCL without the fabric."""
    script = (
        "rm -f /root/.docker/config.json\n"
        f"{job(10, 2)} {PROLOG_PATH}; echo prolog-status=$?\n"
        f"ls {STATE_DIR}/jobs 2>/dev/null | wc -l | sed 's/^/registered=/'\n"
        f"{running_rxdm()}"
    )
    machine = booted_a3_mega(tmp_path, script)
    _, output = machine.after
    assert "prolog-status=0" not in output and "prolog-status=" in output, output
    assert "Unauthenticated request" in output and "rxdm=down" in output and "registered=0" in output, output
