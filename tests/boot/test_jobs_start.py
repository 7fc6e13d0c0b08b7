"""A job on a booted node: slurmd's Prolog (as root, at allocation), TaskProlog (before each task) and Epilog (at its
end), run on the machine the node's own boot document built, for a two-node job (A3 Mega's TCPXO lifecycle in
detail: test_fabric_prolog.py).

What the tasks of a multi-node job must get is each fabric's contract: the jobs' environment file everywhere,
and on A3 Ultra / A4 Google's gIB plugin selected with its settings and libraries first on the loader path.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from accelstack.components.slurm import EPILOG_PATH, PROLOG_PATH, TASK_PROLOG_PATH
from tests.boot.machine import can_boot
from tests.boot.test_boots_run import boot_launched, captured, documents, image_for, role_of

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))

JOB = f"""
export SLURM_JOB_ID=42 SLURM_JOB_NUM_NODES=2 SLURM_NNODES=2 SLURM_JOB_USER=root
if [ -x {PROLOG_PATH} ]; then {PROLOG_PATH} || {{ echo "prolog failed: $?"; exit 3; }}; fi
{TASK_PROLOG_PATH} > /tmp/task-exports || {{ echo "task prolog failed: $?"; exit 4; }}
cat /tmp/task-exports
if [ -x {EPILOG_PATH} ]; then {EPILOG_PATH} || {{ echo "epilog failed: $?"; exit 5; }}; fi
echo job-ended
"""
CASES = [
    ("aws-training", (), set()),
    ("azure-training", (), set()),
    ("gcp-training", ("training.nodes.instanceType=a3-ultragpu-8g",), {"NCCL_NET=gIB", "NCCL_IB_TC=52"}),
    ("gcp-training", ("training.nodes.instanceType=a4-highgpu-8g",), {"NCCL_NET=gIB"}),
]


@pytest.mark.parametrize(("stack", "overrides", "fabric"), CASES, ids=[f"{s}{''.join(o)}" for s, o, _ in CASES])
def test_a_two_node_job_gets_its_environment_on_a_booted_node(
    stack: str, overrides: tuple[str, ...], fabric: set[str], tmp_path: Path
) -> None:
    cloud = stack.split("-", 1)[0]
    capture = captured(stack, overrides)
    node = next(r for r in capture.resources if documents(r.inputs) and role_of(r) == "training-node")
    image = image_for(cloud, "training-node", node)
    machine = boot_launched(cloud, capture, node, image, tmp_path, after=JOB)
    assert machine.ok, machine.explain()
    status, output = machine.after
    assert status == 0 and output.rstrip().endswith("job-ended"), output
    exports = {line.removeprefix("export ") for line in output.splitlines() if line.startswith("export ")}
    assert any(e.startswith("ACCELSTACK_CHECKPOINT_DIR=") for e in exports), output
    assert fabric <= exports, output
    if fabric:
        assert any(e.startswith("LD_LIBRARY_PATH=/usr/local/gib/lib64") for e in exports), output
