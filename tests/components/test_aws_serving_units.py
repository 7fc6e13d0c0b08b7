"""Pure parts of the serving component: subnet carving, sizing plan, log-delivery grants."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from accelstack.components.aws.network import carve_serving_subnets
from accelstack.components.aws.serving import elb_log_delivery_statements
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file
from tests.planner.aws_inputs import AWS_CATALOG

EXAMPLE = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.aws-serving.yaml"


def serving(*overrides: str):
    return parse_spec(apply_overrides(read_stack_file(EXAMPLE), list(overrides)), "aws-serving").serving


@pytest.mark.parametrize("cidr", ["10.30.0.0/16", "10.0.0.0/20", "192.168.1.0/24"])
def test_serving_subnets_are_disjoint_inside_the_vpc_and_big_enough_for_an_alb(cidr):
    vpc = ipaddress.ip_network(cidr)
    carved = carve_serving_subnets(cidr)
    nets = [ipaddress.ip_network(s) for s in (*carved.private, *carved.public)]
    assert len(carved.private) == len(carved.public) == 2
    assert all(n.subnet_of(vpc) for n in nets)
    assert all(not a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1 :])
    assert all(n.prefixlen <= 27 for n in nets)  # ALB subnets need /27 or larger


def test_too_small_vpc_is_refused_with_its_config_path():
    with pytest.raises(ValueError, match=r"serving\.network\.vpcCidr"):
        carve_serving_subnets("10.0.0.0/28")


def test_plan_derives_from_slo_admission_and_cold_start():
    plan = plan_serving(serving(), AWS_CATALOG)
    # Messages a replica owns (waiting + in flight): the requests it serves at once (its KV cache) at
    # the 70% target utilization -- below its concurrency, so the policy never parks a replica saturated.
    assert plan.backlog_per_instance_target == round(0.7 * plan.concurrency, 2) < plan.concurrency
    assert plan.cold_start_seconds > plan.warm_start_seconds
    # The grace counts from InService (after the launch hook): the first health verdict, not a cold start.
    assert plan.health_check_grace_seconds == max(30, 3 * plan.health_check_interval_seconds)
    assert plan.health_check_grace_seconds < plan.cold_start_seconds < plan.lifecycle_heartbeat_seconds
    # 2000 queued x 1 s / 300 s TTL = 7 replicas needed, 1 already running at min.
    assert plan.warm_pool_size == 6
    assert plan.age_alarm_seconds == 240


def test_measured_cold_start_overrides_the_estimate():
    plan = plan_serving(serving("serving.replicas.coldStartSeconds=900"), AWS_CATALOG)
    assert plan.cold_start_seconds == 900 and plan.lifecycle_heartbeat_seconds == 1350


def test_warm_pool_never_exceeds_headroom_and_is_empty_without_one():
    assert plan_serving(serving("serving.replicas.min=3", "serving.replicas.max=4"), AWS_CATALOG).warm_pool_size == 1
    assert plan_serving(serving("serving.replicas.min=4", "serving.replicas.max=4"), AWS_CATALOG).warm_pool_size == 0


def test_new_regions_get_only_the_log_delivery_service_principal():
    statements = elb_log_delivery_statements("arn:aws:s3:::logs", "222222222222", "ap-southeast-5", "aws")
    assert [s["Principal"] for s in statements] == [{"Service": "logdelivery.elasticloadbalancing.amazonaws.com"}]


def test_too_many_adapters_for_ec2s_user_data_limit_fail_naming_the_config():
    from accelstack.components.aws.serving import user_data_size_problem
    from accelstack.spec.models import LoraAdapter

    def problem(adapters: int) -> str | None:
        base = serving()
        model = base.model.model_copy(update={"adapters": [
            LoraAdapter(name=f"customer-{i:03d}", uri=f"s3://acme-train-checkpoints/models/adapters/customer-{i:03d}/")
            for i in range(adapters)
        ]})  # fmt: skip
        spec = base.model_copy(update={"model": model})
        return user_data_size_problem(
            spec,
            plan_serving(spec, AWS_CATALOG),
            region="us-east-1",
            account_id="222222222222",
            group_name="accelstack-aws-serving-replicas",
        )

    assert problem(2) is None and problem(20) is None
    message = problem(60)
    assert (
        message is not None and message.startswith("serving.model.adapters: 60 adapter(s)") and "16384-byte" in message
    )


def test_separation_pack_trusts_exactly_the_elb_accounts_the_log_bucket_grants() -> None:
    """The policy pack runs without the project installed and keeps its own copy of the table: an
    account missing there fails the separation check of every stack with access logs in that Region."""
    from accelstack.components.aws.serving.edge import ELB_LOG_ACCOUNTS
    from accelstack.policies.separation.rules import ELB_LOG_DELIVERY_ACCOUNTS

    assert frozenset(ELB_LOG_ACCOUNTS.values()) == ELB_LOG_DELIVERY_ACCOUNTS


def test_too_many_adapters_are_a_spec_error_before_any_resource():
    """The size rule runs with the AWS rules when the stack is validated (validate, preview, the program),
    not inside the component after the queues and the load balancer are registered."""
    from accelstack.spec import SpecError
    from accelstack.spec.loader import load_stack

    stack = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.aws-serving.yaml"

    def adapters(count: int) -> list[str]:
        uri = "s3://acme-train-checkpoints/models/adapters/customer-{:03d}/"
        listed = ", ".join(f"{{name: customer-{i:03d}, uri: '{uri.format(i)}'}}" for i in range(count))
        return [f"serving.model.adapters=[{listed}]"]

    with pytest.raises(SpecError) as error:
        load_stack(stack, adapters(800))  # over 16 KB even gzip-compressed (components/aws/boot_data.py)
    [problem] = [p for p in error.value.problems if p.path == "serving.model.adapters"]
    assert problem.message.startswith("800 adapter(s) make the replicas' user data")
    assert "bytes gzip-compressed; " in problem.message
    assert "EC2 accepts at most 16,384" in problem.message
    assert load_stack(stack, adapters(3)).serving.model.adapters[2].name == "customer-002"
