"""The real program on the gcp-serving example stack, captured under mocks: what an operator relies on
is scaling on the subscription's backlog per replica (never CPU), a per-client throttle at the edge,
a dead-letter topic the Pub/Sub agent may forward to, a sized standby pool, and no public IPs on replicas."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from accelstack.clouds import registry
from accelstack.clouds.gcp.serving_scaling import UNDELIVERED
from accelstack.engine.capture import Capture, Registration, capture, config_for_pulumi
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec.loader import SpecError, apply_overrides, parse_spec, read_stack_file

REPO = Path(__file__).resolve().parents[3]
MAIN = REPO / "__main__.py"
EXAMPLE = REPO / "stacks" / "Pulumi.gcp-serving.yaml"
STACK = "gcp-serving"
AGENT = "serviceAccount:service-123456789012@gcp-sa-pubsub.iam.gserviceaccount.com"


@cache
def run(*overrides: str) -> Capture:
    raw = apply_overrides(read_stack_file(EXAMPLE), list(overrides))
    return capture(MAIN, config_for_pulumi(raw), stack=STACK)


def spec(*overrides: str):
    return parse_spec(apply_overrides(read_stack_file(EXAMPLE), list(overrides)), STACK)


def plan(*overrides: str):
    return plan_serving(spec(*overrides).serving, registry.get("gcp").catalog)


def one(cap: Capture, type_token: str, suffix: str = "") -> Registration:
    found = [r for r in cap.by_type(type_token) if r.name.endswith(suffix)]
    assert len(found) == 1, [r.name for r in cap.by_type(type_token)]
    return found[0]


def test_autoscaler_holds_the_planners_backlog_per_replica_on_the_request_subscription_never_cpu():
    policy = one(run(), "gcp:compute/regionAutoscaler:RegionAutoscaler").inputs["autoscalingPolicy"]
    assert "cpuUtilization" not in policy and "loadBalancingUtilization" not in policy
    (metric,) = policy["metrics"]
    assert metric["name"] == UNDELIVERED.name
    assert metric["singleInstanceAssignment"] == plan().backlog_per_instance_target
    assert 'subscription_id = "gcp-serving-requests"' in metric["filter"]
    assert (policy["minReplicas"], policy["maxReplicas"]) == (1, 8)


def test_edge_throttles_each_client_ip_at_the_admission_rate_and_the_backend_uses_it():
    cap = run("serving.admission.perClientRate=1200", "serving.admission.rateWindowSeconds=120")
    armor = one(cap, "gcp:compute/securityPolicy:SecurityPolicy")
    (throttle,) = [r for r in armor.inputs["rules"] if r["action"] == "throttle"]
    options = throttle["rateLimitOptions"]
    assert options["enforceOnKey"] == "IP"
    assert options["rateLimitThreshold"] == {"count": 1200, "intervalSec": 120}
    assert options["exceedAction"] == "deny(429)"
    backend = one(cap, "gcp:compute/backendService:BackendService")
    assert backend.inputs["securityPolicy"] == armor.outputs["id"]
    assert backend.inputs["loadBalancingScheme"] == "EXTERNAL_MANAGED"


def test_https_only_with_tls_1_2_and_the_given_certificate():
    cap = run()
    proxy = one(cap, "gcp:compute/targetHttpsProxy:TargetHttpsProxy")
    assert proxy.inputs["sslCertificates"] == ["projects/acme-serve/global/sslCertificates/inference-acme-example"]
    assert one(cap, "gcp:compute/sSLPolicy:SSLPolicy").inputs["minTlsVersion"] == "TLS_1_2"
    (rule,) = cap.by_type("gcp:compute/globalForwardingRule:GlobalForwardingRule")
    assert rule.inputs["portRange"] == "443"
    assert not cap.by_type("gcp:compute/targetHttpProxy:TargetHttpProxy")


def test_dead_letters_after_max_receive_count_and_the_pubsub_agent_may_forward():
    cap = run("serving.admission.maxReceiveCount=7")
    subscription = one(cap, "gcp:pubsub/subscription:Subscription", "-requests")
    dead_topic = one(cap, "gcp:pubsub/topic:Topic", "-dead-letters")
    assert subscription.inputs["deadLetterPolicy"] == {
        "deadLetterTopic": dead_topic.outputs["id"],
        "maxDeliveryAttempts": 7,
    }
    assert subscription.inputs["retryPolicy"]["maximumBackoff"]
    publisher = one(cap, "gcp:pubsub/topicIAMMember:TopicIAMMember", "-dlq-agent-publisher")
    assert (publisher.inputs["topic"], publisher.inputs["role"], publisher.inputs["member"]) == (
        dead_topic.outputs["name"], "roles/pubsub.publisher", AGENT,
    )  # fmt: skip
    subscriber = one(cap, "gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember", "-dlq-agent-subscriber")
    assert (subscriber.inputs["subscription"], subscriber.inputs["member"]) == (subscription.outputs["name"], AGENT)


def test_retention_is_at_least_pubsubs_ten_minutes_and_follows_a_longer_ttl():
    short = one(run("serving.admission.ttlSeconds=120"), "gcp:pubsub/subscription:Subscription", "-requests")
    assert short.inputs["messageRetentionDuration"] == "600s"
    long = one(run("serving.admission.ttlSeconds=3600"), "gcp:pubsub/subscription:Subscription", "-requests")
    assert long.inputs["messageRetentionDuration"] == "3600s"


def test_standby_pool_is_the_planners_warm_pool_of_stopped_vms():
    group = one(run(), "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager")
    assert group.inputs["targetStoppedSize"] == plan().warm_pool_size > 0
    assert group.inputs["standbyPolicy"]["mode"] == "SCALE_OUT_POOL"  # scale-out starts the standby VMs


def test_replicas_are_on_demand_gpu_vms_without_external_ips():
    template = one(run(), "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate")
    assert template.inputs["machineType"] == "g2-standard-8"
    (nic,) = template.inputs["networkInterfaces"]
    assert not nic.get("accessConfigs")
    assert template.inputs["scheduling"]["provisioningModel"] == "STANDARD"
    assert template.inputs["scheduling"]["onHostMaintenance"] == "TERMINATE"
    assert template.inputs["metadata"]["user-data"].startswith("#cloud-config")


def test_only_google_front_ends_reach_the_replica_port():
    (rule,) = run().by_type("gcp:compute/firewall:Firewall")
    assert sorted(rule.inputs["sourceRanges"]) == ["130.211.0.0/22", "35.191.0.0/16"]
    assert rule.inputs["allows"] == [{"protocol": "tcp", "ports": ["8000"]}]


def test_model_read_is_limited_to_the_training_buckets_models_prefix():
    grant = one(run(), "gcp:storage/bucketIAMMember:BucketIAMMember")
    assert grant.inputs["bucket"] == "acme-train-checkpoints"
    assert grant.inputs["role"] == "roles/storage.objectViewer"
    assert "/objects/models/" in grant.inputs["condition"]["expression"]


@pytest.mark.parametrize(
    ("override", "path"),
    [
        ("serving.admission.maxReceiveCount=3", "serving.admission.maxReceiveCount"),
        ("serving.admission.maxReceiveCount=101", "serving.admission.maxReceiveCount"),
        ("serving.loadBalancer.certificate=arn:aws:acm:us-east-1:1:certificate/x", "serving.loadBalancer.certificate"),
        ("serving.replicas.capacity=spot", "serving.replicas.capacity"),
        ("serving.replicas.instanceType=g2-standard-9", "serving.replicas.instanceType"),
        ("serving.admission.ttlSeconds=700000", "serving.admission.ttlSeconds"),
    ],
)
def test_what_gcp_would_reject_is_refused_at_its_config_path(override, path):
    with pytest.raises(SpecError) as error:
        spec(override)
    assert any(p.path == path for p in error.value.problems), error.value.problems


@pytest.mark.parametrize(
    "overrides", [(), ("serving.replicas.coldStartSeconds=900",), ("serving.replicas.coldStartSeconds=3000",)]
)
def test_autohealing_waits_out_the_cold_start_before_judging_a_new_replica(overrides: tuple[str, ...]):
    """No launch hook holds a GCP replica out of service while it loads the model: autohealing must ignore its
    health checks for the whole cold start and a first verdict (within the API's 3600 s), or it recreates every
    replica in a loop."""
    group = one(run(*overrides), "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager")
    delay = group.inputs["autoHealingPolicies"]["initialDelaySec"]
    cold = plan(*overrides).cold_start_seconds
    assert delay == min(3600, delay) and delay >= min(3600, cold + 2 * plan(*overrides).health_check_interval_seconds)


# --- the model read condition, evaluated as IAM would ------------------------------------------------


def evaluate(expression: str, *, resource_type: str, name: str, list_prefix: str | None) -> bool:
    """The CEL subset the condition uses (startsWith, ==, &&, ||, parentheses, api.getAttribute with a default),
    evaluated for one request; any other construct fails the test rather than passing unread."""
    import re

    allowed = re.fullmatch(r'[\w\s."/()|&=,:\-]*', expression)
    assert allowed, f"unexpected CEL in {expression!r}"
    python = (
        expression.replace("||", " or ").replace("&&", " and ").replace(".startsWith(", ".startswith(")
        .replace("resource.type", "RESOURCE_TYPE").replace("resource.name", "RESOURCE_NAME")
        .replace("api.getAttribute", "GET_ATTRIBUTE")
    )  # fmt: skip
    attributes = {"storage.googleapis.com/objectListPrefix": list_prefix} if list_prefix is not None else {}
    scope = {
        "RESOURCE_TYPE": resource_type,
        "RESOURCE_NAME": name,
        "GET_ATTRIBUTE": lambda key, default: attributes.get(key, default),
        "__builtins__": {},
    }
    return bool(eval(python, scope))  # a CEL subset, checked above; for a test


BUCKET_TYPE, OBJECT_TYPE = "storage.googleapis.com/Bucket", "storage.googleapis.com/Object"
BUCKET = "projects/_/buckets/acme-train-checkpoints"


@pytest.mark.parametrize(
    ("call", "resource_type", "name", "list_prefix", "allowed"),
    [
        ("get a weight file", OBJECT_TYPE, f"{BUCKET}/objects/models/llama-3.1-8b-instruct/model.safetensors", None, True),
        ("list the weights (rsync)", BUCKET_TYPE, BUCKET, "models/llama-3.1-8b-instruct/", True),
        ("get a checkpoint", OBJECT_TYPE, f"{BUCKET}/objects/checkpoints/step-100/shard-0", None, False),
        ("list the checkpoints", BUCKET_TYPE, BUCKET, "checkpoints/", False),
        ("list the whole bucket", BUCKET_TYPE, BUCKET, "", False),
        ("list without a prefix", BUCKET_TYPE, BUCKET, None, False),
    ],
)  # fmt: skip
def test_the_model_read_allows_the_calls_the_replica_makes_and_no_other(
    call, resource_type, name, list_prefix, allowed
):
    grants = [
        r for r in run("serving.artifactAccount=acme-train").by_type("gcp:storage/bucketIAMMember:BucketIAMMember")
        if r.name.endswith("-replica-models")
    ]  # fmt: skip
    assert grants, "the replicas' model read grant"
    expression = grants[0].inputs["condition"]["expression"]
    assert evaluate(expression, resource_type=resource_type, name=name, list_prefix=list_prefix) is allowed, call


def test_a_cold_start_autohealing_cannot_wait_out_is_refused_at_its_key():
    with pytest.raises(SpecError, match=r"serving\.replicas\.coldStartSeconds: 3600 s: GCP autohealing"):
        spec("serving.replicas.coldStartSeconds=3600")
