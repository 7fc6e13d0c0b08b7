"""`accelstack policy --file` on large exports (`make bench`, issue 29): issue 29 asks for 20,000 resources in under
10 s per cloud; what this house measures today is held (`LARGE_LIMIT_CPU_SECONDS`) so that it does not regress, the
gap to the target is printed, and the time must be linear in the resource count (a check that rescans the stack for
every resource, as the packs' cross-resource checks did before policies/links.py, is quadratic: 122 s at 20,000).

Each export is a shipped training stack's pinned export copied to the size (tests/bench/large_export.py: every
copy renamed, as legitimate as the golden, so no verdict). The CLI runs end to end in a fresh process (its imports,
reading the file, both packs, the report), best of `RUNS` wall clocks, as a user runs it. Times are printed, with
the process's CPU time: the machine is shared, and the wall clock counts the other tenants' turns too.
"""

from __future__ import annotations

import compileall
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.bench.large_export import PLANTS, golden, replicate

pytestmark = pytest.mark.bench

REPO = Path(__file__).resolve().parents[2]
RUNS = 2
LARGE, SMALL = 20_000, 2_000
LARGE_TARGET_SECONDS = 10.0  # issue 29
# Held: the CPU seconds of the slowest cloud at 20,000 resources, with room for noise. Measured back to back on the
# shared 2-core machine under a load of about 11 (`/usr/bin/time` user+sys of the CLI end to end, project bytecode
# compiled), before and after the servicer was handed each request's properties decoded straight from the export
# (accelstack/engine/struct_decode.py: no protobuf Struct built and read back), the cyclic collector was paused for
# the run, of_type was indexed and the export validated once: AWS 14.7 -> 10.1 s, Azure 17.8 -> 10.8 s, GCP 14.7 ->
# 10.4 s; peak RSS 707 -> 558, 916 -> 611, 726 -> 520 MiB. On a quiet machine (load under 2), CPU / wall: AWS 11.8 /
# 11.7 -> 7.7 / 7.6 s, Azure 14.9 / 15.0 -> 9.3 / 9.4 s, GCP 13.3 / 13.7 -> 9.2 / 9.5 s: under the 10 s of issue 29.
# Earlier (load about 15): AWS 16.8 -> 14.2 s, GCP 17.8 -> 14.8 s, Azure 35.7 -> 17.7 s when the resource policies
# were indexed by the types they read (policies/type_index.py). CPU time, not wall: the wall clock of a shared
# machine counts the other tenants' turns too (the same runs read 90-160 s of wall).
LARGE_LIMIT_CPU_SECONDS = 13.5
LARGE_LIMIT_RSS_MIB = 768  # peak resident memory of the largest run at 20,000 resources (Azure: 611 MiB)
# Linear: ten times the resources take at most this many times as long (the fixed cost of the imports only helps).
SCALING_LIMIT = 12.0


@pytest.fixture(scope="module", autouse=True)
def compiled_project():
    """An install has its bytecode (pip compiles it); a checkout run with PYTHONDONTWRITEBYTECODE would recompile
    the project in every run and measure the compiler (tests/bench/test_preview_floor.py does the same)."""
    for folder in ("accelstack", "components", "policies"):
        assert compileall.compile_dir(REPO / folder, quiet=1)


def policy_file_seconds(path: Path) -> tuple[float, float, float]:
    """Best wall seconds, best CPU seconds and largest peak resident memory (MiB) of `accelstack policy --file PATH`
    in a fresh process, which must pass; CPU and memory are the process's own (wait4's rusage)."""
    best = (float("inf"), float("inf"), 0.0)
    for _ in range(RUNS):
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            started = time.perf_counter()
            process = subprocess.Popen(
                [sys.executable, "-c", "from accelstack.cli import main; main()", "policy", "--file", str(path)],
                stdout=out,
                stderr=err,
                cwd=REPO,
            )
            _, status, usage = os.wait4(process.pid, 0)
            wall = time.perf_counter() - started
            process.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read().decode(), err.read().decode()
        assert process.returncode == 0, stdout[-2000:] + stderr[-2000:]
        assert "ok (no mandatory violations; 0 advisory)" in stdout
        cpu = usage.ru_utime + usage.ru_stime
        best = (min(best[0], wall), min(best[1], cpu), max(best[2], usage.ru_maxrss / 1024))  # Linux: KiB
    return best


@pytest.mark.parametrize("stack", sorted(PLANTS))
def test_policy_file_on_20000_resources(stack: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seconds = {}
    for count in (SMALL, LARGE):
        document = replicate(golden(stack), stack, count)
        path = tmp_path / f"{stack}-{count}.json"
        path.write_text(json.dumps(document))
        seconds[count] = (len(document["deployment"]["resources"]), *policy_file_seconds(path))
    with capsys.disabled():
        for resources, wall, cpu, peak in seconds.values():
            print(
                f"\n[bench] policy --file {stack} x{resources} resources: {wall:.2f} s wall, {cpu:.2f} s CPU, "
                f"peak RSS {peak:.0f} MiB (target at {LARGE:,}: {LARGE_TARGET_SECONDS:g} s; "
                f"held at {LARGE_LIMIT_CPU_SECONDS:g} s CPU, {LARGE_LIMIT_RSS_MIB} MiB)"
            )
    (_, _, small_cpu, _), (_, _, large_cpu, large_peak) = seconds[SMALL], seconds[LARGE]
    assert large_cpu < LARGE_LIMIT_CPU_SECONDS
    assert large_peak < LARGE_LIMIT_RSS_MIB
    assert large_cpu < SCALING_LIMIT * small_cpu
