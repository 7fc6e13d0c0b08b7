"""Derived defaults: the numbers `preview` reports are the numbers the components register."""

from __future__ import annotations

import base64
import math
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from accelstack.engine.capture import Capture, capture, config_for_pulumi
from accelstack.planner import checkpoint as ck
from accelstack.planner.defaults import DerivedDefault, derived_defaults
from accelstack.planner.training_plan import plan_training
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file
from tests.planner.aws_inputs import AWS_CATALOG, aws_book

REPO = Path(__file__).resolve().parents[2]
MAIN = REPO / "__main__.py"
STACKS = REPO / "stacks"
MISSING = object()


def spec_of(stack: str, *overrides: str):
    return parse_spec(apply_overrides(read_stack_file(STACKS / f"Pulumi.{stack}.yaml"), list(overrides)), stack)


@cache
def run(stack: str, *overrides: str) -> Capture:
    raw = apply_overrides(read_stack_file(STACKS / f"Pulumi.{stack}.yaml"), list(overrides))
    return capture(MAIN, config_for_pulumi(raw), stack=stack)


def by_path(defaults: list[DerivedDefault]) -> dict[str, DerivedDefault]:
    return {d.path: d for d in defaults}


def dig(inputs: dict[str, Any], path: str) -> Any:
    """`healthCheck.interval` / `initialLifecycleHooks[0].heartbeatTimeout` in a resource's inputs."""
    value: Any = inputs
    for part in path.split("."):
        name, _, index = part.partition("[")
        if not isinstance(value, dict) or name not in value:
            return MISSING
        value = value[name]
        if index:
            position = int(index.rstrip("]"))
            if not isinstance(value, list) or position >= len(value):
                return MISSING
            value = value[position]
    return value


def test_serving_defaults_are_what_the_serving_component_registers():
    cap = run("aws-serving")
    defaults = derived_defaults(spec_of("aws-serving"), catalog=AWS_CATALOG, prices=aws_book())
    resource_rows = [d for d in defaults if d.kind == "resource"]
    assert len(resource_rows) >= 10
    for item in resource_rows:
        name, _, prop = item.path.partition(".")
        [resource] = [r for r in cap.by_type(item.resource_type) if r.name == name]
        assert dig(resource.inputs, prop) == item.value, item.target
    config = by_path(defaults)
    outputs = cap.stack_outputs
    assert outputs["coldStartSeconds"] == config["serving.replicas.coldStartSeconds"].value == 233
    assert outputs["warmPoolSize"] == config["serving.replicas.warmPool"].value == 6
    backlog = config["aws-serving-backlog-per-instance.targetTrackingConfiguration.targetValue"]
    assert outputs["backlogPerInstanceTarget"] == backlog.value == round(0.7 * config["replica concurrency"].value, 2)
    [group] = [r for r in cap.by_type("aws:autoscaling/group:Group") if r.name == "aws-serving-replicas"]
    assert group.inputs["warmPool"]["minSize"] == config["serving.replicas.warmPool"].value


def test_serving_sources_name_their_inputs_and_follow_the_stack_file():
    estimated = by_path(derived_defaults(spec_of("aws-serving"), catalog=AWS_CATALOG, prices=aws_book()))
    cold = estimated["serving.replicas.coldStartSeconds"].source
    assert "boot 90 s" in cold and "500 MB/s" in cold and "= 232.1 s" in cold
    assert (
        "ceil(2000 x 1 s / 300 s TTL) = 7 replicas, of which 1 already run: 6 more"
        in estimated["serving.replicas.warmPool"].source
    )
    assert (
        "11 requests in flight per replica (the queue worker's concurrency) x target utilization 70%"
        in estimated["aws-serving-backlog-per-instance.targetTrackingConfiguration.targetValue"].source
    )
    measured = by_path(
        derived_defaults(
            spec_of("aws-serving", "serving.replicas.coldStartSeconds=900", "serving.replicas.warmPool=2"),
            catalog=AWS_CATALOG,
            prices=aws_book(),
        )
    )
    assert measured["serving.replicas.coldStartSeconds"].value == 900
    assert measured["serving.replicas.coldStartSeconds"].source.startswith("set in the stack file")
    assert measured["serving.replicas.warmPool"].value == 2
    # A measured 900 s cold start: health checks every ceil(900 x 5% / 2) = 23 s, grace (2 + 1) x 23.
    assert measured["aws-serving-replicas.healthCheckGracePeriod"].value == 69


def test_training_interval_is_dalys_for_the_stacks_own_numbers():
    # 4 x p5.48xlarge training llama-3.1-70b (70.554 B params x 14 B/param); Lustre 4800 GiB x 250 MB/s/TiB.
    delta = 70.554e9 * 14 / (4800 / 1024 * 250 * 1e6)
    mtbf = ck.job_mtbf_hours(4, "on-demand") * 3600
    expected = math.floor(ck.daly_interval(delta, mtbf))
    defaults = by_path(derived_defaults(spec_of("aws-training"), catalog=AWS_CATALOG, prices=aws_book()))
    assert defaults["checkpointIntervalSeconds"].value == expected
    assert defaults["checkpointIntervalSeconds"].kind == "output"
    assert defaults["checkpoint write time"].value == round(delta, 1)
    assert "Daly 2006" in defaults["checkpointIntervalSeconds"].source


def test_training_component_exports_the_interval_and_writes_it_to_the_nodes():
    cap = run("aws-training", "training.scheduler.kind=none")
    interval = plan_training(spec_of("aws-training").training, catalog=AWS_CATALOG, prices=aws_book()).interval_seconds
    assert cap.stack_outputs["checkpointIntervalSeconds"] == interval
    [template] = [r for r in cap.by_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name == "aws-training-nodes"]
    config = yaml.safe_load(base64.b64decode(template.inputs["userData"]))
    files = {f["path"]: f["content"] for f in config["write_files"]}
    assert files["/etc/accelstack/training.env"].splitlines() == [
        f"ACCELSTACK_CHECKPOINT_INTERVAL_SECONDS={interval}",
        "ACCELSTACK_CHECKPOINT_DIR=/fsx/checkpoints",
        "ACCELSTACK_CHECKPOINT_URI=s3://acme-train-checkpoints",
        "ACCELSTACK_CHECKPOINT_MARKER=COMPLETE",
        "ACCELSTACK_STACK=aws-training",
    ]
    assert ". /etc/accelstack/training.env" in files["/etc/profile.d/accelstack-training.sh"]


def test_spot_and_more_nodes_checkpoint_more_often():
    def interval(*overrides: str) -> int:
        return by_path(derived_defaults(spec_of("aws-training", *overrides), catalog=AWS_CATALOG, prices=aws_book()))[
            "checkpointIntervalSeconds"
        ].value

    base = interval()
    assert interval("training.nodes.capacity=spot") < base
    # Twice the nodes and twice the file system: the same write time, half the job MTBF.
    assert interval("training.nodes.count=8", "training.storage.lustre.capacityGiB=9600") < base


def test_lustre_check_flags_a_slow_tier_and_finds_a_cheaper_valid_one():
    target = "training.storage.checkpoints.writeTargetSeconds=300"

    def check(*overrides: str) -> DerivedDefault:
        return by_path(
            derived_defaults(spec_of("aws-training", target, *overrides), catalog=AWS_CATALOG, prices=aws_book())
        )["training.storage.lustre"]

    # A 919.9 GiB checkpoint at 4800 GiB x 250 MB/s/TiB = 1171.9 MB/s.
    slow = check()
    assert slow.kind == "check" and not slow.ok and slow.value == 842.9
    assert (
        "misses the 300 s target (training.storage.checkpoints.writeTargetSeconds); cheapest that meets it: "
        "PERSISTENT_2 7200 GiB at 500 MB/s/TiB (281 s, $2,448/month)" in slow.source
    )
    fast = check("training.storage.lustre.throughputPerTiB=1000")
    assert fast.ok and fast.value == 210.7
    assert "cheaper and still within it: PERSISTENT_2 7200 GiB at 500 MB/s/TiB" in fast.source
    right = check("training.storage.lustre.capacityGiB=7200", "training.storage.lustre.throughputPerTiB=500")
    assert right.ok and "no cheaper PERSISTENT_2 option" in right.source


def test_without_lustre_checkpoints_go_to_s3_and_there_is_no_lustre_check():
    defaults = by_path(derived_defaults(spec_of("aws-finetune"), catalog=AWS_CATALOG, prices=aws_book()))
    assert "training.storage.lustre" not in defaults
    assert "S3 at an assumed 1000 MB/s per node x 1" in defaults["checkpoint write time"].source
    assert "spot interruptions 20%/month" in defaults["job MTBF"].source
