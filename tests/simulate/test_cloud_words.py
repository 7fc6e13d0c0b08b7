"""`accelstack simulate serving` speaks the stack's cloud's words: every label, note and cost line names that
cloud's load balancer, queue and warm pool (`Catalog.serving_terms`), admission on the replicas where the stack
has no queue, and never another cloud's product. Before, every cloud's report read "ALB" and "SQS" (and Vultr's a
warm pool it cannot have), and the Azure and GCP load balancer and queue lines read $0.00 where they are not
priced."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.clouds import registry
from accelstack.clouds.base import Feature
from accelstack.clouds.serving_terms import REPLICA_ADMISSION
from accelstack.examples import example_files
from accelstack.spec.loader import load_stack

REPO = Path(__file__).resolve().parents[2]
SERVING_EXAMPLES = [path for path in example_files(REPO / "stacks") if path.name.endswith("-serving.yaml")]
QUICK = ["--hours", "1", "--seeds", "1"]
WIDE = {"COLUMNS": "3000"}  # no label or cell wraps across lines, so a name cannot hide in a wrap
DIRECT = "serving.admission.kind=replica"


def topologies(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """(name, --set overrides): the example as shipped, and the other admission its cloud offers."""
    spec = load_stack(path)
    features = registry.get(spec.cloud).features
    shipped = spec.serving.admission.kind
    cases = [(shipped, ())]
    if shipped == "queue" and Feature.REPLICA_ADMISSION in features:
        cases.append(("replica", ("--set", DIRECT)))
    if shipped == "replica" and Feature.ADMISSION_QUEUE in features:
        cases.append(("queue", ("--set", "serving.admission.kind=queue")))
    return cases


CASES = [(path, name, sets) for path in SERVING_EXAMPLES for name, sets in topologies(path)]


def foreign_words(cloud: str, direct: bool) -> set[str]:
    """Other deployable clouds' product names and autoscalers; with admission on the replicas, the stack's own queue
    too (it has none to name)."""
    own = registry.get(cloud)
    words: set[str] = set()
    for name in registry.deployable():
        other = registry.get(name)
        if name == cloud or not other.deploys("serving"):
            continue
        words |= set(other.catalog.serving_terms.names())
        words |= {a for a in (other.default_autoscaler, other.load_balancer_autoscaler) if a and a != "fixed"}
    words -= set(own.catalog.serving_terms.names())
    if direct and own.catalog.serving_terms.queue is not None:
        words.add(own.catalog.serving_terms.queue)
    return words


def simulate(path: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["simulate", "serving", str(path), *QUICK, *args], env=WIDE)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_case_list_covers_every_example_and_both_topologies() -> None:
    assert {p.name for p in SERVING_EXAMPLES} >= {f"Pulumi.{c}-serving.yaml" for c in ("aws", "azure", "gcp", "vultr")}
    assert {(p.name, name) for p, name, _ in CASES} >= {("Pulumi.aws-serving.yaml", "replica"), ("Pulumi.vultr-serving.yaml", "replica")}  # fmt: skip


@pytest.mark.parametrize(("path", "topology", "sets"), CASES, ids=lambda v: v.name if isinstance(v, Path) else v)
def test_the_report_names_only_the_stacks_own_cloud(
    monkeypatch, path: Path, topology: str, sets: tuple[str, ...]
) -> None:
    monkeypatch.chdir(REPO)
    spec = load_stack(path, [sets[1]] if sets else [])
    terms = registry.get(spec.cloud).catalog.serving_terms
    direct = topology == "replica"
    forbidden = foreign_words(spec.cloud, direct)
    assert forbidden, spec.cloud
    single, compared = simulate(path, *sets), simulate(path, *sets, "--compare")
    document = simulate(path, *sets, "--compare", "--json")
    for output in (single, compared, document):
        found = sorted(word for word in forbidden if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", output))
        assert not found, (spec.cloud, topology, found)
    # Its own words, where it has the thing: the load balancer always, the queue or admission on the replicas, and
    # the warm pool only where the cloud keeps one.
    for output in (single, compared):
        assert terms.load_balancer in output
        assert f"{terms.admission(direct)} wait p50/p95/p99" in output
        assert (f"replica-h {terms.warm_pool}" in output) == (terms.warm_pool is not None)
    data = json.loads(document)
    assert data["products"] == {"loadBalancer": terms.load_balancer, "admission": terms.admission(direct),
                                "warmPool": terms.warm_pool}  # fmt: skip
    assert (data["products"]["admission"] == REPLICA_ADMISSION) == (direct or terms.queue is None)
    # The design without the pool runs only where the stack keeps one (Vultr's fixed fleet has none to do without).
    without = [d["design"] for d in data["designs"] if d["design"].startswith("no ")]
    assert without == ([f"no {terms.warm_pool}"] if data["designs"][0]["warmPool"] else [])


@pytest.mark.parametrize("cloud", ["aws", "azure", "gcp", "vultr"])
def test_a_line_the_price_book_does_not_price_says_so(cloud: str) -> None:
    """The load balancer and queue lines are priced where the cloud's price book has them, else named as not
    priced: never a $0.00 that reads as free."""
    declared = registry.get(cloud)
    [path] = [p for p in SERVING_EXAMPLES if p.name == f"Pulumi.{cloud}-serving.yaml"]
    data = json.loads(simulate(path, "--json"))
    [design] = data["designs"]
    listed = declared.prices.extra
    terms = declared.catalog.serving_terms
    expected = [] if "load_balancer_hourly" in listed else [terms.load_balancer]
    if data["products"]["admission"] != REPLICA_ADMISSION and "queue_per_million_requests" not in listed:
        expected.append(terms.queue)
    assert design["cost"]["notPriced"] == expected


def test_each_clouds_queue_is_the_one_its_admission_limits_name() -> None:
    for cloud in registry.deployable():
        declared = registry.get(cloud)
        if not declared.deploys("serving"):
            continue
        admission = declared.catalog.admission
        queue = declared.catalog.serving_terms.queue
        assert (queue is None) == (Feature.ADMISSION_QUEUE not in declared.features), declared.name
        if admission is not None and queue is not None:
            assert admission.queue_service == queue, declared.name
