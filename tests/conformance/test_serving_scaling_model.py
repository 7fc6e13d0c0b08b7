"""One serving model: for every serving example and topology (queue-admitted, direct, and both as a fixed fleet) on
every cloud, the scaling rule the previewed stack deploys -- read back from the real resource inputs (target values,
metric names and statistics, windows, steps, cooldowns, bounds, warm/standby pool) -- equals the rule `simulate
serving` replays for that stack, and the simulated policy runs on exactly that rule. A component that changes a
target, a metric or a cooldown without the plan's rule (and so the simulator) following fails here.

What each cloud metric counts is written here from the clouds' metric references, not read from the code under test.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from typing import Any

import pytest
from cloud_stacks import SERVING_TOPOLOGIES, Variant, cloud_stacks, is_serving, preview, topology_applies

from accelstack.clouds import registry
from accelstack.planner import scaling_rules as rules
from accelstack.planner.pricing import PriceBook
from accelstack.planner.scaling_rules import Counts
from accelstack.simulate import autoscalers as scalers
from accelstack.simulate.design import Design, design_from_spec

SERVING_STACKS = {cloud: path for cloud, path in cloud_stacks() if is_serving(path)}
CLOUDS = sorted(SERVING_STACKS)
CASES = [
    (cloud, name)
    for cloud in CLOUDS
    for name in ("example", *(n for n, _ in SERVING_TOPOLOGIES))
    if topology_applies(cloud, name)
]

# What each metric counts, per the clouds' references: SQS "Available CloudWatch metrics" (Visible: available for
# retrieval; NotVisible: in flight); Service Bus ActiveMessages (peek-locked messages stay active until completed);
# Pub/Sub num_undelivered_messages (unacknowledged, leased ones included); the load balancers' requests per target.
COUNTS = {
    "ApproximateNumberOfMessagesVisible": Counts.WAITING,
    "ApproximateNumberOfMessagesNotVisible": Counts.IN_FLIGHT,
    "GroupInServiceInstances": Counts.IN_SERVICE,
    "RequestCountPerTarget": Counts.REQUESTS_PER_REPLICA_MINUTE,
    "ActiveMessages": Counts.QUEUED_OR_IN_FLIGHT,
    "AvgRequestCountPerHealthyHost": Counts.REQUESTS_PER_REPLICA_MINUTE,
    "pubsub.googleapis.com/subscription/num_undelivered_messages": Counts.QUEUED_OR_IN_FLIGHT,
    "pubsub.googleapis.com/subscription/num_outstanding_messages": Counts.IN_FLIGHT,  # delivered, not yet acked
}
Doc = dict[str, Any]


def case(cloud: str, name: str) -> Any:
    path = SERVING_STACKS[cloud]
    return path if name == "example" else Variant(path, name, dict(SERVING_TOPOLOGIES)[name])


def of_type(resources: list[Doc], token: str) -> list[Doc]:
    return [r for r in resources if r["type"] == token]


def one(resources: list[Doc], token: str) -> Doc | None:
    found = of_type(resources, token)
    assert len(found) <= 1, f"more than one {token}"
    return found[0] if found else None


def seconds(iso: str) -> int:
    """PT5M, PT1H30M, PT90S -> seconds (autoscale windows and cooldowns)."""
    match = re.fullmatch(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?", iso)
    assert match, f"not an ISO 8601 time duration: {iso!r}"
    hours, minutes, secs = (int(g or 0) for g in match.groups())
    return 3600 * hours + 60 * minutes + secs


def metric(name: str, namespace: str, statistic: str) -> rules.Metric:
    return rules.Metric(name, namespace, statistic, COUNTS[name])


# --- each cloud's deployed rule, from the resources -------------------------------------------------------------


def aws_rule(resources: list[Doc]) -> rules.ScalingRule:
    group = one(resources, "aws:autoscaling/group:Group")
    assert group is not None
    g = group["inputs"]
    policies = [p["inputs"] for p in of_type(resources, "aws:autoscaling/policy:Policy")]
    tracking = [p for p in policies if p["policyType"] == "TargetTrackingScaling"]
    if not tracking:
        assert g["minSize"] == g["maxSize"] and not policies
        return rules.FixedFleet(int(g["maxSize"]))
    [policy] = tracking
    config = policy["targetTrackingConfiguration"]
    assert not config.get("disableScaleIn"), "a policy that never scales in is not what the simulator replays"
    if "predefinedMetricSpecification" in config:
        predefined = config["predefinedMetricSpecification"]["predefinedMetricType"]
        assert predefined == "ALBRequestCountPerTarget"
        metrics: tuple[rules.Metric, ...] = (metric("RequestCountPerTarget", "AWS/ApplicationELB", "Sum"),)
        per_instance = None
        kind = "aws-alb-requests"
    else:
        queries = config["customizedMetricSpecification"]["metrics"]
        stats = {q["id"]: q["metricStat"] for q in queries if "metricStat" in q}
        [expression] = [q["expression"] for q in queries if q.get("returnData")]
        # (m1 + m2 + ...) / mN: the queue metrics summed over the in-service count.
        summed, divisor = re.fullmatch(r"\(([\w +]+)\) / (\w+)", expression).groups()  # type: ignore[union-attr]
        read = lambda s: metric(s["metric"]["metricName"], s["metric"]["namespace"], s["stat"])  # noqa: E731
        metrics = tuple(read(stats[i.strip()]) for i in summed.split("+"))
        per_instance = read(stats[divisor])
        kind = "aws-target-tracking"
    warm = g.get("warmPool") or {}
    step = [p for p in policies if p["policyType"] == "StepScaling"]
    alarms = [a["inputs"] for a in of_type(resources, "aws:cloudwatch/metricAlarm:MetricAlarm")]
    from_zero = bool(step) and any("FILL(inservice, 0) == 0" in str(a.get("metricQueries")) for a in alarms)
    return rules.TargetTracking(
        autoscaler=kind, metrics=metrics, per_instance=per_instance, target=config["targetValue"],
        minimum=int(g["minSize"]), maximum=int(g["maxSize"]), instance_warmup_seconds=int(g["defaultInstanceWarmup"]),
        warm_pool=int(warm.get("minSize", 0)), scale_from_zero=from_zero,
    )  # fmt: skip


def azure_rule(resources: list[Doc]) -> rules.ScalingRule:
    setting = one(resources, "azure-native:monitor:AutoscaleSetting")
    if setting is None:
        [group] = of_type(resources, "azure-native:compute:VirtualMachineScaleSet")
        return rules.FixedFleet(int(group["inputs"]["sku"]["capacity"]))
    [profile] = setting["inputs"]["profiles"]
    capacity = profile["capacity"]
    parsed = []
    for entry in profile["rules"]:
        t, a = entry["metricTrigger"], entry["scaleAction"]
        trigger = rules.MetricTrigger(
            metric(t["metricName"], t["metricNamespace"], t["statistic"]), t["dividePerInstance"], t["operator"],
            t["threshold"], seconds(t["timeWindow"]), seconds(t["timeGrain"]), t["timeAggregation"],
        )  # fmt: skip
        action = rules.ScaleAction(a["direction"], a["type"], int(a["value"]), seconds(a["cooldown"]))
        parsed.append(rules.AutoscaleRule(trigger, action))
    pool = one(resources, "azure-native:standbypool:StandbyVirtualMachinePool")
    names = {r.trigger.metric.name for r in parsed}
    return rules.AzureAutoscale(
        autoscaler="azure-autoscale" if names == {"ActiveMessages"} else "azure-gateway-requests",
        minimum=int(capacity["minimum"]), maximum=int(capacity["maximum"]), default=int(capacity["default"]),
        rules=tuple(parsed),
        standby_pool=int(pool["inputs"]["elasticityProfile"]["maxReadyCapacity"]) if pool else 0,
    )  # fmt: skip


def gcp_rule(resources: list[Doc]) -> rules.ScalingRule:
    [manager] = of_type(resources, "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager")
    autoscaler = one(resources, "gcp:compute/regionAutoscaler:RegionAutoscaler")
    if autoscaler is None:
        return rules.FixedFleet(int(manager["inputs"]["targetSize"]))
    policy = autoscaler["inputs"]["autoscalingPolicy"]
    # No scale-in controls: the autoscaler's default 10-minute stabilization is what the simulator replays.
    assert "scaleInControl" not in policy and policy.get("mode") == "ON"
    common = dict(
        minimum=int(policy["minReplicas"]), maximum=int(policy["maxReplicas"]),
        initialization_seconds=int(policy["cooldownPeriod"]), standby_pool=int(manager["inputs"].get("targetStoppedSize", 0)),
    )  # fmt: skip
    if "metrics" in policy:
        [m] = policy["metrics"]
        resource_type = re.match(r"resource\.type = (\w+)", m["filter"]).group(1)  # type: ignore[union-attr]
        return rules.GcpAutoscaler(
            autoscaler="gcp-autoscaler", **common,  # type: ignore[arg-type]
            metric=metric(m["name"], resource_type, m.get("type", "GAUGE")),
            single_instance_assignment=m["singleInstanceAssignment"],
        )  # fmt: skip
    [backend] = of_type(resources, "gcp:compute/backendService:BackendService")
    [entry] = backend["inputs"]["backends"]
    assert entry["balancingMode"] == "RATE"
    return rules.GcpAutoscaler(
        autoscaler="gcp-lb-utilization", **common,  # type: ignore[arg-type]
        utilization_target=policy["loadBalancingUtilization"]["target"],
        max_rate_per_instance=entry["maxRatePerInstance"], delay_seconds=60,
    )  # fmt: skip


def vultr_rule(resources: list[Doc]) -> rules.ScalingRule:
    """Vultr has no autoscaler: the fleet is its instances."""
    return rules.FixedFleet(len(of_type(resources, "vultr:index/instance:Instance")))


DEPLOYED = {"aws": aws_rule, "azure": azure_rule, "gcp": gcp_rule, "vultr": vultr_rule}


def exported(cloud: str, name: str) -> list[Doc]:
    return [{"type": r.type, "inputs": r.inputs} for r in preview(case(cloud, name)).resources]


def simulated(cloud: str, name: str) -> Design:
    """The design `accelstack simulate serving` builds for the stack: its cloud's autoscaler for its topology."""
    declared = registry.get(cloud)
    assert declared.serving_scaling is not None
    spec = preview(case(cloud, name)).spec
    kind = declared.serving_scaling.deployed(spec.serving)
    assert kind is not None
    book = PriceBook.from_prices(declared.prices)
    return design_from_spec(
        spec.serving, book, catalog=declared.catalog, autoscaler=kind, rules=declared.serving_scaling
    )


def replayed(policy: scalers.Policy) -> rules.ScalingRule:
    """The rule a simulated policy runs on, read from the policy's own settings."""
    if isinstance(policy, scalers.AwsTargetTracking):
        assert policy.rule is not None
        rule = policy.rule
        assert (policy.target, policy.minimum, policy.maximum, policy.warmup_seconds) == (
            rule.target, rule.minimum, rule.maximum, rule.instance_warmup_seconds,
        )  # fmt: skip
        assert policy.reads == tuple(m.counts for m in rule.metrics)
        assert policy.per_instance == (rule.per_instance is not None) and policy.scale_from_zero == rule.scale_from_zero
        assert (policy.interval, policy.out_datapoints, policy.in_datapoints, policy.in_fraction) == (
            rule.period_seconds, rule.scale_out_datapoints, rule.scale_in_datapoints, rule.scale_in_fraction,
        )  # fmt: skip
        return rule
    if isinstance(policy, scalers.AzureAutoscale | scalers.GcpAutoscaler):
        return policy.rule
    assert isinstance(policy, scalers.Fixed)
    return rules.FixedFleet(policy.replicas)


def pool_of(rule: rules.ScalingRule) -> int:
    if isinstance(rule, rules.FixedFleet):
        return 0
    return rule.warm_pool if isinstance(rule, rules.TargetTracking) else rule.standby_pool


@pytest.mark.parametrize(("cloud", "name"), CASES)
def test_the_simulator_replays_the_scaling_rule_the_stack_deploys(cloud: str, name: str) -> None:
    deployed = DEPLOYED[cloud](exported(cloud, name))
    design = simulated(cloud, name)
    assert design.rule == deployed
    assert replayed(design.policy()) == deployed
    assert design.warm_pool == pool_of(deployed)
    assert design.autoscaler == deployed.autoscaler
    if isinstance(deployed, rules.FixedFleet):
        assert design.initial_replicas == design.replicas_min == design.replicas_max == deployed.replicas


# One edit per cloud to a deployed input the simulator reads: the comparison above must see each.
EDITS = {
    "aws": ("aws:autoscaling/policy:Policy", ("targetTrackingConfiguration", "targetValue"), lambda v: v * 2),
    "azure": ("azure-native:monitor:AutoscaleSetting", ("profiles", 0, "rules", 0, "scaleAction", "cooldown"),
              lambda v: "PT9M"),
    "gcp": ("gcp:compute/regionAutoscaler:RegionAutoscaler", ("autoscalingPolicy", "metrics", 0, "name"),
            lambda v: "pubsub.googleapis.com/subscription/num_outstanding_messages"),
}  # fmt: skip


def _drop_one_instance(resources: list[Doc]) -> None:
    resources.remove(of_type(resources, "vultr:index/instance:Instance")[0])


# Clouds without an autoscaler deploy their fleet as instances: the edit is a fleet one instance short.
FLEET_EDITS = {"vultr": _drop_one_instance}


@pytest.mark.parametrize("cloud", CLOUDS)
def test_a_component_that_moves_a_deployed_input_alone_fails_the_comparison(cloud: str) -> None:
    resources = copy.deepcopy(exported(cloud, "example"))
    if cloud in FLEET_EDITS:
        FLEET_EDITS[cloud](resources)
    else:
        token, path, change = EDITS[cloud]
        [target] = of_type(resources, token)
        holder = target["inputs"]
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] = change(holder[path[-1]])
    design = simulated(cloud, "example")
    assert DEPLOYED[cloud](exported(cloud, "example")) == design.rule
    assert DEPLOYED[cloud](resources) != design.rule


def test_a_simulator_that_moves_a_rule_alone_fails_the_comparison() -> None:
    """And the other way: a replayed rule with another target is not the deployed one."""
    design = simulated("aws", "example")
    assert isinstance(design.rule, rules.TargetTracking)
    moved = dataclasses.replace(design.rule, target=design.rule.target + 1)
    assert replayed(scalers.replay(moved)) != DEPLOYED["aws"](exported("aws", "example"))
