"""Metrics reduced as each cloud reduces them, from the rule's own fields: Azure Monitor's grain statistic and
window time aggregation, Cloud Monitoring's GAUGE averaged over the last couple of minutes; a statistic,
aggregation or target type the simulator does not model is refused, never read as another."""

from __future__ import annotations

import dataclasses

import pytest

from accelstack.clouds.azure.serving_scaling import ACTIVE_MESSAGES
from accelstack.clouds.gcp.serving_scaling import UNDELIVERED
from accelstack.planner import scaling_rules as rules
from accelstack.simulate import autoscalers as scalers
from accelstack.simulate.autoscalers import Observation


def waiting(messages: int, replicas: int, now: float) -> Observation:
    return Observation(
        now=now, backlog=messages, in_service=replicas, capacity=replicas, busy_fraction=0.0,
        arrivals_last_minute=0, warming=False,
    )  # fmt: skip


def out_rule(aggregation: str = "Average", grain: int = 60, statistic: str = "Average") -> rules.AzureAutoscale:
    """Out by one above 100 active messages per instance over 5 minutes (no scale-in rule)."""
    metric = dataclasses.replace(ACTIVE_MESSAGES, statistic=statistic)
    trigger = rules.MetricTrigger(metric, True, "GreaterThan", 100.0, 300, grain, aggregation)
    return rules.AzureAutoscale(
        autoscaler="what-if", minimum=1, maximum=20, default=1, standby_pool=0,
        rules=(rules.AutoscaleRule(trigger, rules.ScaleAction("Increase", "ChangeCount", 1, 300)),),
    )  # fmt: skip


def decisions(policy, per_minute: list[int], replicas: int = 1) -> list[int | None]:
    return [policy.decide(waiting(m, replicas, 60.0 * i)) for i, m in enumerate(per_minute)]


def test_azure_window_is_reduced_with_the_rules_time_aggregation() -> None:
    """Four quiet minutes and one of 500 messages: their Average is 100 (not above), their Maximum 500, their Last
    500; the Minimum never passes."""
    minutes = [0, 0, 0, 0, 500]
    assert decisions(scalers.AzureAutoscale(out_rule("Average")), minutes)[-1] is None
    assert decisions(scalers.AzureAutoscale(out_rule("Maximum")), minutes)[-1] == 2
    assert decisions(scalers.AzureAutoscale(out_rule("Last")), minutes)[-1] == 2
    assert decisions(scalers.AzureAutoscale(out_rule("Minimum")), [500] * 4 + [0]) == [2, None, None, None, None]


def test_azure_grain_is_reduced_with_the_metrics_statistic() -> None:
    """Two-minute grains: nothing is compared before the first grain ends; then the grain's Average of the minutes
    (0 and 300: 150, above 100) or its Min (0, not above)."""
    assert decisions(scalers.AzureAutoscale(out_rule(grain=120)), [0, 300]) == [None, 2]
    assert decisions(scalers.AzureAutoscale(out_rule(grain=120, statistic="Min")), [0, 300]) == [None, None]


@pytest.mark.parametrize(
    ("rule", "named"),
    [(out_rule("Percentile"), "Percentile"), (out_rule(statistic="P95"), "P95"), (out_rule(grain=90), "90 s")],
)
def test_azure_refuses_what_it_does_not_model(rule: rules.AzureAutoscale, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        scalers.AzureAutoscale(rule)


def backlog_rule(target_type: str = "GAUGE") -> rules.GcpAutoscaler:
    return rules.GcpAutoscaler(
        autoscaler="gcp-autoscaler", minimum=1, maximum=50, initialization_seconds=60, standby_pool=0,
        metric=dataclasses.replace(UNDELIVERED, statistic=target_type), single_instance_assignment=2.0,
        stabilization_seconds=0,
    )  # fmt: skip


def test_gcp_gauge_is_averaged_over_the_last_couple_of_minutes() -> None:
    """num_undelivered_messages sampled each minute, visible 120 s later: at 180 s the autoscaler sees the samples
    of 0 and 60 s (0 and 40 messages) and averages them: 20 / 2 per replica = 10, not the latest 40 / 2 = 20; a
    minute later it sees 40 and 40: 20 replicas."""
    policy = scalers.GcpAutoscaler(backlog_rule())
    seen = [policy.decide(waiting(m, 1, 60.0 * i)) for i, m in enumerate([0, 40, 40, 40, 40])]
    assert seen == [None, None, None, 10, 20]


def test_gcp_refuses_a_delta_target_type() -> None:
    with pytest.raises(ValueError, match="DELTA_PER_MINUTE"):
        scalers.GcpAutoscaler(backlog_rule("DELTA_PER_MINUTE"))
