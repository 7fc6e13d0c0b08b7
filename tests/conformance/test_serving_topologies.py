"""The two serving topologies and the fixed fleet, on every cloud, from the spec alone: what each variant of the
serving example stacks deploys (no queue without a queue, no scaling part for a fixed fleet, the admission proxy on
the replicas), and the guardrail on scaling, which must pass each topology and still catch each way of breaking it
(CPU, a scaling rule removed, a fleet that can scale with nothing scaling it, a load-balancer signal that is CPU)."""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from cloud_stacks import (
    DIRECT_FIXED_VARIANT,
    DIRECT_VARIANT,
    FIXED_VARIANT,
    SERVING_TOPOLOGIES,
    Variant,
    cloud_stacks,
    is_serving,
    preview,
)

from accelstack.clouds import registry
from accelstack.clouds.base import Feature
from accelstack.engine.policy_runner import policy_verdicts
from accelstack.policies import concepts

SERVING_STACKS = {cloud: path for cloud, path in cloud_stacks() if is_serving(path)}
# Clouds whose example switches between topologies (its queue and autoscaling are what the variants remove). A cloud
# without a managed queue builds one topology, the direct fixed fleet (Vultr: clouds/vultr), and ships it as its
# example: test_a_cloud_with_one_topology_ships_it checks that.
CLOUDS = sorted(c for c in SERVING_STACKS if Feature.ADMISSION_QUEUE in registry.get(c).features)
ONE_TOPOLOGY = sorted(set(SERVING_STACKS) - set(CLOUDS))
TOPOLOGIES = dict(SERVING_TOPOLOGIES)
Doc = dict[str, Any]


def variant(cloud: str, name: str) -> Variant:
    return Variant(SERVING_STACKS[cloud], name, TOPOLOGIES[name])


def kinds(cloud: str, name: str | None) -> set[str]:
    result = preview(variant(cloud, name) if name else SERVING_STACKS[cloud])
    return {r.type for r in result.resources}


def concept_kinds(cloud: str, name: str | None, concept: str) -> set[str]:
    return {t for t in kinds(cloud, name) if concepts.is_a(t, concept)}


@pytest.mark.parametrize("cloud", ONE_TOPOLOGY)
def test_a_cloud_with_one_topology_ships_it(cloud: str) -> None:
    """No queue, no scaling part, the admission proxy in front of a loopback server, the fixed fleet's outputs."""
    result = preview(SERVING_STACKS[cloud])
    assert result.spec.serving.admission.kind == "replica" and result.spec.serving.replicas.scaling == "fixed"
    assert concept_kinds(cloud, None, "queue") == set() and concept_kinds(cloud, None, "scaling-policy") == set()
    boot = "\n".join(_boot_texts(result.resources))
    assert "admission_proxy.py" in boot and "queue_worker.py" not in boot and "--host 127.0.0.1" in boot
    assert not {"requestQueue", "responseQueue", "deadLetterQueue", "backlogPerInstanceTarget"} & set(
        result.stack_outputs
    )


@pytest.mark.parametrize("cloud", CLOUDS)
def test_admission_on_the_replicas_builds_no_queue_and_ships_the_proxy(cloud: str) -> None:
    assert concept_kinds(cloud, None, "queue"), "the example stack's queue is what this test removes"
    assert concept_kinds(cloud, DIRECT_VARIANT, "queue") == set()
    result = preview(variant(cloud, DIRECT_VARIANT))
    boot = "\n".join(_boot_texts(result.resources))
    assert "admission_proxy.py" in boot and "queue_worker.py" not in boot
    assert "--host 127.0.0.1" in boot or "'--host' '127.0.0.1'" in boot or "--host' '127.0.0.1" in boot
    assert set(result.stack_outputs) >= {"endpoint", "replicaGroup", "backlogPerInstanceTarget"}
    assert not {"requestQueue", "responseQueue", "deadLetterQueue"} & set(result.stack_outputs)


@pytest.mark.parametrize("cloud", CLOUDS)
@pytest.mark.parametrize("name", [FIXED_VARIANT, DIRECT_FIXED_VARIANT])
def test_a_fixed_fleet_has_no_scaling_part(cloud: str, name: str) -> None:
    assert concept_kinds(cloud, None, "scaling-policy"), "the example stack's scaling is what this test removes"
    assert concept_kinds(cloud, name, "scaling-policy") == set()
    assert "backlogPerInstanceTarget" not in preview(variant(cloud, name)).stack_outputs


@pytest.mark.parametrize("cloud", CLOUDS)
@pytest.mark.parametrize("name", sorted(TOPOLOGIES))
def test_switching_topology_neither_drops_nor_adds_a_protected_resource(cloud: str, name: str) -> None:
    """A day-2 switch between topologies must not ask Pulumi to delete a protected resource (it refuses, and a
    GCP key ring cannot be deleted at all): the protected set is the same in every topology."""

    def protected(case: Any) -> set[str]:
        return {r.urn for r in preview(case).resources if r.protect}

    example = protected(SERVING_STACKS[cloud])
    assert example, "the example stack protects its key"
    assert protected(variant(cloud, name)) == example


def test_gcp_without_a_queue_balances_by_rate_to_the_least_busy_replica_and_scales_on_that_rate() -> None:
    resources = preview(variant("gcp", DIRECT_VARIANT)).resources
    [backend] = [r for r in resources if r.type == GCP_BACKEND]
    [autoscaler] = [r for r in resources if r.type == GCP_AUTOSCALER]
    [entry] = backend.inputs["backends"]
    assert (entry["balancingMode"], backend.inputs["localityLbPolicy"]) == ("RATE", "LEAST_REQUEST")
    policy = autoscaler.inputs["autoscalingPolicy"]
    target = policy["loadBalancingUtilization"]["target"]
    assert 0 < target <= 1 and "cpuUtilization" not in policy and "metrics" not in policy
    # The rate the autoscaler holds is the plan's requests per replica per minute.
    assert target * entry["maxRatePerInstance"] * 60 == pytest.approx(
        _plan("gcp").requests_per_replica_minute_target, rel=0.01
    )


def _plan(cloud: str) -> Any:
    from accelstack.planner.serving_plan import plan_serving

    spec = preview(variant(cloud, DIRECT_VARIANT)).spec
    return plan_serving(spec.serving, registry.get(cloud).catalog)


@pytest.mark.parametrize("cloud", CLOUDS)
def test_switching_a_deployed_stack_off_its_queue_loses_the_queues_and_nothing_else(cloud: str) -> None:
    """What waits in the admission queues when the switch lands is lost (at most a TTL of requests; docs/spec.md says so):
    the day-2 loss check must name those queues and no other stateful resource."""
    from stack_edits import losses

    lost = losses(f"{cloud}-serving", ("serving.admission.kind=replica",))
    assert lost, "the queues go: the loss check must see them"
    assert all(concepts.is_a(line.split(" ", 1)[0], "queue") for line in lost), lost


def _boot_texts(resources: Any) -> list[str]:
    """Every boot script a replica template carries, decoded (base64 where the cloud wants it)."""
    found = []
    for resource in resources:
        for text in _strings(resource.inputs):
            if "#cloud-config" in text or text.startswith("#!"):
                found.append(text)
            elif len(text) > 200:
                try:
                    decoded = base64.b64decode(text, validate=True).decode()
                except ValueError:
                    continue
                if decoded.startswith(("#!", "#cloud-config")):
                    found.append(decoded)
    return found


def _strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []


# --- the scaling guardrail over each topology ------------------------------------------------------


def scaling_verdicts(cloud: str, name: str, mutate: Callable[[Doc], None] | None = None) -> list[str]:
    result = preview(variant(cloud, name))
    doc = copy.deepcopy(result.export)
    if mutate:
        mutate(doc)
    return [v.line() for v in policy_verdicts(doc, result.spec) if "serving-scales-on-queue-depth" in v.line()]


def resources_of(doc: Doc, type_: str) -> list[dict[str, Any]]:
    found = [r for r in doc["deployment"]["resources"] if r["type"] == type_]
    assert found, f"no {type_} in the export"
    return found


def set_everywhere(type_: str, path: str, value: Any) -> Callable[[Doc], None]:
    """Set inputs.<path> and outputs.<path> (`a.0.b` indexes lists) of every resource of `type_`."""

    def mutate(doc: Doc) -> None:
        for resource in resources_of(doc, type_):
            for side in ("inputs", "outputs"):
                node = resource.setdefault(side, {})
                keys = path.split(".")
                for key in keys[:-1]:
                    node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
                node[keys[-1]] = value

    return mutate


def drop(type_: str) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        resources_of(doc, type_)
        doc["deployment"]["resources"] = [r for r in doc["deployment"]["resources"] if r["type"] != type_]

    return mutate


AWS_GROUP, AWS_POLICY = "aws:autoscaling/group:Group", "aws:autoscaling/policy:Policy"
AZURE_SET, AZURE_AUTOSCALE = "azure-native:compute:VirtualMachineScaleSet", "azure-native:monitor:AutoscaleSetting"
GCP_GROUP = "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager"
GCP_AUTOSCALER, GCP_BACKEND = (
    "gcp:compute/regionAutoscaler:RegionAutoscaler",
    "gcp:compute/backendService:BackendService",
)
CPU_TRACKING = {
    "targetValue": 50,
    "predefinedMetricSpecification": {"predefinedMetricType": "ASGAverageCPUUtilization"},
}
GATEWAY_CPU = "profiles.0.rules.0.metricTrigger.metricName"
# The gateway's metric name read from the scale set: not the load balancer's count.
SCALE_SET_METRIC = {
    "metricResourceUri": "/subscriptions/x/resourceGroups/y/providers/Microsoft.Compute/virtualMachineScaleSets/z",
    "metricNamespace": "Microsoft.Compute/virtualMachineScaleSets",
}


def both(*mutations: Callable[[Doc], None]) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        for mutation in mutations:
            mutation(doc)

    return mutate


# (cloud, variant, how it breaks, what the verdict says)
BREAKS: list[tuple[str, str, Callable[[Doc], None], str]] = [
    ("aws", DIRECT_VARIANT, set_everywhere(AWS_POLICY, "targetTrackingConfiguration", CPU_TRACKING), "scales on CPU"),
    ("aws", DIRECT_VARIANT, drop(AWS_POLICY), "has no scaling policy"),
    ("aws", FIXED_VARIANT, set_everywhere(AWS_GROUP, "maxSize", 3), "is not a fixed fleet"),
    ("aws", DIRECT_FIXED_VARIANT, both(set_everywhere(AWS_GROUP, "minSize", 0), set_everywhere(AWS_GROUP, "maxSize", 0)), "is not a fixed fleet"),
    ("azure", DIRECT_VARIANT, set_everywhere(AZURE_AUTOSCALE, GATEWAY_CPU, "Percentage CPU"), "scales on CPU"),
    ("azure", DIRECT_VARIANT, both(*(set_everywhere(AZURE_AUTOSCALE, f"profiles.0.rules.{i}.metricTrigger.{key}", value) for i in (0, 1) for key, value in SCALE_SET_METRIC.items())), "has no enabled autoscale rule"),
    ("azure", DIRECT_VARIANT, set_everywhere(AZURE_AUTOSCALE, "enabled", False), "has no enabled autoscale rule"),
    ("azure", FIXED_VARIANT, set_everywhere(AZURE_SET, "sku.capacity", 0), "is not a fixed fleet"),
    ("gcp", DIRECT_VARIANT, set_everywhere(GCP_BACKEND, "backends.0.balancingMode", "UTILIZATION"), "balancingMode UTILIZATION (CPU)"),
    ("gcp", DIRECT_VARIANT, drop(GCP_AUTOSCALER), "is not a fixed fleet"),
    ("gcp", DIRECT_FIXED_VARIANT, set_everywhere(GCP_GROUP, "targetSize", 0), "is not a fixed fleet"),
    ("gcp", DIRECT_VARIANT, drop(GCP_BACKEND), "cannot be placed"),
]  # fmt: skip


@pytest.mark.parametrize("cloud", CLOUDS)
@pytest.mark.parametrize("name", [DIRECT_VARIANT, FIXED_VARIANT, DIRECT_FIXED_VARIANT])
def test_each_topology_passes_the_scaling_guardrail(cloud: str, name: str) -> None:
    assert scaling_verdicts(cloud, name) == []


@pytest.mark.parametrize(
    ("cloud", "name", "mutate", "says"), BREAKS, ids=[f"{c}-{n}-{i}" for i, (c, n, _, _) in enumerate(BREAKS)]
)
def test_each_way_of_breaking_the_scaling_is_caught(
    cloud: str, name: str, mutate: Callable[[Doc], None], says: str
) -> None:
    found = scaling_verdicts(cloud, name, mutate)
    assert found and all(says in line for line in found), found


def test_the_cases_cover_every_cloud_with_a_serving_stack() -> None:
    assert {cloud for cloud, *_ in BREAKS} == set(CLOUDS)


def test_the_rendered_boot_of_each_direct_replica_is_well_formed() -> None:
    for cloud in CLOUDS:
        for text in _boot_texts(preview(variant(cloud, DIRECT_VARIANT)).resources):
            if text.startswith("#cloud-config"):
                assert isinstance(yaml.safe_load(text), dict)


def deployed_requests_target(cloud: str) -> float:
    """The requests per replica per minute the direct variant's scaling rule holds, read from what it deploys."""
    resources = preview(variant(cloud, DIRECT_VARIANT)).resources
    if cloud == "aws":
        [policy] = [r for r in resources if r.type == AWS_POLICY]
        tracking = policy.inputs["targetTrackingConfiguration"]
        assert tracking["predefinedMetricSpecification"]["predefinedMetricType"] == "ALBRequestCountPerTarget"
        return float(tracking["targetValue"])
    if cloud == "azure":
        [setting] = [r for r in resources if r.type == AZURE_AUTOSCALE]
        [out_rule, in_rule] = setting.inputs["profiles"][0]["rules"]
        assert out_rule["metricTrigger"]["metricName"] == "AvgRequestCountPerHealthyHost"
        assert in_rule["metricTrigger"]["threshold"] == pytest.approx(out_rule["metricTrigger"]["threshold"] / 2)
        return float(out_rule["metricTrigger"]["threshold"])
    [backend] = [r for r in resources if r.type == GCP_BACKEND]
    [autoscaler] = [r for r in resources if r.type == GCP_AUTOSCALER]
    rate = backend.inputs["backends"][0]["maxRatePerInstance"]
    return float(autoscaler.inputs["autoscalingPolicy"]["loadBalancingUtilization"]["target"] * rate * 60)


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_simulator_replays_the_requests_target_each_cloud_deploys_without_a_queue(cloud: str) -> None:
    """One serving model: the autoscaler `simulate serving` picks for the direct topology holds the same requests
    per replica per minute as the rule the cloud deploys (to the rounding of GCP's utilization share)."""
    from accelstack.planner.pricing import load_book
    from accelstack.simulate.design import default_autoscaler, design_from_spec

    declared = registry.get(cloud)
    spec = preview(variant(cloud, DIRECT_VARIANT)).spec
    kind = default_autoscaler(spec.serving, declared.default_autoscaler, declared.load_balancer_autoscaler)
    assert kind == declared.load_balancer_autoscaler
    design = design_from_spec(
        spec.serving, load_book(declared.prices), catalog=declared.catalog, autoscaler=kind,
        rules=declared.serving_scaling,
    )  # fmt: skip
    policy = design.policy()
    simulated = {
        "aws": lambda p: p.target,
        "azure": lambda p: p.rule.rules[0].trigger.threshold,
        "gcp": lambda p: p.assignment() * 60,
    }[cloud](policy)
    assert simulated == pytest.approx(deployed_requests_target(cloud), rel=0.01)


def test_gcp_load_balancing_scaling_waits_for_the_backend_that_names_the_group() -> None:
    resources = preview(variant("gcp", DIRECT_VARIANT)).resources
    [backend] = [r for r in resources if r.type == GCP_BACKEND]
    [autoscaler] = [r for r in resources if r.type == GCP_AUTOSCALER]
    assert backend.urn in autoscaler.dependencies
