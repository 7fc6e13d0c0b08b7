"""Hostile inputs on the surfaces that landed after issue 29's outside run (issue 29, inputs 1-5): OCI and Vultr
stacks, landing stacks (`workload: landing`), `plan quotas`, `calibrate`, `simulate --profile/--plot` and Vultr's
presigned weights key. Each case is a stack file, a profile or an output path written the way a careless or hostile
user would; the contract is the one tests/cli/test_hostile_files.py holds the older readers to: exit 2, a message
naming the config path (or the file and line) and what is allowed, no traceback, no hang, nothing written outside
the target."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.examples import example_file

REPO = Path(__file__).resolve().parents[2]
SECONDS = 30  # each case is refused before any preview; a hang or a runaway measurement fails here
DELETE = object()
TOP = ("account", "organization", "separation", "training", "serving")


def stack(name: str) -> dict[str, Any]:
    return yaml.safe_load(example_file(name).read_text())


def edited(name: str, *changes: tuple[str, Any]) -> dict[str, Any]:
    """The shipped example `name` with each (config path, value) set (DELETE removes the key)."""
    document = copy.deepcopy(stack(name))
    for path, value in changes:
        parts = path.split(".")
        if parts[0] in TOP:
            parts[0] = f"accelstack:{parts[0]}"
        node = document["config"]
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        last: Any = int(parts[-1]) if isinstance(node, list) else parts[-1]
        if value is DELETE:
            node.pop(last)
        else:
            node[last] = value
    return document


def run(args: list[str]):
    started = time.monotonic()
    result = CliRunner().invoke(app, args)
    elapsed = time.monotonic() - started
    assert elapsed < SECONDS, f"{args[:3]} took {elapsed:.0f} s"
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def refused(args: list[str], *needles: str) -> str:
    result = run(args)
    assert result.exit_code == 2, result.output
    for needle in needles:
        assert needle in result.output, result.output
    return result.output


def write_stack(tmp_path: Path, name: str, content: dict[str, Any] | str) -> Path:
    path = tmp_path / f"Pulumi.{name}.yaml"
    text = content if isinstance(content, str) else yaml.safe_dump(content, allow_unicode=False, width=10**6)
    path.write_text(text)
    return path


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # landing stacks find the workload stacks they list in the project's stacks/


# --- 1. strings: control characters, quotes, lookalikes, very long values, in every string key -----------------

HOSTILE_TEXT = {
    "line break": "a\nbootcmd: [id]",
    "quote and substitution": "x'$(id)\"",
    "Cyrillic a": "\u0430cme",
    "line separator": "a\u2028b",
    "5,000 characters": "a" * 5000,
}
STRING_KEYS = {
    "oci-landing": [
        "organization.parentId",
        "organization.parentPath",
        "organization.allowedRegions.0",
        "organization.alertEmails.0",
        "organization.training.account.name",
        "organization.serving.account.name",
        "organization.roleName",
        "account.tenancyOcid",
        "account.compartmentOcid",
        "account.region",
    ],
    "oci-training": [
        "training.nodes.instanceType",
        "training.storage.datasets.uri",
        "training.storage.checkpoints.uri",
        "training.storage.lustre.importPath",
        "training.storage.lustre.mountPath",
        "training.network.availabilityZone",
        "training.scheduler.partitions.0.name",
        "separation.trainingAccounts.0",
    ],
    "vultr-serving": [
        "account.apiKeySecret",
        "account.region",
        "account.weightsKey.object",
        "account.weightsKey.signerSecret",
        "serving.model.name",
        "serving.model.weightsUri",
        "serving.loadBalancer.certificate",
        "serving.loadBalancer.healthPath",
    ],
}
STRING_CASES = [
    (name, key, kind) for name, keys in STRING_KEYS.items() for key in keys for kind in sorted(HOSTILE_TEXT)
]


@pytest.mark.parametrize(("name", "key", "kind"), STRING_CASES)
def test_hostile_text_in_every_string_key_is_refused_at_its_path(
    name: str, key: str, kind: str, tmp_path: Path
) -> None:
    path = write_stack(tmp_path, name, edited(name, (key, HOSTILE_TEXT[kind])))
    output = refused(["validate", str(path)], f"{name}: ")
    assert key in output or "accelstack:" in output, output  # the key, or (a cross-key check) its section
    assert len(max(output.splitlines(), key=len)) < 1200  # 5,000 characters are clipped, not echoed


# Values that keep the key's own value in front, the shape a grammar without an anchor or a segment rule lets by.
SUFFIXED = {
    "weights key object through '..'": (
        "vultr-serving",
        "account.weightsKey.object",
        "s3://acme-models/keys/../models/llama-3.1-8b-instruct/k.env",
        "no '.', '..' or empty ('//') path segments",
    ),
    "weights key object with $(id)": (
        "vultr-serving",
        "account.weightsKey.object",
        "s3://acme-models/keys/x$(id)'.env",
        "is not an object-store URI",
    ),
    "weights key object with a query": (
        "vultr-serving",
        "account.weightsKey.object",
        "s3://acme-models/keys/k.env?x=1#y",
        "is not an object-store URI",
    ),
    "weights URI through '..'": (
        "vultr-serving",
        "serving.model.weightsUri",
        "s3://acme-models/models/../keys/",
        "no '.', '..' or empty ('//') path segments",
    ),
    "dataset URI with '//'": (
        "oci-training",
        "training.storage.datasets.uri",
        "oci://acme-train-datasets//corpus",
        "no '.', '..' or empty ('//') path segments",
    ),
    "checkpoint URI with '.'": (
        "oci-training",
        "training.storage.checkpoints.uri",
        "oci://acme-train-checkpoints/./x",
        "no '.', '..' or empty ('//') path segments",
    ),
    "health path through '..'": (
        "vultr-serving",
        "serving.loadBalancer.healthPath",
        "/health/../metrics",
        "no '.', '..' or empty ('//') path segments",
    ),
    "AWS landing deploy role with $(id) in its path": (
        "aws-landing",
        "account.deployRole",
        "arn:aws:iam::000000000000:role/$(id)/accelstack-landing",
        "is not an IAM role ARN",
    ),
    "principals on OCI": (
        "oci-landing",
        "organization.training.principals",
        ["00000000-0000-0000-0000-000000000000"],
        "principals: is azure's",
    ),
    "import trigger a list": (
        "oci-training",
        "training.storage.lustre.importTrigger",
        [1, 2],
        "is not text",
    ),
}


@pytest.mark.parametrize("case", sorted(SUFFIXED))
def test_values_that_keep_a_valid_prefix_are_refused(case: str, tmp_path: Path) -> None:
    name, key, value, message = SUFFIXED[case]
    path = write_stack(tmp_path, name, edited(name, (key, value)))
    refused(["validate", str(path)], key.rsplit(".", 1)[-1], message)


# --- 2. numbers at their bounds, and spellings two YAML readers read apart ----------------------------------------

NUMBERS = {
    "budget NaN": ("oci-landing", "organization.training.monthlyBudgetUsd", ".nan", "not a finite number"),
    "budget -inf": ("oci-landing", "organization.training.monthlyBudgetUsd", "-.inf", "not a finite number"),
    "budget 1e999": ("oci-landing", "organization.training.monthlyBudgetUsd", "1e999", "not a finite number"),
    "budget 5,000 digits": ("oci-landing", "organization.training.monthlyBudgetUsd", "9" * 5000, "5,000 characters"),
    "budget negative": ("oci-landing", "organization.training.monthlyBudgetUsd", "-1", "greater than 0"),
    "OCI budget a fraction": (
        "oci-landing",
        "organization.training.monthlyBudgetUsd",
        "0.5",
        "an OCI budget is a whole number",
    ),
    "node count in base 60": ("oci-training", "training.nodes.count", "1:30", "Pulumi's (YAML 1.2) may not"),
    "node count in octal": ("oci-training", "training.nodes.count", "010", "the number in decimal digits"),
    "node count a fraction": ("oci-training", "training.nodes.count", "2.5", "training.nodes.count"),
    "node count yes": ("oci-training", "training.nodes.count", "yes", "Pulumi's (YAML 1.2) as the text 'yes'"),
    "node count true": ("oci-training", "training.nodes.count", "true", "true/false, not a number"),
    # Strict numbers: lax parsing would take quoted digits and whole fractions as the integer.
    "node count quoted": ("oci-training", "training.nodes.count", '"120"', "'120' is text (quoted); allowed: a whole"),
    "node count 120.0": ("oci-training", "training.nodes.count", "120.0", "120.0 is a decimal number"),
    "node count 1e2": ("oci-training", "training.nodes.count", "1e2", "100.0 is a decimal number"),
    "URL lifetime quoted": ("vultr-serving", "account.weightsKey.urlLifetimeMinutes", '"60"', "'60' is text"),
    "replicas max 8.0": ("vultr-serving", "serving.replicas.max", "8.0", "allowed: a whole number in digits, e.g. 8"),
    "budget quoted": ("oci-landing", "organization.training.monthlyBudgetUsd", '"5000"', "a number without quotes"),
    "budget past a billion": ("oci-landing", "organization.training.monthlyBudgetUsd", "2e9", "accelstack's bound"),
    "create a quoted true": ("oci-training", "training.storage.checkpoints.create", '"true"', "allowed: true or false"),
    "create on": ("oci-training", "training.storage.checkpoints.create", "on", "Pulumi's (YAML 1.2) as the text"),
    "URL lifetime below 15": ("vultr-serving", "account.weightsKey.urlLifetimeMinutes", "14", "greater than or equal"),
    "URL lifetime above a day": ("vultr-serving", "account.weightsKey.urlLifetimeMinutes", "1441", "less than"),
    "URL lifetime 400 digits": (
        "vultr-serving",
        "account.weightsKey.urlLifetimeMinutes",
        "9" * 400,
        "a number written with 400 characters",
    ),
    "URL lifetime hex": ("vultr-serving", "account.weightsKey.urlLifetimeMinutes", "0x78", "in decimal digits"),
    "replicas negative": ("vultr-serving", "serving.replicas.min", "-1", "serving.replicas.min"),
    "port past 65535": ("vultr-serving", "serving.loadBalancer.port", "70000", "less than or equal to 65535"),
}


@pytest.mark.parametrize("case", sorted(NUMBERS))
def test_numbers_at_their_bounds_are_refused(case: str, tmp_path: Path) -> None:
    name, key, written, message = NUMBERS[case]
    marker = "__NUMBER__"
    text = yaml.safe_dump(edited(name, (key, marker)), width=10**6).replace(marker, written)
    path = write_stack(tmp_path, name, text)
    refused(["validate", str(path)], key, message)


# --- 3. shapes: wrong types, duplicate keys, YAML 1.1 types, aliases, nesting ----------------------------------------


def shipped_text(name: str) -> str:
    return example_file(name).read_text()


SHAPES = {
    "region a list": ("vultr-serving", edited("vultr-serving", ("account.region", ["ewr"])), "account.region"),
    "organization a string": ("oci-landing", edited("oci-landing", ("organization", "tenancy")), "organization"),
    "weightsKey a list": ("vultr-serving", edited("vultr-serving", ("account.weightsKey", [1])), "weightsKey"),
    "region !!binary": (
        "vultr-serving",
        shipped_text("vultr-serving").replace("region: ewr", "region: !!binary ZXdy", 1),
        "!!binary values are not config values",
    ),
    "allowedRegions !!set": (
        "oci-landing",
        shipped_text("oci-landing").replace("allowedRegions: [us-ashburn-1]", "allowedRegions: !!set {us-ashburn-1}"),
        "!!set values are not config values",
    ),
    "duplicate key in the weights key": (
        "vultr-serving",
        shipped_text("vultr-serving").replace(
            "      urlLifetimeMinutes: 120\n", "      urlLifetimeMinutes: 120\n      urlLifetimeMinutes: 60\n"
        ),
        "duplicate key",
    ),
    "duplicate compartment name key": (
        "oci-landing",
        shipped_text("oci-landing").replace(
            "      account: {name: acme-train}", "      account: {name: acme-train, name: acme-x}"
        ),
        "duplicate key",
    ),
    "organization as JSON with NaN": (
        "oci-landing",
        shipped_text("oci-landing").split("  accelstack:organization:")[0]
        + "  accelstack:organization: '{\"parentId\": NaN}'\n",
        "NaN",
    ),
    "aliases expanding a million values": (
        "oci-landing",
        "config:\n  accelstack:cloud: oci\n  a: &a [x,x,x,x,x,x,x,x,x,x]\n"
        + "".join(f"  {c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n" for p, c in zip("abcde", "bcdef", strict=True))
        + "  accelstack:organization: *f\n",
        "aliases expand to more than",
    ),
    "organization nested 5,000 deep": (
        "oci-landing",
        "config:\n  accelstack:cloud: oci\n  accelstack:organization: " + "[" * 5000 + "]" * 5000 + "\n",
        "nested",
    ),
}


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_stack_files_of_hostile_shapes_are_refused(case: str, tmp_path: Path) -> None:
    name, content, message = SHAPES[case]
    path = write_stack(tmp_path, name, content)
    refused(["validate", str(path)], message)


# --- 4. stack names that would make invalid derived names ---------------------------------------------------------


@pytest.mark.parametrize("base", ["oci-training", "vultr-serving", "oci-landing"])
@pytest.mark.parametrize("stack_name", ["Upper", "a.b", "a_b", "\u00fcn\u00ef", "-a", "a" * 41])
def test_stack_names_outside_the_grammar_are_refused(base: str, stack_name: str, tmp_path: Path) -> None:
    path = write_stack(tmp_path, stack_name, shipped_text(base))
    refused(["validate", str(path)], "is not a stack name: lowercase letters, digits and '-', at most 40")


# --- 5. create-time limits: regions, provider settings, address ranges, sizes -----------------------------------

LIMITS = {
    "OCI landing allows a region OCI has not": (
        "oci-landing",
        [("organization.allowedRegions", ["us-ashburn-1", "us-fake-9"])],
        "organization.allowedRegions.1: 'us-fake-9' is not an OCI region identifier",
    ),
    "AWS landing allows a region AWS has not": (
        "aws-landing",
        [("organization.allowedRegions", ["us-east-1", "us-fake-9"])],
        "is not an AWS Region name",
    ),
    "OCI landing's oci:region disagrees": (
        "oci-landing",
        [("oci:region", "eu-frankfurt-1")],
        "sets oci:region: 'eu-frankfurt-1'",
    ),
    "AWS landing's aws:region disagrees": ("aws-landing", [("aws:region", "eu-west-1")], "sets aws:region"),
    "allowed region listed twice": (
        "oci-landing",
        [("organization.allowedRegions", ["us-ashburn-1", "us-ashburn-1"])],
        "lists a region twice",
    ),
    "OCI VCN of public addresses": (
        "oci-training",
        [("training.network.vpcCidr", "8.8.0.0/16")],
        "is not a private range (RFC 1918)",
    ),
    "Vultr VPC of public addresses": (
        "vultr-serving",
        [("serving.network.vpcCidr", "8.8.8.0/24")],
        "is not a private range (RFC 1918)",
    ),
    "Vultr VPC on Docker's bridge": (
        "vultr-serving",
        [("serving.network.vpcCidr", "172.17.0.0/24")],
        "Docker's default bridge",
    ),
    "Vultr VPC too small for its replicas": (
        "vultr-serving",
        [("serving.replicas.min", 300), ("serving.replicas.max", 300)],
        "fewer than the 304 it needs",
    ),
    "Vultr region without the plan": (
        "vultr-serving",
        [("account.region", "syd"), ("separation.allowedRegions", ["syd"])],
        "is not offered in syd",
    ),
    "Vultr user data past 64 KiB": (
        "vultr-serving",
        [
            (
                "serving.model.adapters",
                [{"name": f"a{i}", "uri": f"s3://acme-models/adapters/a{i}/"} for i in range(400)],
            )
        ],
        "Vultr accepts at most 65,536",
    ),
    "OCI availability domain 4": (
        "oci-training",
        [("training.network.availabilityZone", "4")],
        "allowed: 1, 2, 3",
    ),
    "weights key under the synced weights": (
        "vultr-serving",
        [("account.weightsKey.object", "s3://acme-models/models/llama-3.1-8b-instruct/k.env")],
        "which every replica copies to its disk",
    ),
}


@pytest.mark.parametrize("case", sorted(LIMITS))
def test_create_time_limits_are_checked_at_validate(case: str, tmp_path: Path) -> None:
    name, changes, message = LIMITS[case]
    path = write_stack(tmp_path, name, edited(name, *changes))
    refused(["validate", str(path)], message)


def test_plan_quotas_refuses_what_validate_refuses(tmp_path: Path) -> None:
    path = write_stack(tmp_path, "oci-landing", edited("oci-landing", ("oci:region", "eu-frankfurt-1")))
    refused(["plan", "quotas", str(path)], "sets oci:region")


# --- profiles (`--profile`: calibrate's or vllm bench serve's) -----------------------------------------------------

PROFILE = {
    "kind": "accelstack-serving-profile",
    "version": 1,
    "decode": [{"batch": 1, "context": 512, "stepSeconds": 0.01}, {"batch": 8, "context": 512, "stepSeconds": 0.02}],
    "prefill": [{"tokens": 512, "seconds": 0.03}],
}
VLLM = {
    "mean_tpot_ms": 12.0,
    "mean_ttft_ms": 100.0,
    "completed": 100,
    "total_input_tokens": 51200,
    "total_output_tokens": 25600,
    "max_concurrency": 16,
}


def with_decode(**fields: Any) -> str:
    document = copy.deepcopy(PROFILE)
    document["decode"][1].update(fields)
    return json.dumps(document)


PROFILES = {
    "a batch of 1e308": (with_decode(batch=1e308), "decode[1].batch: 1e+308 is more than 100,000 sequences"),
    "a context of 1e308": (with_decode(context=1e308), "decode[1].context: 1e+308 is more than 2,000,000 tokens"),
    "milliseconds as seconds": (with_decode(stepSeconds=20), "if these are milliseconds, divide by 1000"),
    "a subnormal step": (with_decode(stepSeconds=1e-320), "under a microsecond"),
    "a negative step": (with_decode(stepSeconds=-0.01), "decode[1].stepSeconds: must be > 0"),
    "a batch as text": (with_decode(batch="8"), "decode[1].batch: expected a number"),
    "NaN": (with_decode(stepSeconds=0.02).replace("0.02", "NaN"), "line 1: NaN is not a JSON number"),
    "20,000 points": (
        json.dumps({**PROFILE, "decode": [{"batch": 1, "context": i + 1, "stepSeconds": 0.01} for i in range(20000)]}),
        "decode: 20,000 points; at most 10,000",
    ),
    "vllm: TPOT of 1e308 ms": (json.dumps({**VLLM, "mean_tpot_ms": 1e308}), "mean_tpot_ms: 1e+308 is more than"),
    "vllm: a fraction of a request completed": (json.dumps({**VLLM, "completed": 1e-300}), "completed: must be >= 1"),
    "vllm: an hour-long request at 10^300 requests/s": (
        json.dumps(
            {
                **{k: v for k, v in VLLM.items() if k != "max_concurrency"},
                "request_throughput": 1e300,
                "mean_e2el_ms": 1,
            }
        ),
        "request_throughput: 1e+300 is more than",
    ),
}


@pytest.mark.parametrize("case", sorted(PROFILES))
def test_profiles_of_hostile_values_are_refused_naming_the_field(case: str, tmp_path: Path) -> None:
    content, message = PROFILES[case]
    profile = tmp_path / "profile.json"
    profile.write_text(content)
    args = ["simulate", "serving", "vultr-serving", "--profile", str(profile), "--hours", "0.1", "--seeds", "1"]
    refused(args, f"--profile {profile}", message)


# --- files that commands write: calibrate --out, simulate --plot -------------------------------------------------

SYNTHETIC = [
    "calibrate", "--instance-type", "test", "--synthetic", "layers=1,hidden=16,heads=2,kv-heads=2,intermediate=32,"
    "vocab=64", "--batches", "1", "--contexts", "8", "--prefill-lengths", "8", "--output-tokens", "2", "--repeats",
    "1", "--layers-measured", "1", "--warmup", "0", "--device", "cpu",
]  # fmt: skip


def _outs(tmp_path: Path) -> dict[str, tuple[str, str]]:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.json").write_text("keep")
    (tmp_path / "link.json").symlink_to(elsewhere / "keep.json")
    (tmp_path / "dangling.json").symlink_to(elsewhere / "new.json")
    (tmp_path / "dirlink").symlink_to(elsewhere)
    return {
        "blank": ("   ", "--out: empty"),
        "a link to a file": (str(tmp_path / "link.json"), "link.json is a symlink"),
        "a dangling link": (str(tmp_path / "dangling.json"), "dangling.json is a symlink"),
        "through a linked directory": (str(tmp_path / "dirlink" / "p.json"), "is a symlink"),
        "a missing parent": (str(tmp_path / "a" / "b" / "p.json"), "does not exist"),
        "a device": ("/dev/null", "exists and is not a regular file"),
    }


@pytest.mark.parametrize(
    "case",
    ["blank", "a link to a file", "a dangling link", "through a linked directory", "a missing parent", "a device"],
)
def test_calibrate_refuses_its_out_before_measuring(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, message = _outs(tmp_path)[case]
    monkeypatch.chdir(tmp_path)  # a blank --out would land here
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    output = refused([*SYNTHETIC, "--out", out], message)
    assert "decode batch" not in output  # refused before the measurements, not after minutes of them
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "elsewhere" / "keep.json").read_text() == "keep"


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--batches", "9" * 400, "comma-separated whole numbers 1..2,000,000"),
        ("--contexts", "1000000000", "comma-separated whole numbers 1..2,000,000"),
        ("--prefill-lengths", "\u0661\u0662", "comma-separated whole numbers"),  # Arabic-Indic digits
        ("--synthetic", "layers=" + "9" * 400 + ",hidden=16,heads=2,kv-heads=2,intermediate=32,vocab=64", "from 1 to"),
    ],
)
def test_calibrate_sizes_are_bounded_before_conversion(option: str, value: str, message: str, tmp_path: Path) -> None:
    args = list(SYNTHETIC)
    args[args.index(option) + 1] = value
    refused([*args, "--out", str(tmp_path / "p.json")], message)
    assert not (tmp_path / "p.json").exists()


def test_simulate_refuses_its_plot_before_simulating(tmp_path: Path) -> None:
    (tmp_path / "plot.png").symlink_to(tmp_path / "victim.png")
    args = [
        "simulate",
        "serving",
        "vultr-serving",
        "--hours",
        "0.1",
        "--seeds",
        "1",
        "--plot",
        str(tmp_path / "plot.png"),
    ]
    output = refused(args, "--plot", "plot.png is a symlink")
    assert "requests over" not in output and not (tmp_path / "victim.png").exists()


def test_the_installed_command_refuses_a_hostile_landing_stack_without_a_traceback(tmp_path: Path) -> None:
    """The console script, not CliRunner: what a user's shell sees."""
    path = write_stack(tmp_path, "oci-landing", edited("oci-landing", ("organization.allowedRegions.0", "a\nb")))
    completed = subprocess.run(
        [sys.executable, "-m", "accelstack.cli", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert completed.returncode == 2 and "Traceback" not in completed.stderr, completed.stderr
    assert "organization.allowedRegions.0" in completed.stderr and "allowed:" in completed.stderr


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("organization.training.monthlyBudgetUsd=.nan", "nan is not a finite number"),
        ("organization.alertEmails.0=finops@acme", "is not an email address; allowed:"),
        ("organization.allowedRegions=[us-ashburn-1, mars-1]", "organization.allowedRegions.1: 'mars-1'"),
        ('organization.training.monthlyBudgetUsd="500"', "'500' is text (quoted)"),
        ("organization.training.monthlyBudgetUsd=1e10", "above 1,000,000,000 USD"),
    ],
)
def test_set_on_a_landing_stack_is_applied_not_ignored(override: str, message: str) -> None:
    refused(["validate", "oci-landing", "--set", override], message, f"(from --set {override})")
