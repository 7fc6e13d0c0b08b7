"""Every command that reads a file trusts nothing about its shape (issue 29, inputs 2): `policy --file` and
`--policy-config`, `diff --file`, `validate` of a stack file, `cost --prices`, `simulate --trace`, JSON written as a
YAML string, and `--set` paths. Each hostile file exits 2 with a message naming the file (and the line where the
parser can say), never a traceback, within seconds (a hang fails the timeout)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.spec.json_input import MAX_EXPORT_BYTES

REPO = Path(__file__).resolve().parents[2]
STACK = (REPO / "stacks" / "Pulumi.aws-training.yaml").read_text()
SECONDS = 20  # each case is a refusal before any preview; a hang or a simulated decade fails here
URN = "urn:pulumi:s::p::aws:s3/bucket:Bucket::b"


def resource(**fields: str) -> str:
    extra = "".join(f', "{key}": {value}' for key, value in fields.items())
    head = f'{{"urn": "{URN}", "type": "aws:s3/bucket:Bucket"{extra}}}'
    return f'{{"deployment": {{"resources": [{head}]}}}}'


EXPORTS: dict[str, tuple[bytes | str, str]] = {
    # name: (content, what the message must contain)
    "a list": ("[1, 2]", "not a stack export"),
    "null": ("null", "not a stack export"),
    "a string": ('"deployment"', "not a stack export"),
    "deployment a string": ('{"deployment": "x"}', "no deployment.resources list"),
    "resources an object": ('{"deployment": {"resources": {"a": 1}}}', "no deployment.resources list"),
    "resource a string": ('{"deployment": {"resources": ["x"]}}', "resources[0]: each resource needs a urn"),
    "nested 10^5 arrays": ("[" * 100_000 + "]" * 100_000, "nested deeper than 100 levels"),
    "nested 10^5 objects": ('{"a":' * 100_000 + "1" + "}" * 100_000, "nested deeper than 100 levels"),
    "nested 150 in inputs": (resource(inputs='{"a":' * 150 + "1" + "}" * 150), "nested deeper than 100"),
    "5000-digit integer": (resource(inputs='{"x": %s}' % ("9" * 5000)), "line 1: an integer of 5,000 digits"),
    "400-digit integer": (resource(inputs='{"x": %s}' % ("9" * 400)), "an integer of 400 digits"),
    "1e400": ('{"a": 1,\n "b": 1e400}', "line 2: 1e400 is beyond the range of a double"),
    "NaN": ('{\n"x": NaN}', "line 2: NaN is not a JSON number"),
    "Infinity": ('{"x": "Infinity",\n"y": -Infinity}', "line 2: -Infinity is not a JSON number"),
    "duplicate keys": ('{"deployment": {"resources": []}, "deployment": {}}', "duplicate key 'deployment'"),
    "latin-1": (b'{"deployment": {"resources": []},\n"x": "\xe9"}', "line 2: not UTF-8 text (byte 0xe9)"),
    "not JSON": ("{'deployment': 1}", "not valid JSON (line 1"),
    "empty": ("", "not valid JSON"),
    "inputs a string": (resource(inputs='"x"'), "inputs must be an object, got str"),
    "inputs a list": (resource(inputs="[1]"), "inputs must be an object, got list"),
    "outputs a string": (resource(outputs='"x"'), "outputs must be an object"),
    "provider a number": (resource(provider="5"), "provider must be a URN string"),
    "parent a number": (resource(parent="5"), "parent must be a URN string"),
    "dependencies a string": (resource(dependencies='"abc"'), "dependencies must be a list of strings"),
    "dependencies numbers": (resource(dependencies="[1, 2]"), "dependencies must be a list of strings"),
    "ignoreChanges a number": (resource(ignoreChanges="5"), "ignoreChanges must be a list of strings"),
    "propertyDependencies a list": (resource(propertyDependencies="[1]"), "propertyDependencies must be an object"),
    "propertyDependencies of numbers": (resource(propertyDependencies='{"a": [1]}'), "propertyDependencies.a"),
    "protect a string": (resource(protect='"yes"'), "protect must be true or false"),
}


def run(args: list[str], stdin: str | None = None):
    started = time.monotonic()
    result = CliRunner().invoke(app, args, input=stdin)
    elapsed = time.monotonic() - started
    assert elapsed < SECONDS, f"{args[:3]} took {elapsed:.0f} s"
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def refused(args: list[str], *needles: str, stdin: str | None = None) -> str:
    result = run(args, stdin)
    assert result.exit_code == 2, result.output
    for needle in needles:
        assert needle in result.output, result.output
    return result.output


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


@pytest.mark.parametrize("case", sorted(EXPORTS))
def test_policy_file_of_any_shape_is_refused_naming_it(case: str, tmp_path: Path) -> None:
    content, message = EXPORTS[case]
    path = tmp_path / "export.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    refused(["policy", "--file", str(path)], f"--file {path}", message)


def test_policy_file_from_stdin_has_the_same_limits() -> None:
    refused(["policy", "--file", "-"], "--file -: line 1: NaN is not a JSON number", stdin='{"x": NaN}')


def test_a_bom_is_read_as_utf8(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_bytes(b'\xef\xbb\xbf{"deployment": {"resources": []}}')
    result = run(["policy", "--file", str(path)])
    assert result.exit_code in (0, 1) and "BOM" not in result.output, result.output  # read, then judged


def test_a_huge_export_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """A sparse 200 MB file: the refusal comes from its size, with a few KB of memory, not from reading it."""
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(200 * 1024 * 1024)
    assert os.stat(path).st_size > MAX_EXPORT_BYTES
    tracemalloc.start()
    try:
        refused(["policy", "--file", str(path)], "209,715,200 bytes, larger than 128 MiB; refused before reading")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 1024 * 1024


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_devices_and_directories_are_not_read(device: str, tmp_path: Path) -> None:
    if not Path(device).exists():
        pytest.skip(f"no {device}")
    refused(["policy", "--file", device], "not a regular file")
    refused(["simulate", "serving", "aws-serving", "--trace", device], "not a regular file")
    refused(["cost", "aws-training", "--prices", device], "not a regular file")
    refused(["validate", device], "no such stack")  # not a stack file: never opened


def test_a_fifo_without_a_writer_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    refused(["policy", "--file", str(fifo)], "not a regular file")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[]", "expected a JSON object keyed by policy name"),
        ('"mandatory"', "expected a JSON object keyed by policy name"),
        ('{"all": 5}', "policy config entry 5 is neither a level nor an object"),
        ('{"all": "sometimes"}', "enforcement level 'sometimes'"),
        ('{"all": {"enforcementLevel": [1]}}', "neither a level nor an object"),
        ('{"all": NaN}', "line 1: NaN is not a JSON number"),
        ('{"all": "advisory", "all": "mandatory"}', "duplicate key 'all'"),
        ("[" * 5000, "nested deeper than 100 levels"),
    ],
)
def test_policy_config_of_any_shape_is_refused(content: str, message: str, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(content)
    export = tmp_path / "export.json"
    export.write_text('{"deployment": {"resources": []}}')
    refused(["policy", "--file", str(export), "--policy-config", str(config)], message)


# --- stack files (validate, diff --file) and JSON written as YAML strings ------------------------------------


def stack_with_account(value: str) -> str:
    return re.sub(r"(?m)^  accelstack:account:.*(\n    .*)*", "  accelstack:account: " + value, STACK, count=1)


STACK_FILES: dict[str, tuple[bytes | str, str]] = {
    "JSON string, duplicate keys": (stack_with_account("""'{"id": "1", "id": "2"}'"""), "duplicate key 'id'"),
    "JSON string, nested 3000": (stack_with_account("'" + "[" * 3000 + "]" * 3000 + "'"), "nested deeper than 100"),
    "JSON string, NaN": (stack_with_account("""'{"id": NaN}'"""), "account: written as JSON: line 1: NaN"),
    "JSON string, 5000 digits": (stack_with_account("""'{"id": %s}'""" % ("9" * 5000)), "an integer of 5,000"),
    "YAML integer of 5000 digits": (stack_with_account("\n    id: " + "9" * 5000), "written with 5,000 characters"),
    "latin-1": (b"config:\n  accelstack:cloud: \xe9\n", "line 2: not UTF-8 text"),
    "a list": ("- 1\n- 2\n", "a stack file is a mapping"),
    "empty": ("", "a stack file is a mapping"),
    "2 MB": (STACK + "# " + "x" * 2_000_000 + "\n", "refused before reading"),
}


@pytest.mark.parametrize("case", sorted(STACK_FILES))
@pytest.mark.parametrize("command", ["validate", "diff"])
def test_stack_files_of_any_shape_are_refused(command: str, case: str, tmp_path: Path) -> None:
    content, message = STACK_FILES[case]
    path = tmp_path / "Pulumi.hostile.yaml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    args = ["validate", str(path)] if command == "validate" else ["diff", "aws-training", "--file", str(path)]
    refused(args, message)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("training.scheduler.partitions.\u0661.maxTime=5", "partitions.\u0661: is not an index"),  # Arabic-Indic 1
        ("training.scheduler.partitions.٣.maxTime=5", "is not an index"),
        ("training.scheduler.partitions.¹.maxTime=5", "is not an index"),  # superscript: isdigit() but no int()
        ("training.scheduler.partitions.-1.maxTime=5", "is not an index"),
        ("training.scheduler.partitions[-1].maxTime=5", "unknown key"),
        ("training.scheduler.partitions.99999999999.maxTime=5", "is not an index"),
        ("training.scheduler.partitions.%s.maxTime=5" % ("9" * 5000), "99999999999999999..."),
        ("training.nodes.count=%s" % ("9" * 5000), "a number written with 5,000 characters"),
        ("training.nodes=%s" % ("[" * 3000), "training.nodes"),
        ("training.nodes.count=1e400", "training.nodes.count"),
        ("training.nodes.count=.nan", "training.nodes.count"),
    ],
)
def test_set_paths_and_values_are_bounded(override: str, message: str) -> None:
    output = refused(["validate", "aws-training", "--set", override], message)
    assert len(max(output.splitlines(), key=len)) < 1000  # a 5,000-digit index is clipped, not echoed


# --- cost --prices --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("onDemandHourly:\n  a: 1\n  a: 2\n", "onDemandHourly.a: line 3: duplicate key"),
        ("spotDiscount: %s\n" % ("9" * 5000), "written with 5,000 characters"),
        ("onDemandHourly: x\n", "onDemandHourly must be a mapping"),
        ("onDemandHourly:\n  p5.48xlarge: .nan\n", "finite numbers >= 0"),
        ("s3GbMonth: -1\n", "finite numbers >= 0"),
        ("[1, 2]\n", "expected a mapping"),
        ("{a: [[[[", "not valid YAML"),
    ],
)
def test_price_files_of_any_shape_are_refused(content: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(content)
    refused(["cost", "aws-training", "--prices", str(path)], f"--prices {path}", message)


# --- simulate --trace -----------------------------------------------------------------------------------------

TRACES: dict[str, tuple[str, str]] = {
    "Unix milliseconds": (
        "".join(f"{1_700_000_000_000 + i * 2000},100\n" for i in range(100)),
        "line 1: timestamp 1700000000000 is Unix time in milliseconds",
    ),
    "a day in milliseconds from 0": (
        "".join(f"{i * 864_000},100\n" for i in range(101)),
        "spans 86,400,000 s (1,000.0 days); one run simulates at most 31 days. If the timestamps are milliseconds",
    ),
    "10^12 s": ("0,100\n99999999999,100\n", "spans 99,999,999,999 s"),
    "NaN time": ("0,100\nnan,100\n", "line 2: need a finite timestamp"),
    "inf tokens": ("0,100\n5,inf\n", "line 2: need a finite timestamp and tokens > 0"),
    "negative time": ("10,100\n-5,100\n", "line 2: timestamp -5 is negative"),
    "absurd tokens": ("0,100\n5,1e300\n", "line 2: 1e300 output tokens"),
    "empty": ("", "no 'timestamp,tokens' rows"),
    "header only": ("timestamp,tokens\n", "no 'timestamp,tokens' rows"),
    "JSON lines": ('{"timestamp": 1, "tokens": 5}\n', "looks like JSON; --trace takes CSV rows"),
    "a 200,000-character field": ("0,100\n1," + "1" * 200_000 + "\n", "line 2: not a CSV row"),
    "a 5000-digit number": ("0,100\n1," + "9" * 5000 + "\n", "line 2: timestamp and tokens must be numbers"),
    "one column": ("0,100\n1\n", "line 2: expected 'timestamp,tokens'"),
}


@pytest.mark.parametrize("case", sorted(TRACES))
def test_traces_of_any_shape_are_refused_with_the_line(case: str, tmp_path: Path) -> None:
    content, message = TRACES[case]
    path = tmp_path / "trace.csv"
    path.write_text(content)
    refused(["simulate", "serving", "aws-serving", "--trace", str(path)], f"--trace {path}", message)


def test_a_latin1_trace_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "trace.csv"
    path.write_bytes(b"0,100\n\xe9,1\n")
    refused(["simulate", "serving", "aws-serving", "--trace", str(path)], "line 2: not UTF-8 text")


def test_an_unsorted_trace_is_replayed_in_time_order(tmp_path: Path) -> None:
    path = tmp_path / "trace.csv"
    path.write_text("".join(f"{(i * 7919) % 600},100\n" for i in range(600)))
    result = run(["simulate", "serving", "aws-serving", "--trace", str(path), "--json"])
    assert result.exit_code == 0 and '"requests": 600' in result.output, result.output


def test_a_huge_trace_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.csv"
    with path.open("wb") as handle:
        handle.truncate(300 * 1024 * 1024)
    refused(["simulate", "serving", "aws-serving", "--trace", str(path)], "larger than 256 MiB; refused before")


def test_the_installed_command_prints_no_traceback_either(tmp_path: Path) -> None:
    """The console script, not CliRunner: what a user's shell sees for one hostile file of each reader."""
    export = tmp_path / "export.json"
    export.write_text("[" * 100_000)
    completed = subprocess.run(
        [sys.executable, "-m", "accelstack.cli", "policy", "--file", str(export)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert completed.returncode == 2 and "Traceback" not in completed.stderr, completed.stderr
    assert "nested deeper than 100 levels" in completed.stderr
