"""The serving topology in the spec, the same on every cloud: serving.admission.kind (queue or replica) and
serving.replicas.scaling (backlog or fixed), the plan's numbers for admission on the replicas, and the rules that
refuse combinations that cannot work."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from accelstack.clouds import registry
from accelstack.clouds.base import Feature
from accelstack.components.base import config_digest
from accelstack.planner.serving_plan import LOCAL_SERVER_PORT, plan_serving
from accelstack.spec import parse_spec
from accelstack.spec.loader import read_stack_file
from accelstack.spec.problems import Level
from tests.spec.spec_helpers import all_problems, edited

ROOT = Path(__file__).resolve().parents[2]
# Clouds whose serving example is the queue topology these cases edit away from; a cloud without a managed queue
# (Vultr) ships the direct fixed fleet, its only topology (tests/conformance/test_serving_topologies.py).
CLOUDS = sorted(
    c
    for c in registry.deployable()
    if (ROOT / "stacks" / f"Pulumi.{c}-serving.yaml").exists() and Feature.ADMISSION_QUEUE in registry.get(c).features
)


def raw(cloud: str) -> dict:
    return read_stack_file(ROOT / "stacks" / f"Pulumi.{cloud}-serving.yaml")


def errors_at(problems: list, path: str) -> list[str]:
    return [p.message for p in problems if p.path == path and p.level is Level.ERROR]


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_defaults_are_todays_topology_and_leave_the_digest(cloud: str) -> None:
    spec = parse_spec(raw(cloud), f"{cloud}-serving")
    assert (spec.serving.admission.kind, spec.serving.replicas.scaling) == ("queue", "backlog")
    stated = parse_spec(
        edited(raw(cloud), {"serving.admission.kind": "queue", "serving.replicas.scaling": "backlog"}),
        f"{cloud}-serving",
    )
    assert config_digest(stated) == config_digest(spec)
    moved = parse_spec(edited(raw(cloud), {"serving.admission.kind": "replica"}), f"{cloud}-serving")
    assert config_digest(moved) != config_digest(spec)


@pytest.mark.parametrize("cloud", CLOUDS)
@pytest.mark.parametrize(
    ("edits", "path", "fragment"),
    [
        ({"serving.replicas.scaling": "fixed", "serving.replicas.min": 2, "serving.replicas.max": 3}, "serving.replicas", "must be equal"),
        ({"serving.replicas.scaling": "fixed", "serving.replicas.min": 0, "serving.replicas.max": 0}, "serving.replicas.max", "1"),
        ({"serving.replicas.scaling": "elastic"}, "serving.replicas.scaling", "backlog"),
        ({"serving.admission.kind": "sidecar"}, "serving.admission.kind", "queue"),
        ({"serving.admission.kind": "replica", "serving.replicas.min": 0}, "serving.replicas.min", "without a queue"),
        ({"serving.loadBalancer.healthPath": "/health\nbootcmd: [reboot]"}, "serving.loadBalancer.healthPath", "must start with /"),
        ({"serving.loadBalancer.healthPath": "/health?x=$(id)"}, "serving.loadBalancer.healthPath", "no spaces, quotes"),
    ],
)  # fmt: skip
def test_combinations_that_cannot_work_are_refused_at_their_key(
    cloud: str, edits: dict, path: str, fragment: str
) -> None:
    messages = errors_at(all_problems(edited(raw(cloud), edits)), path)
    assert any(fragment in m for m in messages), messages


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_queues_bounds_apply_only_with_a_queue(cloud: str) -> None:
    """A TTL below every cloud's queue retention floor is refused with a queue and taken without one."""
    limits = registry.get(cloud).catalog.admission
    assert limits is not None
    short = {"serving.admission.ttlSeconds": limits.ttl_seconds[0] - 1} if limits.ttl_seconds[0] > 1 else {
        "serving.admission.maxReceiveCount": limits.max_receive_count[1] + 1
    }  # fmt: skip
    key = next(iter(short)).rsplit(".", 1)[1]
    assert errors_at(all_problems(edited(raw(cloud), short)), f"serving.admission.{key}")
    direct = edited(raw(cloud), {**short, "serving.admission.kind": "replica"})
    assert errors_at(all_problems(direct), f"serving.admission.{key}") == []


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_plan_gives_the_replicas_their_share_and_a_port_behind_the_proxy(cloud: str) -> None:
    edits = {
        "serving.admission.kind": "replica",
        "serving.admission.maxDepth": 1001,
        "serving.admission.ttlSeconds": 86_400,
    }
    spec = parse_spec(edited(raw(cloud), edits), "x")
    plan = plan_serving(spec.serving, registry.get(cloud).catalog)
    assert plan.replica_waiting == math.ceil(1001 / spec.serving.replicas.max)
    # A request waiting on a replica holds the load balancer's connection: never past its timeout.
    assert plan.replica_wait_seconds == plan.idle_timeout_seconds < 86_400
    assert plan.server_port == LOCAL_SERVER_PORT != spec.serving.load_balancer.port
    queued = plan_serving(parse_spec(raw(cloud), "x").serving, registry.get(cloud).catalog)
    assert (queued.server_port, queued.replica_waiting) == (spec.serving.load_balancer.port, 0)
    # Little's law: the requests per replica per minute at the backlog target, and the full rate above it.
    assert plan.requests_per_replica_minute_target == pytest.approx(
        plan.backlog_per_instance_target * 60 / spec.serving.slo.service_seconds, rel=1e-3
    )
    assert plan.replica_full_rate_per_second * 60 > plan.requests_per_replica_minute_target


def test_the_server_never_takes_the_load_balancers_port() -> None:
    spec = parse_spec(
        edited(raw("aws"), {"serving.admission.kind": "replica", "serving.loadBalancer.port": LOCAL_SERVER_PORT}), "x"
    )
    plan = plan_serving(spec.serving, registry.get("aws").catalog)
    assert plan.server_port not in (LOCAL_SERVER_PORT, 0)
