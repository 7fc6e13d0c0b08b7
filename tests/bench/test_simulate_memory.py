"""Simulator memory (`make bench`): a simulated day at 50 requests/s, and `--compare` of every design on it, stay
under 1 GB of peak RSS, because outcomes stream into sketches instead of per-request lists. Each case runs the real
CLI in a child process, so its peak RSS (os.wait4) is the command's alone; time and peak RSS are printed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench

REPO = Path(__file__).resolve().parents[2]
PEAK_RSS_LIMIT_MIB = 1024
DAY_AT_50 = ["aws-serving", "--pattern", "steady", "--rate", "50", "--hours", "24", "--seeds", "1", "--json"]


def peak_rss_of(args: list[str]) -> tuple[float, float, str]:
    """(peak RSS in MiB, seconds, stdout) of `accelstack simulate serving ARGS` in a child process."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    code = "import sys; from accelstack.cli import app; sys.argv[0] = 'accelstack'; app()"
    started = time.perf_counter()
    with subprocess.Popen(
        [sys.executable, "-c", code, "simulate", "serving", *args], cwd=REPO, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    ) as child:  # fmt: skip
        output = child.stdout.read() if child.stdout else ""
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    assert child.returncode == 0, output[-2000:]
    return usage.ru_maxrss / 1024, seconds, output  # ru_maxrss is in KiB on Linux


@pytest.mark.parametrize(
    ("case", "args"),
    [
        ("a day at 50 requests/s", DAY_AT_50),
        ("--compare of every design, a day at 50 requests/s", [*DAY_AT_50, "--compare"]),
    ],
)
def test_simulated_day_and_compare_stay_under_1_gb(capsys, case: str, args: list[str]) -> None:
    import json

    rss, seconds, output = peak_rss_of(args)
    data = json.loads(output)
    requests, designs = data["workload"]["requests"], len(data["designs"])
    with capsys.disabled():
        print(f"\n[bench] simulate {case}: {designs} design(s) x {requests:,} requests in {seconds:.1f} s, "
              f"peak RSS {rss:.0f} MiB")  # fmt: skip
    assert requests > 4_000_000
    assert rss < PEAK_RSS_LIMIT_MIB
